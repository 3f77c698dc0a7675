#!/bin/bash
# Fail closed: firebreakd killed with SIGKILL, its watchdog freezes the sandbox it watched within
# 2 s (a busy tool call's CPU time stops); a restarted firebreakd records the outage and the
# watchdog's freeze on the sandbox's timeline and thaws it. firebreakd hung (SIGSTOP) for more
# than 1.5 s: the same freeze; continued, it recovers on its own. A clean stop (SIGTERM) freezes
# nothing.
. "$(dirname "$0")/../lib.sh"
fb_setup
start_daemon
create_sandbox fc1 "$FB_ROOT/tests/policies/attack.json"
printf 'while True:\n    pass\n' >"$T/spin.py"
copy_in fc1 "$T/spin.py"
"$FB" exec fc1 --tool attack --step 1 -- python3 /workspace/spin.py >/dev/null 2>&1 &
FB_PIDS="$FB_PIDS $!"
CGD=$V2/firebreak/fc1
frozen() { awk '$1 == "frozen" { print $2 }' "$CGD/cgroup.events"; }
usage() { awk '$1 == "usage_usec" { print $2 }' "$CGD/cpu.stat"; }
sleep 0.5 # a heartbeat with the sandbox in its list has gone out

# wait_frozen WANT WHAT: cgroup.events must say frozen WANT within 2 s; prints how long it took.
wait_frozen() {
	local t0 t1
	t0=$(date +%s%N)
	for _ in $(seq 200); do
		[ "$(frozen)" = "$1" ] && break
		sleep 0.01
	done
	t1=$(date +%s%N)
	[ "$(frozen)" = "$1" ] || fail "$2: cgroup.events says frozen $(frozen) after 2 s"
	ok "$2 ($(( (t1 - t0) / 1000000 )) ms)"
}

kill -KILL "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
wait_frozen 1 "firebreakd killed: its watchdog froze the sandbox within 2 s"
u=$(usage)
sleep 0.4
[ "$(usage)" -le "$((u + 2000))" ] || fail "frozen, the tool call still ran"
ok "the tool call is stopped"

start_daemon
wait_frozen 0 "a restarted firebreakd thawed it"
wait_event fc1 action.thaw || fail "the thaw was not recorded"
"$FB" timeline fc1 --json >"$T/tl.jsonl" || fail "timeline"
python3 - "$T/tl.jsonl" <<'PY' || fail "the outage on the timeline"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
out = [e for e in ev if e["kind"] == "monitor.outage"]
assert len(out) == 1 and out[0]["fields"]["reason"] == "firebreakd exited", out
assert out[0]["fields"]["since"] < out[0]["fields"]["until"]
acts = [(e["kind"], e["fields"]["requested_by"], e["fields"]["result"]) for e in ev if e["kind"].startswith("action.")]
assert acts == [("action.freeze", "watchdog", "ok"), ("action.thaw", "recovery", "ok")], acts
PY
ok "the outage, the watchdog's freeze and the thaw are on the timeline"

kill -STOP "$DAEMON_PID"
wait_frozen 1 "firebreakd hung: its watchdog froze the sandbox within 2 s"
kill -CONT "$DAEMON_PID"
wait_frozen 0 "firebreakd continued: it noticed, recovered and thawed the sandbox"
for _ in $(seq 100); do
	[ "$("$FB" timeline fc1 --json | grep -c '"kind":"monitor.outage"')" = 2 ] && break
	sleep 0.02
done
"$FB" timeline fc1 --json | grep -c '"kind":"monitor.outage"' | grep -qx 2 || fail "the second outage is not on the timeline"
ok "the hang is the second outage on the timeline"

stop_daemon
sleep 2
assert_eq "$(frozen)" "0" "a clean stop freezes nothing"
start_daemon
check "destroy" "$FB" destroy fc1
stop_daemon
