"""A keyring backend on AppHome's login keychain, driving its `security` command."""

import os
import shutil
import subprocess

from keyring import backend
from keyring.errors import PasswordDeleteError, PasswordSetError, KeyringError

__all__ = ["AppHomeKeyring"]

# `security`'s exit status when no item matches (errSecItemNotFound & 0xff).
NOT_FOUND = 44


def _root():
    """The AppHome root as AppHome's commands find it, or None."""
    root = os.environ.get("APPHOME_ROOT")
    if root:
        return root
    data = os.environ.get("XDG_DATA_HOME")
    if data and os.path.isabs(data):
        return os.path.join(data, "apphome")
    home = os.environ.get("HOME")
    if home:
        return os.path.join(home, ".local", "share", "apphome")
    return None


def _security():
    """The `security` executable: APPHOME_SECURITY, else the one on PATH."""
    return os.environ.get("APPHOME_SECURITY") or shutil.which("security")


class AppHomeKeyring(backend.KeyringBackend):
    """Generic passwords in AppHome's login keychain.

    keyring's service is the item's service (`-s`), its username the
    item's account (`-a`). Secrets go to `security` on standard input and
    come back on its standard output; they are never in an argument.
    """

    @backend.properties.classproperty
    def priority(cls):
        root = _root()
        if not root or not os.path.isdir(root):
            raise RuntimeError("no AppHome root")
        if not _security():
            raise RuntimeError("AppHome's security command is not on PATH")
        return 10

    def _run(self, arguments, stdin=""):
        environment = dict(os.environ)
        # The login keychain, never the keychain of the app a shell runs in.
        environment.pop("APPHOME_BUNDLE_ID", None)
        command = [_security()]
        root = _root()
        if root:
            command += ["--root", root]
        return subprocess.run(command + arguments, input=stdin, capture_output=True, text=True, env=environment)

    @staticmethod
    def _failure(result):
        return (result.stderr.strip() or "security exited with status %d" % result.returncode)

    def get_password(self, service, username):
        result = self._run(["find-generic-password", "-s", service, "-a", username, "-w"])
        if result.returncode == NOT_FOUND:
            return None
        if result.returncode != 0:
            raise KeyringError(self._failure(result))
        return result.stdout[:-1] if result.stdout.endswith("\n") else result.stdout

    def set_password(self, service, username, password):
        if "\n" in password or "\r" in password:
            raise PasswordSetError("a password for AppHome's keychain is one line")
        arguments = ["add-generic-password", "-U", "-s", service, "-a", username]
        if password:
            result = self._run(arguments, stdin=password + "\n")
        else:
            # security refuses an empty standard input; an empty password is asked for
            # explicitly (nothing secret is in the arguments).
            result = self._run(arguments + ["-w", ""])
        if result.returncode != 0:
            raise PasswordSetError(self._failure(result))

    def delete_password(self, service, username):
        result = self._run(["delete-generic-password", "-s", service, "-a", username])
        if result.returncode == NOT_FOUND:
            raise PasswordDeleteError("no password for %s in %s" % (username, service))
        if result.returncode != 0:
            raise PasswordDeleteError(self._failure(result))
