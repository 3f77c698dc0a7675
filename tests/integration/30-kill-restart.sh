#!/bin/bash
# 100,000 trace lines from 4 concurrent clients; firebreakd is SIGKILLed mid-stream and restarted;
# the clients (firebreak trace --retry-for) resend what was not acknowledged. Afterwards the store
# holds every line exactly once: an acknowledged line survived the crash (the client never sends
# it again), and a line stored but not yet acknowledged was recognised as a duplicate.
. "$(dirname "$0")/../lib.sh"
fb_setup

CLIENTS=4
CALLS=12500 # per client; two lines (start, end) per call: 4 * 12,500 * 2 = 100,000 lines
TOTAL=$((CLIENTS * CALLS * 2))

start_daemon
check "register" "$FB" register kill-restart

for c in $(seq $CLIENTS); do
	awk -v c="$c" -v n="$CALLS" 'BEGIN {
		for (i = 1; i <= n; i++) {
			s = c * 1000000 + i
			printf "{\"gen_ai.operation.name\":\"execute_tool\",\"gen_ai.tool.name\":\"run_tests\",\"gen_ai.tool.call.id\":\"c%d-%d\",\"firebreak.step\":%d,\"phase\":\"start\"}\n", c, i, s
			printf "{\"gen_ai.operation.name\":\"execute_tool\",\"gen_ai.tool.name\":\"run_tests\",\"gen_ai.tool.call.id\":\"c%d-%d\",\"firebreak.step\":%d,\"phase\":\"end\",\"exit_code\":0}\n", c, i, s
		}
	}' >"$T/client-$c.jsonl"
done

# Each client's last 100 lines wait 3 s behind the rest: the kill below lands mid-stream or, where
# the store took everything before the status poll saw a quarter (it stored all 100,000 lines
# between the poll and the kill once), while they wait: some client always has to reconnect.
client_pids=""
for c in $(seq $CLIENTS); do
	{
		head -n "$((2 * CALLS - 100))" "$T/client-$c.jsonl"
		sleep 3
		tail -n 100 "$T/client-$c.jsonl"
	} | "$FB" trace kill-restart --retry-for 60s 2>"$T/client-$c.err" &
	client_pids="$client_pids $!"
	FB_PIDS="$FB_PIDS $!"
done

# Kill the daemon once a fair part, but not all, is stored.
stored=0
for _ in $(seq 600); do
	stored=$("$FB" status --json 2>/dev/null |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["writer"]["events"])' 2>/dev/null)
	[ "${stored:-0}" -ge $((TOTAL / 4)) ] && break
	sleep 0.02
done
kill -KILL "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
[ "${stored:-0}" -ge $((TOTAL / 4)) ] || fail "only ${stored:-0} lines stored before the kill"
ok "SIGKILLed firebreakd with about $stored of $TOTAL lines stored"
sleep 0.3
start_daemon
ok "restarted firebreakd"

rc_all=0
for pid in $client_pids; do
	wait "$pid" || { rc=$?; echo "client pid $pid exited $rc" >&2; rc_all=1; }
done
cat "$T"/client-*.err
[ $rc_all -eq 0 ] || fail "a trace client did not get every line acknowledged"
ok "every client had all its lines acknowledged"
grep -q "reconnects" "$T/client-1.err" || fail "no client summary"
reconnects=$(cat "$T"/client-*.err | sed -n 's/.* \([0-9]*\) reconnects$/\1/p' | awk '{s += $1} END {print s}')
[ "$reconnects" -ge 1 ] || fail "no client had to reconnect: the kill was not mid-stream"
ok "$reconnects reconnects across the clients"

"$FB" timeline kill-restart --json >"$T/timeline.jsonl" || fail "timeline"
assert_eq "$(wc -l <"$T/timeline.jsonl")" "$TOTAL" "the timeline holds $TOTAL lines"
uniq=$(sed -n 's/.*"kind":"\([a-z_.]*\)".*"call_id":"\([^"]*\)".*/\2 \1/p' "$T/timeline.jsonl" | sort -u | wc -l)
assert_eq "$uniq" "$TOTAL" "each (call id, phase) appears exactly once"
for c in $(seq $CLIENTS); do
	n=$(grep -c "\"call_id\":\"c$c-" "$T/timeline.jsonl")
	assert_eq "$n" "$((CALLS * 2))" "client $c: all its lines are there"
done
stop_daemon
ok "SIGTERM: exit 0"
