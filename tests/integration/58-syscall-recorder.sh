#!/bin/bash
# The syscall flight recorder (an escalation, off by default): switched on for one sandbox, its
# tool call's syscalls arrive as sys.enter events of its step and tool with number, name and raw
# arguments (a getppid loop of 50, and a write whose fd and length are there to read); no host
# process is recorded; switched off, its programs are gone and the next call records nothing.
. "$(dirname "$0")/../lib.sh"
fb_setup
start_daemon
create_sandbox sr1 "$FB_ROOT/tests/policies/attack.json"
printf 'import os\nfor _ in range(50):\n    os.getppid()\nos.write(1, b"12345678")\n' >"$T/sys.py"
copy_in sr1 "$T/sys.py"
recorders() { bpftool prog show 2>/dev/null | grep -c 'name sys_enter'; }
before=$(recorders)

"$FB" exec sr1 --tool attack --step 599 -- python3 /workspace/sys.py >/dev/null || fail "step 599"
check "trace-syscalls on" "$FB" trace-syscalls sr1 on
assert_eq "$(recorders)" "$((before + 1))" "one sys_enter program is loaded"
"$FB" exec sr1 --tool attack --step 600 -- python3 /workspace/sys.py >/dev/null || fail "step 600"
for _ in $(seq 50); do /bin/true; done # host processes while it is on
sleep 0.5
check "trace-syscalls off" "$FB" trace-syscalls sr1 off
for _ in $(seq 40); do # the kernel frees a detached program after an RCU grace period
	[ "$(recorders)" = "$before" ] && break
	sleep 0.05
done
assert_eq "$(recorders)" "$before" "switched off, the program is gone"
"$FB" exec sr1 --tool attack --step 601 -- python3 /workspace/sys.py >/dev/null || fail "step 601"
sleep 0.3

"$FB" timeline sr1 --json >"$T/tl.jsonl" || fail "timeline"
python3 - "$T/tl.jsonl" <<'PY' || fail "sys.enter events"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
sysev = [e for e in ev if e["kind"] == "sys.enter"]
by_step = {}
for e in sysev:
    by_step.setdefault(e["step"], []).append(e)
# A record drained before its step's report reaches the monitor is the sandbox's, step unknown.
assert set(by_step) <= {600, None} and 600 in by_step, "sys.enter on steps %s" % list(by_step)
s600 = by_step[600]
odd = [e for e in s600 if e["sandbox"] != "sr1" or e["tool"] != "attack"]
assert not odd, "step 600's records not of sr1's tool attack: %s" % odd[:3]
getppid = [e for e in s600 if e["fields"]["name"] == "getppid"]
assert len(getppid) == 50, "%d getppid calls recorded" % len(getppid)
w = [e for e in s600 if e["fields"]["name"] == "write" and e["fields"]["args"][2] == 8]
assert w and w[-1]["fields"]["args"][0] == 1, "the 8-byte write to fd 1 is not there"
assert all(e["fields"]["nr"] == 110 for e in getppid), [e for e in getppid if e["fields"]["nr"] != 110][:3]
print("   %d syscalls recorded on step 600" % len(s600))
PY
ok "step 600's syscalls, and only its, are sys.enter events with names and arguments"
"$FB" status --json | python3 -c "
import json, sys
s = json.load(sys.stdin)['syscall_recorder']
assert s['sandboxes'] == 0 and s['unattributed'] == 0 and s['lost'] == 0, s
" || fail "recorder counters"
ok "no host syscall was recorded, none lost, no recorder left on"
"$FB" trace-syscalls nosuch on 2>/dev/null && fail "an unknown sandbox was accepted"
ok "an unknown sandbox is refused"
check "destroy" "$FB" destroy sr1
stop_daemon
