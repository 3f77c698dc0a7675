#!/bin/bash
# The detectors, live, on real sandboxes: an honest tool call (computation, files, a child
# process) gets no verdict; a tool whose scope opens no egress making an internet socket is
# frozen (high); a seccomp refusal of an escape-class syscall (ptrace) gets its sandbox killed
# (critical). Each verdict names its triggering event, is a detections row in an incident that
# keeps that event, and its action is recorded with the latency from the kernel's event.
. "$(dirname "$0")/../lib.sh"
fb_setup
start_daemon
POLICY=$FB_ROOT/tests/policies/attack.json
cat >"$T/honest.py" <<'PY'
import hashlib, os, subprocess
h = hashlib.sha256()
for i in range(20000):
    h.update(str(i).encode())
os.makedirs("/workspace/out", exist_ok=True)
with open("/workspace/out/digest", "w") as f:
    f.write(h.hexdigest())
assert subprocess.run(["/usr/bin/python3", "-c", "print(1)"], capture_output=True).returncode == 0
print(open("/workspace/out/digest").read()[:8])
PY
# Honest local networking: pip's IPv6 probe (a socket bound to ::1) and a test's own server on
# loopback, talked to. Nothing of it leaves the sandbox.
cat >"$T/local.py" <<'PY'
import http.server, socket, threading, urllib.request
s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
s.bind(("::1", 0))
s.close()
srv = http.server.HTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
threading.Thread(target=srv.serve_forever, daemon=True).start()
urllib.request.urlopen("http://127.0.0.1:%d/" % srv.server_address[1]).read()
srv.shutdown()
PY
# A connect beyond the sandbox by a tool with no egress (nothing answers: no route).
printf 'import socket, time\ns = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\ns.settimeout(0.2)\ns.connect_ex(("192.0.2.1", 80))\ntime.sleep(30)\n' >"$T/sock.py"
printf 'import ctypes, time\nlibc = ctypes.CDLL(None, use_errno=True)\nlibc.syscall(101, 0, 0, 0, 0)\ntime.sleep(30)\n' >"$T/escape.py"

verdicts() { "$FB" status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["detectors"]["verdicts"])'; }
create_sandbox dt1 "$POLICY"
for f in honest local sock escape; do copy_in dt1 "$T/$f.py"; done
check "an honest tool call runs" "$FB" exec dt1 --tool attack --step 1 -- python3 /workspace/honest.py
check "a test's local networking runs" "$FB" exec dt1 --tool attack --step 11 -- python3 /workspace/local.py
monitor_marker dt1
assert_eq "$(verdicts)" "0" "honest tool calls (a loopback server and an IPv6 probe included) get no verdict"

"$FB" exec dt1 --tool attack --step 2 -- python3 /workspace/sock.py >/dev/null 2>&1 &
SOCK=$!
FB_PIDS="$FB_PIDS $SOCK"
wait_cgroup dt1 frozen 1 || fail "a no-egress tool's connect beyond the sandbox did not get dt1 frozen"
ok "a tool without egress tried to reach beyond the sandbox: the sandbox is frozen"
# The freeze comes first; the verdict and the action are stored right after.
wait_event dt1 action.freeze || fail "the freeze was not recorded"
"$FB" timeline dt1 --json >"$T/tl.jsonl" || fail "timeline"
sqlite3 -readonly -json "$FIREBREAK_DB" "SELECT d.id, d.rule, d.severity, d.event_ids, d.incident_id, i.severity AS isev, (SELECT count(*) FROM incident_events e WHERE e.incident_id = i.id) AS linked FROM detections d JOIN incidents i ON i.id = d.incident_id" >"$T/det.json" || fail "detections"
python3 - "$T/tl.jsonl" "$T/det.json" <<'PY' || fail "the freeze's verdict and action"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
det = json.load(open(sys.argv[2]))
v = [e for e in ev if e["kind"] == "verdict"]
assert len(v) == 1, v
f = v[0]["fields"]
assert (f["rule"], f["severity"], f["action"]) == ("tool.network-out-of-scope", "high", "freeze"), f
trig = [e for e in ev if e["id"] in f["event_ids"]]
assert len(trig) == 1 and trig[0]["kind"] == "net.connect" and trig[0]["step"] == 2, trig
assert trig[0]["fields"]["dst"] == "192.0.2.1", trig
assert v[0]["step"] == 2 and v[0]["tool"] == "attack" and v[0]["source"] == "detector"
a = [e for e in ev if e["kind"] == "action.freeze"]
assert len(a) == 1 and a[0]["fields"]["requested_by"] == "tool.network-out-of-scope", a
lat = a[0]["fields"]["latency_ns"]
assert 0 < lat < 1_000_000_000, lat
print("   connect() -> frozen: %.2f ms (act %.0f us)" % (lat / 1e6, a[0]["fields"]["act_ns"] / 1e3))
assert len(det) == 1 and det[0]["id"] == f["detection_id"] and det[0]["rule"] == f["rule"], det
assert json.loads(det[0]["event_ids"]) == f["event_ids"] and det[0]["linked"] == 1, det
assert det[0]["incident_id"] == f["incident_id"] and det[0]["isev"] == "high", det
PY
ok "the verdict names the connect event, is a detections row in a high incident that keeps it; the freeze is recorded with its latency"
kept=$(sqlite3 -readonly "$FIREBREAK_DB" "SELECT count(*) FROM policies p JOIN detections d ON d.policy_hash = p.hash WHERE p.text = CAST(readfile('$POLICY') AS TEXT)")
assert_eq "$kept" "1" "the policy the verdict names is kept in the store, byte for byte"
# A restarted monitor keeps adding the sandbox's verdicts to its open incident.
stop_daemon
start_daemon
check "thaw dt1" "$FB" thaw dt1
"$FB" exec dt1 --tool attack --step 3 -- python3 /workspace/sock.py >/dev/null 2>&1 &
SOCK2=$!
FB_PIDS="$FB_PIDS $SOCK2"
wait_cgroup dt1 frozen 1 || fail "the second socket did not get dt1 frozen"
# The freeze comes first; the verdict's row follows at the writer's next commit.
for _ in $(seq 100); do
	rows=$(sqlite3 -readonly "$FIREBREAK_DB" "SELECT count(*) || ' ' || group_concat(DISTINCT incident_id) FROM detections")
	[ "$rows" = "2 1" ] && break
	sleep 0.02
done
assert_eq "$rows" "2 1" "after a restart the second verdict joins incident 1"
check "kill dt1" "$FB" kill dt1
wait "$SOCK" "$SOCK2" 2>/dev/null
check "destroy dt1" "$FB" destroy dt1
sleep 0.3
"$FB" incidents --json | python3 -c '
import json, sys
inc = [json.loads(l) for l in sys.stdin]
assert len(inc) == 1 and inc[0]["sandbox"] == "dt1" and inc[0]["state"] == "closed", inc
assert inc[0]["detections"] == 2, inc
' || fail "the incident of the destroyed sandbox is not closed"
ok "destroyed, dt1's incident is closed"

create_sandbox dt2 "$POLICY"
copy_in dt2 "$T/escape.py"
"$FB" exec dt2 --tool attack --step 1 -- python3 /workspace/escape.py >/dev/null 2>&1 &
ESC=$!
FB_PIDS="$FB_PIDS $ESC"
wait_cgroup dt2 populated 0 || fail "a seccomp refusal of ptrace did not get dt2 killed"
wait "$ESC"
rc=$?
[ "$rc" -ne 0 ] || fail "the killed tool call exited 0"
ok "an escape-class syscall refused by seccomp: the sandbox is killed (the call returned $rc)"
wait_event dt2 action.kill || fail "the kill was not recorded"
"$FB" timeline dt2 --json >"$T/tl2.jsonl" || fail "timeline"
python3 - "$T/tl2.jsonl" <<'PY' || fail "the kill's verdict and action"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
v = [e["fields"] for e in ev if e["kind"] == "verdict"]
assert [(f["rule"], f["severity"], f["action"]) for f in v] == [("escape.seccomp", "critical", "kill")], v
a = [e["fields"] for e in ev if e["kind"] == "action.kill"]
assert len(a) == 1 and a[0]["requested_by"] == "escape.seccomp" and a[0]["result"] == "ok", a
# Done by the kill path's thread: handed over (queue_ns), written, confirmed.
assert 0 < a[0]["queue_ns"] < 1_000_000_000 and a[0]["act_ns"] > 0 and a[0]["confirm_ns"] >= 0, a
print("   ptrace refused -> killed: %.2f ms (queue %.0f us)" % (a[0]["latency_ns"] / 1e6, a[0]["queue_ns"] / 1e3))
PY
ok "the kill names its rule and is recorded"
# The verdicts' actions went through the real-time thread: the freeze and the kill, both
# confirmed, none done by the loop for want of the thread.
"$FB" status --json | python3 -c '
import json, sys
k = json.load(sys.stdin)["killer"]
assert k["realtime"] == 1, k
assert k["submitted"] == 2 and k["confirmed"] == 2 and k["busy"] == 0 and k["failed"] == 0, k
' || fail "the kill path's thread is not real-time, or did not do the verdicts' actions"
ok "the verdicts' freeze and kill ran on the kill path's SCHED_FIFO thread"
"$FB" ps | grep -w dt2 | grep -qw killed || fail "ps does not say dt2 killed"
check "destroy dt2" "$FB" destroy dt2
stop_daemon
