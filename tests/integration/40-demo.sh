#!/bin/bash
# make demo's script runs end to end, exits 0, shows the coerced step in the timeline, and leaves
# nothing behind (no daemon, no state dir).
. "$(dirname "$0")/../lib.sh"
fb_setup

before=$(ls -d /tmp/firebreak-demo.* 2>/dev/null | wc -l)
sh "$FB_ROOT/examples/demo.sh" >"$T/demo.out" 2>&1 || { cat "$T/demo.out"; fail "demo exited non-zero"; }
ok "the demo exits 0"
grep -q "step 14 .*COERCED: the web_fetch result of step 13" "$T/demo.out" || fail "no coerced step 14 in the demo's timeline"
ok "the timeline shows step 14 as coerced"
n=$(grep -c "tool call started" "$T/demo.out")
[ "$n" -ge 12 ] || fail "the timeline shows $n tool calls, expected a dozen"
ok "the timeline shows a dozen tool calls"
after=$(ls -d /tmp/firebreak-demo.* 2>/dev/null | wc -l)
assert_eq "$after" "$before" "the demo removed its state dir"
pgrep -f "firebreakd.*firebreak-demo" >/dev/null && fail "the demo left firebreakd running"
ok "the demo left no daemon running"
