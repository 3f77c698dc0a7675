#!/bin/bash
# /metrics and the live stream with real clients: promtool accepts the exposition; a real
# Prometheus (Debian's, on loopback, started here) scrapes it with the read token and PromQL
# returns exactly the counts this test caused; 50 concurrent SSE clients each receive a burst of
# 300 events, all of them, in order.
. "$(dirname "$0")/../lib.sh"
fb_setup
start_daemon
POLICY=$FB_ROOT/tests/policies/attack.json
HTTP_PORT=$(http_port)
READ=$(cat "$T/http-read.token")
ACT=$(cat "$T/http-action.token")
command -v prometheus >/dev/null && command -v promtool >/dev/null || fail "prometheus is not installed (make installs it)"

create_sandbox pm1 "$POLICY"
for _ in 1 2 3; do
	api "$ACT" POST /api/v1/sandboxes/pm1/freeze >/dev/null
	expect_status 200 "freeze pm1"
	api "$ACT" POST /api/v1/sandboxes/pm1/thaw >/dev/null
	expect_status 200 "thaw pm1"
done
for i in $(seq 7); do trace_line pm1 "$i" attack "c$i" start; done >"$T/trace.jsonl"
api "$ACT" POST /api/v1/trace --data-binary @"$T/trace.jsonl" >/dev/null
expect_status 200 "7 trace lines"

api "$READ" GET /metrics >"$T/metrics"
expect_status 200 "GET /metrics"
promtool check metrics <"$T/metrics" >"$T/promtool.out" 2>&1 || fail "promtool: $(cat "$T/promtool.out")"
[ -s "$T/promtool.out" ] && fail "promtool has remarks: $(cat "$T/promtool.out")"
ok "promtool check metrics: no remarks ($(grep -c '^# TYPE' "$T/metrics") families)"

PROM_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$T/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: firebreak
    authorization:
      type: Bearer
      credentials_file: $T/http-read.token
    static_configs:
      - targets: ["127.0.0.1:$HTTP_PORT"]
YML
prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/prom" \
	--web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >"$T/prometheus.log" 2>&1 &
FB_PIDS="$FB_PIDS $!"
# query PROMQL: the single value of an instant query, or "" if none yet.
query() {
	curl -sS --max-time 2 "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1" 2>/dev/null |
		python3 -c '
import json, sys
try:
    r = json.load(sys.stdin)["data"]["result"]
    print(r[0]["value"][1] if len(r) == 1 else "")
except Exception:
    print("")'
}
for _ in $(seq 150); do
	[ "$(query 'firebreak_actions_total{action="freeze",result="ok"}')" = 3 ] && break
	sleep 0.2
done
assert_eq "$(query 'up{job="firebreak"}')" "1" "Prometheus scrapes /metrics with the read token"
assert_eq "$(query 'firebreak_actions_total{action="freeze",result="ok"}')" "3" \
	"PromQL: the 3 freezes this test asked for"
assert_eq "$(query 'firebreak_actions_total{action="thaw",result="ok"}')" "3" "PromQL: the 3 thaws"
assert_eq "$(query 'firebreak_events_total{source="trace",kind="tool_call.start"}')" "7" \
	"PromQL: the 7 trace lines"
assert_eq "$(query 'firebreak_sandboxes{state="running"}')" "1" "PromQL: one running sandbox"
assert_eq "$(query 'firebreak_sandbox_pids{sandbox="pm1"} > bool 0')" "1" "PromQL: pm1's tasks"

# Every metric the Grafana dashboard queries is one /metrics has, and each of its queries runs.
python3 - "$FB_ROOT/dashboards/grafana/firebreak.json" "$T/metrics" "$PROM_PORT" <<'PY' || fail "the Grafana dashboard"
import json, re, sys, urllib.parse, urllib.request
dash, metrics, port = json.load(open(sys.argv[1])), open(sys.argv[2]).read(), sys.argv[3]
have = set(re.findall(r"^# TYPE (\S+) ", metrics, re.M))
exprs = [t["expr"] for p in dash["panels"] for t in p["targets"]]
names = {re.sub(r"_(bucket|sum|count)$", "", n) if re.sub(r"_(bucket|sum|count)$", "", n) in have else n
         for e in exprs for n in re.findall(r"\bfirebreak_[a-z_]+", e)}
missing = sorted(names - have)
assert not missing, "queried but not in /metrics: %s" % missing
for e in exprs:
    r = json.load(urllib.request.urlopen("http://127.0.0.1:%s/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": e}))))
    assert r["status"] == "success", (e, r)
print("   %d panels, %d queries, %d metrics: all in /metrics, all run" % (len(dash["panels"]), len(exprs), len(names)))
PY
ok "every metric the Grafana dashboard queries exists, and Prometheus runs each query"

# 50 SSE clients, connected before the burst; each must see all 300 events, in order.
python3 - "$HTTP_PORT" "$READ" "$ACT" "$T/trace-burst.jsonl" <<'PY' || fail "SSE fan-out"
import http.client, json, sys, threading, time
port, read, act, path = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
N, CLIENTS = 300, 50
ready = threading.Barrier(CLIENTS + 1)
got = [None] * CLIENTS

def client(k):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.request("GET", "/api/v1/events/stream?sandbox=pm1&kind=tool_call.start",
              headers={"Authorization": "Bearer " + read})
    r = c.getresponse()
    assert r.status == 200 and r.getheader("Content-Type") == "text/event-stream"
    ready.wait()
    ids, calls = [], []
    while len(calls) < N:
        line = r.readline().decode()
        if line.startswith("id: "):
            ids.append(int(line[4:]))
        elif line.startswith("data: "):
            calls.append(json.loads(line[6:])["fields"]["call_id"])
    got[k] = (ids, calls)
    c.close()

ts = [threading.Thread(target=client, args=(k,), daemon=True) for k in range(CLIENTS)]
for t in ts:
    t.start()
ready.wait(timeout=30)
line = '{"gen_ai.operation.name":"execute_tool","gen_ai.tool.name":"attack","gen_ai.tool.call.id":"b%d","firebreak.sandbox":"pm1","firebreak.step":%d,"phase":"start"}'
body = "\n".join(line % (i, 100 + i) for i in range(N)).encode()
t0 = time.time()
c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
c.request("POST", "/api/v1/trace", body=body, headers={"Authorization": "Bearer " + act})
r = c.getresponse()
assert r.status == 200, r.status
assert all(json.loads(l)["ok"] for l in r.read().decode().splitlines())
for t in ts:
    t.join(timeout=30)
dt = time.time() - t0
want = ["b%d" % i for i in range(N)]
bad = [k for k in range(CLIENTS) if not got[k] or got[k][1] != want or got[k][0] != sorted(set(got[k][0]))]
assert not bad, "clients with a missing or reordered event: %s" % bad
print("   %d clients x %d events in %.2f s (%.0f deliveries/s)" % (CLIENTS, N, dt, CLIENTS * N / dt))
PY
ok "50 SSE clients each got the 300 events of the burst, in order"
stop_daemon
