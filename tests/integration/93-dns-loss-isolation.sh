#!/bin/bash
# One sandbox's DNS flood cannot blind the monitor to another's DNS, nor freeze it. Sandbox fa
# floods the DNS tracer (well-formed queries to its gate, dnsq.py qflood: two processes on half a
# core) past its share of the ring; meanwhile sandbox fb asks its gate N names, one at a time: every one of
# fb's queries is stored, fb loses nothing and is not frozen (its policy leaves on_lost_events at
# its default, freeze: a loss counted for every sandbox, as DNS's was, would freeze it). fa's
# loss is its own (monitor.loss of fa, over_share); fa's policy says on_lost_events "alert", so
# it floods on. A third sandbox fz floods for 3 s with the default: it is frozen, with a
# monitor.blind verdict whose action is freeze and that names its monitor.loss, and
# `firebreak thaw` lets it run again. Every message the kernel did not record is some sandbox's
# monitor.loss: dns.lost.ring + dns.over_share is what their counts add up to.
. "$(dirname "$0")/../lib.sh"
fb_setup
N=100
world_up
# A ring of 64 KiB (about 100 messages); each sandbox may hold 8 KiB of it at once and fill
# 1 MiB a second (docs/collectors.md has the figures).
printf 'dns_ring_size = 65536\ndns_sandbox_rate = 1048576\n' >>"$FB_CONF"
start_daemon --config "$FB_CONF"
POL=$FB_ROOT/tests/policies/dnsflood.json
python3 -c 'import json, sys; p = json.load(open(sys.argv[1])); del p["detectors"]["on_lost_events"]; json.dump(p, open(sys.argv[2], "w"))' \
	"$POL" "$T/freeze.json"
create_sandbox fa "$POL"
create_sandbox fb "$T/freeze.json"
create_sandbox fz "$T/freeze.json"
for s in fa fb fz; do copy_in "$s" "$FB_ROOT/tests/attacks/dnsq.py"; done
q() { "$FB" exec fb --tool attack --step "$1" -- python3 /workspace/dnsq.py "${@:2}"; }

"$FB" exec fa --tool attack --step 1 -- python3 /workspace/dnsq.py qflood 20 2 >"$T/fa.out" 2>&1 &
FA=$!
FB_PIDS="$FB_PIDS $FA"
wait_event fa dns.query || fail "fa's flood is not seen: $(cat "$T/fa.out")"
"$FB" exec fz --tool attack --step 1 -- python3 /workspace/dnsq.py qflood 3 >"$T/fz.out" 2>&1 &
FZ=$!
FB_PIDS="$FB_PIDS $FZ"
# A bystander frozen for the flood's loss would hold the call: 60 s at most.
assert_eq "$(timeout 60 "$FB" exec fb --tool attack --step 2 -- python3 /workspace/dnsq.py queries registry.test "$N" 0.05)" \
	"answered $N" "fb's $N queries answered"
kill -0 "$FA" 2>/dev/null || fail "fa's flood ended before fb's $N queries did: $(cat "$T/fa.out")"
ok "fb asked $N names while fa (and fz, for 3 s) flooded"

wait_cgroup fz frozen 1 5 || fail "fz lost DNS messages and was not frozen"
ok "fz, whose DNS messages were lost, is frozen"
wait "$FA" 2>/dev/null
# fb's markers: once the second's answer is stored, everything before the first is, and so is
# each loss the monitor read with it (it reads the kernel's counts after the records).
for m in 3 4; do
	q "$m" query registry.test A >/dev/null || fail "fb's marker query $m"
	for _ in $(seq 250); do
		"$FB" timeline fb --step "$m" --json | grep -q '"kind":"dns.answer"' && break
		sleep 0.02
	done
	"$FB" timeline fb --step "$m" --json | grep -q '"kind":"dns.answer"' ||
		fail "the monitor never stored fb's marker answer (step $m)"
done
for s in fa fb fz; do "$FB" timeline "$s" --json >"$T/$s.jsonl" || fail "timeline $s"; done
"$FB" status --json >"$T/status.json" || fail "status"
grep -qx "frozen 0" "$V2/firebreak/fb/cgroup.events" || fail "fb, the bystander, is frozen"
python3 - "$T" "$N" <<'PY' || fail "fb's queries, and whose loss it was"
import json, sys
t, n = sys.argv[1], int(sys.argv[2])
tl = {s: [json.loads(l) for l in open("%s/%s.jsonl" % (t, s))] for s in ("fa", "fb", "fz")}
ids = sorted({e["fields"]["id"] for e in tl["fb"] if e["kind"] == "dns.query" and e["step"] == 2})
assert ids == list(range(1, n + 1)), "fb's queries stored: %d of %d, its losses %s" % (
    len(ids), n, [e["fields"] for e in tl["fb"] if e["kind"] == "monitor.loss"])
assert not [e for e in tl["fb"] if e["kind"] == "monitor.loss"], "fb lost DNS messages: %s" % [
    e["fields"] for e in tl["fb"] if e["kind"] == "monitor.loss"]
assert not [e for e in tl["fb"] if e["kind"] == "verdict" and e["fields"]["rule"] == "monitor.blind"]
assert not [e for e in tl["fb"] if e["kind"] == "action.freeze"], "fb was frozen"
print("   fb: %d of %d queries stored, nothing lost, not frozen" % (len(ids), n))
lost = 0
for s in ("fa", "fz"):
    loss = [e for e in tl[s] if e["kind"] == "monitor.loss"]
    assert not [e for e in loss if e["fields"].get("unattributed")], "%s: a loss of no one's" % s
    loss = [e for e in loss if e["fields"]["stage"] == "DNS ring buffer"]
    assert loss and all(e["sandbox"] == s for e in loss), "%s: no DNS monitor.loss of its own" % s
    n_lost = sum(e["fields"]["dns"] for e in loss)
    over = sum(e["fields"]["over_share"] for e in loss)
    assert over > 0, "%s: its loss was not past its share" % s
    lost += n_lost
    print("   %s: %d DNS messages lost, %d of them past its share" % (s, n_lost, over))
st = json.load(open(t + "/status.json"))["dns"]
assert st["lost"]["ring"] + st["over_share"] == lost, ("the kernel's loss is not the sandboxes'", st, lost)
assert st["unowned"] == 0 and st["unattributed"] == 0, st
PY
assert_blind_acted fa fz
ok "fb lost nothing; fa's and fz's loss is their own and adds up to the kernel's; fz's verdict froze it"

# Before the thaw, every monitor.loss of fz's is judged (one judged after it would freeze fz
# again, as it should).
wait_loss_judged fz
check "firebreak thaw fz, after review" "$FB" thaw fz --reason "DNS flood test reviewed"
wait_cgroup fz frozen 0 || fail "fz still frozen after thaw"
wait_event fz action.thaw || fail "the thaw is not on fz's timeline"
# Frozen while it ran, the call was held and exits 125 (docs/enforcer.md); thawed past its 3 s,
# the flood sends nothing more and prints its count.
wait "$FZ"
rc=$?
[ "$rc" = 0 ] || [ "$rc" = 125 ] || fail "fz's tool call exited $rc: $(cat "$T/fz.out")"
for _ in $(seq 100); do
	grep -q '^[0-9][0-9]*$' "$T/fz.out" && break
	sleep 0.02
done
grep -q '^[0-9][0-9]*$' "$T/fz.out" || fail "fz's flood did not run on after the thaw: $(cat "$T/fz.out")"
grep -qx "frozen 0" "$V2/firebreak/fz/cgroup.events" || fail "fz was frozen again after its flood ended"
ok "thawed, fz runs again: its flood finished ($(tail -n 1 "$T/fz.out") queries sent)"
for s in fa fb fz; do check "destroy $s" "$FB" destroy "$s"; done
assert_no_leftovers "after the DNS loss tests"
stop_daemon
