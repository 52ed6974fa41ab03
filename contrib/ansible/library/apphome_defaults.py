#!/usr/bin/python
# -*- coding: utf-8 -*-
# AppHome's Ansible module for user defaults. It takes the parameters of
# community.general.osx_defaults, so playbooks written for macOS carry over,
# plus `root` and `executable`; every change goes through the installed
# `defaults` (`defaults apply --json`), which checks settings schemas and
# managed keys the same way for Ansible as for everyone else.

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: apphome_defaults
short_description: Manage AppHome user defaults
description:
  - Reads, writes and deletes AppHome preference domains through the
    installed C(defaults) command, as community.general.osx_defaults does
    for macOS.
  - A value is written with C(defaults apply --json), so the change is
    checked against the domain's settings schema and the administrator's
    managed (forced) keys before anything is written; a forced key fails
    the task with the tool's message and C(changed=false).
  - Supports check mode (C(defaults apply --dry-run)) and diff mode.
options:
  domain:
    description: The domain (C(NSGlobalDomain) for the global domain, or a path).
    type: str
    default: NSGlobalDomain
  host:
    description: C(currentHost) for the machine's ByHost domain, or a host name.
    type: str
  key:
    description: The key. Required with I(state=present); without it, I(state=absent) removes the whole domain and I(state=list) returns it.
    type: str
  type:
    description: The type of I(value).
    type: str
    choices: [array, bool, boolean, date, float, int, integer, string, dict]
    default: string
  array_add:
    description: With I(type=array), add the items of I(value) that the stored array lacks instead of replacing it.
    type: bool
    default: false
  value:
    description: The value. Dates are C(YYYY-MM-DD HH:MM:SS), optionally with a C(+HHMM) offset (UTC when none).
    type: raw
  state:
    description: C(present) writes, C(absent) deletes, C(list) returns the value.
    type: str
    choices: [present, absent, list]
    default: present
  path:
    description: Directories searched for C(defaults), joined with C(:).
    type: str
    default: /usr/local/bin:/usr/bin:/bin
  root:
    description: The AppHome root (C(defaults --root)); by default the one C(defaults) finds itself.
    type: path
  executable:
    description: The C(defaults) to run, instead of searching I(path).
    type: path
"""

EXAMPLES = r"""
- name: Larger fonts in the editor
  apphome_defaults:
    domain: com.example.editor
    key: fontSize
    type: int
    value: 14

- name: Remove an old key
  apphome_defaults:
    domain: com.example.editor
    key: legacyTheme
    state: absent
"""

RETURN = r"""
value:
  description: The value read (I(state=list)), or the value after the task.
  returned: success
  type: raw
changes:
  description: What C(defaults apply) changed (or, in check mode, would change).
  returned: when something was written or would be
  type: list
"""

import datetime
import json
import os
import plistlib
import re
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.parsing.convert_bool import boolean

TYPES = ["array", "bool", "boolean", "date", "float", "int", "integer", "string", "dict"]
DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\s*(?:Z|([+-])(\d{2}):?(\d{2})))?$")


class ValueError_(Exception):
    pass


def to_date(value):
    """A naive UTC datetime (what plistlib writes) from text or a datetime."""
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return value.replace(microsecond=0)
    m = DATE.match(str(value).strip())
    if not m:
        raise ValueError_("invalid date %r: use YYYY-MM-DD HH:MM:SS [+HHMM]" % (value,))
    parts = [int(x) for x in m.group(1, 2, 3, 4, 5, 6)]
    when = datetime.datetime(*parts)
    if m.group(7):
        offset = datetime.timedelta(hours=int(m.group(8)), minutes=int(m.group(9)))
        when = when - offset if m.group(7) == "+" else when + offset
    return when


def scalar(kind, value):
    """`value` converted to the plist type `kind` names."""
    try:
        if kind in ("bool", "boolean"):
            return boolean(value, strict=True)
        if kind in ("int", "integer"):
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError_("invalid integer %r" % (value,))
            return int(str(value).strip()) if not isinstance(value, (int, float)) else int(value)
        if kind == "float":
            if isinstance(value, bool):
                raise ValueError_("invalid float %r" % (value,))
            return float(value)
        if kind == "date":
            return to_date(value)
        if kind == "string":
            return value if isinstance(value, str) else str(value)
    except (TypeError, ValueError) as e:
        raise ValueError_("invalid %s %r: %s" % (kind, value, e))
    raise ValueError_("unknown type %s" % kind)


def typed(kind, value):
    if kind == "array":
        items = value if isinstance(value, list) else [value]
        return [to_plist(x) for x in items]
    if kind == "dict":
        if not isinstance(value, dict):
            raise ValueError_("invalid dict %r" % (value,))
        return dict((str(k), to_plist(v)) for k, v in value.items())
    return scalar(kind, value)


def to_plist(value):
    """An item of an array or dict: its YAML type decides."""
    if isinstance(value, (bool, int, float, str, datetime.datetime, bytes)):
        return value
    if isinstance(value, list):
        return [to_plist(x) for x in value]
    if isinstance(value, dict):
        return dict((str(k), to_plist(v)) for k, v in value.items())
    if value is None:
        raise ValueError_("a property list has no null")
    return str(value)


def to_result(value):
    """A plist value as Ansible can return it (dates as text, data as hex)."""
    if isinstance(value, datetime.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S +0000")
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, list):
        return [to_result(x) for x in value]
    if isinstance(value, dict):
        return dict((k, to_result(v)) for k, v in value.items())
    return value


class Defaults(object):
    def __init__(self, module):
        self.module = module
        p = module.params
        self.executable = p["executable"] or module.get_bin_path("defaults", required=True, opt_dirs=p["path"].split(":"))
        self.leading = []
        if p["root"]:
            self.leading += ["--root", p["root"]]
        if p["host"] == "currentHost":
            self.leading += ["-currentHost"]
        elif p["host"]:
            self.leading += ["-host", p["host"]]

    def run(self, args, check_rc=False):
        return self.module.run_command([self.executable] + self.leading + args, check_rc=check_rc,
                                       environ_update={"LANG": "C.UTF-8"})

    def domain(self, domain):
        """The stored domain, or None when it does not exist."""
        rc, out, err = self.run(["export", domain, "-"])
        if rc != 0:
            if "does not exist" in err:
                return None
            self.module.fail_json(msg=err.strip() or "defaults export failed", rc=rc)
        return plistlib.loads(out.encode("utf-8"))

    def apply(self, desired, dry_run):
        """Runs `defaults apply --json` on `desired`; its parsed answer."""
        fd, path = tempfile.mkstemp(prefix="apphome-defaults-", suffix=".plist")
        try:
            with os.fdopen(fd, "wb") as f:
                plistlib.dump(desired, f, fmt=plistlib.FMT_XML)
            args = ["apply", "--json"] + (["--dry-run"] if dry_run else []) + [path]
            rc, out, err = self.run(args)
        finally:
            os.unlink(path)
        if rc != 0:
            # A refusal (a managed key, a value the schema forbids): nothing was written.
            self.module.fail_json(msg=err.strip() or "defaults apply failed", rc=rc, changed=False)
        try:
            return json.loads(out)
        except ValueError:
            self.module.fail_json(msg="defaults apply printed no JSON: %s" % out[:500], changed=False)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            domain=dict(type="str", default="NSGlobalDomain"),
            host=dict(type="str"),
            key=dict(type="str", no_log=False),
            type=dict(type="str", default="string", choices=TYPES),
            array_add=dict(type="bool", default=False),
            value=dict(type="raw"),
            state=dict(type="str", default="present", choices=["present", "absent", "list"]),
            path=dict(type="str", default="/usr/local/bin:/usr/bin:/bin"),
            root=dict(type="path"),
            executable=dict(type="path"),
        ),
        required_if=[("state", "present", ["key", "value"])],
        supports_check_mode=True,
    )
    p = module.params
    tool = Defaults(module)
    domain, key = p["domain"], p["key"]
    current = tool.domain(domain)

    if p["state"] == "list":
        if key is None:
            module.exit_json(changed=False, value=to_result(current) if current is not None else None)
        value = None if current is None else current.get(key)
        module.exit_json(changed=False, value=to_result(value) if value is not None else None)

    if p["state"] == "absent":
        if key is None:
            desired = {domain: {"$exact": True}}
        else:
            desired = {domain: {"$delete": [key]}}
    else:
        try:
            value = typed(p["type"], p["value"])
        except ValueError_ as e:
            module.fail_json(msg=str(e), changed=False)
        if p["array_add"]:
            if p["type"] != "array":
                module.fail_json(msg="array_add needs type: array", changed=False)
            stored = current.get(key) if current else None
            if stored is not None and not isinstance(stored, list):
                module.fail_json(msg="the value of %s is not an array; cannot add to it" % key, changed=False)
            stored = list(stored or [])
            value = stored + [x for x in value if x not in stored]
        desired = {domain: {key: value}}

    answer = tool.apply(desired, dry_run=module.check_mode)
    result = dict(changed=bool(answer.get("changed")), changes=answer.get("changes", []))
    if module._diff:
        # The keys that change, before and after, in the old-style notation `defaults` prints.
        changes = answer.get("changes", [])
        result["diff"] = dict(
            before_header="%s (before)" % domain, after_header="%s (after)" % domain,
            before="".join("%s = %s\n" % (c["key"], c["old_text"]) for c in changes if "old_text" in c),
            after="".join("%s = %s\n" % (c["key"], c["new_text"]) for c in changes if "new_text" in c),
        )
    if p["state"] == "present":
        result["value"] = to_result(value)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
