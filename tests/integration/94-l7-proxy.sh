#!/bin/bash
# The gate's L7 proxy, tried from inside a sandbox as an attacker would: every allowlisted HTTP(S)
# request passes a jailed squid of the sandbox's own (no proxy setting inside: the gate redirects
# it), which checks method, path and body size per rule and tool, intercepts TLS with a CA only
# the sandbox trusts, verifies the upstream's certificate, refuses domain fronting, tunnels and
# decoys, and lets nothing it refused arrive in the world.
. "$(dirname "$0")/../lib.sh"
fb_setup

world_up
detectors_record_only
start_daemon --config "$FB_CONF"
create_sandbox l7 "$FB_ROOT/tests/policies/l7.json"
copy_in l7 "$FB_ROOT/tests/attacks/http-try.py"
SB=$FIREBREAK_RUNTIME_DIR/sandboxes/l7

# try TOOL ARGS...: http-try.py as TOOL, its JSON line
try() {
	local tool=$1
	shift
	"$FB" exec l7 --tool "$tool" -- python3 /workspace/http-try.py "$@"
}
# refused OUT WHAT: the proxy answered OUT with a 4xx (its refusal), not the upstream's answer
refused() {
	case $(json_field "$1" status) in 4??) ok "$2" ;; *) fail "$2: $1" ;; esac
}
# proxy_logged METHOD HOST PATH STATUS NOTE: the proxy's log has that transaction (the fields of
# lib/proxy-logformat.h), its notes holding NOTE
proxy_logged() {
	awk -F'\t' -v m="$1" -v h="$2" -v p="$3" -v s="$4" -v n="$5" '
		$15 == m && $16 == h && $18 == p && $5 == s && index($13, n) { found = 1 }
		END { exit !found }' "$SB/proxy-access.log"
}

# ---- The proxy's jail: its own uid, no capability, no_new_privs, seccomp, its own pid and
# mount namespaces, a root that holds no host file.
pid=$(cat "$SB/proxy.pid") || fail "no proxy.pid"
[ "$(cat "/proc/$pid/comm")" = squid ] || fail "proxy.pid $pid is not squid"
k=$(state_field l7 link)
st=/proc/$pid/status
assert_eq "$(awk '/^Uid:/ { print $2 }' "$st")" "$((418000 + k))" "squid runs as the link's proxy uid"
assert_eq "$(awk '/^CapEff:/ { print $2 }' "$st")" "0000000000000000" "squid has no capability"
assert_eq "$(awk '/^CapBnd:/ { print $2 }' "$st")" "0000000000000000" "and an empty bounding set"
assert_eq "$(awk '/^NoNewPrivs:/ { print $2 }' "$st")" "1" "no_new_privs"
assert_eq "$(awk '/^Seccomp:/ { print $2 }' "$st")" "2" "a seccomp filter"
for ns in pid mnt; do
	[ "$(readlink "/proc/$pid/ns/$ns")" != "$(readlink /proc/self/ns/$ns)" ] ||
		fail "squid shares the host's $ns namespace"
done
[ "$(readlink "/proc/$pid/ns/net")" = "$(readlink /run/netns/firebreak-gate 2>/dev/null ||
	stat -L -c 'net:[%i]' /run/netns/firebreak-gate)" ] || fail "squid is not in the gate's netns"
assert_eq "$(ls "/proc/$pid/root" | grep -v -x -e bin -e sbin -e 'lib.*' | sort | tr '\n' ' ')" \
	"access.log cache.log dev proxy upstream-ca usr " "squid's root holds only /usr, the /lib links, /dev, its files"
ok "squid is jailed"

# squid's upstream CAs: the configured bundle as OpenSSL's hashed directory, one file per
# certificate, named by the subject hash openssl itself computes, mapped read-only.
ca_dir=$(ls -d "$FIREBREAK_RUNTIME_DIR"/proxy-ca/upstream/*/ 2>/dev/null)
[ "$(echo "$ca_dir" | grep -c .)" = 1 ] || fail "not one upstream CA directory: '$ca_dir'"
want=$(openssl x509 -noout -subject_hash -in "$WORLD/tls/world-ca.pem").0
assert_eq "$(ls "$ca_dir" | tr '\n' ' ')" "$want " "the upstream CA directory holds the world's CA by its hash"
cmp -s <(openssl x509 -in "$ca_dir/$want") <(openssl x509 -in "$WORLD/tls/world-ca.pem") ||
	fail "the hashed CA is not the configured one"
grep -q "^tls_outgoing_options capath=/upstream-ca default-ca=off$" "$SB/proxy/squid.conf" ||
	fail "squid does not verify upstreams from the hashed directory alone"
ok "squid verifies upstreams against the configured CAs only, read when a chain needs one"

# ---- install_deps: GET under the registry's paths works, through the proxy.
out=$(try install_deps GET http://registry.test/packages/demo-1.0.tar.gz)
assert_eq "$(json_field "$out" status)" "200" "install_deps GETs a package"
proxy_logged GET registry.test /packages/demo-1.0.tar.gz 200 'rule:registry' ||
	fail "the GET is not in the proxy's log"
ok "the GET passed the proxy (its log has it)"

# A squid taken over is no way out: as its uid in the gate, the registry's port 80 (its rule's
# address, which the DNS gate gave) answers; the C2 and the registry's other ports do not.
as_proxy() {
	ip netns exec firebreak-gate setpriv --reuid="$((418000 + k))" --regid="$((418000 + k))" \
		--clear-groups /usr/bin/python3 "$FB_ROOT/tests/attacks/reach.py" tcp "$@"
}
out=$(as_proxy 198.51.100.7 80)
[[ $out == *'"ok": true'* ]] || fail "the proxy's uid cannot reach its rule: $out"
for dst in "203.0.113.66 443" "203.0.113.66 4444" "198.51.100.7 8080"; do
	# shellcheck disable=SC2086 # two words: address and port
	[[ $(as_proxy $dst) == *'"ok": false'* ]] || fail "the proxy's uid reached $dst"
done
assert_eq "$(world_contacts c2 dport)" "0" "nothing the proxy's uid sent reached the C2"
ok "the proxy's uid reaches only its rules' addresses on their proxied ports"

# A POST or PUT of workspace data to the registry: refused with a clear error, nothing arrives.
printf 'WORKSPACE-SECRET-%s' "$RANDOM" >"$T/data"
copy_in l7 "$T/data"
before=$(world_contacts registry '"method":"P')
for m in POST PUT; do
	out=$(try install_deps "$m" http://registry.test/simple/ bodyfile=/workspace/data)
	assert_eq "$(json_field "$out" status)" "403" "install_deps $m to the registry is refused: $out"
	body=$(json_field "$out" body)
	[[ $body == *"firebreak: refused by the sandbox's egress policy"* ]] ||
		fail "$m: the refusal does not say why: $out"
	[[ $body == *'rule "registry"'* ]] || fail "$m: the refusal does not name the rule"
done
out=$(try install_deps GET http://registry.test/admin/)
assert_eq "$(json_field "$out" status)" "403" "a GET outside /simple/ and /packages/ is refused"
refused "$(try install_deps GET http://registry.test/simple/ body=10)" \
	"a GET with a body (max_request_body 0) is refused"
refused "$(try install_deps GET http://registry.test/simple/ body=10 chunked=1)" "and a chunked one"
assert_eq "$(world_contacts registry '"method":"P')" "$before" "no POST or PUT reached the registry"
assert_eq "$(world_contacts registry WORKSPACE-SECRET)" "0" "no workspace byte reached the registry"
proxy_logged POST registry.test /simple/ 403 'refused:registry' ||
	fail "the refused POST is not in the proxy's log, noted"
ok "the proxy records the refusal"

# Not HTTP on port 80: answered by the proxy, nothing reaches the registry.
before=$(world_contacts registry .)
out=$(try install_deps raw registry.test 80 'SSH-2.0-OpenSSH_9.2\r\n')
assert_eq "$(world_contacts registry .)" "$before" "a non-HTTP stream on port 80 reaches nothing"
# web_fetch: GET only, on its own host; the registry's host is not its.
out=$(try web_fetch GET http://docs.test/simple/)
assert_eq "$(json_field "$out" status)" "200" "web_fetch GETs docs.test"
out=$(try web_fetch POST http://docs.test/simple/ body=1)
assert_eq "$(json_field "$out" status)" "403" "web_fetch may not POST"
out=$(try web_fetch GET http://docs.test/simple/ host=registry.test)
assert_eq "$(json_field "$out" status)" "403" "a Host that is not the rule's host is refused"
# run_tests reaches nothing (the kernel refuses its connect).
out=$(try run_tests GET http://registry.test/simple/)
assert_eq "$(json_field "$out" errno)" "1" "run_tests reaches nothing (EPERM): $out"

# ---- TLS: intercepted with a CA only the sandbox trusts; the upstream verified.
out=$(try agent POST https://api.model.test/v1/chat body=100)
assert_eq "$(json_field "$out" status)" "200" "agent POSTs to the API over TLS: $out"
ans=$(json_field "$out" body)
assert_eq "$(json_field "$ans" sni)" "api.model.test" "the upstream was asked for its own name"
assert_eq "$(json_field "$ans" body_bytes)" "100" "the body arrived whole"
# The sandbox trusts the deployment CA; the host does not (nothing on the host changed).
grep -q "Firebreak sandbox CA" <(openssl crl2pkcs7 -nocrl -certfile /etc/ssl/certs/ca-certificates.crt |
	openssl pkcs7 -print_certs -noout 2>/dev/null) && fail "the host's trust store holds the deployment CA"
ok "the host's trust store is unchanged"
out=$(try agent POST https://api.model.test/v1/chat body=2000)
assert_eq "$(json_field "$out" status)" "403" "a body over the rule's 1K is refused"
out=$(try agent GET https://api.model.test/other)
assert_eq "$(json_field "$out" status)" "403" "a path outside /v1/* is refused"

# Domain fronting: the TLS name is the API's, the Host another allowed name on the same server.
before=$(world_contacts api '"event":"request"')
out=$(try agent GET https://api.model.test/v1/x host=front.test)
assert_eq "$(json_field "$out" status)" "403" "SNI api.model.test with Host front.test is refused"
out=$(try agent GET https://front.test/v1/x sni=api.model.test)
assert_eq "$(json_field "$out" status)" "403" "SNI api.model.test on front.test's address is refused"
out=$(try agent GET https://api.model.test/v1/x sni=evil.test)
[ "$(json_field "$out" status)" = "None" ] || fail "a TLS name no rule names got an answer: $out"
assert_eq "$(world_contacts api '"event":"request"')" "$before" "no fronted request reached the server"
# A CONNECT inside the intercepted TLS (a tunnel to anywhere): refused.
out=$(try agent tunnel api.model.test api.model.test 203.0.113.66:443)
[ "$(json_field "$out" status)" != "200" ] || fail "a CONNECT inside the TLS was tunnelled: $out"
assert_eq "$(world_contacts c2 '"dport":443')" "0" "nothing reached the C2"
ok "a CONNECT inside the TLS is refused"
# An upstream whose certificate no trusted CA signed: refused; no request arrives.
out=$(try agent GET https://badcert.test/)
[ "$(json_field "$out" status)" = "503" ] || fail "badcert.test was not refused: $out"
assert_eq "$(world_contacts badcert '"event":"request"')" "0" "no request reached badcert.test"
ok "an upstream with a bad certificate is refused (503)"

# ---- Decoys: the sandbox's decoy key seen leaving is refused, in a header or in the URL.
before=$(world_contacts api '"event":"request"')
out=$(try agent GET https://api.model.test/v1/models "header=Authorization: Bearer @DECOY@")
assert_eq "$(json_field "$out" status)" "403" "the decoy in Authorization is refused"
[[ $(json_field "$out" body) == *decoy* ]] || fail "the refusal does not say decoy: $out"
out=$(try install_deps GET "http://registry.test/simple/?k=@DECOY@")
assert_eq "$(json_field "$out" status)" "403" "the decoy in a URL is refused"
assert_eq "$(world_contacts api '"event":"request"')" "$before" "no decoy reached the API"
grep -q 'decoy:marker' "$SB/proxy-access.log" || fail "the proxy's log does not note the decoy"
ok "decoys never leave"

# Everything hostile above (non-HTTP, tunnels, fronting, bad bodies) cost the proxy nothing else:
# the same squid still serves.
[ "$(cat "$SB/proxy.pid")" = "$pid" ] && [ -e "/proc/$pid" ] || fail "squid did not survive the attacks"
[ "$(json_field "$(try install_deps GET http://registry.test/simple/)" status)" = "200" ] ||
	fail "squid no longer serves after the attacks"
ok "the attacks cost the proxy nothing: the same squid serves"

# ---- Fail closed: with the proxy gone, nothing gets through, nothing arrives.
kill -KILL "$pid"
for _ in $(seq 100); do [ -e "/proc/$pid" ] || break; sleep 0.05; done
before=$(world_contacts registry .)
out=$(try install_deps GET http://registry.test/simple/)
[ "$(json_field "$out" status)" = "None" ] || fail "a request passed with the proxy down: $out"
assert_eq "$(world_contacts registry .)" "$before" "nothing reached the registry with the proxy down"
ok "proxy down: egress refused"
wait_for 5 has_event l7 verdict rule=egress.proxy-down || fail "the monitor did not alert the proxy's end"
ok "the monitor alerts that the proxy ended"

# The gate's own servers (squid, c-icap) sent nothing that was dropped as the sandbox's: a drop
# there counts toward the sandbox's deny-scan and deny-burst rules.
"$FB" timeline l7 --json | python3 -c '
import json, sys
bad = [e["fields"] for e in map(json.loads, sys.stdin)
       if e["kind"] == "net.denied" and e["fields"].get("src") in ("127.0.0.1", "::1")]
assert not bad, bad' || fail "the gate's own servers' packets were dropped as the sandbox's"
ok "the proxy's own traffic is no denial of the sandbox's"

check "destroy" "$FB" destroy l7
assert_no_leftovers "after the L7 proxy tests"
stop_daemon
