#!/bin/bash
# One sandbox's flood cannot blind the monitor to another, and a sandbox whose events were lost is
# frozen. Sandbox fa floods the process tracer (socket() and connect() in a tight loop, two
# processes), past its share of the ring; meanwhile sandbox fb makes a metadata connect
# (169.254.169.254) in each of 20 tool calls, all under a ring of 64 KiB: each of fb's connects
# is recorded and gets its net.metadata verdict, fb loses nothing; fa's loss is its own (monitor.loss of fa, over_share).
# fa's policy says on_lost_events "alert": it goes on flooding. A third sandbox fz, whose policy
# leaves on_lost_events at its default, floods too: it is frozen, with a monitor.blind verdict
# whose action is freeze and that names its monitor.loss; `firebreak thaw` lets it run again.
. "$(dirname "$0")/../lib.sh"
fb_setup
ROUNDS=20
# A ring of 64 KiB, each sandbox may hold 8 KiB of it at once and fill 1 MiB a second, and past
# half full only the sandboxes not flooding it may reserve (docs/collectors.md has the figures).
# Each flooder has half a core (tests/policies/flood.json), which makes about 3 MiB/s of records:
# the monitor keeps CPU to read with, without which no ring is large enough.
printf 'proc_ring_size = 65536\nproc_sandbox_rate = 1048576\n' >>"$FB_CONF"
start_daemon --config "$FB_CONF"
POL=$FB_ROOT/tests/policies/flood.json
python3 -c 'import json, sys; p = json.load(open(sys.argv[1])); del p["detectors"]["on_lost_events"]; json.dump(p, open(sys.argv[2], "w"))' \
	"$POL" "$T/freeze.json"
create_sandbox fa "$POL"
create_sandbox fb "$POL"
create_sandbox fz "$T/freeze.json"
for s in fa fb fz; do
	copy_in "$s" "$FB_ROOT/tests/attacks/flood.py"
	copy_in "$s" "$FB_ROOT/tests/attacks/reach.py"
done

"$FB" exec fa --tool attack --step 1 -- python3 /workspace/flood.py 30 >"$T/fa.out" 2>&1 &
FA=$!
FB_PIDS="$FB_PIDS $FA"
"$FB" exec fz --tool attack --step 1 -- python3 /workspace/flood.py 3 >"$T/fz.out" 2>&1 &
FZ=$!
FB_PIDS="$FB_PIDS $FZ"
sleep 1 # both floods are running
for i in $(seq "$ROUNDS"); do
	"$FB" exec fb --tool attack --step "$((i + 1))" -- python3 /workspace/reach.py tcp 169.254.169.254 80 \
		>>"$T/fb.out" 2>&1 || true
done
kill -0 "$FA" 2>/dev/null || fail "fa's flood ended before fb's $ROUNDS calls did: $(cat "$T/fa.out")"
ok "fb made $ROUNDS metadata connects while fa and fz flooded"

wait_cgroup fz frozen 1 || fail "fz lost events and was not frozen"
ok "fz, whose events were lost, is frozen"
sleep 0.5
for s in fa fb fz; do "$FB" timeline "$s" --json >"$T/$s.jsonl" || fail "timeline $s"; done
"$FB" status --json >"$T/status.json" || fail "status"
python3 - "$T" "$ROUNDS" <<'PY' || fail "fb's connects, verdicts and loss"
import json, sys
t, rounds = sys.argv[1], int(sys.argv[2])
tl = {s: [json.loads(l) for l in open("%s/%s.jsonl" % (t, s))] for s in ("fa", "fb", "fz")}
meta = [e for e in tl["fb"] if e["kind"] == "net.connect" and e["fields"].get("dst") == "169.254.169.254"]
steps = sorted(e["step"] for e in meta)
assert steps == list(range(2, rounds + 2)), "fb's metadata connects recorded in steps %s, its losses %s" % (
    steps, [e["fields"] for e in tl["fb"] if e["kind"] == "monitor.loss"])
v = [e for e in tl["fb"] if e["kind"] == "verdict" and e["fields"]["rule"] == "net.metadata"]
assert sorted(e["step"] for e in v) == steps, "net.metadata verdicts in steps %s" % [e["step"] for e in v]
assert not [e for e in tl["fb"] if e["kind"] == "monitor.loss"], "fb lost events: %s" % [
    e["fields"] for e in tl["fb"] if e["kind"] == "monitor.loss"]
assert not [e for e in tl["fb"] if e["kind"] == "verdict" and e["fields"]["rule"] == "monitor.blind"]
print("   fb: %d of %d metadata connects recorded, %d verdicts, nothing lost" % (len(meta), rounds, len(v)))
for s in ("fa", "fz"):
    loss = [e for e in tl[s] if e["kind"] == "monitor.loss"]
    assert loss and all(e["sandbox"] == s for e in loss), "%s: no monitor.loss of its own" % s
    lost = sum(e["fields"]["socket"] + e["fields"]["connect"] for e in loss)
    over = sum(e["fields"]["over_share"] for e in loss)
    assert over > 0, "%s: its loss was not past its share" % s
    print("   %s: %d socket and connect records lost, %d of them past its share" % (s, lost, over))
PY
assert_blind_acted fa fz
ok "fb lost nothing and every connect got its verdict; fa's and fz's loss is their own; fz's verdict froze it"

# The detectors run behind fa's flood: before the thaw, every monitor.loss of fz's is judged
# (a loss judged after it would freeze fz again, as it should).
judged() { loss_judged fz; }
wait_loss_judged fz
# A loss the detectors judge only after the thaw (they run behind fa's flood) freezes fz again, as
# documented: then there must be a new monitor.blind verdict, and it is thawed again.
for attempt in 1 2 3 4 5; do
	before=$(judged)
	check "firebreak thaw fz, after review" "$FB" thaw fz --reason "flood test reviewed"
	wait_cgroup fz frozen 0 1 && ! wait_cgroup fz frozen 1 1 && break
	after=$(judged)
	[ "${after#* }" -gt "${before#* }" ] ||
		fail "fz is frozen again after thaw $attempt without a new monitor.blind verdict ($before, then $after)"
	ok "fz was frozen again by a loss judged after thaw $attempt ($before, then $after)"
done
wait_cgroup fz frozen 0 || fail "fz still frozen after thaw"
wait_event fz action.thaw || fail "the thaw is not on fz's timeline"
# Frozen while it ran, the call was held and exits 125 (docs/enforcer.md); its processes,
# thawed, ran on to their end and printed their counts.
wait "$FZ"
rc=$?
[ "$rc" = 0 ] || [ "$rc" = 125 ] || fail "fz's tool call exited $rc: $(cat "$T/fz.out")"
for _ in $(seq 100); do
	[ "$(grep -c '^[0-9][0-9]*$' "$T/fz.out")" = 2 ] && break
	sleep 0.02
done
[ "$(grep -c '^[0-9][0-9]*$' "$T/fz.out")" = 2 ] || fail "fz's flood did not run on after the thaw: $(cat "$T/fz.out")"
ok "thawed, fz runs again: its flood (past its end) finished"
wait "$FA" 2>/dev/null
for s in fa fb fz; do check "destroy $s" "$FB" destroy "$s"; done
stop_daemon
