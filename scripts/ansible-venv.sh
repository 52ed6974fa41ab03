#!/bin/sh
# Makes (once) the virtual environment with ansible-core from PyPI that the
# Ansible module's tests drive (DIR/bin/ansible-playbook); reused when a
# previous run finished it (DIR/.complete).
# usage: scripts/ansible-venv.sh [DIR]   (default .build/venv-ansible)
set -eu
dir=${1:-.build/venv-ansible}
if [ -f "$dir/.complete" ] && [ -x "$dir/bin/ansible-playbook" ]; then exit 0; fi
rm -rf "$dir"
python3 -m venv "$dir"
if ! "$dir/bin/pip" install --quiet --disable-pip-version-check 'ansible-core>=2.15,<3'; then
    rm -rf "$dir"
    echo "ansible-venv: could not install ansible-core into $dir" >&2
    exit 1
fi
touch "$dir/.complete"
