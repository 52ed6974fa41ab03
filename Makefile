# AppHome: `make demo` and `make test` are all a fresh Debian 12 machine
# with the Swift toolchain needs; each installs what is missing first.

SWIFT       ?= swift
DEBUG_BIN   := .build/debug
RELEASE_BIN := .build/release
# The fast start-up (static linking) is set in Package.swift, so that a plain
# `swift build -c release` makes the same binaries as this Makefile.
RELEASE_FLAGS := -c release

# Debian packages, by use. `make demo` installs only BUILD_PACKAGES and DEMO_PACKAGES;
# `make test`, `make bench` and `make deb` install all of them.
# The build: pkg-config and the C libraries linked through .systemLibrary targets
# (libsodium: hashing and the keychain's encryption; SQLite: backups of databases in
# a home; libsecret and glib: the keychain's device key in the Secret Service).
BUILD_PACKAGES := pkg-config libsodium-dev libsqlite3-dev libsecret-1-dev libglib2.0-dev
# The demo (examples/demo.sh): python3 names a backup object by its hash.
DEMO_PACKAGES  := python3
# The tests and benchmarks: their peers (libplist, gsettings/dconf, sqlite3, secret-tool,
# gnome-keyring), a session bus, hyperfine, gcc for the bench's C peers.
TEST_PACKAGES  := python3 libplist-utils libplist-dev hyperfine \
                  libglib2.0-bin dconf-gsettings-backend dconf-service dconf-cli dbus dbus-daemon \
                  sqlite3 gnome-keyring libsecret-tools gcc
# The Python clients' tests (keyring, ansible-core from PyPI) make virtual environments.
TEST_PACKAGES  += python3-venv
# The package (`make deb`) and its test: Debian's own tools and man to render the pages.
TEST_PACKAGES  += dpkg-dev lintian man-db
PACKAGES := $(BUILD_PACKAGES) $(TEST_PACKAGES)

# What `make install` and `make deb` ship. One more executable is one more word in
# EXECUTABLES (and its page in man/, NAME.1 or NAME.8); bench and test-only
# executables (plistbench, prefsbench, keychainbench, apphome-crashing) are never here.
EXECUTABLES := defaults apphome security prefsd git-credential-apphome plutil
MANPAGES    := $(foreach e,$(EXECUTABLES),$(firstword $(wildcard man/$(e).1 man/$(e).8) man/$(e).1))
COMPLETIONS := $(wildcard completions/*)
USER_UNITS  := prefsd.socket prefsd.service

PREFIX     ?= /usr/local
DESTDIR    ?=
BINDIR     := $(PREFIX)/bin
MANDIR     := $(PREFIX)/share/man
BASHCOMPDIR := $(PREFIX)/share/bash-completion/completions
USERUNITDIR := $(PREFIX)/lib/systemd/user

.PHONY: all build release deps demo-deps test demo bench clean install uninstall deb print-executables

all: build

deps:
	@scripts/install-deps.sh $(PACKAGES)

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build $(RELEASE_FLAGS)

# The release build first: the installation test packages it (make deb), as shipped.
test: deps
	$(SWIFT) build $(RELEASE_FLAGS)
	$(SWIFT) build
	# PyPI's keyring and contrib/python-keyring in .build/venv-keyring (made once, reused).
	scripts/python-keyring-venv.sh >/dev/null
	# ansible-core for the Ansible module's tests, into a cached virtual environment.
	scripts/ansible-venv.sh .build/venv-ansible
	APPHOME_TEST_VIA_MAKE=1 APPHOME_TEST_RELEASE_BIN=$(CURDIR)/$(RELEASE_BIN) scripts/with-keyring.sh $(SWIFT) test
	# The tests that lock the keyring, alone (they lock the one collection a run shares).
	APPHOME_TEST_LOCKING=1 scripts/with-keyring.sh $(SWIFT) test --skip-build --filter LockedKeyringTests
	# The end-to-end suite again, every command through a prefsd started per test. The
	# reliability suite starts its own prefsd whatever the mode, so it runs once, above.
	APPHOME_TEST_PREFSD=daemon $(SWIFT) test --skip-build --filter EndToEndTests --skip PrefsdReliabilityTests

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
# installing with sudo): the executables, their man pages, the bash completion and
# prefsd's systemd user units, whose ExecStart names $(BINDIR)/prefsd.
install:
	@for e in $(EXECUTABLES); do [ -x $(RELEASE_BIN)/$$e ] || { echo "install: $(RELEASE_BIN)/$$e missing; run 'make release' first" >&2; exit 1; }; done
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(USERUNITDIR)
	install -m 0755 $(addprefix $(RELEASE_BIN)/,$(EXECUTABLES)) $(DESTDIR)$(BINDIR)/
	for m in $(MANPAGES); do install -m 0644 $$m $(DESTDIR)$(MANDIR)/man$${m##*.}/; done
	install -m 0644 $(COMPLETIONS) $(DESTDIR)$(BASHCOMPDIR)/
	install -m 0644 examples/systemd/prefsd.socket $(DESTDIR)$(USERUNITDIR)/
	sed 's|^ExecStart=[^ ]*/prefsd |ExecStart=$(BINDIR)/prefsd |' examples/systemd/prefsd.service > $(DESTDIR)$(USERUNITDIR)/prefsd.service
	chmod 0644 $(DESTDIR)$(USERUNITDIR)/prefsd.service

# The shipped executables, for the installation test.
print-executables:
	@echo $(EXECUTABLES)

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(EXECUTABLES))
	for m in $(MANPAGES); do rm -f $(DESTDIR)$(MANDIR)/man$${m##*.}/$${m##*/}; done
	rm -f $(addprefix $(DESTDIR)$(BASHCOMPDIR)/,$(notdir $(COMPLETIONS)))
	rm -f $(addprefix $(DESTDIR)$(USERUNITDIR)/,$(USER_UNITS))

# A Debian package from a staged `make install` (PREFIX=/usr), built with dpkg-deb and
# checked with lintian: .build/deb/apphome_VERSION_ARCH.deb. See packaging/.
deb: deps release
	packaging/build-deb.sh

# Recompile the embedded settings-bundle schema after editing Schemas/settings-bundle.schema.json.
.PHONY: schemas
schemas:
	python3 scripts/compile-settings-schema.py
