#!/bin/bash
# firebreak create / exec / destroy / gc on the real kernel: fail closed without a monitor, every
# layer in place inside, exit status and stdio passed through, refusals recorded, nothing left.
. "$(dirname "$0")/../lib.sh"
fb_setup
POLICY=$FB_ROOT/tests/policies/attack.json

# Fail closed: no monitor, no sandbox (unless --unwatched, which says so loudly).
"$FB" create lc-nomon --policy "$POLICY" >"$T/nomon.out" 2>&1 && fail "created a sandbox with no monitor"
grep -q "no monitor answers" "$T/nomon.out" || fail "no clear reason: $(cat "$T/nomon.out")"
[ -e "$FIREBREAK_RUNTIME_DIR/sandboxes/lc-nomon" ] && fail "a refused create left state"
ok "create refuses without a monitor (fail closed)"
FB_SANDBOXES="$FB_SANDBOXES lc-unwatched"
"$FB" create lc-unwatched --policy "$POLICY" --unwatched 2>"$T/unwatched.err" || fail "--unwatched create"
grep -q "UNWATCHED" "$T/unwatched.err" || fail "--unwatched did not say so loudly"
check "exec in an unwatched sandbox" "$FB" exec lc-unwatched --tool run -- true
check "destroy the unwatched sandbox" "$FB" destroy lc-unwatched
assert_no_leftovers "after destroying an unwatched sandbox"

start_daemon
create_sandbox lc1 "$POLICY"
"$FB" create lc1 --policy "$POLICY" 2>"$T/dup.err" && fail "a second create of lc1 succeeded"
grep -q "exists already" "$T/dup.err" || fail "duplicate create: no clear reason"
ok "a second create of the same name is refused"
# The metadata service is always closed: a policy that opens it (or a range around it) makes no
# sandbox, and says which closed range it overlaps.
for cidr in 169.254.169.254/32 169.254.0.0/15 fd00:ec2::254; do
	sed "s|\"cidr\": \"[^\"]*\"|\"cidr\": \"$cidr\"|" "$FB_ROOT/tests/policies/opens-metadata.json" >"$T/meta.json"
	FB_SANDBOXES="$FB_SANDBOXES lc-meta"
	"$FB" create lc-meta --policy "$T/meta.json" >"$T/meta.out" 2>&1 && fail "created a sandbox whose policy opens $cidr"
	grep -q "overlaps .*, which is always closed (cloud metadata" "$T/meta.out" ||
		fail "opening $cidr: no clear reason: $(cat "$T/meta.out")"
	[ -e "$FIREBREAK_RUNTIME_DIR/sandboxes/lc-meta" ] && fail "a refused create left state"
done
ok "a policy that opens the metadata service (IPv4, a range around it, IPv6) makes no sandbox"
"$FB" ps | grep -q "^lc1 .*running" || fail "ps does not show lc1 running: $("$FB" ps)"
ok "ps shows the sandbox running"

# Exit status and stdio pass through.
"$FB" exec lc1 --tool run -- true; assert_eq "$?" "0" "exit 0 passes through"
"$FB" exec lc1 --tool run -- false; assert_eq "$?" "1" "exit 1 passes through"
out=$(echo "through stdin" | "$FB" exec lc1 --tool run -- cat)
assert_eq "$out" "through stdin" "stdin and stdout pass through"
"$FB" exec lc1 --tool run -- cat /nonexistent 2>"$T/stderr.out"
grep -q "No such file" "$T/stderr.out" || fail "stderr does not pass through"
ok "stderr passes through"
copy_in lc1 "$FB_ROOT/tests/attacks/inside.py"
printf 'import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n' >"$T/killself.py"
copy_in lc1 "$T/killself.py"
"$FB" exec lc1 --tool attack -- python3 /workspace/killself.py
assert_eq "$?" "137" "killed by SIGKILL exits 128+9"

# The per-call wall clock kills the step.
start=$(date +%s%N)
"$FB" exec lc1 --tool run -- sleep 30 2>"$T/timeout.err"
rc=$?
elapsed=$((($(date +%s%N) - start) / 1000000))
assert_eq "$rc" "137" "a call over its 2 s limit is killed"
[ "$elapsed" -lt 5000 ] || fail "the over-long call took ${elapsed} ms to die"
grep -q "ran over" "$T/timeout.err" || fail "no word about the time-out"
ok "killed after ${elapsed} ms"

# An interrupted firebreak exec takes its tool call down with it.
"$FB" exec lc1 --tool run --step 60 -- sleep 30 &
execpid=$!
FB_PIDS="$FB_PIDS $execpid"
sleep 0.5
kill -TERM "$execpid"
wait "$execpid"
assert_eq "$?" "137" "SIGTERM to firebreak exec kills the call (137)"
pgrep -x sleep -u "$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['uid'])" \
	"$FIREBREAK_RUNTIME_DIR/sandboxes/lc1/state.json")" >/dev/null && fail "the interrupted call's sleep still runs"
"$FB" timeline lc1 --step 60 --json | grep -q '"interrupted_by":15' || fail "the interruption is not recorded"
ok "nothing of the interrupted call is left, and the interruption is recorded"

# The environment is rebuilt: never-pass variables are dropped, allowed ones kept.
env_out=$(FIREBREAK_TEST_VAR=kept LD_PRELOAD=/tmp/evil.so PYTHONPATH=/tmp GIT_SSH_COMMAND=evil \
	NODE_OPTIONS=--require=/tmp/x PYTEST_ADDOPTS=-p GIT_CONFIG_COUNT=1 \
	"$FB" exec lc1 --tool run -- printenv)
echo "$env_out" | grep -q "^FIREBREAK_TEST_VAR=kept$" || fail "an allowed variable was not passed"
for v in LD_PRELOAD PYTHONPATH GIT_SSH_COMMAND NODE_OPTIONS PYTEST_ADDOPTS GIT_CONFIG_COUNT HOME_NOT; do
	[ "$v" = HOME_NOT ] && continue
	echo "$env_out" | grep -q "^$v=" && fail "$v passed into the sandbox"
done
echo "$env_out" | grep -q "^HOME=/home/agent$" || fail "HOME is not /home/agent"
ok "the environment is rebuilt: LD_PRELOAD, PYTHONPATH, GIT_*, *_OPTIONS, PYTEST_ADDOPTS dropped"

# A refusal: exit 126, one line naming the rule, recorded with the monitor.
"$FB" exec lc1 --tool run --step 77 --call-id refused-1 -- ls / 2>"$T/refused.err"
assert_eq "$?" "126" "a program outside the tool's scope is refused with 126"
assert_eq "$(wc -l <"$T/refused.err")" "1" "the refusal is one line"
grep -q "program-not-in-scope" "$T/refused.err" || fail "the refusal does not name its rule"
"$FB" timeline lc1 --json | grep '"kind":"gate.refused"' | grep -q '"rule":"program-not-in-scope"' \
	|| fail "the refusal is not in the monitor's timeline"
ok "the refusal is recorded in the timeline with its rule"
"$FB" timeline lc1 --json | grep '"kind":"step.end"' | grep -q '"timed_out":true' \
	|| fail "the timed-out step is not recorded"
"$FB" timeline lc1 --step 77 --json | grep -q '"call_id":"refused-1"' || fail "--call-id not recorded"
ok "steps are recorded with their end, time-outs and call ids"

# Destroy removes everything; gc removes what a crash left.
check "destroy lc1" "$FB" destroy lc1
"$FB" exec lc1 --tool run -- true 2>/dev/null && fail "exec into a destroyed sandbox"
ok "exec into a destroyed sandbox fails"
"$FB" ps | grep -q "^lc1 .*destroyed" || fail "ps does not show lc1 destroyed"
assert_no_leftovers "after destroy"

create_sandbox lc2 "$POLICY"
init=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['init_pid'])" \
	"$FIREBREAK_RUNTIME_DIR/sandboxes/lc2/state.json")
kill -KILL "$init"
sleep 0.2
"$FB" exec lc2 --tool run -- true 2>"$T/dead.err" && fail "exec into a sandbox whose init died"
grep -q "dead" "$T/dead.err" || fail "no clear reason for a dead sandbox"
out=$("$FB" gc) || fail "gc"
echo "$out" | grep -q "removed 1" || fail "gc did not remove the crashed sandbox: $out"
ok "gc removes a sandbox whose init died"
assert_no_leftovers "after gc"

# A hung monitor (stopped: it holds its socket, never answers) cannot hang a destroy: the report
# waits 10 s at most, says so, and the sandbox is gone all the same.
create_sandbox lc3 "$POLICY"
kill -STOP "$DAEMON_PID"
FB_CLEANUP_AFTER='kill -CONT "$DAEMON_PID" 2>/dev/null'
t0=$(date +%s)
timeout 30 "$FB" destroy lc3 2>"$T/hung.err"
rc=$?
took=$(($(date +%s) - t0))
kill -CONT "$DAEMON_PID"
[ $rc -ne 124 ] || fail "destroy hung on a stopped monitor"
assert_eq "$rc" 0 "destroy succeeds without a monitor's answer"
grep -q "the monitor did not acknowledge 2 record(s) within 10 s" "$T/hung.err" ||
	fail "no clear error for the hung monitor: $(cat "$T/hung.err")"
[ "$took" -ge 9 ] && [ "$took" -le 15 ] || fail "destroy took ${took}s against a hung monitor"
ok "destroy against a hung monitor gives up after ${took}s with a clear error"
assert_no_leftovers "after a destroy the monitor did not answer"
stop_daemon
