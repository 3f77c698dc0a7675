#!/bin/bash
# The cgroup stats collector on a real sandbox: while a CPU spinner runs as step 700 of tool
# attack, firebreakd stores cgroup.stats events for that step cgroup (with its tool) whose CPU
# use grows; the sandbox's own cgroup reports its pids and memory; a memory balloon shows up as
# the sandbox's memory peak. Events are stored on change only. A 22 MiB file in the 24 MiB
# workspace shows as its use, and the detectors say the workspace is nearly full (an alert).
. "$(dirname "$0")/../lib.sh"
fb_setup
printf 'stats_period = 100ms\n' >>"$FB_CONF"
start_daemon
create_sandbox st1 "$FB_ROOT/tests/policies/attack.json"
copy_in st1 "$FB_ROOT/tests/attacks/spinner.py"
copy_in st1 "$FB_ROOT/tests/attacks/balloon.py"
"$FB" exec st1 --tool attack --step 700 -- python3 /workspace/spinner.py 1.5 >/dev/null || fail "spinner"
"$FB" exec st1 --tool attack --step 701 -- python3 /workspace/balloon.py 1024 >/dev/null 2>&1
head -c $((22 << 20)) /dev/zero >"$T/fill"
"$FB" exec st1 --tool setup --step 702 -- tee /workspace/fill <"$T/fill" >/dev/null || fail "fill the workspace"
sleep 0.5
"$FB" timeline st1 --json >"$T/timeline.jsonl" || fail "timeline"
python3 - "$T/timeline.jsonl" <<'PY' || fail "cgroup stats"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
stats = [e for e in ev if e["kind"] == "cgroup.stats"]
step = [e for e in stats if e["step"] == 700]
assert len(step) >= 3, "only %d samples of step 700" % len(step)
assert all(e["tool"] == "attack" and e["source"] == "cgroup" for e in step), step[0]
cpu = [e["fields"]["cpu_usage_us"] for e in step]
assert cpu == sorted(cpu) and cpu[-1] - cpu[0] > 100000, "cpu of step 700: %s" % cpu
sb = [e for e in stats if e["step"] is None]
assert sb and all(e["fields"]["cgroup"] == "firebreak/st1" for e in sb), sb[:1]
assert any(e["fields"].get("pids_current", 0) >= 2 for e in sb), "no pids seen"
peak = max(e["fields"].get("memory_peak", 0) for e in sb)
assert peak > (100 << 20), "the balloon's peak was not seen: %d" % peak
ws = [e["fields"] for e in sb if "workspace_size" in e["fields"]]
assert ws and ws[-1]["workspace_size"] == 24 << 20, ws[-1:]
assert max(f["workspace_used"] for f in ws) >= 22 << 20, [f["workspace_used"] for f in ws]
assert min(f["workspace_used"] for f in ws) < 1 << 20, "the workspace was full from the start"
v = [e["fields"] for e in ev if e["kind"] == "verdict" and e["fields"]["rule"] == "resource.workspace-full"]
assert len(v) == 1 and v[0]["action"] == "alert", v
# On change only: no two consecutive samples of one cgroup are identical.
last = {}
for e in stats:
    k = e["fields"]["cgroup"]
    assert last.get(k) != e["fields"], "an unchanged sample was stored for %s" % k
    last[k] = e["fields"]
print("   %d samples; step 700 used %.2f CPU s; the sandbox's memory peaked at %d MiB; the workspace reached %d of %d MiB"
      % (len(stats), (cpu[-1] - cpu[0]) / 1e6, peak >> 20, max(f["workspace_used"] for f in ws) >> 20, ws[-1]["workspace_size"] >> 20))
PY
ok "cgroup stats: per step with its tool, CPU growing, pids, the memory peak and the workspace on the sandbox"

# At rest the sandbox is not read in full (its cgroup used no CPU since the last read); once a
# step runs again, its samples come as before.
skipped() { "$FB" status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["stats_idle_skipped"])'; }
s0=$(skipped)
sleep 1
s1=$(skipped)
[ "$s1" -ge $((s0 + 5)) ] || fail "an idle sandbox was read in full every period ($s0 -> $s1 skipped)"
"$FB" exec st1 --tool attack --step 703 -- python3 /workspace/spinner.py 0.6 >/dev/null || fail "spinner"
sleep 0.3
"$FB" timeline st1 --json | grep -q '"cgroup":"firebreak/st1/step-703"' ||
	fail "a step run after the sandbox was idle has no cgroup.stats"
ok "an idle sandbox costs one read a period ($((s1 - s0)) full reads skipped in 1 s); its next step is sampled"
check "destroy" "$FB" destroy st1
stop_daemon
