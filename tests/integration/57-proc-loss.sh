#!/bin/bash
# Loss accounting is exact: under a deliberately tiny ring buffer (4 KiB, four exec records) and
# a small share of it for the sandbox (64 KiB a second: where exec is slow, as on the machines
# whose kernel runs as a PVM guest, a reader keeps up with a 4 KiB ring and only the share is
# sure to refuse), a tool call runs 1,000 execs in bursts of 20 processes of 10 execs each; the
# exec events stored for its step plus the execs the kernel counted as lost add up to exactly
# 1,001 (the tool's own exec and its 1,000 children), some were really lost, and the loss is in
# the sandbox's timeline as monitor.loss events that add up to the kernel's count, each judged
# monitor.blind. The same for 1,000 connects in a tight loop.
. "$(dirname "$0")/../lib.sh"
fb_setup
N=1000
printf 'proc_ring_size = 4096\nproc_sandbox_rate = 65536\n' >>"$FB_CONF"
detectors_record_only # 1,000 connects by a tool without egress would be frozen
start_daemon --config "$FB_CONF"
create_sandbox pl1 "$FB_ROOT/tests/policies/attack.json"
# Each child is a chain of 10 execs (env runs env ... runs true): 100 children, 1,000 execs.
printf 'import subprocess, sys\nn = int(sys.argv[1]) // 10\nfor _ in range(n // 20):\n    ps = [subprocess.Popen(["/usr/bin/env"] * 9 + ["/usr/bin/true"]) for _ in range(20)]\n    assert all(p.wait() == 0 for p in ps)\n' >"$T/burst.py"
printf 'import socket, sys\nfor _ in range(int(sys.argv[1])):\n    s = socket.socket()\n    s.connect_ex(("127.0.0.1", 9))\n    s.close()\n' >"$T/conn.py"
copy_in pl1 "$T/burst.py"
copy_in pl1 "$T/conn.py"

# check_loss KIND LOSS_FIELD STEP EXPECTED: events of KIND on STEP + the kernel's count of lost
# ones = EXPECTED, some were lost, and the sandbox's monitor.loss events report that count.
check_loss() {
	sleep 0.5
	"$FB" timeline pl1 --json >"$T/tl.jsonl" || fail "timeline"
	"$FB" status --json >"$T/status.json" || fail "status"
	python3 - "$T/tl.jsonl" "$T/status.json" "$@" <<'PY' || fail "$1: delivered + lost != $4"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
st = json.load(open(sys.argv[2]))["proc_trace"]
kind, field, step, want = sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
delivered = sum(1 for e in ev if e["kind"] == kind and e["step"] == step)
lost = st["lost_" + field]
loss_events = [e for e in ev if e["kind"] == "monitor.loss"]
print("   %d %s events delivered, %d counted lost" % (delivered, kind, lost))
assert delivered + lost == want, "delivered %d + lost %d != %d" % (delivered, lost, want)
assert lost > 0, "nothing was lost: the ring was not small enough to test the accounting"
assert st["unattributed"] == 0, st
assert all(e["sandbox"] == "pl1" and e["fields"]["stage"] == "kernel ring buffer" for e in loss_events)
reported = sum(e["fields"][field] for e in loss_events)
assert reported == lost, "monitor.loss events of pl1 report %d lost, the kernel %d" % (reported, lost)
assert all(e["fields"]["since"] < e["fields"]["until"] for e in loss_events)
# Under a 4 KiB ring the sandbox's share (2 KiB at once) refuses some before the ring does; both
# are its loss, and over_share says how many were the share's.
kinds = ("exec", "fork", "exit", "socket", "connect")
over = sum(e["fields"]["over_share"] for e in loss_events)
assert over <= sum(e["fields"][k] for e in loss_events for k in kinds), over
# Each loss is a monitor.blind verdict of pl1 (high: on_lost_events is freeze by default), naming
# the loss it came from.
blind = [e for e in ev if e["kind"] == "verdict" and e["fields"]["rule"] == "monitor.blind"]
named = {i for v in blind for i in v["fields"]["event_ids"]}
assert blind and all(v["sandbox"] == "pl1" and v["fields"]["severity"] == "high" for v in blind), blind
missed = [e["id"] for e in loss_events if e["id"] not in named]
assert not missed, "monitor.loss events %s gave no monitor.blind verdict" % missed
print("   %d of them past the sandbox's share; %d monitor.blind verdicts" % (over, len(blind)))
PY
	ok "$1 events delivered + counted lost = $4 exactly, some were lost, each loss a monitor.blind verdict"
}

check "the tool call runs $N execs" "$FB" exec pl1 --tool attack --step 700 -- python3 /workspace/burst.py "$N"
check_loss proc.exec exec 700 $((N + 1))
check "the tool call makes $N connects" "$FB" exec pl1 --tool attack --step 701 -- python3 /workspace/conn.py "$N"
check_loss net.connect connect 701 "$N"
check "destroy" "$FB" destroy pl1
stop_daemon
