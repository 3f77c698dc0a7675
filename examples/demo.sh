#!/bin/sh
# make demo: the main job end to end on the embedded SQLite default, in a temporary state dir.
# Starts firebreakd, feeds it a scripted agent trace (a dozen tool calls, step 14 annotated as
# coerced), prints the sandbox's timeline and the coerced step, stops the daemon, cleans up.
# (Later parts replace the script with real sandboxes attacked in the test world.)
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FB=$ROOT/build/firebreak
FBD=$ROOT/build/firebreakd
STATE=$(mktemp -d /tmp/firebreak-demo.XXXXXX)
PID=""

cleanup() {
	if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then
		kill -TERM "$PID"
		sleep 0.2
	fi
	rm -rf "$STATE"
}
trap cleanup EXIT INT TERM

export FIREBREAK_DB="$STATE/firebreak.db" FIREBREAK_RUNTIME_DIR="$STATE/run"
echo "== starting firebreakd (store $FIREBREAK_DB)"
"$FBD" --db "$FIREBREAK_DB" --runtime-dir "$FIREBREAK_RUNTIME_DIR"
PID=$(cat "$FIREBREAK_RUNTIME_DIR/firebreakd.pid")

echo "== registering sandbox demo-agent and streaming the agent's tool-call trace"
"$FB" register demo-agent
"$FB" trace demo-agent <"$ROOT/examples/agent-trace.jsonl"

echo
echo "== firebreak timeline demo-agent"
"$FB" timeline demo-agent
echo
echo "== the coerced step and what followed it (firebreak timeline demo-agent --step 14-15)"
"$FB" timeline demo-agent --step 14-15
echo
"$FB" ps

kill -TERM "$PID"
for _ in $(seq 100); do
	kill -0 "$PID" 2>/dev/null || break
	sleep 0.05
done
PID=""
echo
echo "== firebreakd stopped; demo done"
