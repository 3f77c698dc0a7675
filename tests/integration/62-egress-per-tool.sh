#!/bin/bash
# Per-tool egress, in the kernel, per step cgroup: each tool reaches only its own share of the
# task's allowlist. A refused connect fails at once with EPERM and not one packet leaves (the
# world sees nothing); an allowed one leaves from the tool's own source address, and the gate
# holds each tool to its own rules (an address outside them is dropped and logged there).
. "$(dirname "$0")/../lib.sh"
fb_setup

world_up
detectors_record_only
start_daemon --config "$FB_CONF"
create_sandbox pt1 "$FB_ROOT/tests/policies/egress-tools.json"
copy_in pt1 "$FB_ROOT/tests/attacks/reach.py"

# reach TOOL KIND HOST PORT: runs reach.py as TOOL, prints its JSON line
reach() {
	"$FB" exec pt1 --tool "$1" -- python3 /workspace/reach.py "$2" "$3" "$4"
}

# The sandbox's own loopback is no egress: a tool with none runs a test server there and talks
# to it, over IPv4 and IPv6 (the hook lets 127/8 and ::1 through; nothing leaves the netns).
cat >"$T/local.py" <<'PY'
import http.server, socket, threading, urllib.request
class V6(http.server.HTTPServer):
    address_family = socket.AF_INET6
for cls, host, url in ((http.server.HTTPServer, "127.0.0.1", "127.0.0.1"), (V6, "::1", "[::1]")):
    srv = cls((host, 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    urllib.request.urlopen("http://%s:%d/" % (url, srv.server_address[1]), timeout=5).read()
    srv.shutdown()
print("ok")
PY
copy_in pt1 "$T/local.py"
assert_eq "$("$FB" exec pt1 --tool run_tests -- python3 /workspace/local.py 2>/dev/null)" "ok" \
	"run_tests (no egress) talks to its own server on 127.0.0.1 and ::1"

# By name: the DNS gate answers any tool (resolving is not reaching), the connect is refused.
out=$(reach run_tests tcp registry.test 80)
[ "$(json_field "$out" addr)" = "198.51.100.7" ] && [ "$(json_field "$out" errno)" = "1" ] \
	|| fail "run_tests to registry.test by name: $out"
ok "run_tests resolves registry.test but its connect is refused with EPERM"

# Captures of connection openings only (a SYN, or any packet not TCP): a connection that got
# through is one packet, however much it sent after.
OPENINGS='not tcp or (tcp[tcpflags] & tcp-syn != 0 and tcp[tcpflags] & tcp-ack == 0)'
# window_end NAME: ends the "nothing arrived" window of capture NAME with something that must
# arrive: web_fetch's allowed connect to 198.51.100.7:443 (by address, no DNS). The capture must
# then hold that one opening and nothing else: an empty one could have stopped early.
window_end() {
	local out
	out=$(reach web_fetch tcp 198.51.100.7 443)
	[ "$(json_field "$out" ok)" = "True" ] || fail "$1: the marker connect failed: $out"
	bash "$WORLDSH" capture-stop "$WORLD" "$1" >/dev/null || fail "capture-stop $1"
	assert_eq "$(bash "$WORLDSH" capture-dests "$WORLD" "$1" | sed 's/^ *//')" "1 198.51.100.7.443" \
		"$1: nothing but the marker's connection arrived in the world"
}

# Refusals in the kernel: immediate EPERM, nothing in the world.
bash "$WORLDSH" capture-start "$WORLD" refused "$OPENINGS" || fail "capture-start"
for attempt in "run_tests tcp 198.51.100.7 80" "run_tests tcp 198.51.100.7 443" \
	"run_tests udp 198.51.100.7 53" "web_fetch tcp 198.51.100.7 80" \
	"install_deps tcp 203.0.113.66 4444" "web_fetch tcp 198.51.100.99 443"; do
	set -- $attempt
	start=$(date +%s%N)
	out=$(reach "$@")
	ms=$((($(date +%s%N) - start) / 1000000))
	[ "$(json_field "$out" ok)" = "False" ] && [ "$(json_field "$out" errno)" = "1" ] \
		|| fail "$attempt: not refused with EPERM: $out"
	ok "$attempt: EPERM from the kernel hook (whole call ${ms} ms)"
done
window_end refused
ok "not one packet of the refused attempts arrived"

# Each tool reaches its own share, from its own source address.
out=$(reach install_deps tcp registry.test 80)
[ "$(json_field "$out" ok)" = "True" ] || fail "install_deps to registry.test:80: $out"
src_install=$(json_field "$out" source)
ok "install_deps reaches the registry by name ($out)"
out=$(reach web_fetch tcp 198.51.100.7 443)
[ "$(json_field "$out" ok)" = "True" ] || fail "web_fetch to 198.51.100.7:443: $out"
src_web=$(json_field "$out" source)
ok "web_fetch reaches its CIDR rule"
[ "$src_install" != "$src_web" ] || fail "both tools left from the same address $src_web"
ok "each tool leaves from its own address ($src_install, $src_web)"
out=$(reach install_deps tcp registry.test 443)
[ "$(json_field "$out" ok)" = "True" ] || fail "install_deps to registry.test:443: $out"
ok "install_deps reaches the registry's other port"

# Past the hook but not the gate: install_deps may use port 443 (its host rule), but the C2's
# address is not one the DNS gate handed out for that rule: the gate drops and logs it.
bash "$WORLDSH" capture-start "$WORLD" gate "$OPENINGS" || fail "capture-start"
out=$(reach install_deps tcp 203.0.113.66 443)
[ "$(json_field "$out" ok)" = "False" ] || fail "install_deps reached the C2: $out"
window_end gate
nflog_marker pt1 # the attempt's denied packets are in a stored net.denied by then
"$FB" timeline pt1 --json | python3 -c '
import json, sys
d = [e["fields"] for e in map(json.loads, sys.stdin) if e["kind"] == "net.denied"]
hit = [f for f in d if f["dst"] == "203.0.113.66" and f["proto"] == "tcp" and f["port"] == 443]
assert hit and all(f["src"] == sys.argv[1] for f in hit), d
' "$src_install" || fail "the gate did not log install_deps's attempt on the C2 (from $src_install)"
ok "an address outside the tool's rules is dropped at the gate, logged from install_deps's address"

check "destroy" "$FB" destroy pt1
assert_no_leftovers "after the per-tool egress tests"
stop_daemon
