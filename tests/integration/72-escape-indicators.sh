#!/bin/bash
# The escape indicators, on the real kernel. In an enforcer's sandbox: honest identity calls
# (the tool's own uid, -1 to keep one), a /proc/sys read and a unix socket of the sandbox's own
# get no verdict and no cgroup event (the enforcer's own v1 joins from inside are not "cgroup
# writes"); setuid(0), an id smuggled in the high half of a register and setgroups are refused by
# seccomp and flagged; the monitor's sockets asked for by path (also through /proc/1/root, with
# "//", "/./" and ".." in it, or relative) are flagged. In an adopted cgroup, where a root process plays the escaped one (in a sandbox no
# process can get past the kernel's own permission checks): a sysctl write is refused in the
# kernel and flagged, and making, joining and removing a v2 cgroup from inside are flagged (a
# host process entering the cgroup is not).
. "$(dirname "$0")/../lib.sh"
fb_setup
detectors_record_only
start_daemon --config "$FB_CONF"
POLICY=$FB_ROOT/tests/policies/attack.json

# events SANDBOX: the sandbox's timeline as JSON lines.
events() { "$FB" timeline "$1" --json; }
# rules SANDBOX: its verdicts' rules and reasons, one per line, sorted.
rules() {
	events "$1" | python3 -c '
import json, sys
for e in map(json.loads, sys.stdin):
    if e["kind"] == "verdict":
        print(e["fields"]["rule"], "|", e["fields"]["reason"])' | sort
}

cat >"$T/honest.py" <<'PY'
import os, socket
u, g = os.getuid(), os.getgid()
os.setuid(u); os.setgid(g); os.setresuid(-1, u, -1); os.setresgid(g, -1, g); os.setreuid(u, u)
print(open("/proc/sys/kernel/ostype").read().strip())
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind("/tmp/own.sock"); srv.listen(1)
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
c.connect("/tmp/own.sock")
c.close()
print("honest ok")
PY
cat >"$T/ids.py" <<'PY'
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
def refused(nr, *args):
    r = libc.syscall(nr, *[ctypes.c_ulong(a) for a in args])
    return r == -1 and ctypes.get_errno() == 1
# setuid(0); setuid with the tool's uid in the low half and junk above (the kernel reads the low
# half only); setresuid(-1, 0, -1); setgroups(0, NULL)
assert refused(105, 0)
assert not refused(105, (0xdead << 32) | os.getuid()), "the tool's own uid, high half aside"
assert refused(105, (0xdead << 32) | 0)
assert refused(117, 0xffffffff, 0, 0xffffffff)
assert refused(116, 0, 0)
print("ids refused")
PY
REL=${FIREBREAK_RUNTIME_DIR#/}
cat >"$T/monitor.py" <<PY
import os, socket
os.chdir("/")
for path in ["$FIREBREAK_RUNTIME_DIR/control.sock", "/proc/1/root$FIREBREAK_RUNTIME_DIR/trace.sock",
             "/proc/1/root/.//$REL/./x/../control.sock", "$REL/trace.sock"]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        raise SystemExit("connected to " + path)
    except OSError:
        pass
print("monitor unreachable")
PY

create_sandbox ei1 "$POLICY"
for f in honest ids monitor; do copy_in ei1 "$T/$f.py"; done
out=$("$FB" exec ei1 --tool attack --step 1 -- python3 /workspace/honest.py) || fail "honest run: $out"
assert_eq "$(echo "$out" | tail -1)" "honest ok" "honest identity calls, a sysctl read and a unix socket of its own work"
monitor_marker ei1
assert_eq "$(rules ei1)" "" "the honest run gets no verdict"
n=$(events ei1 | grep -c '"kind":"host.cgroup"')
assert_eq "$n" "0" "the enforcer's own cgroup joins are not reported as cgroup writes"
events ei1 | python3 -c '
import json, sys
u = [json.loads(l)["fields"] for l in sys.stdin if json.loads(l)["kind"] == "net.unix"]
assert any(f["path"] == "/tmp/own.sock" and not f["monitor_path"] and not f["abstract"] for f in u), u' ||
	fail "the sandbox's own unix connect is not a net.unix event"
ok "the sandbox's own unix connect is recorded (net.unix, not the monitor's)"

out=$("$FB" exec ei1 --tool attack --step 2 -- python3 /workspace/ids.py 2>&1) || fail "ids: $out"
assert_eq "$out" "ids refused" "setuid(0), a smuggled setuid(0), setresuid(-1,0,-1), setgroups: refused"
"$FB" exec ei1 --tool attack --step 3 -- python3 /workspace/monitor.py >/dev/null || fail "monitor.py"
want="escape.monitor-socket | a unix socket of the monitor's asked for: $FIREBREAK_RUNTIME_DIR/control.sock
escape.monitor-socket | a unix socket of the monitor's asked for: /proc/1/root$FIREBREAK_RUNTIME_DIR/trace.sock
escape.monitor-socket | a unix socket of the monitor's asked for: /proc/1/root/.//$REL/./x/../control.sock
escape.monitor-socket | a unix socket of the monitor's asked for: $REL/trace.sock
escape.seccomp | seccomp refused setgroups, an escape-class syscall
escape.seccomp | seccomp refused setresuid, an escape-class syscall
escape.seccomp | seccomp refused setuid, an escape-class syscall
escape.seccomp | seccomp refused setuid, an escape-class syscall"
for _ in $(seq 100); do [ "$(rules ei1)" = "$(echo "$want" | sort)" ] && break; sleep 0.05; done
assert_eq "$(rules ei1)" "$(echo "$want" | sort)" "each identity refusal and each monitor path is flagged, once"

# The adopted cgroup, in a network namespace of the test's own (the sysctl it writes is that
# namespace's, so the host's are never touched, even if the hook failed).
[ -n "$V2" ] || fail "no cgroup2 mount"
CG=firebreak-esctest-$$
CGDIR=$V2/$CG
NS=firebreak-esc-$$
remove() {
	for d in "$CGDIR/sub" "$CGDIR" "$CGDIR-out"; do
		[ -d "$d" ] || continue
		echo 1 >"$d/cgroup.kill" 2>/dev/null
		for _ in $(seq 50); do rmdir "$d" 2>/dev/null && break; sleep 0.05; done
	done
	ip netns del "$NS" 2>/dev/null
}
FB_CLEANUP_AFTER=remove
mkdir "$CGDIR" "$CGDIR-out" && ip netns add "$NS" || fail "make the test's cgroups and netns"
check "adopt $CG" "$FB" watch "$CG" --name ad72
KEY=/proc/sys/net/ipv4/conf/lo/forwarding
before=$(ip netns exec "$NS" cat $KEY)
# (ip netns exec mounts a /sys of its own, without the cgroup mounts: the cgroup part runs apart.)
sh -c 'echo $$ >"$0/cgroup.procs" || exit 9
	exec ip netns exec "$1" sh -c "v=\$(cat $2)
		if echo \$v >$2 2>/dev/null; then echo sysctl written; else echo sysctl refused; fi"' \
	"$CGDIR" "$NS" "$KEY" >"$T/adopted.out" 2>&1
# A process of the host entering a cgroup is not one inside changing it: the changes are made from
# a pid namespace of the cgroup's own, as a container's processes would.
sh -c 'echo $$ >"$0/cgroup.procs" || exit 9
	exec unshare --pid --fork sh -c "mkdir $0/sub && echo 0 >$0/sub/cgroup.procs &&
		echo 0 >$0/cgroup.procs && rmdir $0/sub && echo cgroups changed"' \
	"$CGDIR" >>"$T/adopted.out" 2>&1
# A process of the cgroup moving itself out of it (out of reach of freeze and kill), whatever its
# pid namespace: known as the cgroup's from its exec there.
sh -c 'echo $$ >"$0/cgroup.procs" || exit 9
	exec sh -c "echo 0 >$0-out/cgroup.procs && echo left"' "$CGDIR" >>"$T/adopted.out" 2>&1
assert_eq "$(cat "$T/adopted.out")" "sysctl refused
cgroups changed
left" "a root process in the adopted cgroup: its sysctl write refused, its cgroup changes done"
assert_eq "$(ip netns exec "$NS" cat $KEY)" "$before" "the sysctl kept its value"
want="escape.cgroup-write | cgroup attach of /$CG from inside
escape.cgroup-write | cgroup attach of /$CG/sub from inside
escape.cgroup-write | cgroup leave of /$CG-out from inside
escape.cgroup-write | cgroup mkdir of /$CG/sub from inside
escape.cgroup-write | cgroup rmdir of /$CG/sub from inside
escape.sysctl-write | a write to sysctl net/ipv4/conf/lo/forwarding from inside (refused in the kernel)"
for _ in $(seq 100); do [ "$(rules ad72)" = "$(echo "$want" | sort)" ] && break; sleep 0.05; done
assert_eq "$(rules ad72)" "$(echo "$want" | sort)" "the sysctl write and each cgroup change are flagged"
events ad72 | grep '"kind":"host.sysctl"' | grep -q "\"value\":\"$before" ||
	fail "the sysctl event does not carry the value written"
ok "the sysctl event carries the name and the value written"
check "unwatch ad72" "$FB" unwatch ad72
