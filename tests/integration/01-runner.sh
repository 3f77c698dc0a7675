#!/bin/bash
# The runner itself can fail: a hung test is killed with its whole process group after its time,
# reported as failed by name, and the run goes on to the next test; a pattern that matches no test
# is an error.
. "$(dirname "$0")/../lib.sh"
fb_setup
D=$T/tests
mkdir -p "$D"
# 1: hangs, with a child of its own that would outlive it if only the test were killed.
cat >"$D/1-hangs.sh" <<HANG
sleep 600 &
echo \$! >"$T/child.pid"
sleep 600
HANG
printf 'echo second ran >"%s/second"\n' "$T" >"$D/2-passes.sh"
printf 'exit 3\n' >"$D/3-fails.sh"

t0=$(date +%s)
FB_TEST_DIR=$D FB_TEST_TIMEOUT=2 sh "$FB_ROOT/tests/run-integration.sh" >"$T/run.out" 2>&1
rc=$?
took=$(($(date +%s) - t0))
[ $rc -ne 0 ] || fail "a run with a hung and a failing test passed: $(cat "$T/run.out")"
grep -qx -- "-- FAILED: $D/1-hangs.sh timed out after 2s (its process group was killed)" "$T/run.out" ||
	fail "the hung test is not reported by name: $(cat "$T/run.out")"
[ "$took" -lt 20 ] || fail "the run took ${took}s with a 2 s limit"
ok "a hung test is reported as timed out by name (${took}s for the run)"
[ -f "$T/second" ] || fail "the run stopped at the hung test: $(cat "$T/run.out")"
grep -qx "failed: $D/1-hangs.sh $D/3-fails.sh" "$T/run.out" || fail "failures: $(cat "$T/run.out")"
grep -qx "integration: 1 passed, 2 failed" "$T/run.out" || fail "counts: $(cat "$T/run.out")"
ok "the run went on after it (1 passed, 2 failed)"
child=$(cat "$T/child.pid")
for _ in $(seq 50); do kill -0 "$child" 2>/dev/null || break; sleep 0.1; done
kill -0 "$child" 2>/dev/null && { kill -KILL "$child"; fail "the hung test's child $child outlived it"; }
ok "the hung test's own child was killed with its process group"

FB_TEST_DIR=$D sh "$FB_ROOT/tests/run-integration.sh" no-such-test >"$T/none.out" 2>&1 &&
	fail "a pattern that matches nothing passed: $(cat "$T/none.out")"
grep -qx "no integration test matches 'no-such-test'" "$T/none.out" || fail "$(cat "$T/none.out")"
ok "a pattern that matches no test is an error"
FB_TEST_DIR=$D sh "$FB_ROOT/tests/run-integration.sh" 2-passes >"$T/one.out" 2>&1 ||
	fail "a pattern that matches one passing test failed: $(cat "$T/one.out")"
ok "a pattern that matches a passing test passes"
sh "$FB_ROOT/tests/run-unit.sh" >"$T/unit.out" 2>&1 && fail "the unit runner passed with no tests"
ok "the unit runner fails when given no tests"
