#!/bin/bash
# The uplink (--uplink IFACE), tested without a real uplink: the enforcer runs in a namespace that
# stands in for the host (a world client netns, whose only link, fb-wc1-0, leads to the test
# world). The gate's outside link then ends in that "host", which forwards the gate's traffic
# out of IFACE only, masqueraded. The allowlisted registry is reachable; metadata and the C2 are
# not; destroying the last sandbox removes the uplink's table and link and turns forwarding off
# again in the "host". The real host's namespaces are never touched.
. "$(dirname "$0")/../lib.sh"
fb_setup
WORLDSH=$FB_ROOT/tests/world/world.sh
WORLD=$T/world
HOSTNS=/run/netns/firebreak-world-c1
mkdir -p "$WORLD"
FB_CLEANUP_AFTER='bash "$WORLDSH" client-down "$WORLD" 1 >/dev/null 2>&1; bash "$WORLDSH" down "$WORLD" >/dev/null 2>&1'

bash "$WORLDSH" up -t 300 "$WORLD" >"$T/world-up.log" 2>&1 || { cat "$T/world-up.log"; fail "world up"; }
bash "$WORLDSH" client-up "$WORLD" 1 >/dev/null || fail "client-up"
assert_eq "$(nsenter --net=$HOSTNS cat /proc/sys/net/ipv4/ip_forward)" "0" "the stand-in host does not forward"
printf 'gate_dns_upstream = 198.51.100.53\n' >>"$FB_CONF"
# "in the host": the enforcer's own network namespace is the stand-in's.
fbh() { nsenter --net=$HOSTNS "$FB" "$@"; }
FB_SANDBOXES="$FB_SANDBOXES up1"
fbh create up1 --policy "$FB_ROOT/tests/policies/egress-tools.json" --unwatched --uplink fb-wc1-0 \
	2>/dev/null || fail "create with --uplink"
ok "created a sandbox whose gate has an uplink"
nsenter --net=$HOSTNS nft list table inet firebreak_uplink >/dev/null || fail "no uplink table in the host"
assert_eq "$(nsenter --net=$HOSTNS cat /proc/sys/net/ipv4/ip_forward)" "1" "forwarding on while the uplink serves"
fbh exec up1 --tool setup -- tee /workspace/reach.py <"$FB_ROOT/tests/attacks/reach.py" >/dev/null

out=$(fbh exec up1 --tool install_deps -- python3 /workspace/reach.py tcp registry.test 80)
echo "$out" | grep -q '"ok": true' || fail "the registry through the uplink: $out"
ok "install_deps reaches the registry through the uplink"
out=$(fbh exec up1 --tool install_deps -- python3 /workspace/reach.py tcp 169.254.169.254 80)
echo "$out" | grep -q '"ok": false' || fail "metadata through the uplink: $out"
out=$(fbh exec up1 --tool install_deps -- python3 /workspace/reach.py tcp 203.0.113.66 443)
echo "$out" | grep -q '"ok": false' || fail "the C2 through the uplink: $out"
ok "metadata and the C2 stay closed with an uplink"
bash "$WORLDSH" contacts "$WORLD" registry | grep -q '10.198.254.6' || fail "the registry saw no NATed contact"
ok "the registry saw the stand-in host's address (NAT)"

fbh destroy up1 || fail "destroy"
nsenter --net=$HOSTNS nft list table inet firebreak_uplink >/dev/null 2>&1 && fail "the uplink table outlived the gate"
nsenter --net=$HOSTNS ip link show fb-gate-out >/dev/null 2>&1 && fail "the uplink link outlived the gate"
assert_eq "$(nsenter --net=$HOSTNS cat /proc/sys/net/ipv4/ip_forward)" "0" "forwarding is off again"
ip netns list | grep -q '^firebreak-gate' && fail "the gate outlived its last sandbox"
ok "the last destroy took the uplink down and left the host as it was"
assert_no_leftovers "after the uplink test"
