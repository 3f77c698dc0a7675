#!/usr/bin/env python3
"""
The include rules of docs/architecture.md, checked (make test runs this).

A folder is a room: its files include, by a path from the top ("store/writer.h"), only the
headers of the rooms below it, and only their doors. A header of the file's own folder, or of
lib/, is included by its bare name. Every include must name a file that exists; the rooms below
a room are those of RULES, which must themselves form no circle. Exit status 1 lists every
breach, with the file and line.
"""
import os
import re
import subprocess
import sys

# Each room and the rooms it may include. lib/ is the base: every room may include it.
RULES = {
    "lib": [],
    "policy": [],
    "store": ["policy"],
    "detectors": ["policy", "store"],
    "collectors": ["store"],
    "collectors/*": ["policy", "store", "collectors"],
    "enforcer": ["policy"],
    "monitor/http": ["policy", "store", "detectors"],
    "monitor/export": ["policy", "store", "detectors"],
    "monitor": ["policy", "store", "detectors", "collectors", "collectors/*", "monitor/http",
                "monitor/export"],
    "cli": ["policy", "store", "detectors", "enforcer"],
}

# The headers other rooms may include, where a room keeps some to itself. Elsewhere every header
# but a *-internal.h is a door. A collector shows only its events API: its reader, its kernel
# half and its record layout are its own.
DOORS = {
    "collectors/*": [r"-events\.h$"],
    "monitor/http": [r"^http-main\.h$", r"^http-tokens\.h$"],
    "monitor/export": [r"^export-main\.h$"],
}

# Generated headers, found under build/ (the kernel's types, libbpf skeletons).
GENERATED = re.compile(r"^(vmlinux\.h|[a-z0-9-]+\.skel\.h)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def room(path):
    """The room a file is in: its folder, or None for files the rules do not cover."""
    d = os.path.dirname(path)
    if d.startswith("collectors/"):
        return d
    return d if d in RULES else None


def rule_key(r):
    return "collectors/*" if r.startswith("collectors/") else r


def may_include(src, dst):
    if dst == src or dst == "lib":
        return True
    allowed = RULES[rule_key(src)]
    return dst in allowed or rule_key(dst) in allowed


def is_door(dst_room, name):
    if name.endswith("-internal.h"):
        return False
    pats = DOORS.get(rule_key(dst_room))
    return pats is None or any(re.search(p, name) for p in pats)


def rules_have_no_circle():
    seen, done = set(), set()

    def visit(r, trail):
        if r in done:
            return None
        if r in seen:
            return trail + [r]
        seen.add(r)
        for n in RULES[r]:
            c = visit(n, trail + [r])
            if c:
                return c
        done.add(r)
        return None

    for r in RULES:
        c = visit(r, [])
        if c:
            return c
    return None


def check(files, read):
    """The breaches among files (paths), each read with read(path) -> its lines."""
    present = set(files)
    errors = []
    circle = rules_have_no_circle()
    if circle:
        errors.append("the rules themselves have a circle: " + " -> ".join(circle))
    for f in files:
        src = room(f)
        if src is None or not (f.endswith(".c") or f.endswith(".h")):
            continue
        for n, line in enumerate(read(f), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            name = m.group(1)
            where = "%s:%d: \"%s\"" % (f, n, name)
            if "/" not in name:
                if GENERATED.match(name):
                    continue
                if os.path.join(os.path.dirname(f), name) in present:
                    continue
                if "lib/" + name in present:
                    continue
                errors.append(where + ": no such header in this folder or lib/ (name other "
                              "folders' headers by their path)")
                continue
            if name not in present:
                errors.append(where + ": no such file")
                continue
            dst = room(name)
            if dst is None:
                errors.append(where + ": not a room's header")
            elif dst == src:
                errors.append(where + ": a header of the same folder is included by its name")
            elif dst == "lib":
                errors.append(where + ": lib/ headers are included by their name")
            elif not may_include(src, dst):
                errors.append(where + ": %s may not include %s (docs/architecture.md)"
                              % (src, dst))
            elif not is_door(dst, os.path.basename(name)):
                errors.append(where + ": not one of %s's public headers" % dst)
    return errors


def self_test():
    """Each kind of breach, in a made-up tree, must be found: a check that cannot fail is none."""
    tree = {
        "lib/log.h": [],
        "store/store.h": ['#include "log.h"'],
        "store/store-internal.h": [],
        "collectors/proc/proc-events.h": [],
        "collectors/proc/proc-trace.h": [],
        "monitor/daemon.h": [],
        "monitor/ok.c": ['#include "daemon.h"', '#include "store/store.h"',
                         '#include "collectors/proc/proc-events.h"'],
        "store/up.c": ['#include "monitor/daemon.h"'],
        "store/inner.c": ['#include "store/store.h"'],
        "monitor/lib.c": ['#include "lib/log.h"'],
        "monitor/internal.c": ['#include "store/store-internal.h"'],
        "monitor/collector.c": ['#include "collectors/proc/proc-trace.h"'],
        "monitor/bare.c": ['#include "store.h"'],
        "monitor/gone.c": ['#include "store/nothing.h"'],
        "collectors/proc/sideways.c": ['#include "monitor/daemon.h"'],
    }
    want = {"store/up.c", "store/inner.c", "monitor/lib.c", "monitor/internal.c",
            "monitor/collector.c", "monitor/bare.c", "monitor/gone.c",
            "collectors/proc/sideways.c"}
    found = {e.split(":")[0] for e in check(sorted(tree), lambda f: tree[f])}
    if found != want:
        print("check-includes: its self-test failed: found %s, wanted %s"
              % (sorted(found), sorted(want)))
        return 1
    return 0


def main():
    top = subprocess.check_output(["git", "rev-parse", "--show-toplevel"]).decode().strip()
    os.chdir(top)
    if self_test():
        return 1
    files = subprocess.check_output(["git", "ls-files", "*.c", "*.h"]).decode().split()
    errors = check(files, lambda f: open(f, encoding="utf-8"))
    for e in errors:
        print(e)
    if errors:
        print("check-includes: %d breaches of the layout's rules" % len(errors))
        return 1
    print("check-includes: %d files keep the layout's rules (and the check finds each kind of "
          "breach in its self-test)" % len(files))
    return 0


if __name__ == "__main__":
    sys.exit(main())
