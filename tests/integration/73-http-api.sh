#!/bin/bash
# The HTTP API with a real client (curl) against every endpoint, on a daemon that has a real
# incident to show. The network-facing child holds no privilege (its /proc status says so); bad
# requests get the right 4xx and cost nothing (same child, same fds, the store intact); a slow
# client is cut off without holding anyone up; a sandbox cannot reach the listener; the child
# killed with SIGKILL comes back and no acknowledged action is lost.
. "$(dirname "$0")/../lib.sh"
fb_setup
printf 'http_idle_timeout = 2s\n' >>"$FB_CONF"
start_daemon
POLICY=$FB_ROOT/tests/policies/attack.json
HTTP_PORT=$(http_port)
READ=$(cat "$T/http-read.token")
ACT=$(cat "$T/http-action.token")
assert_eq "$(stat -c '%U %a' "$T/http-read.token" "$T/http-action.token" | sort -u)" "root 600" \
	"the daemon made both tokens, root's and readable by root only"

# The child: an unprivileged uid, no capability in any set, no_new_privs, seccomp, a chroot.
CHILD=$(http_child_pid)
st=/proc/$CHILD/status
assert_eq "$(awk '/^PPid:/ { print $2 }' "$st")" "$DAEMON_PID" "the HTTP child is firebreakd's"
assert_eq "$(awk '/^Uid:|^Gid:/ { print $2, $3, $4, $5 }' "$st" | sort -u)" "419999 419999 419999 419999" \
	"it runs as uid and gid 419999 (real, effective, saved, fs)"
assert_eq "$(awk '/^Cap(Inh|Prm|Eff|Bnd|Amb):/ { print $2 }' "$st" | sort -u)" "0000000000000000" \
	"it holds no capability in any set, bounding included"
assert_eq "$(awk '/^NoNewPrivs:|^Seccomp:/ { print $2 }' "$st" | tr '\n' ' ')" "1 2 " \
	"no_new_privs and a seccomp filter"
assert_eq "$(readlink /proc/$CHILD/root)" "$FIREBREAK_RUNTIME_DIR/http-root" "its root is an empty directory"

# A real incident: an escape attempt (ptrace) gets its sandbox killed.
printf 'import ctypes, time\nlibc = ctypes.CDLL(None, use_errno=True)\nlibc.syscall(101, 0, 0, 0, 0)\ntime.sleep(30)\n' >"$T/escape.py"
create_sandbox ha1 "$POLICY"
copy_in ha1 "$T/escape.py"
trace_line ha1 1 attack c1 start >"$T/trace.jsonl"
api "$ACT" POST /api/v1/trace --data-binary @"$T/trace.jsonl" >"$T/trace-reply"
expect_status 200 "POST /api/v1/trace"
assert_eq "$(cat "$T/trace-reply")" '{"ok":true,"line":1}' "the trace line is acknowledged as on the socket"
"$FB" exec ha1 --tool attack --step 1 -- python3 /workspace/escape.py >/dev/null 2>&1
wait_event ha1 action.kill || fail "the escape attempt was not killed"

api "" GET /healthz >/dev/null
expect_status 200 "GET /healthz (no token needed)"
api "$READ" GET /api/v1/sandboxes | grep -q '"name":"ha1"' || fail "ha1 not listed"
expect_status 200 "GET /api/v1/sandboxes lists ha1"
api "$READ" GET /api/v1/sandboxes/ha1 >"$T/sb.json"
expect_status 200 "GET /api/v1/sandboxes/ha1"
python3 - "$T/sb.json" <<'PY' || fail "sandbox detail"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["sandbox"]["name"] == "ha1" and d["sandbox"]["state"] == "killed", d["sandbox"]
assert [i["id"] for i in d["incidents"]] == [1], d["incidents"]
PY
ok "the sandbox's detail: killed, with its incident"

# The timeline, page by page with the cursor, is the CLI's timeline exactly.
cursor=""
: >"$T/ids"
for _ in $(seq 200); do
	api "$READ" GET "/api/v1/sandboxes/ha1/timeline?limit=3${cursor:+&cursor=$cursor}" >"$T/page.json"
	[ "$(cat "$T/status")" = 200 ] || fail "timeline page: $(cat "$T/status") $(cat "$T/page.json")"
	cursor=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["count"] == len(d["events"]) <= 3
open(sys.argv[2], "a").write("".join("%d\n" % e["id"] for e in d["events"]))
print(d["next_cursor"] or "")' "$T/page.json" "$T/ids")
	[ -z "$cursor" ] && break
done
"$FB" timeline ha1 --json | python3 -c 'import json, sys; [print(json.loads(l)["id"]) for l in sys.stdin]' >"$T/cli-ids"
[ -s "$T/ids" ] && cmp -s "$T/ids" "$T/cli-ids" || fail "the paged timeline differs from the CLI's"
ok "the timeline, 3 events a page through the cursor, is the CLI's ($(wc -l <"$T/ids") events)"

api "$READ" GET /api/v1/incidents >"$T/incs.json"
expect_status 200 "GET /api/v1/incidents"
api "$READ" GET /api/v1/incidents/1 >"$T/inc.json"
expect_status 200 "GET /api/v1/incidents/1"
python3 - "$T/incs.json" "$T/inc.json" <<'PY' || fail "incidents"
import json, sys
l = json.load(open(sys.argv[1]))["incidents"]
assert len(l) == 1 and l[0]["sandbox"] == "ha1" and l[0]["severity"] == "critical", l
d = json.load(open(sys.argv[2]))
assert d["incident"]["id"] == 1, d
assert "killed @ 1" in d["story"]["summary"], d["story"]
assert [x["rule"] for x in d["detections"]] == ["escape.seccomp"], d["detections"]
assert d["timeline"]["since"] > 0, d["timeline"]
PY
ok "the incident: its story, its verdict, its window"
curl -sS -N --max-time 1 -H "Authorization: Bearer $READ" -H "Last-Event-ID: 0" \
	"http://127.0.0.1:$HTTP_PORT/api/v1/events/stream?sandbox=ha1&kind=verdict,action.*" >"$T/sse" 2>/dev/null
assert_eq "$(grep '^data: ' "$T/sse" | sed 's/^data: //' | python3 -c '
import json, sys
print(" ".join(json.loads(l)["kind"] for l in sys.stdin))')" "verdict action.kill" \
	"the stream, resumed from the start and filtered, replays the verdict and the kill"
api "$READ" GET /metrics >"$T/metrics"
expect_status 200 "GET /metrics"
grep -qx 'firebreak_verdicts_total{rule="escape.seccomp",severity="critical"} 1' "$T/metrics" ||
	fail "the verdict is not in /metrics"
ok "/metrics counts the verdict"

# The actions, with the action token only.
create_sandbox ha2 "$POLICY"
api "$READ" POST /api/v1/sandboxes/ha2/freeze >/dev/null
expect_status 403 "freeze with the read token: forbidden"
for a in freeze thaw kill; do
	api "$ACT" POST "/api/v1/sandboxes/ha2/$a" -d "{\"reason\":\"test $a\"}" >"$T/act.json"
	expect_status 200 "POST .../ha2/$a"
	grep -q '"result":"ok"' "$T/act.json" || fail "$a: $(cat "$T/act.json")"
done
api "$ACT" POST /api/v1/sandboxes/ha2/thaw >/dev/null
expect_status 409 "thaw of a killed sandbox: conflict"
api "$ACT" POST /api/v1/sandboxes/nosuch/kill >/dev/null
expect_status 404 "kill of an unknown sandbox: not found"
rows=$(sqlite3 -readonly "$FIREBREAK_DB" "SELECT group_concat(kind || '/' || requested_by || '/' || reason, ' ') FROM actions a JOIN sandboxes s ON s.id = a.sandbox_id WHERE s.name = 'ha2'")
assert_eq "$rows" "freeze/http/test freeze thaw/http/test thaw kill/http/test kill" \
	"each action is recorded as asked over HTTP, with its reason"

# Bad requests: the right status, and the child neither dies nor leaks. The stream curl left
# above is closed first (its next keepalive finds it gone), so it is not counted as the baseline.
for _ in $(seq 50); do
	api "$READ" GET /metrics | grep -qx "firebreak_http_stream_clients 0" && break
	sleep 0.1
done
api "$READ" GET /metrics | grep -qx "firebreak_http_stream_clients 0" ||
	fail "the stream whose client went is still open"
fds_before=$(ls /proc/$CHILD/fd | wc -l)
bad() { # bad CODE WHAT TOKEN METHOD PATH [CURL ARGS...]
	local code=$1 what=$2
	shift 2
	api "$@" >/dev/null
	expect_status "$code" "$what"
}
bad 404 "an unknown path" "$READ" GET /api/v2/sandboxes
bad 404 "a traversal-looking path" "$READ" GET /api/v1/sandboxes/../../../etc/passwd
bad 404 "an encoded traversal in a name" "$READ" GET "/api/v1/sandboxes/..%2F..%2Fetc%2Fpasswd/timeline"
bad 404 "an SQL-looking sandbox name" "$READ" GET "/api/v1/sandboxes/x'%20OR%20'1'='1/timeline"
bad 404 "an SQL-looking incident id" "$READ" GET "/api/v1/incidents/1%20OR%201=1"
bad 400 "an SQL-looking limit" "$READ" GET "/api/v1/sandboxes/ha1/timeline?limit=1;DROP%20TABLE%20events"
bad 400 "a negative since" "$READ" GET "/api/v1/sandboxes/ha1/timeline?since=-1"
bad 400 "a limit over 10000" "$READ" GET "/api/v1/sandboxes/ha1/timeline?limit=10001"
bad 400 "an invalid cursor" "$READ" GET "/api/v1/sandboxes/ha1/timeline?cursor=abc"
bad 400 "a cursor of id 0" "$READ" GET "/api/v1/sandboxes/ha1/timeline?cursor=1.0"
bad 400 "an overflowing cursor" "$READ" GET "/api/v1/sandboxes/ha1/timeline?cursor=99999999999999999999.1"
bad 400 "a bad Last-Event-ID" "$READ" GET /api/v1/events/stream -H "Last-Event-ID: x"
bad 405 "a wrong method" "$READ" DELETE /api/v1/sandboxes
bad 405 "GET on an action" "$ACT" GET /api/v1/sandboxes/ha2/kill
bad 401 "no token" "" GET /api/v1/sandboxes
bad 401 "a wrong token" "${READ}x" GET /api/v1/sandboxes
bad 401 "a token of another scheme" "" GET /api/v1/sandboxes -H "Authorization: Basic $READ"
bad 403 "the read token for trace ingest" "$READ" POST /api/v1/trace --data-binary @"$T/trace.jsonl"
bad 431 "an oversized header" "$READ" GET /api/v1/sandboxes -H "X-Big: $(head -c 40000 /dev/zero | tr '\0' a)"
head -c 5000000 /dev/zero | tr '\0' ' ' >"$T/big"
bad 413 "an oversized trace body" "$ACT" POST /api/v1/trace --data-binary @"$T/big"
bad 413 "an oversized action body" "$ACT" POST /api/v1/sandboxes/ha2/kill --data-binary @"$T/big"
bad 400 "an action body that is not {reason}" "$ACT" POST /api/v1/sandboxes/ha2/kill -d '{"op":"quarantine"}'
bad 400 "a trace body of blank lines" "$ACT" POST /api/v1/trace --data-binary $'\n\n'
# A slow client (a request line and half a header, then nothing) is closed after the idle timeout,
# and nobody waits for it meanwhile.
python3 - "$HTTP_PORT" <<'PY' &
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
t = time.time()
s.settimeout(10)
assert s.recv(100) == b"", "the slow client got an answer"
assert 1.5 < time.time() - t < 6, time.time() - t
PY
SLOW=$!
sleep 0.3
api "" GET /healthz >/dev/null
expect_status 200 "others are served while a slow client holds a connection"
wait "$SLOW" || fail "the slow client was not closed after the idle timeout"
ok "the slow client was closed after the idle timeout"
assert_eq "$(http_child_pid)" "$CHILD" "the bad requests did not crash the child"
assert_eq "$(ls /proc/$CHILD/fd | wc -l)" "$fds_before" "nor leave a descriptor open"
assert_eq "$(sqlite3 -readonly "$FIREBREAK_DB" "SELECT count(*) > 10 FROM events")" "1" "the store is intact"

# A sandbox cannot reach the listener: its loopback is its own, and it has no route out.
HOSTIP=$(ip -4 -o addr show scope global | awk '{ sub("/.*", "", $4); print $4; exit }')
cat >"$T/reach.py" <<PY
import socket
out = []
for addr in ["127.0.0.1"] + ["$HOSTIP"] * bool("$HOSTIP"):
    try:
        socket.create_connection((addr, $HTTP_PORT), timeout=2).close()
        out.append("reached " + addr)
    except OSError as e:
        out.append("no")
print(" ".join(out))
PY
# Under a policy whose detectors only record such attempts: a freeze mid-attempt would hang the
# call instead of letting it say what it got.
create_sandbox ha3 "$FB_ROOT/tests/policies/replay.json"
copy_in ha3 "$T/reach.py"
out=$("$FB" exec ha3 --tool attack --step 1 -- python3 /workspace/reach.py 2>&1)
want=no
[ -n "$HOSTIP" ] && want="no no"
[ "$out" = "$want" ] || fail "from inside a sandbox, expected every attempt refused ('$want'), got: $out"
ok "from inside a sandbox the listener is out of reach ($out; host address ${HOSTIP:-none})"

# The child killed with SIGKILL twice while a client freezes and thaws: it comes back, and every
# action the client saw acknowledged is in the store.
create_sandbox ha4 "$POLICY"
python3 - "$HTTP_PORT" "$ACT" >"$T/acked" <<'PY' &
import json, sys, time, urllib.request, urllib.error
port, token = sys.argv[1], sys.argv[2]
acked, want, end = 0, "freeze", time.time() + 4
while time.time() < end:
    req = urllib.request.Request("http://127.0.0.1:%s/api/v1/sandboxes/ha4/%s" % (port, want),
                                 method="POST", headers={"Authorization": "Bearer " + token})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            if json.load(r).get("result") == "ok":
                acked += 1
            want = "thaw" if want == "freeze" else "freeze"
    except urllib.error.HTTPError as e:
        if e.code == 409:  # the last one was done but its answer lost: go the other way
            want = "thaw" if want == "freeze" else "freeze"
    except OSError:
        time.sleep(0.05)  # the child is being restarted
print(acked)
PY
CLIENT=$!
for _ in 1 2; do
	sleep 1
	pid=$(http_child_pid)
	[ "$pid" -gt 0 ] && kill -KILL "$pid"
done
wait "$CLIENT" || fail "the action client failed"
acked=$(cat "$T/acked")
stored=$(sqlite3 -readonly "$FIREBREAK_DB" "SELECT count(*) FROM actions a JOIN sandboxes s ON s.id = a.sandbox_id WHERE s.name = 'ha4' AND requested_by = 'http' AND result = 'ok'")
[ "$acked" -gt 5 ] || fail "too few actions went through: $acked"
[ "$stored" -ge "$acked" ] || fail "$acked actions acknowledged, $stored stored"
ok "the child was killed twice: $acked actions acknowledged, all in the store ($stored stored)"
for _ in $(seq 50); do
	api "" GET /healthz >/dev/null 2>&1
	[ "$(cat "$T/status")" = 200 ] && break
	sleep 0.1
done
expect_status 200 "the API answers again"
[ "$(http_child_pid)" != "$CHILD" ] || fail "the child was not replaced"
restarts=$("$FB" status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["http"]["child_restarts"])')
assert_eq "$restarts" "2" "the core counts two restarts"
check "firebreakd keeps watching" "$FB" status
stop_daemon
