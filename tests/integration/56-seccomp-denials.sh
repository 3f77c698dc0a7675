#!/bin/bash
# Seccomp refusals from the audit stream: a tool call's refused syscalls arrive as events of its
# sandbox, step and tool, one per refusal, with the syscall's name and action; a host
# process with a logging filter of its own is counted as unattributed and stored nowhere.
. "$(dirname "$0")/../lib.sh"
fb_setup
detectors_record_only
start_daemon --config "$FB_CONF"
create_sandbox sc1 "$FB_ROOT/tests/policies/attack.json"
# ptrace(PTRACE_TRACEME) five times and keyctl once: the sandbox's filter refuses both with EPERM.
printf 'import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\nfor _ in range(5):\n    assert libc.syscall(101, 0, 0, 0, 0) == -1 and ctypes.get_errno() == 1\nassert libc.syscall(250, 0, 0, 0, 0) == -1 and ctypes.get_errno() == 1\n' >"$T/refuse.py"
copy_in sc1 "$T/refuse.py"

check "the tool call runs" "$FB" exec sc1 --tool attack --step 900 -- python3 /workspace/refuse.py
by=$("$FB_ROOT/build/probe/seccomp-log-self" 7) || fail "bystander probe: $by"
sleep 0.5
"$FB" timeline sc1 --step 900 --json >"$T/step.jsonl" || fail "timeline"
python3 - "$T/step.jsonl" <<'PY' || fail "seccomp events of step 900"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
sc = [e for e in ev if e["kind"] == "seccomp.denied"]
names = [e["fields"]["name"] for e in sc]
assert names == ["ptrace"] * 5 + ["keyctl"], names
for e in sc:
    assert e["source"] == "audit" and e["sandbox"] == "sc1" and e["tool"] == "attack", e
    f = e["fields"]
    assert f["action"] == "errno" and f["arch"] == "x86_64", f
    assert e["comm"].startswith("python3") and e["pid"] > 0, e
assert len({e["fields"]["serial"] for e in sc}) == 6
PY
ok "six refused syscalls, six events on step 900 of tool attack, named, with their action"

stats=$("$FB" status --json)
echo "$stats" | python3 -c "
import json, sys
s = json.load(sys.stdin)['seccomp']
assert s['stored'] == 6, s
assert s['unattributed'] >= 7, s  # the bystander's 7, and any other host process's
assert s['unparsed'] == 0 and s['overruns'] == 0, s
" || fail "seccomp counters: $stats"
ok "the bystander's 7 refusals were counted as no sandbox's and stored nowhere"
check "destroy" "$FB" destroy sc1
stop_daemon
