# AppHome: `make demo` and `make test` are all a fresh Debian 12 machine
# with the Swift toolchain needs; each installs what is missing first.

SWIFT       ?= swift
DEBUG_BIN   := .build/debug
RELEASE_BIN := .build/release
# A static Swift standard library: measured to start `defaults` faster
# (see `make bench`), which matters for a command run from shell scripts.
RELEASE_FLAGS := -c release --static-swift-stdlib

# Debian packages the build, the tests, the demo and the benchmarks use.
PACKAGES := pkg-config python3 libplist-utils libplist-dev hyperfine \
            libglib2.0-bin dconf-gsettings-backend dconf-service dbus dbus-daemon \
            libsodium-dev
# SQLite: the backup of databases in a home (libsqlite3-dev), the tests' and the bench's peer (sqlite3).
PACKAGES += libsqlite3-dev sqlite3
# The keychain: libsecret headers, and a real gnome-keyring for its integration tests.
PACKAGES += libsecret-1-dev libglib2.0-dev gnome-keyring libsecret-tools
# prefsd's bench builds an in-process GSettings peer (bench/gsettings_bench.c).
PACKAGES += gcc
# The Ansible module's tests: ansible-core from PyPI in a virtual environment.
PACKAGES += python3-venv

.PHONY: all build release deps test demo bench clean

all: build

deps:
	@scripts/install-deps.sh $(PACKAGES)

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build $(RELEASE_FLAGS)

test: deps
	$(SWIFT) build
	# ansible-core for the Ansible module's tests, into a cached virtual environment.
	scripts/ansible-venv.sh .build/venv-ansible
	APPHOME_TEST_VIA_MAKE=1 scripts/with-keyring.sh $(SWIFT) test
	# The tests that lock the keyring, alone (they lock the one collection a run shares).
	APPHOME_TEST_LOCKING=1 scripts/with-keyring.sh $(SWIFT) test --skip-build --filter LockedKeyringTests
	# The end-to-end suite again, every command through a prefsd started per test.
	APPHOME_TEST_PREFSD=daemon $(SWIFT) test --skip-build --filter EndToEndTests

demo: deps release
	@BIN_DIR=$(RELEASE_BIN) examples/demo.sh

bench: deps release
	@BIN_DIR=$(RELEASE_BIN) bench/run.sh

clean:
	rm -rf .build

# Recompile the embedded settings-bundle schema after editing Schemas/settings-bundle.schema.json.
.PHONY: schemas
schemas:
	python3 scripts/compile-settings-schema.py
