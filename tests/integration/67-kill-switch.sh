#!/bin/bash
# The kill switch: firebreak freeze stops a busy tool call where it stands (its cgroup's CPU time
# stops moving, cgroup.events says frozen), thaw lets it go on, kill ends every process of the
# sandbox; each action is an action.* event on the timeline with who asked, the reason and its
# latency, and a row of the actions table. Wrong requests are refused. The same switch stops a
# cgroup adopted with firebreak watch.
. "$(dirname "$0")/../lib.sh"
fb_setup
start_daemon
create_sandbox ks1 "$FB_ROOT/tests/policies/attack.json"
printf 'while True:\n    pass\n' >"$T/spin.py"
copy_in ks1 "$T/spin.py"
"$FB" exec ks1 --tool attack --step 3 -- python3 /workspace/spin.py >/dev/null 2>&1 &
SPIN=$!
FB_PIDS="$FB_PIDS $SPIN"
CGD=$V2/firebreak/ks1
usage() { awk '$1 == "usage_usec" { print $2 }' "$CGD/cpu.stat"; }
frozen() { awk '$1 == "frozen" { print $2 }' "$CGD/cgroup.events"; }
sleep 0.5
u0=$(usage)
sleep 0.3
[ "$(usage)" -gt "$((u0 + 30000))" ] || fail "the tool call does not spin ($u0 -> $(usage))"

if "$FB" thaw ks1 2>/dev/null; then fail "thaw of a running sandbox was accepted"; fi
if "$FB" freeze nosuch 2>/dev/null; then fail "freeze of an unknown sandbox was accepted"; fi
ok "thaw of a running sandbox and freeze of an unknown one are refused"

out=$("$FB" freeze ks1 --reason "test: freeze") || fail "freeze"
echo "$out" | grep -q "ok (acted in" || fail "freeze said: $out"
assert_eq "$(frozen)" "1" "cgroup.events says frozen"
u1=$(usage)
sleep 0.5
[ "$(usage)" -le "$((u1 + 2000))" ] || fail "frozen, the tool call still ran ($u1 -> $(usage) usec)"
ok "frozen, the busy tool call used no CPU for 0.5 s"
"$FB" ps | grep -w ks1 | grep -qw frozen || fail "ps does not say frozen"
out=$(timeout 5 "$FB" exec ks1 --tool attack --step 4 -- python3 /workspace/spin.py 2>&1)
rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && echo "$out" | grep -q "is frozen" ||
	fail "a tool call into the frozen sandbox: exit $rc, $out"
ok "a tool call into a frozen sandbox is refused at once, not left hanging"

check "thaw" "$FB" thaw ks1
assert_eq "$(frozen)" "0" "cgroup.events says thawed"
u2=$(usage)
sleep 0.3
[ "$(usage)" -gt "$((u2 + 30000))" ] || fail "thawed, the tool call does not run again"
ok "thawed, it runs again"

check "kill" "$FB" kill ks1 --reason "test: kill"
wait "$SPIN"
rc=$?
[ "$rc" -ne 0 ] || fail "the killed tool call exited 0"
ok "the killed tool call's firebreak exec returned $rc"
grep -q "populated 0" "$CGD/cgroup.events" || fail "processes left in the sandbox: $(cat "$CGD/cgroup.procs")"
ok "no process is left in the sandbox's cgroup"
"$FB" ps | grep -w ks1 | grep -qw killed || fail "ps does not say killed: $("$FB" ps)"
if "$FB" kill ks1 2>/dev/null; then fail "kill of a killed sandbox was accepted"; fi
ok "a killed sandbox cannot be killed again"

"$FB" timeline ks1 --json >"$T/tl.jsonl" || fail "timeline"
python3 - "$T/tl.jsonl" <<'PY' || fail "action events"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
acts = [e for e in ev if e["kind"].startswith("action.")]
assert [e["kind"] for e in acts] == ["action.freeze", "action.thaw", "action.kill"], acts
for e in acts:
    f = e["fields"]
    assert f["requested_by"] == "cli" and f["result"] == "ok", f
    assert 0 < f["act_ns"] < 100_000_000 and f["latency_ns"] == f["act_ns"], f
assert acts[0]["fields"]["reason"] == "test: freeze" and acts[2]["fields"]["reason"] == "test: kill"
assert "reason" not in acts[1]["fields"]
PY
ok "each action is on the timeline with who asked, the reason and its latency"
rows=$(sqlite3 -readonly "$FIREBREAK_DB" "SELECT group_concat(kind || '/' || requested_by || '/' || result, ' ') FROM actions ORDER BY id")
assert_eq "$rows" "freeze/cli/ok thaw/cli/ok kill/cli/ok" "the actions table has the three actions"
check "destroy the killed sandbox" "$FB" destroy ks1

# An adopted cgroup: the same switch.
CG=firebreak-killtest-$$
mkdir "$V2/$CG" || fail "mkdir $V2/$CG"
FB_CLEANUP_AFTER='if [ -d "$V2/$CG" ]; then echo 1 >"$V2/$CG/cgroup.kill"; sleep 0.2; rmdir "$V2/$CG"; fi'
sh -c 'echo $$ >"$0/cgroup.procs" && exec sleep 600' "$V2/$CG" &
SLEEPER=$!
FB_PIDS="$FB_PIDS $SLEEPER"
check "watch $CG" "$FB" watch "$CG" --name ad-ks
check "freeze the adopted cgroup" "$FB" freeze ad-ks
[ "$(awk '$1 == "frozen" { print $2 }' "$V2/$CG/cgroup.events")" = 1 ] || fail "not frozen"
check "kill the adopted cgroup" "$FB" kill ad-ks
wait "$SLEEPER"
assert_eq "$?" "137" "the adopted cgroup's process died of SIGKILL"
rmdir "$V2/$CG" || fail "the adopted cgroup is not empty"
stop_daemon
