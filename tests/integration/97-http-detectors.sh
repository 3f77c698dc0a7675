#!/bin/bash
# The L7 proxy's traffic over time as the detectors judge it (detectors/rules-http-flow.c), through
# the real proxy: a tool whose POSTs, each within its rule's limits, add up past the policy's
# upload cap (64K) gets exfil.http-upload and its sandbox frozen, and not one request before; a
# tool asking its host once a second, six times over intercepted TLS, gets net.http-beacon (an
# alert: it runs on); an honest tool just under both thresholds gets no verdict at all.
. "$(dirname "$0")/../lib.sh"
fb_setup

world_up
start_daemon --config "$FB_CONF"
POLICY=$FB_ROOT/tests/policies/l7-detectors.json

# try SANDBOX TOOL STEP ARGS...: http-try.py as TOOL in step STEP
try() {
	local sb=$1 tool=$2 step=$3
	shift 3
	"$FB" exec "$sb" --tool "$tool" --step "$step" -- python3 /workspace/http-try.py "$@"
}

# proxy_marker SANDBOX: before a negative check, proof that the monitor has read and judged every
# line the sandbox's proxy logged before now, in place of a sleep: tool probe GETs /marker-N (a
# tool of its own, so no rule counts it with another tool's requests) and the wait (5 s at most)
# is for its http.request. The collector reads the log in order, and a verdict is queued right
# after the event that triggered it, so every earlier line's verdict is stored by then.
FB_PROXY_MARKER=0
proxy_marker() {
	FB_PROXY_MARKER=$((FB_PROXY_MARKER + 1))
	try "$1" probe $((80000 + FB_PROXY_MARKER)) GET "http://registry.test/marker-$FB_PROXY_MARKER" \
		>/dev/null || fail "the proxy marker call in $1 failed"
	wait_for 5 has_event "$1" http.request path="/marker-$FB_PROXY_MARKER" ||
		fail "the monitor never recorded the proxy marker of $1"
}

# rule_events SANDBOX RULE [nomethod]: for each verdict of RULE, its tool and step, then "kind tool step
# method name" of each event it names (name: the TLS SNI, else the Host), sorted, on one line.
rule_events() {
	"$FB" timeline "$1" --json | python3 -c '
import json, sys
ev = [json.loads(l) for l in sys.stdin]
ids = {e["id"]: e for e in ev}
for v in ev:
    if v["kind"] == "verdict" and v["fields"]["rule"] == sys.argv[1]:
        trig = sorted("%s %s %s %s %s" % (t["kind"], t.get("tool"), t.get("step"),
                      t["fields"].get("method") if sys.argv[2] == "method" else "-",
                      t["fields"].get("sni") or t["fields"].get("host"))
                      for t in (ids[i] for i in v["fields"]["event_ids"]))
        print(v.get("tool"), v.get("step"), "|", " | ".join(trig))' "$2" "${3:-method}"
}

# statuses SANDBOX FILE: the status of each request http-try.py printed, on one line; on
# stderr, the sandbox's proxy logs when one is not 200 (the test then fails on it).
statuses() {
	python3 -c 'import json, sys; print(" ".join(str(json.loads(l)["status"]) for l in open(sys.argv[1])))' "$2"
	grep -qv '"status": 200' "$2" && tail -n 20 "$2" "$FIREBREAK_RUNTIME_DIR/sandboxes/$1/proxy-access.log" \
		"$FIREBREAK_RUNTIME_DIR/sandboxes/$1/proxy-cache.log" >&2
	return 0
}

# --- An upload past the cap, in pieces the rule allows.
create_sandbox up97 "$POLICY"
copy_in up97 "$FB_ROOT/tests/attacks/http-try.py"
try up97 uploader 1 POST http://docs.test/simple/ body=30720 repeat=2 every=0.2 >"$T/up1.out"
assert_eq "$(statuses up97 "$T/up1.out")" "200 200" "two POSTs of 30K went through the proxy"
proxy_marker up97
assert_eq "$(rule_events up97 exfil.http-upload)" "" "60K and their headers, under 64K: no verdict"
# The third is past the cap. The freeze may come before the call returns: it runs in the
# background, and the EXIT trap ends it once the sandbox is gone.
try up97 uploader 2 POST http://docs.test/simple/ body=30720 >"$T/up2.out" 2>&1 &
FB_PIDS="$FB_PIDS $!"
wait_verdict_line up97 "exfil.http-upload high freeze" || fail "no exfil.http-upload freeze"
wait_cgroup up97 frozen 1 || fail "the uploading sandbox was not frozen"
assert_eq "$(rule_events up97 exfil.http-upload)" \
	"uploader 2 | http.request uploader 1 POST docs.test | http.request uploader 1 POST docs.test | http.request uploader 2 POST docs.test" \
	"the verdict is step 2's, and names the three POSTs of both steps"
"$FB" timeline up97 --json | grep '"rule":"exfil.http-upload"' | grep -q 'past the cap of 65536' ||
	fail "the reason does not give the cap"
ok "an upload past the cap freezes"

# --- A beacon: six requests a second apart, each on a new TLS connection (squid logs the
# intercepted CONNECT as well as the request inside it: one check-in).
create_sandbox bc97 "$POLICY"
copy_in bc97 "$FB_ROOT/tests/attacks/http-try.py"
try bc97 beacon 1 GET https://api.model.test/v1/tasks repeat=6 every=1.0 >"$T/bc.out"
assert_eq "$(statuses bc97 "$T/bc.out")" "200 200 200 200 200 200" "six check-ins went through the proxy"
wait_verdict_line bc97 "net.http-beacon medium alert" || {
	cat "$FIREBREAK_RUNTIME_DIR/sandboxes/bc97/proxy-access.log" >&2
	fail "no net.http-beacon alert"
}
# Each check-in is named by its first line, the CONNECT or the GET (whichever squid logged first).
assert_eq "$(rule_events bc97 net.http-beacon nomethod)" \
	"beacon 1 |$(for _ in 1 2 3 4 5 6; do printf ' http.request beacon 1 - api.model.test |'; done | sed 's/ |$//')" \
	"one verdict, naming the six check-ins of the beacon's step"
grep -qx "frozen 0" "$V2/firebreak/bc97/cgroup.events" || fail "a beacon's alert froze the sandbox"
ok "a beacon alerts"

# --- An honest tool just under both: 48K of POSTs (and their headers) within the window, and
# five GETs a second apart (a beacon needs six).
create_sandbox ok97 "$POLICY"
copy_in ok97 "$FB_ROOT/tests/attacks/http-try.py"
try ok97 honest 1 POST http://docs.test/simple/ body=16384 repeat=3 every=0.3 >"$T/ok1.out"
assert_eq "$(statuses ok97 "$T/ok1.out")" "200 200 200" "the honest POSTs went through the proxy"
try ok97 honest 2 GET http://registry.test/simple/ repeat=5 every=1.0 >"$T/ok2.out"
assert_eq "$(statuses ok97 "$T/ok2.out")" "200 200 200 200 200" "the honest GETs went through the proxy"
proxy_marker ok97
assert_eq "$(verdict_rules ok97)" "" "the honest tool under both thresholds: no verdict"

for sb in up97 bc97 ok97; do
	check "destroy $sb" "$FB" destroy "$sb"
done
assert_no_leftovers "after the HTTP detector tests"
stop_daemon
