#!/bin/sh
# make bench: every benchmark, each a benchmark run (not a timed test). Figures go to stdout.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=$(mktemp -d /var/tmp/firebreak-bench.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
"$ROOT/build/bench/bench_writer" "${BENCH_EVENTS:-1000000}" "$DIR"
bash "$ROOT/bench/bench_trace.sh" "${BENCH_TRACE_LINES:-100000}"
bash "$ROOT/bench/bench_exec.sh" "${BENCH_EXEC_RUNS:-200}"
bash "$ROOT/bench/bench_egress.sh" "${BENCH_EGRESS_MIB:-1024}" "${BENCH_EGRESS_RUNS:-9}"
bash "$ROOT/bench/bench_collectors.sh" "${BENCH_COLLECTORS_REPS:-7}"
bash "$ROOT/bench/bench_pipeline.sh" "${BENCH_PIPELINE_N:-1000000}"
bash "$ROOT/bench/bench_kill.sh" "${BENCH_KILL_TRIALS:-200}"
bash "$ROOT/bench/bench_hardrules.sh" "${BENCH_HARDRULES_N:-200}"
bash "$ROOT/bench/bench_http.sh" "${BENCH_HTTP_EVENTS:-100000}" "${BENCH_HTTP_SANDBOXES:-200}"
bash "$ROOT/bench/bench_replay.sh" "${BENCH_REPLAY_EVENTS:-1000000}"
bash "$ROOT/bench/bench_dns.sh" "${BENCH_DNS_REPS:-9}" "${BENCH_DNS_LOOKUPS:-2000}"
