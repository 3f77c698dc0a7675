#!/usr/bin/python3
"""Looks for a byte string everywhere a process inside the sandbox can look, as an attacker
hunting for a credential would: the environment and command line of every process it can see,
its own memory (every readable mapping), and every readable file under the given roots.

Usage: memscan.py NEEDLE [call=URL,VAR] ROOT...   prints one JSON line: where NEEDLE was found
(an empty list: nowhere), how many processes, mappings and files were searched, and with call=
the status of a POST to URL with "Authorization: Bearer $VAR" made first, so that what came back
is in the memory searched.
NEEDLE is the part of a secret that is not secret (its prefix): finding no prefix anywhere means
the whole is nowhere either.
"""
import http.client
import json
import os
import re
import ssl
import stat
import sys
from urllib.parse import urlsplit

# The needle is in this script's own argv and memory: a hit counts only where more of a secret
# (8 hex digits) follows it.
secret = re.compile(re.escape(sys.argv[1].encode()) + rb"[0-9a-f]{8}")
found, procs, maps, files = [], 0, 0, 0
roots, status, answer = sys.argv[2:], None, b""
if roots and roots[0].startswith("call="):
    url, var = roots.pop(0)[5:].split(",")
    u = urlsplit(url)
    conn = http.client.HTTPSConnection(u.hostname, 443, timeout=10,
                                       context=ssl.create_default_context())
    conn.request("POST", u.path, body=b"{}",
                 headers={"Authorization": "Bearer " + os.environ[var]})
    r = conn.getresponse()
    status, answer = r.status, r.read()

for pid in filter(str.isdigit, os.listdir("/proc")):
    for what in ("environ", "cmdline"):
        try:
            with open("/proc/%s/%s" % (pid, what), "rb") as f:
                if secret.search(f.read()):
                    found.append("/proc/%s/%s" % (pid, what))
        except OSError:
            continue
    procs += 1

with open("/proc/self/maps") as m, open("/proc/self/mem", "rb", 0) as mem:
    for line in m:
        span, perms = line.split()[:2]
        if not perms.startswith("r") or "[vvar" in line or "[vsyscall" in line:
            continue
        lo, hi = (int(x, 16) for x in span.split("-"))
        try:
            mem.seek(lo)
            chunk = mem.read(hi - lo)
        except (OSError, OverflowError, ValueError):
            continue
        maps += 1
        hit = secret.search(chunk)
        if hit:
            found.append("memory %s +%d" % (span, hit.start()))

# The host's read-only /usr and the kernel's /proc, /sys and /dev are the same for every sandbox
# and hold nothing the sandbox was given (/proc is searched above, per process); regular files
# only (a device may never end).
SKIP = {"/proc", "/sys", "/usr", "/dev"}
for root in roots:
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if os.path.join(dirpath, d) not in SKIP]
        for name in filenames:
            path = os.path.join(dirpath, name)
            try:
                if not stat.S_ISREG(os.lstat(path).st_mode):
                    continue
                with open(path, "rb") as f:
                    if secret.search(f.read(1 << 24)):
                        found.append(path)
                files += 1
            except OSError:
                continue

print(json.dumps({"found": found, "processes": procs, "mappings": maps, "files": files,
                  "status": status, "answer": answer.decode(errors="replace")[:400]}))
