#!/bin/bash
# The exporters: an incident (a coerced tool call whose harness sent a W3C traceparent, an escape
# attempt, the kill) is pushed as an OTLP/HTTP trace with the GenAI and security attribute names,
# joined to the harness's trace; every stored event is pushed as a Loki line with its labels.
# Both targets are dead at first: the failures are counted, nothing is lost, and everything
# arrives once they are up. The exporter holds no privilege. The Loki target is the test's own
# receiver (tests/receiver.py): Grafana Loki is in neither Debian nor this machine's npm registry.
. "$(dirname "$0")/../lib.sh"
fb_setup
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
OTLP_PORT=$(free_port)
LOKI_PORT=$(free_port)
printf 'otlp_endpoint = http://127.0.0.1:%s/v1/traces\nloki_endpoint = http://127.0.0.1:%s/loki/api/v1/push\n' \
	"$OTLP_PORT" "$LOKI_PORT" >>"$FB_CONF"
start_daemon
HTTP_PORT=$(http_port)
READ=$(cat "$T/http-read.token")
POLICY=$FB_ROOT/tests/policies/attack.json
exp() { "$FB" status --json | python3 -c 'import json, sys; d = json.load(sys.stdin)["exporters"]; print(eval(sys.argv[1]))' "$1"; }

EXP=$(exp 'd["child_pid"]')
[ "$EXP" -gt 0 ] || fail "no exporter"
st=/proc/$EXP/status
assert_eq "$(awk '/^Uid:/ { print $2 }' "$st") $(awk '/^CapEff:|^CapBnd:/ { print $2 }' "$st" | sort -u) $(awk '/^NoNewPrivs:|^Seccomp:/ { print $2 }' "$st" | tr '\n' ' ')" \
	"419999 0000000000000000 1 2 " "the exporter runs unprivileged, with no capability, no_new_privs and seccomp"

# The incident, in the harness's trace.
TRACE_ID=4bf92f3577b34da6a3ce929d0e0e4736
PARENT=00f067aa0ba902b7
printf 'import ctypes, time\nlibc = ctypes.CDLL(None, use_errno=True)\nlibc.syscall(101, 0, 0, 0, 0)\ntime.sleep(30)\n' >"$T/escape.py"
create_sandbox ex1 "$POLICY"
copy_in ex1 "$T/escape.py"
trace_line ex1 1 attack c1 start "\"traceparent\":\"00-$TRACE_ID-$PARENT-01\",\"annotations\":{\"coerced\":true}" |
	"$FB" trace ex1 >/dev/null || fail "trace"
"$FB" exec ex1 --tool attack --step 1 -- python3 /workspace/escape.py >/dev/null 2>&1
wait_event ex1 action.kill || fail "the escape attempt was not killed"

for _ in $(seq 100); do
	[ "$(exp 'd["loki"]["errors"] > 0 and d["otlp"]["errors"] > 0')" = True ] && break
	sleep 0.1
done
assert_eq "$(exp 'd["loki"]["errors"] > 0 and d["otlp"]["errors"] > 0 and d["loki"]["lines"] == 0')" "True" \
	"with both targets down, the failures are counted and nothing is marked sent"
api "$READ" GET /metrics | grep -q '^firebreak_exporter_errors_total{exporter="otlp"} [1-9]' ||
	fail "the OTLP failures are not in /metrics"
ok "/metrics counts them (firebreak_exporter_errors_total)"

python3 "$FB_ROOT/tests/receiver.py" "$OTLP_PORT" "$T/otlp" &
FB_PIDS="$FB_PIDS $!"
python3 "$FB_ROOT/tests/receiver.py" "$LOKI_PORT" "$T/loki" &
FB_PIDS="$FB_PIDS $!"
stored=$(sqlite3 -readonly "$FIREBREAK_DB" "SELECT count(*) FROM events")
for _ in $(seq 300); do
	[ "$(exp 'd["loki"]["after"] >= '"$(sqlite3 -readonly "$FIREBREAK_DB" 'SELECT max(id) FROM events')"' and d["otlp"]["after"] == 1')" = True ] && break
	sleep 0.1
done
api "$READ" GET /api/v1/incidents/1/otlp >"$T/api-trace.json"
expect_status 200 "GET /api/v1/incidents/1/otlp"
python3 - "$T/otlp" "$T/loki" "$T/api-trace.json" "$FIREBREAK_DB" "$TRACE_ID" "$PARENT" <<'PY' || fail "what the targets received"
import glob, json, sqlite3, sys
otlp_dir, loki_dir, api, db, trace_id, parent = sys.argv[1:]
pushed = [json.load(open(f)) for f in sorted(glob.glob(otlp_dir + "/*.json"))]
assert len(pushed) == 1, "%d OTLP pushes" % len(pushed)
t = pushed[0]
assert t == json.load(open(api)), "the pushed trace is not the API's"
rs = t["resourceSpans"][0]
res = {a["key"]: a["value"] for a in rs["resource"]["attributes"]}
assert res["service.name"] == {"stringValue": "firebreak"} and res["firebreak.sandbox"] == {"stringValue": "ex1"}, res
spans = rs["scopeSpans"][0]["spans"]
attrs = lambda s: {a["key"]: list(a["value"].values())[0] for a in s["attributes"]}
tool = [s for s in spans if s["name"] == "execute_tool attack"]
assert len(tool) == 1, [s["name"] for s in spans]
tool = tool[0]
a = attrs(tool)
assert (a["gen_ai.operation.name"], a["gen_ai.tool.name"], a["gen_ai.tool.call.id"]) == ("execute_tool", "attack", "c1"), a
assert tool["traceId"] == trace_id and tool["parentSpanId"] == parent, "not joined to the harness's trace"
kinds = {e["name"] for e in tool["events"]}
assert {"proc.exec", "seccomp.denied"} <= kinds, kinds
g = [s for s in spans if s["name"] == "apply_guardrail escape.seccomp"]
assert len(g) == 1, [s["name"] for s in spans]
g = g[0]
a = attrs(g)
want = {"gen_ai.operation.name": "apply_guardrail", "gen_ai.security.decision.type": "deny",
        "gen_ai.security.decision.code": "escape.seccomp", "gen_ai.security.target.type": "tool_call",
        "gen_ai.security.target.id": "c1", "gen_ai.security.policy.id": "attack-tests"}
assert all(a.get(k) == v for k, v in want.items()), a
assert a["gen_ai.security.policy.version"].startswith("sha256:") and "ptrace" in a["gen_ai.security.decision.reason"], a
assert g["parentSpanId"] == tool["spanId"] and g["traceId"] == trace_id, "the verdict is not the tool call's child"
assert all(len(s["spanId"]) == 16 and len(s["traceId"]) == 32 for s in spans)
# Loki: every stored event exactly once, with its labels.
ids, sev = [], {}
for f in sorted(glob.glob(loki_dir + "/*.json")):
    for st in json.load(open(f))["streams"]:
        lab = st["stream"]
        assert set(lab) == {"sandbox", "tool", "kind", "severity"}, lab
        for ts, line in st["values"]:
            e = json.loads(line)
            assert int(ts) == e["ts"] and e["kind"] == lab["kind"], (ts, e, lab)
            ids.append(e["id"])
            sev[e["kind"]] = lab["severity"]
want = [r[0] for r in sqlite3.connect("file:%s?mode=ro" % db, uri=True).execute("SELECT id FROM events ORDER BY id")]
assert sorted(ids) == want, "Loki got %d lines for %d events (%d distinct)" % (len(ids), len(want), len(set(ids)))
assert sev["verdict"] == "critical" and sev["proc.exec"] == "info", sev
print("   OTLP: %d spans; Loki: %d lines" % (len(spans), len(ids)))
PY
ok "once up, the OTLP target got the incident (joined to the harness's trace) and Loki every event, once"
stop_daemon
