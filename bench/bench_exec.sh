#!/bin/bash
# Runs bench_exec against a real firebreakd and two real sandboxes in a temporary directory.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FB=$ROOT/build/firebreak
T=$(mktemp -d /var/tmp/firebreak-bench.XXXXXX)
PID=""
cleanup() {
	"$FB" --runtime-dir "$T/run" destroy bench-watched >/dev/null 2>&1 || true
	"$FB" --runtime-dir "$T/run" destroy bench-unwatched >/dev/null 2>&1 || true
	"$FB" --runtime-dir "$T/run" destroy bench-create >/dev/null 2>&1 || true
	[ -n "$PID" ] && kill -TERM "$PID" 2>/dev/null && sleep 0.3
	rm -rf "$T"
}
trap cleanup EXIT
POLICY=$ROOT/tests/policies/bench.json
"$ROOT/build/firebreakd" --listen off --db "$T/fb.db" --runtime-dir "$T/run"
PID=$(cat "$T/run/firebreakd.pid")
"$FB" --runtime-dir "$T/run" create bench-watched --policy "$POLICY"
"$FB" --runtime-dir "$T/run" create bench-unwatched --policy "$POLICY" --unwatched 2>/dev/null
"$ROOT/build/bench/bench_exec" "$FB" "$T/run" bench-watched bench-unwatched "$POLICY" "${1:-200}" |
	tee "$T/out"
# make bench's table (bench/figures.py): each way in against plain fork+exec of the same run; the
# goals (issue: exec at fork+exec speed) are the launcher's, which firebreak exec and a harness use.
python3 - "$ROOT/bench" "$T/out" <<'PY'
import re, sys
sys.path.insert(0, sys.argv[1])
from figures import record
mode, base = None, {}
for line in open(sys.argv[2]):
    if line.startswith("launch latency"):
        mode = "spaced 100 ms" if "spaced" in line else "back to back"
        continue
    m = re.match(r"\s+(.+?)\s+median\s+([\d.]+) ms\s+p90\s+[\d.]+ ms\s+p99\s+([\d.]+) ms", line)
    if m and mode:
        name, med, p99 = m.group(1), float(m.group(2)), float(m.group(3))
        if name.startswith("fork+exec"):
            base = {"median": med, "p99": p99}
            continue
        launcher = name == "launcher socket (watched)"
        record("exec", "%s, %s, median" % (name, mode), med, "ms", "fork+exec", base["median"],
               ("ratio", "<=", 1.5) if launcher else None)
        record("exec", "%s, %s, p99" % (name, mode), p99, "ms", "fork+exec", base["p99"],
               ("ratio", "<=", 3) if launcher else None)
    m = re.match(r"\s+firebreak create\s+median\s+([\d.]+) ms", line)
    if m:
        record("exec", "firebreak create (no egress), median", float(m.group(1)), "ms")
PY
