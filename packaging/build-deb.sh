#!/usr/bin/env bash
# packaging/build-deb.sh: the apphome .deb, from a staged `make install PREFIX=/usr`,
# built with dpkg-deb; dependencies by dpkg-shlibdeps; checked by lintian (no errors).
#
# Environment:
#   BIN_DIR   the built executables (default .build/release)
#   OUT_DIR   where the .deb goes (default .build/deb)
#   VERSION   the package version (default: `make print-version`, the constant in
#             Sources/CommandSupport/Version.swift that --version prints)
#   SKIP_LINTIAN=1  build only
#   DEB_COMPRESSION  dpkg-deb's compressor (default xz; the installation test uses gzip)
# Prints the path of the .deb on the last line of standard output.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(dirname "$here")
BIN_DIR=${BIN_DIR:-$top/.build/release}
OUT_DIR=${OUT_DIR:-$top/.build/deb}
VERSION=${VERSION:-$(make -s -C "$top" print-version)}
[ -n "$VERSION" ] || { printf 'build-deb: no version in Sources/CommandSupport/Version.swift\n' >&2; exit 1; }
die() { printf 'build-deb: %s\n' "$*" >&2; exit 1; }
for tool in dpkg-deb dpkg-shlibdeps; do
    command -v "$tool" >/dev/null || die "$tool not found; install dpkg-dev (make deps)"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/apphome-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
stage=$work/stage
arch=$(dpkg --print-architecture)

make -s -C "$top" install DESTDIR="$stage" PREFIX=/usr RELEASE_BIN="$BIN_DIR" >/dev/null
# Debian's layout: man pages compressed, binaries stripped, the copyright and changelog
# in /usr/share/doc/apphome.
find "$stage/usr/share/man" -type f -exec gzip -9n {} +
for b in "$stage"/usr/bin/* "$stage"/usr/lib/apphome/*; do strip --strip-unneeded --remove-section=.comment "$b"; done
doc=$stage/usr/share/doc/apphome
install -d "$doc" "$stage/usr/share/lintian/overrides"
install -m 0644 "$here/copyright" "$doc/copyright"
sed "s/@VERSION@/$VERSION/" "$here/changelog" | gzip -9n > "$doc/changelog.gz"
chmod 0644 "$doc/changelog.gz"
install -m 0644 "$here/lintian-overrides" "$stage/usr/share/lintian/overrides/apphome"

# Dependencies by package: dpkg-shlibdeps reads the shared libraries the executables
# load and names the packages that ship them (it wants a debian/control to read).
mkdir -p "$work/src/debian"
printf 'Source: apphome\n\nPackage: apphome\nArchitecture: any\n' > "$work/src/debian/control"
depends=$(cd "$work/src" && dpkg-shlibdeps -O "$stage"/usr/bin/* "$stage"/usr/lib/apphome/* 2>"$work/shlibdeps.err") \
    || { cat "$work/shlibdeps.err" >&2; die "dpkg-shlibdeps failed (do BIN_DIR's programs load the toolchain's libswiftCore.so? Package.swift links the Swift runtime statically)"; }
depends=${depends#shlibs:Depends=}
[ -n "$depends" ] || die "dpkg-shlibdeps found no dependencies"
# libsecret is loaded with dlopen on the first Secret Service call (never linked, so
# dpkg-shlibdeps cannot see it): named by hand.
case $depends in *libsecret-1-0*) ;; *) depends="$depends, libsecret-1-0 (>= 0.20)" ;; esac
# libsqlite3 likewise (dlopen), on the first database a backup copies.
case $depends in *libsqlite3-0*) ;; *) depends="$depends, libsqlite3-0" ;; esac
# libseccomp likewise: linked into the static `apphome`, but CSeccomp in the dynamically
# linked programs (apphome-secret-service among them) opens it if ever asked for a filter.
case $depends in *libseccomp2*) ;; *) depends="$depends, libseccomp2" ;; esac
# `apphome run` makes an app's sandbox with bubblewrap, its session bus with xdg-dbus-proxy
# (programs it runs, which dpkg-shlibdeps cannot see either).
depends="$depends, bubblewrap (>= 0.8.0), xdg-dbus-proxy"

install -d -m 0755 "$stage/DEBIAN"
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
sed -e "s/@VERSION@/$VERSION/" -e "s/@ARCH@/$arch/" -e "s/@DEPENDS@/$depends/" -e "s/@SIZE@/$size/" \
    "$here/control" > "$stage/DEBIAN/control"
(cd "$stage" && find usr -type f -print0 | sort -z | xargs -0 md5sum > DEBIAN/md5sums)
chmod 0644 "$stage/DEBIAN/control" "$stage/DEBIAN/md5sums"

mkdir -p "$OUT_DIR"
deb=$OUT_DIR/apphome_${VERSION}_${arch}.deb
dpkg-deb --root-owner-group -Z"${DEB_COMPRESSION:-xz}" --build "$stage" "$deb" >/dev/null
if [[ ${SKIP_LINTIAN:-0} != 1 ]]; then
    command -v lintian >/dev/null || die "lintian not found; install it (make deps)"
    # No errors allowed; warnings and notes are printed.
    lintian --fail-on error --info "$deb" >&2 || die "lintian reported errors for $deb"
fi
echo "$deb"
