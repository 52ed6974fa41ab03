# AppHome: `make demo` and `make test` are all a fresh Debian 12 machine
# with the Swift toolchain needs; each installs what is missing first.

SWIFT       ?= swift
DEBUG_BIN   := .build/debug
RELEASE_BIN := .build/release
# The fast start-up: static linking is set on the executables in Package.swift; the metadata
# accessors flag goes on every module here, not in Package.swift, where an unsafe flag on a
# library target makes SwiftPM refuse AppHome as a dependency by version (docs/STARTUP.md).
RELEASE_FLAGS := -c release -Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors

# Debian packages, by use. `make demo` installs only BUILD_PACKAGES and DEMO_PACKAGES;
# `make test`, `make bench` and `make deb` install all of them.
# The build: pkg-config and the C libraries linked through .systemLibrary targets
# (libsodium: hashing and the keychain's encryption; SQLite: backups of databases in
# a home; libsecret and glib: the keychain's device key in the Secret Service, loaded
# at run time with dlopen by CSecret, their headers for the bench's C peer; gio (in
# libglib2.0-dev) and libgcrypt: apphome-secretd, the Secret Service AppHome provides).
# libsoup 3: the Settings app's HTTP server (apphome-settings).
BUILD_PACKAGES := pkg-config libsodium-dev libsqlite3-dev libsecret-1-dev libglib2.0-dev libgcrypt20-dev libsoup-3.0-dev
# An app's sandbox (`apphome run`): libseccomp builds its filter; bubblewrap makes it and
# xdg-dbus-proxy filters the session bus into it (run-time tools, and the tests' real clients).
BUILD_PACKAGES += libseccomp-dev bubblewrap xdg-dbus-proxy
# The demo (examples/demo.sh): python3 names a backup object by its hash.
DEMO_PACKAGES  := python3
# The tests and benchmarks: their peers (libplist, gsettings/dconf, sqlite3, secret-tool,
# gnome-keyring), a session bus, hyperfine, gcc for the bench's C peers.
TEST_PACKAGES  := python3 libplist-utils libplist-dev hyperfine \
                  libglib2.0-bin dconf-gsettings-backend dconf-service dconf-cli dbus dbus-daemon \
                  sqlite3 gnome-keyring libsecret-tools gcc
# Backups off the machine: restic (0.14.0 or newer) as the target, rclone serving a
# repository over loopback for the remote tests.
TEST_PACKAGES  += restic rclone
# The Python clients' tests (keyring, ansible-core from PyPI) make virtual environments.
TEST_PACKAGES  += python3-venv
# The Secret Service provider's real clients: git (and the source of its libsecret
# helper, built by the tests), docker-credential-secretservice.
TEST_PACKAGES  += git golang-docker-credential-helpers
# Settings on every machine: two real Syncthing instances on 127.0.0.1 (scripts/syncthing-pair.sh,
# which talks to their REST API with curl), in the end-to-end test and `make bench`.
TEST_PACKAGES  += syncthing curl
# The package (`make deb`) and its test: Debian's own tools and man to render the pages.
TEST_PACKAGES  += dpkg-dev lintian man-db
# The zsh and fish completions' tests run the real shells.
TEST_PACKAGES  += zsh fish
# The Settings app's browser tests and bench: Debian's chromium, driven by Playwright from
# PyPI (scripts/playwright-venv.sh; no browser is downloaded).
TEST_PACKAGES  += chromium
# Each test stage prints its wall and CPU time with GNU time.
TEST_PACKAGES  += time
PACKAGES := $(BUILD_PACKAGES) $(TEST_PACKAGES)

# What `make install` and `make deb` ship. One more executable is one more word in
# EXECUTABLES (and its page in man/, NAME.1 or NAME.8); bench and test-only
# executables (plistbench, prefsbench, keychainbench, secitembench, apphome-crashing,
# secitem-probe) are never here.
EXECUTABLES := defaults apphome security prefsd git-credential-apphome plutil apphome-secretd
# Programs the executables run, not the user: in $(PKGLIBDIR). The static `security` runs
# security-secret-service (the same command, dynamically linked) for the commands that need
# the Secret Service through libsecret, and the static `apphome` runs apphome-secret-service
# for every verb but run, launch, list, container and settings; `apphome settings` runs apphome-settings (libsoup).
HELPERS     := security-secret-service apphome-secret-service apphome-settings
MANPAGES    := $(foreach e,$(EXECUTABLES),$(firstword $(wildcard man/$(e).1 man/$(e).8) man/$(e).1))
# Completions: bash (completions/NAME), zsh (completions/_NAME), fish (completions/NAME.fish).
BASH_COMPLETIONS := $(filter-out completions/_% %.fish,$(wildcard completions/*))
ZSH_COMPLETIONS  := $(wildcard completions/_*)
FISH_COMPLETIONS := $(wildcard completions/*.fish)
# The one version number: the constant every executable's --version prints.
VERSION := $(shell sed -n 's/^ *public static let number = "\(.*\)"$$/\1/p' Sources/CommandSupport/Version.swift)
USER_UNITS  := prefsd.socket prefsd.service apphome-secretd.service
# The session bus starts apphome-secretd (through its user unit) on the first Secret
# Service call; named apart from gnome-keyring's org.freedesktop.secrets.service.
DBUS_SERVICES := org.freedesktop.secrets.apphome.service

PREFIX     ?= /usr/local
DESTDIR    ?=
BINDIR     := $(PREFIX)/bin
PKGLIBDIR  := $(PREFIX)/lib/apphome
MANDIR     := $(PREFIX)/share/man
BASHCOMPDIR := $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  := $(PREFIX)/share/zsh/vendor-completions
FISHCOMPDIR := $(PREFIX)/share/fish/vendor_completions.d
USERUNITDIR := $(PREFIX)/lib/systemd/user
DBUSSERVICEDIR := $(PREFIX)/share/dbus-1/services

.PHONY: all build release deps demo-deps test check test-integration demo bench clean install uninstall deb print-executables print-version

all: build

deps:
	@scripts/install-deps.sh $(PACKAGES)

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build $(RELEASE_FLAGS)

# Two stages (docs/testing.md): `make check`, the unit and in-process tests (no end-to-end
# suite), then `make test-integration`, the suites named in Tests/integration-suites.txt
# (real daemons, real clients; the installation test packages the debug build with
# packaging/build-deb.sh: its executables link the Swift runtime statically, as release
# does). Each prints its wall and CPU time at its end, pass or fail. There is one build,
# made once: `swift build --build-tests` builds the executables the end-to-end tests run
# and the tests, and every `swift test` after it runs with --skip-build. No release build:
# it would double the cold CPU time of `make test` (make demo, bench and deb build it).
test:
	$(MAKE) --no-print-directory check PREPARE_INTEGRATION=1
	$(MAKE) --no-print-directory test-integration

# The build `make check` and `make test-integration` share: no debug information (-gnone), which
# is a sixth of the cold build's CPU and nothing a test reads (failures name their file and line
# from the source). `make check TEST_BUILD_FLAGS=` keeps it; a plain `swift build` or `swift test`
# builds with it, so alternating with them rebuilds everything.
TEST_BUILD_FLAGS ?= -Xswiftc -gnone

# The integration suites as one regular expression (for --filter and --skip).
INTEGRATION_SUITES := $(shell grep -v -e '^[[:space:]]*\#' -e '^[[:space:]]*$$' Tests/integration-suites.txt 2>/dev/null | paste -sd'|')
# Runs a stage's commands (sh -e) and prints the stage's time at its end, pass or fail.
STAGE = /usr/bin/time -f "make $@: %e s wall, %U s user + %S s system CPU, exit status %x" sh -ec

# `make test` (PREPARE_INTEGRATION=1) makes the integration stage's venvs in the background
# while these tests run: they leave most of the CPU idle.
check: deps
	@$(STAGE) '\
	  $(SWIFT) build --build-tests $(TEST_BUILD_FLAGS); \
	  if [ -n "$(PREPARE_INTEGRATION)" ]; then scripts/integration-fixtures.sh >.build/integration-fixtures.log 2>&1 & fi; \
	  status=0; APPHOME_TEST_VIA_MAKE=1 scripts/with-keyring.sh $(SWIFT) test --skip-build --skip "$(INTEGRATION_SUITES)" || status=$$?; \
	  wait; exit $$status'

# The passes over the integration suites, the end-to-end one through prefsd beside the first:
# scripts/integration-passes.sh.
test-integration: deps
	@$(STAGE) '\
	  $(SWIFT) build --build-tests $(TEST_BUILD_FLAGS); \
	  scripts/integration-fixtures.sh; \
	  SWIFT=$(SWIFT) scripts/integration-passes.sh "$(INTEGRATION_SUITES)"'

demo-deps:
	@scripts/install-deps.sh $(BUILD_PACKAGES) $(DEMO_PACKAGES)

demo: demo-deps
	$(SWIFT) build $(RELEASE_FLAGS)
	@BIN_DIR=$(RELEASE_BIN) examples/demo.sh

bench: deps release
	@BIN_DIR=$(RELEASE_BIN) bench/run.sh

clean:
	rm -rf .build

# Installs what `make release` built (run `make release` first as yourself when
# installing with sudo): the executables, their man pages, the bash, zsh and fish completions and
# prefsd's systemd user units, whose ExecStart names $(BINDIR)/prefsd.
install:
	@for e in $(EXECUTABLES) $(HELPERS); do [ -x $(RELEASE_BIN)/$$e ] || { echo "install: $(RELEASE_BIN)/$$e missing; run 'make release' first" >&2; exit 1; }; done
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(PKGLIBDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(BASHCOMPDIR) \
		$(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR) $(DESTDIR)$(USERUNITDIR) $(DESTDIR)$(DBUSSERVICEDIR)
	install -m 0755 $(addprefix $(RELEASE_BIN)/,$(EXECUTABLES)) $(DESTDIR)$(BINDIR)/
	install -m 0755 $(addprefix $(RELEASE_BIN)/,$(HELPERS)) $(DESTDIR)$(PKGLIBDIR)/
	for m in $(MANPAGES); do install -m 0644 $$m $(DESTDIR)$(MANDIR)/man$${m##*.}/; done
	install -m 0644 $(BASH_COMPLETIONS) $(DESTDIR)$(BASHCOMPDIR)/
	install -m 0644 $(ZSH_COMPLETIONS) $(DESTDIR)$(ZSHCOMPDIR)/
	install -m 0644 $(FISH_COMPLETIONS) $(DESTDIR)$(FISHCOMPDIR)/
	install -m 0644 examples/systemd/prefsd.socket $(DESTDIR)$(USERUNITDIR)/
	sed 's|^ExecStart=[^ ]*/prefsd |ExecStart=$(BINDIR)/prefsd |' examples/systemd/prefsd.service > $(DESTDIR)$(USERUNITDIR)/prefsd.service
	chmod 0644 $(DESTDIR)$(USERUNITDIR)/prefsd.service
	sed 's|^ExecStart=[^ ]*/apphome-secretd|ExecStart=$(BINDIR)/apphome-secretd|' examples/systemd/apphome-secretd.service > $(DESTDIR)$(USERUNITDIR)/apphome-secretd.service
	sed 's|^Exec=.*|Exec=$(BINDIR)/apphome-secretd|' examples/dbus/org.freedesktop.secrets.apphome.service > $(DESTDIR)$(DBUSSERVICEDIR)/org.freedesktop.secrets.apphome.service
	chmod 0644 $(DESTDIR)$(USERUNITDIR)/apphome-secretd.service $(DESTDIR)$(DBUSSERVICEDIR)/org.freedesktop.secrets.apphome.service

# The shipped executables, for the installation test.
print-executables:
	@echo $(EXECUTABLES)

# The version (packaging/build-deb.sh and the packaging test read it here).
print-version:
	@echo $(VERSION)

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(EXECUTABLES))
	rm -f $(addprefix $(DESTDIR)$(PKGLIBDIR)/,$(HELPERS))
	rmdir $(DESTDIR)$(PKGLIBDIR) 2>/dev/null || true
	for m in $(MANPAGES); do rm -f $(DESTDIR)$(MANDIR)/man$${m##*.}/$${m##*/}; done
	rm -f $(addprefix $(DESTDIR)$(BASHCOMPDIR)/,$(notdir $(BASH_COMPLETIONS)))
	rm -f $(addprefix $(DESTDIR)$(ZSHCOMPDIR)/,$(notdir $(ZSH_COMPLETIONS)))
	rm -f $(addprefix $(DESTDIR)$(FISHCOMPDIR)/,$(notdir $(FISH_COMPLETIONS)))
	rm -f $(addprefix $(DESTDIR)$(USERUNITDIR)/,$(USER_UNITS))
	rm -f $(addprefix $(DESTDIR)$(DBUSSERVICEDIR)/,$(DBUS_SERVICES))

# A Debian package from a staged `make install` (PREFIX=/usr), built with dpkg-deb and
# checked with lintian: .build/deb/apphome_VERSION_ARCH.deb. See packaging/.
deb: deps release
	packaging/build-deb.sh

# Recompile the embedded settings-bundle schema after editing Schemas/settings-bundle.schema.json.
.PHONY: schemas
schemas:
	python3 scripts/compile-settings-schema.py
