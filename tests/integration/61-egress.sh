#!/bin/bash
# The egress gate against a real sandbox in the test world. From inside, as an attacker: cloud
# metadata (IPv4, IPv6, v4-mapped, Alibaba), the C2 over TCP and UDP, ICMP, raw and packet
# sockets, DNS exfiltration (through the gate's resolver, straight to the authority, encoded
# subdomains, subdomains of an allowed name), the gate's and the host's own addresses, the
# registry on an unlisted port. Every attempt fails; not one packet arrives in the world; each
# denied packet is on NFLOG with the sandbox's prefix; no exfil query reaches the authority.
# Then the allowlisted registry, by name through the DNS gate, works.
. "$(dirname "$0")/../lib.sh"
fb_setup
WORLDSH=$FB_ROOT/tests/world/world.sh
WORLD=$T/world
mkdir -p "$WORLD"
FB_CLEANUP_AFTER='kill -INT $NFLOG_PID 2>/dev/null; bash "$WORLDSH" down "$WORLD" >/dev/null 2>&1'
NFLOG_PID=""

bash "$WORLDSH" up -t 300 "$WORLD" >"$T/world-up.log" 2>&1 || { cat "$T/world-up.log"; fail "world up"; }
ok "the test world is up"
printf 'gate_outside_netns = firebreak-world-net\ngate_dns_upstream = 198.51.100.53\n' >"$FB_CONF"
start_daemon
create_sandbox eg1 "$FB_ROOT/tests/policies/egress.json"
copy_in eg1 "$FB_ROOT/tests/attacks/egress.py"
ip netns list | grep -q '^firebreak-gate' || fail "no gate netns"
link=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['link'])" \
	"$FIREBREAK_RUNTIME_DIR/sandboxes/eg1/state.json")
gate4=$(python3 -c "k=$link; b=(4*k)&0xffff; print('10.199.%d.%d' % ((b>>8)&255, (b&0xfc)+1))")
host4=$(ip -4 -o addr show scope global | awk '{print $4}' | cut -d/ -f1 | head -1)
[ -n "$host4" ] || host4=127.0.0.1
grep -q "^nameserver $gate4$" "/proc/$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['init_pid'])" \
	"$FIREBREAK_RUNTIME_DIR/sandboxes/eg1/state.json")/root/etc/resolv.conf" || fail "resolv.conf does not name the gate"
ok "the sandbox's resolv.conf points at the gate ($gate4)"

# Denials: NFLOG in the gate, a capture in the world.
ip netns exec firebreak-gate tcpdump -i nflog:7301 -U -w "$T/nflog.pcap" >"$T/nflog.log" 2>&1 &
NFLOG_PID=$!
FB_PIDS="$FB_PIDS $NFLOG_PID"
bash "$WORLDSH" capture-start "$WORLD" deny || fail "capture-start"
sleep 0.5
"$FB" exec eg1 --tool attack -- python3 /workspace/egress.py deny "$host4" "$gate4" >"$T/deny.jsonl" \
	|| fail "the attack script failed to run"
sleep 0.5
arrived=$(bash "$WORLDSH" capture-stop "$WORLD" deny) || fail "capture-stop"
kill -INT "$NFLOG_PID"
wait "$NFLOG_PID" 2>/dev/null
NFLOG_PID=""

python3 - "$T/deny.jsonl" <<'PY' || fail "an attempt got through"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
through = [r for r in rows if r["ok"]]
for r in rows:
    print("   %-26s %s" % (r["what"], r["error"]))
assert len(rows) >= 18, "only %d attempts ran" % len(rows)
if through:
    sys.exit("got through: %s" % through)
PY
ok "every attempt failed from inside"
assert_eq "$arrived" "0" "not one packet arrived in the world"

python3 "$FB_ROOT/tests/world/nflog.py" "$T/nflog.pcap" >"$T/nflog.jsonl" || fail "read NFLOG"
python3 - "$T/nflog.jsonl" "$gate4" "$host4" <<'PY' || fail "denials missing from NFLOG"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
gate4, host4 = sys.argv[2], sys.argv[3]
seen = {(r["dst"], r["dport"]) for r in rows if r["prefix"].strip() == "firebreak:eg1"}
want = [("169.254.169.254", 80), ("100.100.100.200", 80), ("203.0.113.66", 443),
        ("203.0.113.66", 4444), ("203.0.113.66", 53), ("198.51.100.7", 8080),
        (gate4, 22), (host4, 22), ("198.51.100.53", 53), ("fd00:ec2::254", 80)]
missing = [w for w in want if w not in seen]
other = [r for r in rows if r["prefix"].strip() != "firebreak:eg1"]
if missing or other:
    sys.exit("missing from NFLOG: %s; other prefixes: %s" % (missing, other[:3]))
print("   %d denied packets logged, all with prefix firebreak:eg1" % len(rows))
PY
ok "each denied destination is on NFLOG with the sandbox's prefix"
bash "$WORLDSH" contacts "$WORLD" dns >"$T/dns-contacts.log"
grep -qi "exfil" "$T/dns-contacts.log" && fail "an exfil query reached the authority: $(grep -i exfil "$T/dns-contacts.log" | head -2)"
ok "no exfil.test query (plain or encoded) reached the DNS authority"

# The allowlist: the registry by name, through the DNS gate.
bash "$WORLDSH" capture-start "$WORLD" allow || fail "capture-start"
sleep 0.3
"$FB" exec eg1 --tool attack -- python3 /workspace/egress.py allow >"$T/allow.jsonl" || fail "allow run"
sleep 0.3
arrived=$(bash "$WORLDSH" capture-stop "$WORLD" allow)
grep -q '"what": "registry-by-name", "ok": true' "$T/allow.jsonl" || fail "registry by name: $(cat "$T/allow.jsonl")"
ok "the allowlisted registry works by name ($arrived packets)"
bash "$WORLDSH" contacts "$WORLD" dns | grep -q "registry.test" || fail "the gate did not ask the authority"
ok "the gate's DNS asked the authority for exactly registry.test"

check "destroy" "$FB" destroy eg1
ip netns list | grep -q '^firebreak-gate' && fail "the gate outlived its last sandbox"
pgrep -f "dnsmasq.*$FIREBREAK_RUNTIME_DIR" >/dev/null && fail "the DNS gate outlived its sandbox"
ok "destroy took the gate, its links and the DNS gate down"
assert_no_leftovers "after the egress tests"
stop_daemon
