#!/bin/bash
# The exec launcher (docs/enforcer.md, exec): a harness speaks its socket directly and its fds are
# the tool's own; calls run side by side; an interrupted or vanished caller takes its call down;
# the next step's process holds nothing of anyone's; the monitor's restart costs no record; bad
# requests are answered, counted, and cost nothing else; the launcher ends with its sandbox.
. "$(dirname "$0")/../lib.sh"
fb_setup
start_daemon
POLICY=$FB_ROOT/tests/policies/attack.json
create_sandbox la1 "$POLICY"
SOCK=$FIREBREAK_RUNTIME_DIR/sandboxes/la1/launcher.sock
launcher=$(cat "$FIREBREAK_RUNTIME_DIR/sandboxes/la1/launcher.pid")
assert_eq "$(cat "/proc/$launcher/comm")" "firebreak-exec" "create started the launcher"
assert_eq "$(stat -c %a "$FIREBREAK_RUNTIME_DIR/sandboxes/la1")" "700" "its socket's directory is root's alone"

# A harness on the socket: its pipe is the tool's stdout, the answer carries the exit and then the
# record's durability.
cat >"$T/harness.py" <<'PY'
import array, json, os, socket, sys

def call(sock, argv, tool="run", stdin=None, extra=None):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sock)
    r, w = os.pipe()
    req = {"tool": tool, "argv": argv, "env": []}
    req.update(extra or {})
    fds = array.array("i", [stdin if stdin is not None else 0, w, 2])
    s.sendmsg([json.dumps(req).encode()], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
    os.close(w)
    msgs = []
    while True:
        m = json.loads(s.recv(1 << 20))
        msgs.append(m)
        if "error" in m or "recorded" in m or ("exit" in m and m.get("record") != "pending"):
            break
    out = b""
    while chunk := os.read(r, 65536):
        out += chunk
    return msgs, out

sock, what = sys.argv[1], sys.argv[2]
if what == "stream":
    r, w = os.pipe()
    os.write(w, b"streamed\n")
    os.close(w)
    msgs, out = call(sock, ["cat"], stdin=r)
    assert [sorted(m) for m in msgs] == [["step"], ["exit", "record", "stderr"], ["recorded"]], msgs
    assert msgs[1]["exit"] == 0 and msgs[1]["record"] == "pending" and msgs[2]["recorded"], msgs
    assert out == b"streamed\n", out
    msgs, _ = call(sock, ["false"])
    assert msgs[1]["exit"] == 1, msgs
    print(msgs[0]["step"])
elif what == "refused":
    msgs, _ = call(sock, ["/bin/mount"])
    assert msgs[-1]["exit"] == 126 and "refused by rule" in msgs[-1]["stderr"], msgs
elif what == "bad":
    # Not JSON, no fds, a JSON without a tool: each answered with an error; nothing runs.
    for payload, fds in ((b"{not json", 3), (json.dumps({"tool": "run", "argv": ["true"],
                          "env": []}).encode(), 0), (b'{"argv": ["true"], "env": []}', 3)):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        s.connect(sock)
        anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [0, 1, 2][:fds]))] if fds else []
        s.sendmsg([payload], anc)
        m = json.loads(s.recv(65536))
        assert "error" in m and m["errno"] > 0, m
        s.close()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sock)
    s.send(b'{"stats": true}')
    print(json.loads(s.recv(65536))["bad_requests"])
elif what == "hangup":
    # The caller goes away while its tool runs: the call is killed (SIGPIPE, 13).
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sock)
    req = {"tool": "run", "argv": ["sleep", "30"], "env": [], "step": 930}
    s.sendmsg([json.dumps(req).encode()], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [0, 1, 2]))])
    assert "step" in json.loads(s.recv(65536))
    s.close()
PY
step=$(python3 "$T/harness.py" "$SOCK" stream) || fail "a harness's calls on the socket"
ok "a harness's calls: its pipes are the tool's stdin and stdout, exit 0 and 1, step.end durable after"
wait_for 5 has_event la1 step.end step="$step" exit_code=1 || fail "step $step's end is not on record"
ok "step $step's start and end are on record"
check "a refusal on the socket answers 126 and names the rule" python3 "$T/harness.py" "$SOCK" refused

# Two calls side by side: a slow one does not hold up a quick one. (1.5 s: within run's 2 s
# limit with room for a slow machine's fork and exec.)
"$FB" exec la1 --tool run --step 900 -- sleep 1.5 &
slow=$!
FB_PIDS="$FB_PIDS $slow"
wait_for 5 has_event la1 step.start step=900 || fail "the slow call did not start"
t0=$(date +%s%N)
check "a quick call while a slow one runs" "$FB" exec la1 --tool run -- true
[ $((($(date +%s%N) - t0) / 1000000)) -lt 1000 ] || fail "the quick call waited for the slow one"
wait "$slow" || fail "the slow call"
ok "two calls ran side by side"

# An interrupted `firebreak exec` passes the signal on: the whole step is killed, step.end says so.
"$FB" exec la1 --tool run --step 920 -- sleep 30 &
intr=$!
FB_PIDS="$FB_PIDS $intr"
wait_for 5 has_event la1 step.start step=920 || fail "the call to interrupt did not start"
kill -INT "$intr"
wait "$intr"
assert_eq "$?" "137" "the interrupted call's exit (its tool killed)"
wait_for 5 has_event la1 step.end step=920 interrupted_by=2 || fail "step 920's end does not say SIGINT"
ok "step 920 was killed and recorded as interrupted by SIGINT"
python3 "$T/harness.py" "$SOCK" hangup || fail "the hang-up call"
wait_for 5 has_event la1 step.end step=930 interrupted_by=13 || fail "step 930's end does not say its caller went away"
ok "a caller that went away took its call down (step 930, SIGPIPE)"
[ -z "$(ls "$V2/firebreak/la1" 2>/dev/null | grep -E '^step-9[23]0$')" ] ||
	fail "a killed call's step cgroup is left"

# The next step's process: in place, with nothing open but its socket, its error pipe and
# /dev/null (not another caller's pipe, not the launcher's socket or monitor connection).
next=$(pgrep -P "$launcher" -x firebreak-exec | head -1)
[ -n "$next" ] || fail "no next step's process under the launcher"
fds=$(for f in /proc/"$next"/fd/*; do readlink "$f"; done | sed 's/:\[[0-9]*\]//' | sort | uniq -c | tr -s ' ' | tr '\n' ',')
assert_eq "$fds" " 3 /dev/null, 1 pipe, 1 socket," "the next step's process holds only its own"
assert_eq "$(awk '/^Uid:/ { print $2 }' /proc/"$next"/status)" "$(state_field la1 uid)" \
	"the next step's process gave up root before its call"
assert_eq "$(awk '/^Seccomp:/ { print $2 }' /proc/"$next"/status)" "2" "and has its seccomp filters"

# Bad requests: answered, counted, and the launcher serves on.
bad=$(python3 "$T/harness.py" "$SOCK" bad) || fail "bad requests"
assert_eq "$bad" "3" "three bad requests answered and counted"
check "the launcher serves on after bad requests" "$FB" exec la1 --tool run -- true

# The monitor restarts between calls: the launcher reconnects and nothing goes unrecorded.
stop_daemon
start_daemon
check "a call after the monitor restarted" "$FB" exec la1 --tool run --step 940 -- true
wait_for 5 has_event la1 step.end step=940 exit_code=0 || fail "step 940 is not on record after the restart"
ok "the launcher reconnected: step 940 is on record"

# Without its launcher a sandbox runs nothing, and says why.
kill -KILL "$launcher"
for _ in $(seq 50); do kill -0 "$launcher" 2>/dev/null || break; sleep 0.02; done
"$FB" exec la1 --tool run -- true 2>"$T/nolauncher.err" && fail "a call ran without the launcher"
grep -q "exec launcher does not answer" "$T/nolauncher.err" || fail "no clear reason: $(cat "$T/nolauncher.err")"
ok "without its launcher the sandbox runs nothing, and says why"
check "destroy" "$FB" destroy la1

# destroy ends the launcher, and nothing of the sandbox is left.
create_sandbox la2 "$POLICY"
launcher=$(cat "$FIREBREAK_RUNTIME_DIR/sandboxes/la2/launcher.pid")
check "destroy la2" "$FB" destroy la2
kill -0 "$launcher" 2>/dev/null && [ "$(cat "/proc/$launcher/stat" | awk '{ print $3 }')" != Z ] &&
	fail "la2's launcher outlived its destroy"
ok "destroy ended the launcher"
assert_no_leftovers "after the launcher test"
stop_daemon
