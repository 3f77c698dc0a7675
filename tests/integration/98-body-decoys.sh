#!/bin/bash
# Bodies, tried from inside as an attacker with the model API's decoy key: the gate's ICAP service
# (c-icap with our module, beside squid) refuses a request whose body carries the decoy or the
# marker, to the bound API as to any other allowed host, before any of it leaves: in a plain
# body, in upper case, straddling the proxy's preview, chunked in pieces that split it. An honest
# body arrives byte-exact, small or large. An upstream that reflects the real key it was given (in
# its body and in a header) hands the sandbox the decoy instead: the real key is never inside. The
# service listens on the gate's address of the sandbox's link, which the sandbox cannot reach.
. "$(dirname "$0")/../lib.sh"
fb_setup

world_up
detectors_record_only
start_daemon --config "$FB_CONF"

credential_policy

create_sandbox bd "$T/cred.json"
copy_in bd "$FB_ROOT/tests/attacks/http-try.py"
copy_in bd "$FB_ROOT/tests/attacks/memscan.py"
SB=$FIREBREAK_RUNTIME_DIR/sandboxes/bd
marker=$(state_field bd decoy_marker)
decoy=$("$FB" exec bd --tool look -- printenv MODEL_API_KEY)
k=$(state_field bd link)

try() {
	local tool=$1
	shift
	"$FB" exec bd --tool "$tool" -- python3 /workspace/http-try.py "$@" decoyvar=MODEL_API_KEY
}
answer() { python3 -c "import json,sys; print(json.loads(json.loads(sys.argv[1])['body']).get(sys.argv[2]))" "$1" "$2"; }

# ---- The service: c-icap in the gate, the proxy's uid, its secrets its own.
icap=$(pgrep -x c-icap -u $((418000 + k)) | head -1)
[ -n "$icap" ] || fail "no c-icap runs as the sandbox's proxy uid"
assert_eq "$(stat -c '%a %u' "$SB/proxy-icap/secrets")" "600 $((418000 + k))" \
	"the service's secrets are the proxy's alone to read"
grep -q "$REAL" "$SB/proxy-icap/secrets" || fail "the service's secrets do not hold the key"
grep -q '^icap_service fb_reqmod .* bypass=off$' "$SB/proxy/squid.conf" ||
	fail "squid's ICAP service is not fail-closed"
ok "c-icap runs for the sandbox, as its proxy, its secrets its own"

# ---- Honest bodies arrive byte-exact: one within the preview, one past it (squid's copy), one
# chunked past squid's backup limit (the service echoes it).
for what in "body=1000" "body=60000" "body=65000 chunksize=4096"; do
	host=api.model.test
	[[ $what == *chunksize* ]] && host=front.test # the API rule takes no chunked body
	# shellcheck disable=SC2086
	out=$(try agent POST "https://$host/v1/chat" $what)
	assert_eq "$(json_field "$out" status)" "200" "an honest body ($what): $out"
	assert_eq "$(answer "$out" body_sha256)" "$(json_field "$out" sent_sha256)" \
		"the honest body ($what) arrived byte-exact"
done
ok "honest bodies pass unchanged"

# ---- The decoy in a body, every way: refused, and nothing arrives.
refused() {
	local out=$1 what=$2
	assert_eq "$(json_field "$out" status)" "403" "$what: $out"
	[[ $(json_field "$out" body) == *decoy* ]] || fail "$what: the refusal does not say decoy: $out"
}
before_api=$(world_contacts api '"event":"request"')
refused "$(try agent POST https://api.model.test/v1/chat 'bodytext={"key": "@DECOY@"}')" \
	"the decoy in a JSON body to the bound API"
wait_for 5 has_event bd verdict rule=exfil.decoy-http || fail "no exfil.decoy-http verdict for a body: $(tail -2 "$SB/proxy-access.log")"
grep -q 'decoy:marker.*/v1/chat' "$SB/proxy-access.log" || fail "the access log does not note decoy:marker"
upper=$(printf '%s' "$marker" | tr a-f A-F)
refused "$(try agent POST https://api.model.test/v1/chat "bodytext=k=$upper")" "the marker in upper case"
refused "$(try agent POST https://api.model.test/v1/chat 'bodytext=@DECOY@' pad=4090)" \
	"the decoy straddling the preview's end"
refused "$(try agent POST https://front.test/v1/upload 'bodytext=@DECOY@' pad=4090 chunksize=7)" \
	"the decoy chunked in 7-byte pieces to another allowed host"
refused "$(try agent PUT https://front.test/v1/upload 'bodytext=@DECOY@' pad=200000)" \
	"the decoy after 200 KB"
assert_eq "$(world_contacts api '"event":"request"')" "$before_api" "no decoy body reached the world"
assert_eq "$(world_contacts api "$marker")" "0" "the marker never reached the world"
ok "the decoy in a body is refused, whole, before any of it leaves"

# ---- An upstream that reflects the key: the sandbox gets the decoy; the key is nowhere inside.
scan=$("$FB" exec bd --tool agent -- python3 /workspace/memscan.py fbREAL- \
	call=https://api.model.test/v1/echo-auth,MODEL_API_KEY / /dev/shm) || fail "the scan did not run"
assert_eq "$(json_field "$scan" status)" "200" "the call to the reflecting endpoint: $scan"
[[ $(json_field "$scan" answer) == *"\"echo_authorization\": \"Bearer $decoy\""* ]] ||
	fail "the reflected key did not come back as the decoy: $scan"
assert_eq "$(json_field "$scan" found)" "[]" "the real key is nowhere inside"
assert_eq "$(world_contacts api "Bearer $REAL")" "1" "the API did receive the real key"
out=$(try agent POST https://api.model.test/v1/echo-auth body=10 'header=Authorization: Bearer @DECOY@')
[[ $out != *fbREAL* ]] || fail "the real key reached the sandbox: $out"
ok "a reflected real key reaches the sandbox as its decoy"

# ---- The service is the gate's: the sandbox cannot reach it.
gate4=$(sed -n 's/^icap_service fb_reqmod reqmod_precache icap:\/\/\([0-9.]*\):.*/\1/p' "$SB/proxy/squid.conf")
out=$(try agent raw "$gate4" 1344 'OPTIONS icap://x/firebreak ICAP/1.0\r\n\r\n')
[[ $(json_field "$out" body) != *ICAP* ]] || fail "the sandbox reached the ICAP service: $out"
ok "the sandbox cannot reach its ICAP service"

check "destroy" "$FB" destroy bd
wait_for 5 has_event bd sandbox.destroyed || fail "no sandbox.destroyed"
icap_gone() { ! pgrep -x c-icap -u $((418000 + k)) >/dev/null; }
wait_for 5 icap_gone || fail "c-icap outlived its sandbox"
assert_no_leftovers "after the body decoy tests"
stop_daemon
