#!/bin/bash
# Steps cannot reach each other, and the sandbox learns nothing of the host. From inside a real
# sandbox, one step goes after another's running process, as an attacker who took it would: its
# environment (the secrets), argv, memory (a one-byte write into its code), signals and abstract
# socket; and after its own child's memory. Then what the step can read of the host: pid 1, its
# mounts, its cgroup paths, its environment.
. "$(dirname "$0")/../lib.sh"
fb_setup
POLICY=$FB_ROOT/tests/policies/attack.json

detectors_record_only
start_daemon --config "$FB_CONF"
create_sandbox st1 "$POLICY"
copy_in st1 "$FB_ROOT/tests/attacks/step-victim.py"
copy_in st1 "$FB_ROOT/tests/attacks/step-reach.py"

# Step A: holds a secret, listens, and waits.
FIREBREAK_TEST_VAR=secret-of-step-a "$FB" exec st1 --tool attack -- \
	python3 /workspace/step-victim.py >"$T/victim.out" 2>&1 &
VICTIM_EXEC=$!
FB_PIDS="$FB_PIDS $VICTIM_EXEC"
for _ in $(seq 200); do
	VPID=$("$FB" exec st1 --tool run -- cat /workspace/victim.pid 2>/dev/null) && break
	sleep 0.05
done
[ -n "$VPID" ] || fail "the victim step never started"
# The host's view: that pid is the victim's, and it holds the secret (what an attacker is after).
HOST_VPID=$(for p in $(cat "$V2"/firebreak/st1/step-*/cgroup.procs); do
	awk -v v="$VPID" -v p="$p" '$1 == "NSpid:" && $NF == v { print p }' "/proc/$p/status"
done | head -1)
[ -n "$HOST_VPID" ] && tr '\0' '\n' <"/proc/$HOST_VPID/environ" | grep -qx FIREBREAK_TEST_VAR=secret-of-step-a ||
	fail "the victim (pid $VPID in the sandbox) is not the process holding the secret"
ok "step A runs as pid $VPID of the sandbox (host pid $HOST_VPID), holding its secret"

# Step B: the attacker.
"$FB" exec st1 --tool attack -- python3 /workspace/step-reach.py "$VPID" >"$T/reach.json" 2>"$T/reach.err" ||
	fail "step-reach.py: $(cat "$T/reach.json" "$T/reach.err")"
check_json() { # check_json PYTHON-EXPRESSION-ON-d DESCRIPTION
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($1) else 1)" \
		"$T/reach.json" || fail "$2: $(cat "$T/reach.json")"
	ok "$2"
}
check_json 'd["listed"] == [d["self"]]' "/proc lists the step's own process only: not step A's, not the init"
check_json 'not d["victim_environ"]["ok"] and not d["victim_cmdline"]["ok"]' \
	"step A's environment and argv cannot be read"
check_json 'not d["victim_mem"]["ok"] and not d["victim_poke"]["ok"]' \
	"step A's memory cannot be opened for writing, nor a byte written into its code"
check_json 'd["victim_signal0"] == {"ok": False, "errno": 1} and d["victim_kill"] == {"ok": False, "errno": 1}' \
	"step A cannot be signalled (EPERM: its domain is not the attacker's)"
check_json 'd["victim_socket"] == {"ok": False, "errno": 1}' \
	"step A's abstract unix socket refuses the other step (EPERM)"
check_json 'd["victim_shm"] == {"ok": False, "errno": 2} and d["sysvipc_shm"] == []' \
	"step A's System V shared memory does not exist for the other step"
check_json 'd["child_environ"]["ok"] and "PATH=" in d["child_environ"]["value"]' \
	"the attacker can read its own child's environment (the pids and the probe are right)"
check_json 'd["child_mem"] == {"ok": False, "errno": 13} and d["child_poke"] == {"ok": False, "errno": 13}' \
	"but not write its own child's memory: EACCES, not even within a step"
kill -0 "$HOST_VPID" 2>/dev/null || fail "step A died of the attack"
ok "step A still runs"
"$FB" exec st1 --tool setup -- tee /workspace/victim.done </dev/null >/dev/null
wait "$VICTIM_EXEC"
assert_eq "$?" 0 "step A ends by itself, and nothing connected to its socket"

# What the sandbox learns of the host: nothing of the test's paths or the project's tree.
check_json 'not d["init_cmdline"]["ok"]' "pid 1's command line is not there to read"
INIT=$(state_field st1 init_pid)
tr '\0' ' ' <"/proc/$INIT/cmdline" | grep -q -e "$T" -e "$FB_ROOT" -e create &&
	fail "the init's command line still shows how it was created: $(tr '\0' ' ' <"/proc/$INIT/cmdline")"
[ -z "$(tr -d '\0' <"/proc/$INIT/environ")" ] || fail "the init still holds create's environment"
ok "even from the host, the init's command line and environment say nothing of create's"
for leak in "$T" "$FB_ROOT" /tmp/firebreak /run/firebreak /var/lib/firebreak firebreak/st1; do
	check_json "'$leak' not in d['mountinfo'] and '$leak' not in d['cgroup']" \
		"neither /proc/self/mountinfo nor /proc/self/cgroup shows $leak"
done
check_json 'set(d["env"]) <= {"PATH", "HOME", "TMPDIR", "LC_CTYPE", "LANG", "FIREBREAK_TEST_VAR"}' \
	"the environment is the policy's, nothing of the harness's beyond env_allow"

"$FB" destroy st1 >/dev/null || fail "destroy"
FB_SANDBOXES=""
assert_no_leftovers "after the step isolation test"
