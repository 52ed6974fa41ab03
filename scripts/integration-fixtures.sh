#!/bin/sh
# scripts/integration-fixtures.sh: makes (or finds up to date) what the integration
# suites need besides the build: the cached Python virtual environments
# (.build/venv-keyring, .build/venv-ansible, .build/venv-playwright). Each script
# holds its own lock and does nothing when its venv is already complete, so this
# may run twice at once: `make test` starts it in the background during
# `make check`'s tests (which leave most of the CPU idle), and
# `make test-integration` runs it again before its passes.
set -eu
cd "$(dirname "$0")/.."
scripts/python-keyring-venv.sh >/dev/null
scripts/ansible-venv.sh .build/venv-ansible
scripts/playwright-venv.sh >/dev/null
