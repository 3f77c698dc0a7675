#!/bin/bash
# make demo's script runs the lesson's incident end to end in the test world and exits 0 within a
# minute: the timeline shows the coerced step 14 and the verdicts, the story is the lesson's
# (coerced @ step 14, ran cmd @ 15, egress denied @ 15, flagged @ 15, killed @ 15), and nothing is
# left behind (no daemon, no sandbox, no world, no state dir).
. "$(dirname "$0")/../lib.sh"
fb_setup

before=$(ls -d /tmp/firebreak-demo.* 2>/dev/null | wc -l)
t0=$(date +%s)
timeout 60 bash "$FB_ROOT/examples/demo.sh" >"$T/demo.out" 2>&1 || { cat "$T/demo.out"; fail "demo exited non-zero"; }
ok "the demo exits 0 in $(($(date +%s) - t0)) s"
grep -q "step 14 .*COERCED: the web_fetch result of step 13" "$T/demo.out" || fail "no coerced step 14 in the demo's timeline"
ok "the timeline shows step 14 as coerced"
grep -q "VERDICT net.metadata (critical): an attempt to the cloud metadata service 169.254.169.254 -> kill" "$T/demo.out" ||
	fail "no metadata verdict in the demo's timeline"
grep -q "KILL by net.metadata: ok" "$T/demo.out" || fail "no kill in the demo's timeline"
ok "the timeline shows the metadata attempt's verdict and the kill"
grep -qx "== coerced @ step 14, ran cmd @ 15, egress denied @ 15, flagged @ 15, killed @ 15" "$T/demo.out" ||
	fail "the story is not the lesson's: $(grep '^== coerced' "$T/demo.out")"
ok "the story: coerced @ step 14, ran cmd @ 15, egress denied @ 15, flagged @ 15, killed @ 15"
after=$(ls -d /tmp/firebreak-demo.* 2>/dev/null | wc -l)
assert_eq "$after" "$before" "the demo removed its state dir"
pgrep -f "firebreakd.*firebreak-demo" >/dev/null && fail "the demo left firebreakd running"
ip netns list | grep -q firebreak && fail "the demo left a network namespace: $(ip netns list)"
ls -d "$V2/firebreak/demo-agent" 2>/dev/null && fail "the demo left its sandbox's cgroup"
ok "the demo left no daemon, namespace or cgroup"
