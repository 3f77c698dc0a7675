#!/bin/bash
# make demo: the lesson's incident, for real, in the test world (tests/world: network namespaces
# with a fake cloud metadata service and a fake C2; nothing reaches a real address).
#
# An agent works in sandbox demo-agent (examples/policy.json). Its harness's trace records steps
# 5-13; at step 14 a web page it fetched coerced it into an edit_file call that writes a
# conftest.py (examples/demo-conftest.py), annotated {"coerced": true} by the harness. At step 15
# run_tests runs pytest, which imports that conftest.py: it tries the metadata service, then
# beacons to the C2. The egress gate refuses both, the detectors flag the metadata attempt, and
# the sandbox is killed. The demo prints the incident and its timeline, cleans everything up and
# exits 0 (1 if the sandbox was not killed). It needs root (sandboxes, namespaces).
set -u
BENCH=demo
DIE_LOG=1
# shellcheck source-path=SCRIPTDIR source=../bench/lib.sh
. "$(dirname "$0")/../bench/lib.sh"
bench_tmp /tmp/firebreak-demo.XXXXXX
FB_CONF=$T/firebreak.conf
FB_DB=$T/firebreak.db
NAME=demo-agent

# trace STEP TOOL PHASE [EXTRA]: one line of the harness's trace.
trace() {
	printf '{"gen_ai.operation.name":"execute_tool","gen_ai.tool.name":"%s","gen_ai.tool.call.id":"call_%s","firebreak.sandbox":"%s","firebreak.step":%s,"phase":"%s"%s}\n' \
		"$2" "$1" "$NAME" "$1" "$3" "${4:+,$4}" | fb trace "$NAME" >/dev/null || die "trace step $1"
}

echo "== the test world: fake metadata service 169.254.169.254, fake C2 203.0.113.66"
world_up 300 || die "world up: $(tail -5 "$T/world.log")"
printf '%s' "$WORLD_CONF" >"$FB_CONF"
# The HTTP API on a free loopback port, its tokens with the demo's state (not /etc/firebreak).
printf 'listen = 127.0.0.1:0\nhttp_read_token = %s/http-read.token\nhttp_action_token = %s/http-action.token\n' \
	"$T" "$T" >>"$FB_CONF"

echo "== firebreakd (store $FB_DB)"
start_firebreakd || die "firebreakd does not answer"

echo "== sandbox $NAME (examples/policy.json)"
fb create "$NAME" --policy "$ROOT/examples/policy.json" || die "create"
MADE=$NAME

echo "== the agent's steps 5-13 (its harness's trace)"
grep -v -e '"firebreak.step": 1[4-9]' -e '"firebreak.step": 2[0-9]' "$ROOT/examples/agent-trace.jsonl" |
	fb trace "$NAME" >/dev/null || die "trace steps 5-13"

echo "== step 14, edit_file, coerced by the page fetched at step 13: writes conftest.py"
trace 14 edit_file start '"annotations":{"input":"conftest.py","coerced":true,"reason":"the web_fetch result of step 13 carried instructions"}'
fb exec "$NAME" --tool edit_file --step 14 -- tee conftest.py <"$ROOT/examples/demo-conftest.py" >/dev/null ||
	die "step 14"
trace 14 edit_file end '"exit_code":0'

echo "== step 15, run_tests: pytest -q (imports conftest.py)"
trace 15 run_tests start '"annotations":{"input":"pytest -q"}'
fb exec "$NAME" --tool run_tests --step 15 -- python3 -m pytest -q >/dev/null 2>&1
rc=$?
echo "   pytest exited $rc"
trace 15 run_tests end "\"exit_code\":$rc"
sleep 0.3

echo
echo "== firebreak incidents"
fb incidents
id=$(fb incidents --json | python3 -c 'import json, sys; print(json.loads(sys.stdin.readline())["id"])') ||
	die "no incident"
echo
echo "== firebreak timeline $NAME --incident $id"
fb timeline "$NAME" --incident "$id"
echo
fb ps
story=$(fb incidents --json | python3 -c 'import json, sys; print(json.loads(sys.stdin.readline())["story"])')
case $story in
*"killed @"*) echo; echo "== $story" ;;
*) die "the sandbox was not killed: $story" ;;
esac

# The web page: the incident as swimlanes, live. In a terminal the demo keeps serving it until
# Ctrl-C; otherwise it says where it was and ends (FIREBREAK_DEMO_THEN: a command run while the
# daemon is still up, with FB_DEMO_URL set; the web page's test uses it).
port=$(fb status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["http"]["port"])') ||
	die "no HTTP API"
URL="http://127.0.0.1:$port/#token=$(cat "$T/http-read.token")&incident=$id"
if [ -n "${FIREBREAK_DEMO_THEN:-}" ]; then
	FB_DEMO_URL=$URL bash -c "$FIREBREAK_DEMO_THEN" || die "the check after the demo failed"
elif [ -t 0 ] && [ -t 1 ]; then
	echo
	echo "== the incident in your browser (on this machine): $URL"
	echo "   serving until Ctrl-C"
	trap 'exit 0' INT TERM
	wait "$DPID"
else
	echo
	echo "== the web page was at $URL (in a terminal, make demo keeps it up until Ctrl-C)"
fi
