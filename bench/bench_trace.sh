#!/bin/bash
# Trace lines per second acknowledged end to end: firebreak trace clients → trace socket → parser →
# writer → SQLite commit → ack, on a real firebreakd in a temporary directory. One and four
# concurrent clients, sync=full (every commit fsynced) and sync=normal, side by side in one run.
# Usage: bench_trace.sh [LINES_PER_CLIENT]
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FB=$ROOT/build/firebreak
FBD=$ROOT/build/firebreakd
N=${1:-100000}
T=$(mktemp -d /var/tmp/firebreak-bench.XXXXXX)
PID=""
cleanup() {
	[ -n "$PID" ] && kill -TERM "$PID" 2>/dev/null && sleep 0.3
	rm -rf "$T"
}
trap cleanup EXIT

gen() { # gen CLIENT RUN
	awk -v c="$1" -v r="$2" -v n="$N" 'BEGIN {
		for (i = 1; i <= n / 2; i++) {
			printf "{\"gen_ai.operation.name\":\"execute_tool\",\"gen_ai.tool.name\":\"run_tests\",\"gen_ai.tool.call.id\":\"r%s-c%d-%d\",\"firebreak.step\":%d,\"phase\":\"start\"}\n", r, c, i, i
			printf "{\"gen_ai.operation.name\":\"execute_tool\",\"gen_ai.tool.name\":\"run_tests\",\"gen_ai.tool.call.id\":\"r%s-c%d-%d\",\"firebreak.step\":%d,\"phase\":\"end\",\"exit_code\":0}\n", r, c, i, i
		}
	}' >"$T/in-$1"
}

run() { # run SYNC CLIENTS
	local sync=$1 clients=$2 db="$T/$1-$2.db"
	printf 'sync = %s\nlisten = off\n' "$sync" >"$T/conf"
	"$FBD" --config "$T/conf" --db "$db" --runtime-dir "$T/run"
	PID=$(cat "$T/run/firebreakd.pid")
	FIREBREAK_DB=$db FIREBREAK_RUNTIME_DIR=$T/run "$FB" register bench
	for c in $(seq "$clients"); do gen "$c" "$sync$clients"; done
	local t0 t1 pids=""
	t0=$(date +%s%N)
	for c in $(seq "$clients"); do
		FIREBREAK_RUNTIME_DIR=$T/run "$FB" trace bench --quiet <"$T/in-$c" &
		pids="$pids $!"
	done
	for p in $pids; do wait "$p"; done
	t1=$(date +%s%N)
	local stored
	stored=$(FIREBREAK_RUNTIME_DIR=$T/run "$FB" status --json | sed -n 's/.*"events":\([0-9]*\).*"batches":\([0-9]*\).*"max_batch":\([0-9]*\).*/\1 events in \2 batches, max batch \3/p')
	kill -TERM "$PID"
	while kill -0 "$PID" 2>/dev/null; do sleep 0.05; done
	PID=""
	awk -v n=$((N * clients)) -v ns=$((t1 - t0)) -v s="$sync" -v c="$clients" -v st="$stored" \
		'BEGIN { printf "  sync %-6s clients %d  %8d lines  %7.3f s  %9.0f lines/s acked  (%s)\n", s, c, n, ns / 1e9, n / (ns / 1e9), st }'
}

echo "trace ingest, end to end ($N lines per client)"
for sync in full normal; do
	for clients in 1 4; do
		run "$sync" "$clients"
	done
done
