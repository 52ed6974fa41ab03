#!/usr/bin/env bash
# The AppHome preferences walk-through: writes, reads, exports and deletes
# preferences on a throw-away root, and shows one error with its status.
# Run by `make demo` (BIN_DIR points at the built binaries).
set -euo pipefail
BIN_DIR=${BIN_DIR:-.build/release}
defaults="$BIN_DIR/defaults"
[ -x "$defaults" ] || { echo "demo: $defaults not found; run 'make demo'" >&2; exit 1; }

root=$(mktemp -d "${TMPDIR:-/tmp}/apphome-demo.XXXXXX")
trap 'for p in $(jobs -p); do kill "$p" 2>/dev/null || true; done; rm -rf "$root"' EXIT
export APPHOME_ROOT="$root"
# Files, not a prefsd: no `apphome run` below starts one on the user's own socket
# (the prefsd part starts its own, on the demo's socket).
export APPHOME_PREFSD=off

# shell_quote WORD...: the words as a shell reads them back (single quotes where needed),
# so that every command the demo echoes can be pasted as it is.
shell_quote() {
    local word out=()
    for word in "$@"; do
        if [[ $word =~ ^[A-Za-z0-9_./:=+,@%-]+$ ]]; then
            out+=("$word")
        else
            out+=("'${word//\'/\'\\\'\'}'")
        fi
    done
    printf '%s' "${out[*]}"
}
step() { printf '\n$ %s\n' "$(shell_quote "$@")"; "$@"; }

echo "AppHome demo on a throw-away root: $root"
printf '$ %s\n' "$(shell_quote export "APPHOME_ROOT=$root")"
step "$defaults" write com.raywenderlich.ScaryBugs username -string "Ray"
step "$defaults" write com.raywenderlich.ScaryBugs maxBugs -int 12
step "$defaults" write com.raywenderlich.ScaryBugs soundEnabled -bool yes
step "$defaults" write com.raywenderlich.ScaryBugs ratio -float 0.75
step "$defaults" write com.raywenderlich.ScaryBugs tags -array scary "not scary" -int 3
step "$defaults" write com.raywenderlich.ScaryBugs window '{ x = 10; y = 20; }'
step "$defaults" --key-path write com.raywenderlich.ScaryBugs window:size:width -int 640
step "$defaults" read com.raywenderlich.ScaryBugs
step "$defaults" read com.raywenderlich.ScaryBugs username
step "$defaults" read-type com.raywenderlich.ScaryBugs soundEnabled
step "$defaults" --format json read com.raywenderlich.ScaryBugs window
step "$defaults" domains
step "$defaults" export com.raywenderlich.ScaryBugs "$root/backup.plist"
printf '\n# the export is a binary plist: %s\n' "$(head -c 8 "$root/backup.plist")"
step "$defaults" export com.raywenderlich.ScaryBugs -
step "$defaults" delete com.raywenderlich.ScaryBugs ratio
step "$defaults" read com.raywenderlich.ScaryBugs
echo
echo '# an error: a bad integer is refused, nothing is written'
printf '$ %s\n' "$defaults write com.raywenderlich.ScaryBugs maxBugs -int 12ab"
set +e
"$defaults" write com.raywenderlich.ScaryBugs maxBugs -int 12ab 2>&1 | head -1
status=${PIPESTATUS[0]}
set -e
echo "exit status: $status"
step "$defaults" read com.raywenderlich.ScaryBugs maxBugs
step "$defaults" delete com.raywenderlich.ScaryBugs
printf '\n$ %s\n' "$defaults read com.raywenderlich.ScaryBugs"
"$defaults" read com.raywenderlich.ScaryBugs || echo "exit status: $?"

echo
echo "# containers: ScaryBugs gets a home; its preferences and Documents survive an update"
apphome="$BIN_DIR/apphome"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
step "$apphome" install "$here/ScaryBugs-v1/ScaryBugs.app"

echo
echo "# settings bundle: ScaryBugs.app/Settings.bundle is the schema of its domain"
step "$defaults" lint "$here/ScaryBugs-v1/ScaryBugs.app/Settings.bundle"
step "$defaults" read --effective com.example.ScaryBugs sortOrder
printf '\n$ %s\n' "$defaults write com.example.ScaryBugs sortOrder size"
set +e
"$defaults" write com.example.ScaryBugs sortOrder size
status=$?
set -e
echo "exit status: $status (nothing written)"
step "$defaults" write com.example.ScaryBugs sortOrder date
step "$defaults" read --effective com.example.ScaryBugs sortOrder
step "$defaults" validate com.example.ScaryBugs
step "$defaults" write com.example.ScaryBugs lastBug -string "Centipede"
home=$("$apphome" container com.example.ScaryBugs data)
echo "a scary bug" > "$home/Documents/bug1.txt"
echo "thumbnail" > "$home/Library/Caches/thumb.cache"
step "$apphome" list
step "$apphome" update "$here/ScaryBugs-v2/ScaryBugs.app"
newhome=$("$apphome" container com.example.ScaryBugs data)
printf '
# new home %s
' "$newhome"
printf '# Documents/bug1.txt: %s
' "$(cat "$newhome/Documents/bug1.txt")"
printf '# Library/Caches is empty: %s
' "$(ls -A "$newhome/Library/Caches" | wc -l) files"
step "$defaults" read com.example.ScaryBugs lastBug
step "$apphome" run com.example.ScaryBugs -- sh -c 'echo "HOME=$HOME"; echo "TMPDIR=$TMPDIR"'

echo
echo "# backups: back up, uninstall, restore; Documents and preferences come back"
step "$apphome" backup com.example.ScaryBugs
echo "another scary bug" > "$newhome/Documents/bug2.txt"
printf '\n# bug2.txt is new; the second backup stores only it\n'
step "$apphome" backup com.example.ScaryBugs
step "$apphome" backups
step "$apphome" uninstall com.example.ScaryBugs
printf '\n$ %s\n' "$defaults read com.example.ScaryBugs lastBug"
"$defaults" read com.example.ScaryBugs lastBug || echo "exit status: $?"
printf '\n$ %s\n' "$apphome restore com.example.ScaryBugs"
"$apphome" restore com.example.ScaryBugs || echo "exit status: $?"
step "$apphome" restore com.example.ScaryBugs --app "$here/ScaryBugs-v2/ScaryBugs.app"
restored=$("$apphome" container com.example.ScaryBugs data)
printf '\n# Documents in the restored home %s:\n' "$restored"
for f in "$restored"/Documents/*; do printf '#   %s: %s\n' "${f##*/}" "$(cat "$f")"; done
step "$defaults" read com.example.ScaryBugs lastBug
echo
echo '# a damaged backup is refused and nothing changes: flip one byte of the stored bug1.txt'
# Objects are named by the BLAKE2b-256 of their contents.
hash=$(python3 -c 'import hashlib, sys; print(hashlib.blake2b(open(sys.argv[1], "rb").read(), digest_size=32).hexdigest())' \
    "$restored/Documents/bug1.txt")
object=$root/Backups/objects/${hash:0:2}/${hash:2}
printf '# %s\n' "${object#"$root"/}"
printf '\x00' | dd of="$object" bs=1 seek=0 count=1 conv=notrunc status=none
printf '$ %s\n' "$apphome restore com.example.ScaryBugs"
"$apphome" restore com.example.ScaryBugs || echo "exit status: $?"
step "$apphome" container com.example.ScaryBugs data
echo
echo '# pruning: keep the newest backup; the older manifest goes (the newer one names all its files, so no stored file goes)'
step "$apphome" prune-backups --keep 1

echo
echo "# doctor: the registry is lost; doctor rebuilds it from the homes"
rm "$root/Applications/registry.plist"
printf '$ %s\n' "$(shell_quote rm "$root/Applications/registry.plist")"
step "$apphome" doctor
step "$apphome" list

echo
echo "# keychain: a ScaryBugs secret lives encrypted outside its home; only ScaryBugs sees it"
security="$(cd "$BIN_DIR" && pwd)/security"   # absolute: `apphome run` starts in the home
export APPHOME_KEYCHAIN_KEY_STORE=file   # the demo has no Secret Service; keep the device key in a 0600 file
printf '\n$ %s\n' "export APPHOME_KEYCHAIN_KEY_STORE=file"
printf '$ %s\n' "printf 'hunter2' | $security --app com.example.ScaryBugs add-generic-password -a ray -s sync.example.com -l 'ScaryBugs sync'"
printf 'hunter2' | "$security" --app com.example.ScaryBugs add-generic-password -a ray -s sync.example.com -l 'ScaryBugs sync'
step "$security" --app com.example.ScaryBugs dump-keychain

echo
echo "# prefsd: writes go through the service; a watcher sees each change at once"
prefsd="$BIN_DIR/prefsd"
export XDG_RUNTIME_DIR="$root/run"
printf '\n$ %s\n' "$(shell_quote export "XDG_RUNTIME_DIR=$root/run")"
mkdir -m 700 "$XDG_RUNTIME_DIR"
"$prefsd" --root "$root" 2>"$root/prefsd.log" &
prefsd_pid=$!
for _ in $(seq 100); do [ -S "$XDG_RUNTIME_DIR/apphome/prefsd.sock" ] && break; sleep 0.05; done
APPHOME_PREFSD=require "$defaults" watch com.example.ScaryBugs >"$root/watch.log" 2>&1 &
watch_pid=$!
sleep 0.3
APPHOME_PREFSD=require step "$defaults" write com.example.ScaryBugs lastBug -string "Spider"
APPHOME_PREFSD=require step "$defaults" read com.example.ScaryBugs lastBug
# In its sandbox an app sees neither the keychain's files nor the registry: prefsd's
# socket is its one door, and prefsd knows it as ScaryBugs by its sandbox.
APPHOME_PREFSD=require step "$apphome" run com.example.ScaryBugs -- "$security" find-generic-password -a ray -s sync.example.com -w
APPHOME_PREFSD=require step "$apphome" run com.example.ScaryBugs -- sh -c 'ls "$APPHOME_ROOT/Applications" | wc -l; ls ~/.. 2>&1 | head -1'
sleep 0.3
kill "$watch_pid" 2>/dev/null || true
wait "$watch_pid" 2>/dev/null || true
printf '\n$ %s\n' "defaults watch com.example.ScaryBugs   # (in another terminal)"
cat "$root/watch.log"
kill -TERM "$prefsd_pid"
wait "$prefsd_pid" || true
unset XDG_RUNTIME_DIR

echo
echo "# signing: the examples are signed with examples/keys/demo-only-publisher.key (a published key: demonstration only)"
keys="$root/keys"
mkdir -m 700 "$keys"
cp "$here/keys/demo-only-publisher.key" "$keys/demo.key"; chmod 600 "$keys/demo.key"   # git keeps no 0600
cp "$here/keys/demo-only-publisher.key.pub" "$keys/demo.key.pub"
step "$apphome" verify "$here/ScaryBugs-v2/ScaryBugs.app"
team=$(sed -n 's/^team //p' "$keys/demo.key.pub")
step "$apphome" keygen "$keys/other.key"
# Two apps of the demo team share the keychain group <team>.shared and the app group group.com.example.bugs.
mkapp() {   # mkapp DIR NAME BUNDLE-ID [extra Info.plist entries]
    mkdir -p "$root/src/$1/$2.app"
    printf '{ CFBundleIdentifier = %s; CFBundleVersion = 1; %s }\n' "$3" "${4:-}" > "$root/src/$1/$2.app/Info.plist"
    echo "$root/src/$1/$2.app"
}
claims='keychain-access-groups = ("$(AppIdentifierPrefix)shared"); "com.apple.security.application-groups" = (group.com.example.bugs);'
notes=$(mkapp notes Notes com.example.Notes "$claims")
journal=$(mkapp journal Journal com.example.Journal "$claims")
step "$apphome" sign "$notes" --key "$keys/demo.key"
step "$apphome" sign "$journal" --key "$keys/demo.key"
step "$apphome" install "$notes"
step "$apphome" install "$journal"
printf '\n$ %s\n' "printf 'team-secret' | $security --app com.example.Notes add-generic-password -a ray -s team.example.com"
printf 'team-secret' | "$security" --app com.example.Notes add-generic-password -a ray -s team.example.com
step "$security" --app com.example.Journal find-generic-password -a ray -s team.example.com -w
echo
echo "# another team: its app may not claim the demo team's groups"
spy=$(mkapp spy Spy com.other.Spy '"com.apple.security.application-groups" = (group.com.example.bugs);')
step "$apphome" sign "$spy" --key "$keys/other.key"
printf '$ %s\n' "$(shell_quote "$apphome" install "$spy")"
"$apphome" install "$spy" || echo "exit status: $?"
spy=$(mkapp spy2 Spy com.other.Spy)
step "$apphome" sign "$spy" --key "$keys/other.key"
step "$apphome" install "$spy"
printf '$ %s\n' "$security --app com.other.Spy --access-group $team.shared find-generic-password -a ray -s team.example.com -w"
"$security" --app com.other.Spy --access-group "$team.shared" find-generic-password -a ray -s team.example.com -w || echo "exit status: $?"
printf '$ %s\n' "$security --app com.other.Spy find-generic-password -a ray -s team.example.com -w"
"$security" --app com.other.Spy find-generic-password -a ray -s team.example.com -w || echo "exit status: $?"
echo
echo "# editing the installed Info.plist grants nothing: entitlements are the ones recorded at install"
spyhome=$("$apphome" container com.other.Spy app)
chmod u+w "$spyhome" "$spyhome/Info.plist"
printf '{ CFBundleIdentifier = com.other.Spy; CFBundleVersion = 1; keychain-access-groups = ("%s.shared"); }\n' "$team" > "$spyhome/Info.plist"
printf '$ %s\n' "$security --app com.other.Spy --access-group $team.shared find-generic-password -a ray -s team.example.com -w"
"$security" --app com.other.Spy --access-group "$team.shared" find-generic-password -a ray -s team.example.com -w || echo "exit status: $?"
echo
echo "# a tampered bundle is refused: one byte added to a signed file"
cp -R "$here/ScaryBugs-v2/ScaryBugs.app" "$root/src/ScaryBugs.app"
echo "#" >> "$root/src/ScaryBugs.app/ScaryBugs"
printf '$ %s\n' "$(shell_quote "$apphome" verify "$root/src/ScaryBugs.app")"   # a copy of ScaryBugs-v2
"$apphome" verify "$root/src/ScaryBugs.app" || echo "exit status: $?"
printf '$ %s\n' "$(shell_quote "$apphome" update "$root/src/ScaryBugs.app")"
"$apphome" update "$root/src/ScaryBugs.app" || echo "exit status: $?"
echo
echo "# an update from another team is refused; the installed app and its data stay"
step "$apphome" sign "$root/src/ScaryBugs.app" --key "$keys/other.key"
printf '$ %s\n' "$(shell_quote "$apphome" update "$root/src/ScaryBugs.app")"   # now signed by the other key
"$apphome" update "$root/src/ScaryBugs.app" || echo "exit status: $?"
step "$apphome" info com.example.ScaryBugs
echo
echo "# the team's keychain group goes with the team's last app"
step "$apphome" uninstall com.example.Notes
step "$security" --app com.example.Journal find-generic-password -a ray -s team.example.com -w
step "$apphome" uninstall com.example.Journal
step "$apphome" uninstall com.other.Spy

echo
echo "# an app's own Swift code: examples/ScaryBugs-app depends on AppHome by version (a tagged"
echo "# clone of this checkout); bugs with KeyedArchiver in Documents, settings with UserDefaults,"
echo "# its sync token with SecItemAdd, the same items security, backups and uninstall see"
step "$here/ScaryBugs-app/build.sh" "$root/src/ScaryBugsApp.app"
step "$apphome" sign "$root/src/ScaryBugsApp.app" --key "$keys/demo.key"
step "$apphome" install "$root/src/ScaryBugsApp.app"
step "$defaults" write com.example.ScaryBugsApp sortOrder -string rating
# In its sandbox the app reaches its keychain through prefsd alone: start one for it.
export XDG_RUNTIME_DIR="$root/run"
"$prefsd" --root "$root" 2>>"$root/prefsd.log" &
prefsd_pid=$!
for _ in $(seq 100); do [ -S "$XDG_RUNTIME_DIR/apphome/prefsd.sock" ] && break; sleep 0.05; done
export APPHOME_PREFSD=require
step "$apphome" launch com.example.ScaryBugsApp add Centipede 3.5
step "$apphome" launch com.example.ScaryBugsApp add "Wolf Spider" 4.5
step "$apphome" launch com.example.ScaryBugsApp list
step "$apphome" launch com.example.ScaryBugsApp login 3f8a-demo-token
step "$apphome" launch com.example.ScaryBugsApp status
step "$security" --app com.example.ScaryBugsApp find-generic-password -s sync.scarybugs.example.com -a ray -w
step "$defaults" read com.example.ScaryBugsApp launchCount
kill -TERM "$prefsd_pid"
wait "$prefsd_pid" || true
export APPHOME_PREFSD=off
unset XDG_RUNTIME_DIR
step "$apphome" uninstall com.example.ScaryBugsApp

echo
echo "# uninstall: the home, the preferences and the keychain items go"
step "$apphome" uninstall com.example.ScaryBugs
printf '
$ %s
' "$defaults read com.example.ScaryBugs"
"$defaults" read com.example.ScaryBugs || echo "exit status: $?"

echo
echo "demo finished"
