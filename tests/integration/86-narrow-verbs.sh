#!/bin/bash
# The firebreak group (the harness's, for the trace socket) may name sandboxes, send trace lines,
# ask for status and pull the kill switch, but nothing that lowers enforcement: a non-root member
# is refused thaw, a step end or exec scope of the enforcer's, marking a sandbox destroyed (which
# would unwatch it), re-registering one, switching the syscall recorder off and unwatch. Each
# refusal is clear and counted, and afterwards the sandbox is still frozen, watched and confined.
. "$(dirname "$0")/../lib.sh"
fb_setup

# A throwaway member of the firebreak group; the group too if the host has none. Both go when the
# test ends, also on failure.
MEMBER=firebreak-test-v$$
MADE_GROUP=""
if ! getent group firebreak >/dev/null; then
	groupadd --system firebreak || fail "groupadd firebreak"
	MADE_GROUP=1
fi
FB_CLEANUP_AFTER='userdel "$MEMBER" >/dev/null 2>&1; [ -n "$MADE_GROUP" ] && groupdel firebreak'
useradd --system --no-create-home --shell /usr/sbin/nologin --groups firebreak "$MEMBER" ||
	fail "useradd $MEMBER"
chmod 0711 "$T" # the member reaches $T/run (the daemon makes it 0750, group firebreak)
start_daemon
assert_eq "$(stat -c %a:%G "$FIREBREAK_RUNTIME_DIR/control.sock")" "660:firebreak" \
	"the control socket is the firebreak group's"

# member SOCKET LINE: one request line as the member, straight to the socket; prints the reply.
member() {
	runuser -u "$MEMBER" -- python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
buf = b""
while not buf.endswith(b"\n"):
    chunk = s.recv(65536)
    if not chunk:
        break
    buf += chunk
print(buf.decode().strip())
' "$FIREBREAK_RUNTIME_DIR/$1" "$2"
}
CTL=control.sock
# refused WHAT LINE: the member's request must be refused as root-only, with a clear error.
REFUSED=0
refused() {
	local out
	out=$(member $CTL "$2")
	echo "$out" | grep -q '"ok":false' && echo "$out" | grep -q "permission denied: only root may" ||
		fail "$1: the member got $out"
	REFUSED=$((REFUSED + 1))
	ok "a group member is refused: $1 ($(echo "$out" | sed 's/.*"error":"\([^"]*\)".*/\1/'))"
}

# What the harness needs stays open to it.
member $CTL '{"op":"ping"}' | grep -q '"ok":true' || fail "the member cannot ping"
member $CTL '{"op":"register","sandbox":"harness-1"}' | grep -q '"ok":true' ||
	fail "the member cannot register a name for its trace"
member trace.sock "$(trace_line harness-1 1 search call_1 start)" | grep -q '"ok":true' ||
	fail "the member cannot send a trace line"
ok "a group member may ping, register a name and send trace lines for it"

create_sandbox nv1 "$FB_ROOT/tests/policies/confined.json"
out=$(member $CTL '{"op":"freeze","sandbox":"nv1","reason":"harness"}')
echo "$out" | grep -q '"ok":true' || fail "the member cannot freeze: $out"
wait_cgroup nv1 frozen 1 || fail "the member's freeze did not freeze nv1"
refused "thaw" '{"op":"thaw","sandbox":"nv1"}'
sleep 0.3
wait_cgroup nv1 frozen 1 1 || fail "nv1 is no longer frozen after the member's thaw"
ok "nv1 is still frozen after the member's thaw"
check "root thaws" "$FB" thaw nv1

printf 'import subprocess, time\ntime.sleep(3)\nsubprocess.run(["/usr/bin/touch", "/workspace/marker"])\ntime.sleep(30)\n' >"$T/slow.py"
copy_in nv1 "$T/slow.py"
"$FB" exec nv1 --tool run --step 10 -- python3 /workspace/slow.py >/dev/null 2>&1 &
RUN=$!
FB_PIDS="$FB_PIDS $RUN"
wait_event nv1 step.start || fail "step 10 did not start"
now=$(date +%s%N)
refused "a step end of the enforcer's (lifts the exec scope)" \
	'{"op":"event","event":{"ts":'"$now"',"sandbox":"nv1","step":10,"tool":"run","source":"enforcer","kind":"step.end","pid":0,"ppid":0,"uid":null,"comm":"","fields":{}}}'
refused "an exec scope (replaces the step's)" \
	'{"op":"exec-scope","sandbox":"nv1","step":10,"tool":"run","cgroup_id":1,"program":"/usr/bin/python3"}'
refused "register as destroyed (unwatches)" '{"op":"register","sandbox":"nv1","state":"destroyed"}'
refused "re-register the enforcer's sandbox" '{"op":"register","sandbox":"nv1"}'
refused "syscall recorder off" '{"op":"trace-syscalls","sandbox":"nv1","on":false}'
refused "unwatch" '{"op":"unwatch","sandbox":"nv1"}'
refused "watch" '{"op":"watch","sandbox":"nv2","cgroup":"firebreak/nv1"}'

# Still watched and still confined: the out-of-scope touch is killed in the kernel and the
# verdict freezes nv1.
wait_cgroup nv1 frozen 1 10 || fail "the out-of-scope exec did not get nv1 frozen"
init=$(state_field nv1 init_pid)
[ -e "/proc/$init/root/workspace/marker" ] && fail "touch ran: the member lifted the confinement"
wait_event nv1 verdict || fail "no verdict recorded: nv1 is no longer watched"
"$FB" timeline nv1 --step 10 --json | python3 -c '
import json, sys
ev = [json.loads(l) for l in sys.stdin]
touch = [e for e in ev if e["kind"] == "proc.exec" and e["fields"]["path"] == "/usr/bin/touch"]
assert touch and touch[0]["fields"].get("killed_in_kernel") is True, touch
# The enforcer records the step end once the verdict froze it: never one before the touch.
assert all(e["ts"] > touch[0]["ts"] for e in ev if e["kind"] == "step.end"), "an early step end"
' || fail "after the refusals, step 10's touch"
ok "after the refusals nv1 is watched and confined: the touch was killed in the kernel, frozen"
"$FB" ps | grep -w nv1 | grep -qw frozen || fail "ps does not say nv1 is frozen"
refused "thaw of the verdict's freeze" '{"op":"thaw","sandbox":"nv1"}'
wait_cgroup nv1 frozen 1 1 || fail "nv1 thawed"

n=$("$FB" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["control_refused_root_only"])')
assert_eq "$n" "$REFUSED" "every refusal is counted in control_refused_root_only"
check "kill nv1" "$FB" kill nv1
wait "$RUN" 2>/dev/null
check "destroy nv1" "$FB" destroy nv1
stop_daemon
