#!/bin/bash
# Socket events from the monitor's cgroup hooks: a tool call's socket(), connect() and
# sendmsg() arrive on its step with family, type, destination and port, and with the verdict
# the sandbox's egress hook gave (refused with EPERM, or passed on to the gate, which then drops
# and logs it as net.denied). A host process's sockets produce no events.
. "$(dirname "$0")/../lib.sh"
fb_setup
world_up
detectors_record_only
start_daemon --config "$FB_CONF"
create_sandbox so1 "$FB_ROOT/tests/policies/egress.json"
cat >"$T/sock.py" <<'PY'
import errno, socket
def attempt(fam, typ, dst, port, send=False):
    s = socket.socket(fam, typ)
    s.settimeout(1)
    try:
        if send:
            s.sendto(b"x", (dst, port))
        else:
            s.connect((dst, port))
    except TimeoutError:
        return "timeout"
    except OSError as e:
        return e.errno
    finally:
        s.close()
assert attempt(socket.AF_INET, socket.SOCK_STREAM, "203.0.113.66", 4444) == errno.EPERM
assert attempt(socket.AF_INET, socket.SOCK_DGRAM, "203.0.113.66", 9, send=True) == errno.EPERM
assert attempt(socket.AF_INET6, socket.SOCK_STREAM, "fd00:ec2::254", 4444) == errno.EPERM
# Port 443 is the tool's (its registry rule): the hook passes it, the gate drops it.
assert attempt(socket.AF_INET, socket.SOCK_STREAM, "203.0.113.66", 443) == "timeout"
PY
copy_in so1 "$T/sock.py"
check "the tool call runs" "$FB" exec so1 --tool attack --step 950 -- python3 /workspace/sock.py
python3 -c 'import socket; s = socket.socket(); s.settimeout(0.2); s.connect_ex(("127.0.0.1", 9))' # a bystander
# The gate's drop is aggregated over a 1 s window before it is stored: wait for it, a while.
for _ in $(seq 50); do
	"$FB" timeline so1 --json >"$T/tl.jsonl" || fail "timeline"
	grep -q '"kind":"net.denied"' "$T/tl.jsonl" && break
	sleep 0.1
done
python3 - "$T/tl.jsonl" <<'PY' || fail "socket events of step 950"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
net = [e for e in ev if e["kind"] in ("net.socket", "net.connect", "net.sendmsg") and e["step"] == 950]
for e in net:
    assert e["source"] == "ebpf" and e["sandbox"] == "so1" and e["tool"] == "attack", e
socks = [(e["fields"]["family"], e["fields"]["type"]) for e in net if e["kind"] == "net.socket"]
assert socks == [("inet", 1), ("inet", 2), ("inet6", 1), ("inet", 1)], socks
tries = [(e["kind"], e["fields"]["dst"], e["fields"]["port"], e["fields"]["egress_hook"])
         for e in net if e["kind"] != "net.socket"]
want = [("net.connect", "203.0.113.66", 4444, "refused"),
        ("net.sendmsg", "203.0.113.66", 9, "refused"),
        ("net.connect", "fd00:ec2::254", 4444, "refused"),
        ("net.connect", "203.0.113.66", 443, "passed")]
assert tries == want, tries
assert all(e["fields"]["errno"] == 1 for e in net if e["fields"].get("egress_hook") == "refused")
denied = [e for e in ev if e["kind"] == "net.denied" and e["fields"]["port"] == 443]
assert denied and denied[0]["fields"]["dst"] == "203.0.113.66", "the gate's drop is not in the timeline"
PY
ok "socket, connect and sendmsg on step 950 with destinations and the egress hook's verdicts"
stored=$("$FB" timeline so1 --json | grep -c '"kind":"net\.\(socket\|connect\|sendmsg\)"')
assert_eq "$stored" "8" "the bystander's socket is not recorded"
check "destroy" "$FB" destroy so1
assert_no_leftovers "after the socket-event test"
stop_daemon
