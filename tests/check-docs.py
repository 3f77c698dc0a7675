#!/usr/bin/env python3
"""Every file of the repository a document names must be in the repository.

Reads README.md and docs/*.md for paths under the project's top-level folders (`enforcer/exec.c`,
`tests/integration/84-step-isolation.sh`) and fails, naming document and line, for each that is
not there. A path may leave out its extension (`store/sink` names store/sink.c), name a test by
its number (`tests/integration/64`), or be a pattern (NAME, NN, `*`); examples of operands that
are not the repository's files are listed below, each with why.
"""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOLDERS = ("bench", "cli", "collectors", "dashboards", "detectors", "docs", "enforcer",
           "examples", "fuzz", "lib", "monitor", "policy", "schema", "store", "tests")
PATH = re.compile(r"(?<![\w/.~$-])((?:%s)/[\w./-]*\w)" % "|".join(FOLDERS))
PLACEHOLDER = re.compile(r"\bN+\b|NAME|NNN|[*]")
# Paths a document shows as operands or examples, not as the repository's files.
EXAMPLES = {
    "tests/unit/test_a.py": "docs/policy.md: a pytest operand the path rules allow",
    "tests/.git/config": "docs/policy.md: an operand the path rules refuse",
}


def exists(path, isfile):
    if isfile(path):
        return True
    if any(isfile(path + ext) for ext in (".c", ".h", ".sh", ".py", ".md")):
        return True
    # A test or bench named by its number: tests/integration/64 is 64-*.sh.
    return bool(glob.glob(os.path.join(ROOT, path + "-*")))


def check(name, text, isfile):
    """The (document, line, path) of every path in text that is not there."""
    missing = []
    for n, line in enumerate(text.splitlines(), 1):
        for m in PATH.finditer(line):
            path = m.group(1)
            if PLACEHOLDER.search(path) or ".." in path or path in EXAMPLES:
                continue
            if not exists(path, isfile):
                missing.append((name, n, path))
    return missing


def self_test():
    """The check finds a missing file and passes a present one, with or without extension."""
    present = {"enforcer/exec.c", "store/sink.c"}
    text = "see `enforcer/exec.c` and store/sink,\nand enforcer/gone.c (NAME: collectors/NAME)\n"
    found = check("t.md", text, lambda p: p in present)
    return found == [("t.md", 2, "enforcer/gone.c")]


def main():
    if not self_test():
        print("check-docs: its self-test failed")
        return 1
    docs = ["README.md"] + sorted(glob.glob("docs/*.md", root_dir=ROOT))
    missing = []
    for d in docs:
        with open(os.path.join(ROOT, d)) as f:
            missing += check(d, f.read(), lambda p: os.path.exists(os.path.join(ROOT, p)))
    for d, n, path in missing:
        print("%s:%d: names %s, which is not in the repository" % (d, n, path))
    if missing:
        print("check-docs: %d paths the documents name are missing" % len(missing))
        return 1
    print("check-docs: %d documents name only files that are there (and the check finds a "
          "missing one in its self-test)" % len(docs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
