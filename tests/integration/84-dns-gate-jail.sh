#!/bin/bash
# The DNS gate runs with no privilege. The live dnsmasq of a sandbox's gate: its own uid, no
# capability in any set, no_new_privs, a seccomp filter, a pid and a mount namespace of its own
# whose root holds only its jail's files, in the gate's netns; and it still answers, filling the
# rule's nft set through its keeper, so the allowed name connects. Then, as an attacker who took
# it over would, in the very jail it runs in (built by the enforcer's own code in the gate's
# netns, with the live keeper's socket and shim): read host files, the store and /root, signal a
# host process, reach the store and the control socket, configure nft (a raw NETLINK_NETFILTER
# socket, and exec'ing nft), talk to the keeper a second time, regain privilege through a user
# namespace, write to its root, connect out of the gate. Each must fail, for its own reason.
. "$(dirname "$0")/../lib.sh"
fb_setup

JAILX=$FB_ROOT/build/tests/dns-jail-exec
[ -x "$JAILX" ] || fail "$JAILX is not built (make integration builds it)"
world_up
detectors_record_only
start_daemon --config "$FB_CONF"
create_sandbox dj1 "$FB_ROOT/tests/policies/egress-tools.json"
SB=$FIREBREAK_RUNTIME_DIR/sandboxes/dj1
pid=$(cat "$SB/dnsmasq.pid") || fail "no dnsmasq.pid"
assert_eq "$(cat "/proc/$pid/comm")" "dnsmasq" "the gate's dnsmasq runs (pid $pid)"
uid=$(awk '/^Uid:/ { print $2 }' "/proc/$pid/status")

# 1. The live process, as the kernel sees it.
python3 - "/proc/$pid/status" <<'PY' || fail "the live dnsmasq is privileged"
import sys
st = dict(l.rstrip("\n").split(":\t", 1) for l in open(sys.argv[1]) if ":\t" in l)
uids, gids = st["Uid"].split(), st["Gid"].split()
assert len(set(uids)) == 1 and uids[0] != "0", "uids %s" % uids
assert gids == uids, "gids %s" % gids
assert st["Groups"].strip() == "", "groups %r" % st["Groups"]
for c in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
    assert int(st[c], 16) == 0, "%s %s" % (c, st[c])
assert st["NoNewPrivs"] == "1", "NoNewPrivs %s" % st["NoNewPrivs"]
assert st["Seccomp"] == "2", "Seccomp %s" % st["Seccomp"]
PY
ok "dnsmasq runs as uid $uid, no capability in any set, no_new_privs, seccomp filter"
keeper=$(awk '/^PPid:/ { print $2 }' "/proc/$pid/status")
python3 - "/proc/$keeper/status" <<'PY' || fail "the DNS keeper holds more than CAP_NET_ADMIN"
import sys
st = dict(l.rstrip("\n").split(":\t", 1) for l in open(sys.argv[1]) if ":\t" in l)
for c in ("CapPrm", "CapEff", "CapBnd"):
    assert int(st[c], 16) == 1 << 12, "%s %s" % (c, st[c])  # CAP_NET_ADMIN
assert int(st["CapInh"], 16) == 0 and int(st["CapAmb"], 16) == 0, st
assert st["NoNewPrivs"] == "1", "NoNewPrivs %s" % st["NoNewPrivs"]
PY
ok "its keeper (pid $keeper) holds CAP_NET_ADMIN alone, no_new_privs"
for ns in mnt pid; do
	[ "$(readlink "/proc/$pid/ns/$ns")" != "$(readlink /proc/self/ns/$ns)" ] ||
		fail "dnsmasq shares the host's $ns namespace"
done
ok "its mount and pid namespaces are its own"
assert_eq "$(stat -L -c %i "/proc/$pid/ns/net")" "$(stat -L -c %i /run/netns/firebreak-gate)" \
	"it runs in the gate's netns"
assert_eq "$(awk '/^NSpid:/ { print $NF }' "/proc/$pid/status")" "1" "it is pid 1 of its pid namespace"
assert_eq "$(ls -A "/proc/$pid/root" | sort | tr '\n' ' ')" \
	"bin dev dns.log firebreak-nftset.so firebreak-relay.sock lib lib32 lib64 sbin usr " \
	"its root holds only the jail's files (no /etc, /proc, /run, /var, /root)"
[ ! -e "/proc/$pid/root/var" ] && [ ! -e "/proc/$pid/root/etc/shadow" ] ||
	fail "the store's or the host's files are in its root"

# 2. It still works: the allowed name resolves, the answer's address is in the rule's set
# before the answer arrives, and the tool connects at once.
cat >"$T/fetch.py" <<'PY'
import socket
a = socket.getaddrinfo("registry.test", 80, proto=socket.IPPROTO_TCP)[0][4][0]
socket.create_connection((a, 80), timeout=3).close()
print(a)
PY
copy_in dj1 "$T/fetch.py"
out=$("$FB" exec dj1 --tool install_deps -- python3 /workspace/fetch.py) ||
	fail "install_deps could not reach registry.test by name"
assert_eq "$out" "198.51.100.7" "registry.test resolves through the jailed gate and connects"
k=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["link"])' "$SB/state.json")
ip netns exec firebreak-gate nft list set inet "firebreak_gate_$k" dns4_0 | grep -q '198\.51\.100\.7' ||
	fail "the keeper did not put the answer into dns4_0"
ok "the keeper filled the rule's set from the jailed dnsmasq's request"
grep -q "reply registry.test is 198.51.100.7" "$SB/dns.log" || fail "dns.log lacks the reply"
ok "the query log is written from inside the jail"

# 3. An attacker in its jail. A host process to signal, the store and control socket to reach.
sleep 300 &
victim=$!
FB_PIDS="$FB_PIDS $victim"
touch "$T/probe.log"
chown "$uid:$uid" "$T/probe.log"
probe=$(cat <<'PY'
import ctypes, errno, json, os, signal, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
def unshare(flags):
    if libc.unshare(flags) < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
victim, db, runtime = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def attempt(what, fn):
    try:
        fn()
        r = {"what": what, "ok": True}
    except OSError as e:
        r = {"what": what, "ok": False, "errno": errno.errorcode.get(e.errno, str(e.errno))}
    print(json.dumps(r), flush=True)
def unix(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET if path.endswith("relay.sock") else socket.SOCK_STREAM)
    s.connect(path)
attempt("read /etc/shadow", lambda: open("/etc/shadow").read())
attempt("read the store db", lambda: open(db, "rb").read(16))
attempt("list /var/lib/firebreak", lambda: os.listdir("/var/lib/firebreak"))
attempt("list /root", lambda: os.listdir("/root"))
attempt("list /proc", lambda: os.listdir("/proc"))
attempt("signal a host process", lambda: os.kill(victim, signal.SIGKILL))
attempt("connect to the control socket", lambda: unix(runtime + "/control.sock"))
attempt("list /run/firebreak", lambda: os.listdir("/run/firebreak"))
attempt("netlink netfilter socket", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 12))
attempt("exec nft", lambda: os.execv("/usr/sbin/nft", ["nft", "flush", "ruleset"]))
attempt("connect to the keeper again", lambda: unix("/firebreak-relay.sock"))
attempt("a user namespace", lambda: unshare(0x10000000 | 0x40000000))  # CLONE_NEWUSER | CLONE_NEWNET
attempt("write to its root", lambda: open("/evil", "w"))
attempt("become root", lambda: os.setuid(0))
# UDP: a datagram the output chain drops is refused to the sender at once (a TCP SYN would
# only be retried, indistinguishable from a silent network).
def udp(addr, port):
    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", (addr, port))
attempt("send out of the gate", lambda: udp("198.51.100.7", 9))
attempt("the upstream on another port", lambda: udp("198.51.100.53", 9))
PY
)
nsenter --net=/run/netns/firebreak-gate "$JAILX" "$uid" "$T/probe.log" "$SB/dns-keeper.sock" \
	"$FB_ROOT/build/firebreak-nftset.so" /usr/bin/python3 -c "$probe" "$victim" "$FIREBREAK_DB" \
	"$FIREBREAK_RUNTIME_DIR" >"$T/probe.jsonl" || fail "the probe did not run in the jail"
python3 - "$T/probe.jsonl" <<'PY' || fail "an attack from the DNS gate's jail got through"
import json, sys
want = {
    "read /etc/shadow": "ENOENT",          # no /etc in the jail
    "read the store db": "ENOENT",         # nor the host's /tmp, /var
    "list /var/lib/firebreak": "ENOENT",
    "list /root": "ENOENT",
    "list /proc": "ENOENT",                # no /proc: no host process to see
    "signal a host process": "ESRCH",      # its own pid namespace
    "connect to the control socket": "ENOENT",
    "list /run/firebreak": "ENOENT",
    "netlink netfilter socket": "EPERM",   # seccomp: netlink for routing only
    "exec nft": "EPERM",                   # the shim's filter: no exec after dnsmasq's own
    "connect to the keeper again": "ECONNREFUSED",  # it took dnsmasq's one connection
    "a user namespace": "EPERM",           # seccomp
    "write to its root": "EROFS",
    "become root": "EPERM",
    "send out of the gate": "EPERM",       # the gate's output chain, for the gate's uid
    "the upstream on another port": "EPERM",
}
rows = {r["what"]: r for r in map(json.loads, open(sys.argv[1]))}
bad = []
for what, err in want.items():
    r = rows.get(what)
    print("   %-32s %s" % (what, "GOT THROUGH" if r and r["ok"] else (r or {}).get("errno")))
    if r is None or r["ok"] or r["errno"] != err:
        bad.append("%s: want %s, got %s" % (what, err, r))
if bad:
    sys.exit("\n".join(bad))
PY
ok "every attack from the jail failed for its own reason"
# The control: the same datagram from the gate's netns as root goes out, so it was the gate's
# uid that was refused, not a missing route.
nsenter --net=/run/netns/firebreak-gate python3 -c '
import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("198.51.100.7", 9))' ||
	fail "the gate's netns itself cannot send to the world"
ok "the same datagram from the gate as root goes out: only the gate's uid is held in"
kill -0 "$victim" 2>/dev/null || fail "the host process was signalled"
ok "the host process is alive"
assert_eq "$(cat "/proc/$pid/comm")" "dnsmasq" "the gate's dnsmasq still runs"

"$FB" destroy dj1 || fail "destroy"
FB_SANDBOXES=""
# gone PID: it has exited (a zombie is gone too: whoever adopted it reaps it when it will).
gone() { [ ! -d "/proc/$1" ] || [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" = Z ]; }
for _ in $(seq 50); do gone "$pid" && break; sleep 0.1; done
gone "$pid" || fail "dnsmasq outlived its sandbox"
for _ in $(seq 30); do gone "$keeper" && break; sleep 0.1; done
gone "$keeper" || fail "dj1's DNS keeper (pid $keeper) outlived it"
ok "destroy ends dnsmasq and its keeper"
