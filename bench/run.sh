#!/bin/sh
# make bench: every benchmark, each a benchmark run (not a timed test). Each prints its own
# figures, and adds its headline ones (with their goals and same-run peers) to one table at the end.
# Every benchmark runs even if one before it failed; the failures are named at the end, and make
# bench fails if there was one.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=$(mktemp -d /var/tmp/firebreak-bench.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
failed=""
# Each benchmark adds its figures here (bench/figures.py); the table of all is printed at the end
# and kept as JSON under build/bench, one file per commit.
BENCH_RESULTS=$DIR/figures.jsonl
export BENCH_RESULTS
# run NAME COMMAND...: one benchmark, timed; a failure is remembered, not fatal.
run() {
	name=$1
	shift
	start=$(date +%s)
	if "$@"; then
		echo "   ($name: $(($(date +%s) - start)) s)"
	else
		echo "bench: $name FAILED (exit $?)" >&2
		failed="$failed $name"
	fi
}
run writer "$ROOT/build/bench/bench_writer" "${BENCH_EVENTS:-1000000}" "$DIR"
run trace bash "$ROOT/bench/bench_trace.sh" "${BENCH_TRACE_LINES:-100000}"
run exec bash "$ROOT/bench/bench_exec.sh" "${BENCH_EXEC_RUNS:-200}"
run egress bash "$ROOT/bench/bench_egress.sh" "${BENCH_EGRESS_MIB:-1024}" "${BENCH_EGRESS_RUNS:-9}"
run collectors bash "$ROOT/bench/bench_collectors.sh" "${BENCH_COLLECTORS_REPS:-7}"
run pipeline bash "$ROOT/bench/bench_pipeline.sh" "${BENCH_PIPELINE_N:-1000000}"
run memory bash "$ROOT/bench/bench_memory.sh" "${BENCH_MEMORY_SECONDS:-10}"
run kill bash "$ROOT/bench/bench_kill.sh" "${BENCH_KILL_TRIALS:-5000}"
run hardrules bash "$ROOT/bench/bench_hardrules.sh" "${BENCH_HARDRULES_N:-200}"
run http bash "$ROOT/bench/bench_http.sh" "${BENCH_HTTP_EVENTS:-100000}" "${BENCH_HTTP_SANDBOXES:-200}"
run replay bash "$ROOT/bench/bench_replay.sh" "${BENCH_REPLAY_EVENTS:-1000000}"
run file bash "$ROOT/bench/bench_file.sh" "${BENCH_FILE_REPS:-7}"
run dns bash "$ROOT/bench/bench_dns.sh" "${BENCH_DNS_REPS:-9}" "${BENCH_DNS_LOOKUPS:-2000}"
run proxy bash "$ROOT/bench/bench_proxy.sh" "${BENCH_PROXY_REQUESTS:-2000}" "${BENCH_PROXY_MIB:-1024}" "${BENCH_PROXY_RUNS:-5}" "${BENCH_PROXY_SANDBOXES:-100}" "${BENCH_PROXY_CREATES:-10}"
python3 "$ROOT/bench/figures.py" table "$BENCH_RESULTS" "$ROOT/build/bench/results"
[ -z "$failed" ] || echo "(no figures from the benchmarks that failed:$failed)"
if [ -n "$failed" ]; then
	echo "bench: failed:$failed" >&2
	exit 1
fi
