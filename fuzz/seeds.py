#!/usr/bin/env python3
"""
Writes the harnesses' seed corpora (fuzz/corpus/NAME/seed-*) from the repository's own examples:
examples/, tests/policies/, the JSON of docs/ and the bundle fuzz/seed-bundle.c made. Run from
the top of the repository after `make fuzz-seeds` (which makes the bundle first); the seeds are
committed, so this runs only when the examples change. Regression inputs (crash-*) are kept.
"""
import glob
import json
import os
import re
import sqlite3

SOURCES = ["trace", "enforcer", "ebpf", "cgroup", "audit", "nflog", "detector", "monitor",
           "fanotify", "proxy"]


def write(harness, name, data):
    d = os.path.join("fuzz", "corpus", harness)
    os.makedirs(d, exist_ok=True)
    for old in glob.glob(os.path.join(d, "seed-" + name)):
        os.remove(old)
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def doc_blocks(path):
    text = open(path, encoding="utf-8").read()
    return re.findall(r"```json\n(.*?)```", text, re.S)


def policies():
    paths = ["examples/policy.json"] + sorted(glob.glob("tests/policies/*.json"))
    for p in paths:
        write("policy", os.path.basename(p), open(p, "rb").read())
    # The gate's harness loads the same files in the same order: byte 0 picks one of them.
    for i, p in enumerate(paths):
        pol = json.load(open(p))
        for j, t in enumerate(pol.get("tests", [])):
            if "argv" in t:
                data = bytes([i]) + b"\0".join(s.encode() for s in [t["tool"]] + t["argv"])
                write("gate", "%s-%d" % (os.path.basename(p), j), data)
        for tool, scope in pol.get("tools", {}).items():
            for k, c in enumerate(scope.get("commands", [])):
                argv = [c["program"].lstrip("@")] + c.get("prefix", [])
                data = bytes([i]) + b"\0".join(s.encode() for s in [tool] + argv)
                write("gate", "%s-%s-%d" % (os.path.basename(p), tool, k), data)


def traces():
    for n, line in enumerate(open("examples/agent-trace.jsonl", encoding="utf-8")):
        write("trace", "example-%02d" % n, line.rstrip("\n"))
    for n, block in enumerate(doc_blocks("docs/trace.md")):
        write("trace", "doc-%d" % n, " ".join(block.split("\n")).strip())


def config():
    rows = []
    for line in open("docs/config.md", encoding="utf-8"):
        m = re.match(r"\| `([a-z_]+)` \|[^|]*\| `([^`]*)` \|", line)
        if m:
            rows.append("%s = %s" % m.groups())
    write("config", "defaults", "# every key at its documented default\n" + "\n".join(rows) +
          "\n")
    write("config", "small", "db = /tmp/fb.db\n  listen=off  \n# c\n\nlog_level = debug\n"
          "otlp_endpoint = http://[::1]:4318/v1/traces\n")


def events():
    for n, block in enumerate(doc_blocks("docs/control.md")):
        write("event", "doc-%d" % n, block.strip())
    db = sqlite3.connect("file:fuzz/corpus/bundle/seed-example?mode=ro", uri=True)
    rows = db.execute("SELECT e.id, ts, s.name, step, tool, source, kind, pid, ppid, uid, comm, "
                      "fields FROM events e LEFT JOIN sandboxes s ON s.id = e.sandbox_id")
    seen = set()
    for (eid, ts, sb, step, tool, source, kind, pid, ppid, uid, comm, fields) in rows:
        if kind in seen:
            continue
        seen.add(kind)
        ev = {"ts": ts, "sandbox": sb or "", "step": step, "tool": tool, "source": source,
              "kind": kind, "pid": pid, "ppid": ppid, "uid": uid, "comm": comm,
              "fields": json.loads(fields or "{}"), "id": eid}
        write("event", "bundle-" + kind, json.dumps(ev, separators=(",", ":")))
        write("event", "fields-" + kind, fields or "{}")


def http_query():
    for name, q in {
        "timeline": "since=1700000000000000000&until=1800000000000000000&limit=100",
        "cursor": "limit=10000&cursor=1700000000000000000.17",
        "stream": "sandbox=task-42&kind=net.*,dns.query,tool_call.start",
        "resume": "sandbox=demo-agent&last_event_id=1234",
        "header": "@Last-Event-ID=99&kind=verdict",
        "escaped": "sandbox=task%2D42&kind=net%2E%2A&cursor=1%2E2",
    }.items():
        write("http-query", name, q)


if __name__ == "__main__":
    policies()
    traces()
    config()
    events()
    http_query()
