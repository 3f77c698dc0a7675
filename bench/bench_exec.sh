#!/bin/bash
# Runs bench_exec against a real firebreakd and two real sandboxes in a temporary directory.
set -eu
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
"$ROOT/build/bench/bench_exec" "$FB" "$T/run" bench-watched bench-unwatched "$POLICY" "${1:-200}"
