#!/bin/bash
# bench/bench_http.sh [EVENTS] [SANDBOXES]: the HTTP API's benchmarks (issue 7):
#
#   a. an incident's timeline of EVENTS (100,000) events over HTTP, a page of 1,000 at a time
#      through the cursor: each page (goal <= 50 ms) and all of it (goal <= 1 s);
#   b. /metrics with SANDBOXES (200) live sandboxes: the scrape's time and size;
#   c. the live stream's fan-out: 50 and 200 SSE clients each receiving a burst of 20,000 events.
#
# One client process (python3, keep-alive connections), on the same 2-vCPU machine as firebreakd
# and its HTTP child: the times include the client's reads. Needs root and a built tree (make).
# Everything is in a mktemp directory under /var/tmp and the sandboxes it creates; the EXIT trap
# destroys them and stops the daemon it started (by pid).
set -u

BENCH=bench_http
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
EVENTS=${1:-100000}
SANDBOXES=${2:-200}

need_root
need_build
case "$EVENTS$SANDBOXES" in *[!0-9]*) die "EVENTS and SANDBOXES are numbers" ;; esac
bench_tmp /var/tmp/firebreak-httpbench.XXXXXX
copy_binaries
printf 'listen = 127.0.0.1:0\nhttp_read_token = %s/read.token\nhttp_action_token = %s/action.token\ndetector_actions = off\n' \
	"$T" "$T" >"$T/fb.conf"
start_firebreakd
PORT=$(fb status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["http"]["port"])') ||
	die "firebreakd does not answer"

# a. The incident: EVENTS trace events (step 1 marked coerced), then an escape-class seccomp
# refusal, which opens an incident whose window starts at the coerced step.
fb register bh >/dev/null || die "register"
python3 - "$EVENTS" >"$T/trace.jsonl" <<'PY'
import sys
n = int(sys.argv[1]) // 2
line = '{"gen_ai.operation.name":"execute_tool","gen_ai.tool.name":"run","gen_ai.tool.call.id":"c%d","firebreak.sandbox":"bh","firebreak.step":%d,"phase":"%s"%s}\n'
out = sys.stdout
for i in range(1, n + 1):
    out.write(line % (i, i, "start", ',"annotations":{"coerced":true}' if i == 1 else ""))
    out.write(line % (i, i, "end", ',"exit_code":0'))
PY
fb trace bh <"$T/trace.jsonl" >/dev/null || die "trace"
python3 - "$T/run/control.sock" <<'PY' || die "the incident's trigger"
import json, socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
ev = {"ts": time.time_ns(), "sandbox": "bh", "step": 1, "source": "audit", "kind": "seccomp.denied",
      "fields": {"syscall": 101, "name": "ptrace", "action": "errno"}}
s.sendall((json.dumps({"op": "event", "event": ev}) + "\n").encode())
assert b'"ok":true' in s.recv(4096)
PY
for _ in $(seq 100); do
	[ "$(sqlite3 -readonly "$T/fb.db" 'SELECT count(*) FROM incidents')" = 1 ] && break
	sleep 0.05
done

fb register bf >/dev/null || die "register" # the stream's bursts

# b. SANDBOXES live sandboxes, for /metrics.
for i in $(seq "$SANDBOXES"); do
	fb create "bm$i" --policy "$ROOT/tests/policies/bench.json" >/dev/null 2>&1 || die "create bm$i"
	MADE="$MADE bm$i"
done
sleep 1 # a round of cgroup stats for each

python3 - "$PORT" "$(cat "$T/read.token")" "$(cat "$T/action.token")" "$EVENTS" "$SANDBOXES" <<'PY'
import http.client, json, re, statistics, sys, threading, time

port, read, act = int(sys.argv[1]), sys.argv[2], sys.argv[3]
events, sandboxes = int(sys.argv[4]), int(sys.argv[5])
H = {"Authorization": "Bearer " + read}

def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]

conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
def get(path):
    t = time.perf_counter()
    conn.request("GET", path, headers=H)
    r = conn.getresponse()
    body = r.read()
    assert r.status == 200, (path, r.status, body[:200])
    return body, time.perf_counter() - t

inc = json.loads(get("/api/v1/incidents/1")[0])
since, until = inc["timeline"]["since"], inc["timeline"]["until"]
# a. every page of the incident's window, in order
for rnd in range(3):
    pages, total, n, cursor = [], time.perf_counter(), 0, None
    while True:
        q = "/api/v1/sandboxes/bh/timeline?since=%d&limit=1000%s%s" % (
            since, "&until=%d" % until if until else "", "&cursor=" + cursor if cursor else "")
        body, dt = get(q)
        pages.append(dt)
        tail = body[-120:].decode()
        n += int(re.search(r'"count":(\d+)', tail).group(1))
        m = re.search(r'"next_cursor":"([0-9.]+)"', tail)
        if not m:
            break
        cursor = m.group(1)
    total = time.perf_counter() - total
    print("a. incident timeline, round %d: %d events in %d pages; a page of 1,000: median %.1f ms, p99 %.1f ms, max %.1f ms (goal <= 50); all: %.3f s (goal <= 1 s)"
          % (rnd + 1, n, len(pages), statistics.median(pages) * 1e3, pct(pages, 99) * 1e3, max(pages) * 1e3, total))
    assert n >= events, n

# b. /metrics with the live sandboxes
times, size = [], 0
for _ in range(50):
    body, dt = get("/metrics")
    times.append(dt)
    size = len(body)
per = body.decode().count('firebreak_sandbox_memory_bytes{')
print("b. /metrics with %d live sandboxes (%d with resource gauges): %d bytes; scrape median %.2f ms, p99 %.2f ms"
      % (sandboxes, per, size, statistics.median(times) * 1e3, pct(times, 99) * 1e3))

# c. the stream's fan-out
def fanout(clients, burst):
    ready = threading.Barrier(clients + 1)
    done = [0.0] * clients
    def client(k):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        c.request("GET", "/api/v1/events/stream?sandbox=bf&kind=tool_call.start", headers=H)
        r = c.getresponse()
        ready.wait()
        got = 0
        while got < burst:
            line = r.readline()
            if line.startswith(b"data: "):
                got += 1
        done[k] = time.perf_counter()
        c.close()
    ts = [threading.Thread(target=client, args=(k,), daemon=True) for k in range(clients)]
    for t in ts:
        t.start()
    ready.wait()
    line = '{"gen_ai.operation.name":"execute_tool","gen_ai.tool.name":"run","gen_ai.tool.call.id":"f%d-%d","firebreak.sandbox":"bf","firebreak.step":%d,"phase":"start"}'
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    t0 = time.perf_counter()
    for lo in range(0, burst, 10000):  # 10,000 trace lines per request at most
        body = "\n".join(line % (clients, i, 1000000 * clients + i)
                         for i in range(lo, min(burst, lo + 10000))).encode()
        c.request("POST", "/api/v1/trace", body=body, headers={"Authorization": "Bearer " + act})
        r = c.getresponse()
        r.read()
        assert r.status == 200
    stored = time.perf_counter()
    for t in ts:
        t.join()
    end = max(done)
    print("c. stream fan-out: %d clients x %d events: the last client had all %.2f s after the POST began (%.2f s after it was stored): %.0f deliveries/s"
          % (clients, burst, end - t0, end - stored, clients * burst / (end - t0)))

for clients in (50, 200):
    fanout(clients, 20000)

# The same with curl processes as the clients (their output counted with wc), so the figure is
# the server's rather than a Python client's line parsing.
import os, subprocess, tempfile
def fanout_curl(clients, burst, tag):
    d = tempfile.mkdtemp(dir="/var/tmp")
    procs = [subprocess.Popen(["curl", "-sN", "-H", "Authorization: Bearer " + read,
                               "http://127.0.0.1:%d/api/v1/events/stream?sandbox=bf&kind=tool_call.start" % port],
                              stdout=open(os.path.join(d, "c%d" % k), "wb")) for k in range(clients)]
    time.sleep(1.0)  # all connected
    line = '{"gen_ai.operation.name":"execute_tool","gen_ai.tool.name":"run","gen_ai.tool.call.id":"%s-%d","firebreak.sandbox":"bf","firebreak.step":%d,"phase":"start"}'
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    t0 = time.perf_counter()
    for lo in range(0, burst, 10000):
        body = "\n".join(line % (tag, i, 5000000 + 100000 * clients + i) for i in range(lo, min(burst, lo + 10000))).encode()
        c.request("POST", "/api/v1/trace", body=body, headers={"Authorization": "Bearer " + act})
        r = c.getresponse(); r.read(); assert r.status == 200
    want = burst * 3  # id:, data:, and the blank line of each event
    while True:
        out = subprocess.run("cat %s/c* | wc -l" % d, shell=True, capture_output=True, text=True).stdout
        if int(out) >= want * clients:
            break
        if time.perf_counter() - t0 > 300:
            break
        time.sleep(0.05)
    dt = time.perf_counter() - t0
    for p in procs:
        p.kill(); p.wait()
    subprocess.run(["rm", "-rf", d])
    print("c. stream fan-out to curl clients: %d x %d events, all delivered %.2f s after the POST began: %.0f deliveries/s"
          % (clients, burst, dt, clients * burst / dt))

for clients in (50, 200):
    fanout_curl(clients, 20000, "k%d" % clients)
PY
