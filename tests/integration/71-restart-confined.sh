#!/bin/bash
# A monitor restarted while a confined step runs confines it again: the step's tool is known again
# from the store (its events keep their tool), and an out-of-scope exec after the restart is still
# killed in the kernel (its marker never appears), then frozen by the verdict.
. "$(dirname "$0")/../lib.sh"
fb_setup
start_daemon
create_sandbox rc1 "$FB_ROOT/tests/policies/confined.json"
printf 'import subprocess, time\ntime.sleep(2)\nsubprocess.run(["/usr/bin/touch", "/workspace/marker"])\ntime.sleep(30)\n' >"$T/slow.py"
copy_in rc1 "$T/slow.py"
"$FB" exec rc1 --tool run --step 1 -- python3 /workspace/slow.py >/dev/null 2>&1 &
RUN=$!
FB_PIDS="$FB_PIDS $RUN"
sleep 0.5
stop_daemon
start_daemon
grep -q "steps found still running" "$FB_LOG" || fail "the restarted monitor did not find the running step"
grep -q "step 1: its execs are confined again" "$FB_LOG" || fail "the running step was not confined again"
ok "the restarted monitor found step 1 running and confined it again"
wait_cgroup rc1 frozen 1 5 || fail "the out-of-scope exec after the restart did not get rc1 frozen"
init=$(state_field rc1 init_pid)
[ -d "/proc/$init/root/workspace" ] || fail "cannot see rc1's workspace"
[ -e "/proc/$init/root/workspace/marker" ] && fail "touch ran after the restart: the marker exists"
ok "after the restart, the out-of-scope touch was killed before it ran (no marker)"
wait_event rc1 verdict || fail "the verdict was not recorded"
"$FB" timeline rc1 --step 1 --json | python3 -c '
import json, sys
ev = [json.loads(l) for l in sys.stdin]
touch = [e for e in ev if e["kind"] == "proc.exec" and e["fields"]["path"] == "/usr/bin/touch"]
assert touch and touch[0]["fields"].get("killed_in_kernel") is True, touch
assert touch[0]["tool"] == "run", touch
' || fail "the touch after the restart"
ok "its exec event says killed_in_kernel and names the tool, known again after the restart"
check "kill rc1" "$FB" kill rc1
wait "$RUN" 2>/dev/null
check "destroy rc1" "$FB" destroy rc1
stop_daemon
