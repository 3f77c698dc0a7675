#!/bin/bash
# The L7 proxy's log as the monitor sees it (collectors/http/): an allowed GET is an http.request
# of the tool that made it and of its step; a refused POST an http.refused with its alert; the
# decoy in a header an exfil.decoy-http that kills the sandbox; and a restart of the daemon in
# between neither loses nor repeats a line: the proxy's log and the timeline hold the same
# transactions, each once.
. "$(dirname "$0")/../lib.sh"
fb_setup

world_up
start_daemon --config "$FB_CONF"
create_sandbox h7 "$FB_ROOT/tests/policies/l7.json"
copy_in h7 "$FB_ROOT/tests/attacks/http-try.py"
SB=$FIREBREAK_RUNTIME_DIR/sandboxes/h7

# try TOOL STEP ARGS...: http-try.py as TOOL in step STEP
try() {
	local tool=$1 step=$2
	shift 2
	"$FB" exec h7 --tool "$tool" --step "$step" -- python3 /workspace/http-try.py "$@"
}
# http_events KIND: "tool step method path" of each KIND event, sorted
http_events() {
	"$FB" timeline h7 --json | python3 -c '
import json, sys
for e in map(json.loads, sys.stdin):
    if e["kind"] == sys.argv[1]:
        f = e["fields"]; print(e.get("tool"), e.get("step"), f.get("method"), f.get("path"))' "$1" |
		sort
}
wait_http() { # KIND COUNT: waits 5 s for COUNT events of KIND
	for _ in $(seq 100); do
		[ "$(http_events "$1" | wc -l)" -ge "$2" ] && return 0
		sleep 0.05
	done
	return 1
}

try install_deps 1 GET http://registry.test/packages/demo-1.0.tar.gz >/dev/null
wait_http http.request 1 || fail "no http.request: $("$FB" timeline h7 --json | tail -3)"
assert_eq "$(http_events http.request)" "install_deps 1 GET /packages/demo-1.0.tar.gz" \
	"the allowed GET is an http.request of install_deps, step 1"

try install_deps 2 POST http://registry.test/simple/ body=10 >/dev/null
wait_http http.refused 1 || fail "no http.refused"
assert_eq "$(http_events http.refused)" "install_deps 2 POST /simple/" \
	"the refused POST is an http.refused of install_deps, step 2"
wait_verdict_line h7 "http.refused medium alert" || fail "no http.refused alert"
ok "a refusal is an alert"

# A restart between lines: the monitor goes on after the last stored line. With the daemon down
# no tool call runs (a watched sandbox runs nothing unrecorded), but an escaped process may still
# reach the proxy: root in the sandbox's network namespace, bound to web_fetch's address (the
# gate knows docs.test's address from web_fetch's first call). Its line waits in the log.
try web_fetch 3 GET http://docs.test/ >/dev/null
k=$(state_field h7 link)
web_fetch=$(python3 -c "k=$k; b=(64*k)&0xffff; print('10.199.%d.%d' % ((b>>8)&255, (b&0xc0)+3+3))")
init=$(state_field h7 init_pid)
stop_daemon
nsenter --net="/proc/$init/ns/net" curl -s -o /dev/null --max-time 10 --interface "$web_fetch" \
	--resolve docs.test:80:198.51.100.7 http://docs.test/simple/ ||
	fail "the escaped request (as web_fetch, $web_fetch) did not get through the proxy"
start_daemon --config "$FB_CONF"
try install_deps 4 GET http://registry.test/simple/ >/dev/null
wait_http http.request 4 || fail "the lines around the restart are not all there"
assert_eq "$(http_events http.request | wc -l)" "4" "four requests, each once"
http_events http.request | grep -qx "install_deps 4 GET /simple/" || fail "step 4's GET"
http_events http.request | grep -qx "web_fetch None GET /simple/" || fail "the GET made while down"

# The decoy in a header: refused by the proxy, and the sandbox killed.
try agent 5 GET https://api.model.test/v1/models "header=Authorization: Bearer @DECOY@" >/dev/null
wait_verdict_line h7 "exfil.decoy-http critical kill" || fail "no exfil.decoy-http kill"
wait_event h7 action.kill || fail "the sandbox was not killed"
ok "a decoy through the proxy kills"

# The log and the timeline: the same number of transactions, nothing lost.
lines=$(grep -c . "$SB/proxy-access.log")
events=$(( $(http_events http.request | wc -l) + $(http_events http.refused | wc -l) ))
assert_eq "$events" "$lines" "one event per proxy log line"
"$FB" timeline h7 --json | grep -q '"stage":"proxy log' && fail "a proxy log line was lost"

check "destroy" "$FB" destroy h7
assert_no_leftovers "after the HTTP events tests"
stop_daemon
