#!/bin/bash
# Refused attempts the kernel leaves no trace of, each made visible (docs/collectors.md, "Refused
# attempts"): chroot, a signal to the sandbox's init, kill(-1) and a limit raise through the
# seccomp filter; init's environ and namespaces, a write to /etc/passwd, a read of /etc/shadow
# and a forwarding sysctl through tripwires; a mkdir in /sys/fs/cgroup through the file
# collector. Each is an event of its step and tool; the escapes get their sandbox killed, and an
# honest read of /etc/passwd is neither refused nor recorded.
. "$(dirname "$0")/../lib.sh"
fb_setup
start_daemon
POLICY=$FB_ROOT/tests/policies/attack.json

python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
p["detectors"] = {"actions": {"critical": "alert", "high": "alert"}}
json.dump(p, open(sys.argv[2], "w"))' "$POLICY" "$T/alert.json"
cat >"$T/probe.py" <<'PY'
import os, resource, signal
def attempt(what, fn):
    try:
        fn()
        print(what, "done")
    except OSError as e:
        print(what, "refused", e.errno)
    except ValueError as e:
        print(what, "refused", "value")
def opener(path, mode):
    return lambda: open(path, mode).close()
attempt("chroot", lambda: os.chroot("/tmp"))
attempt("kill-init", lambda: os.kill(1, signal.SIGKILL))
attempt("kill-all", lambda: os.kill(-1, 0))
def signalable():
    mine = os.getpid()
    for pid in range(2, 4096):
        if pid == mine:
            continue
        try:
            os.kill(pid, 0)
            return [pid]
        except OSError:
            pass
    return []
print("signalable", signalable())
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
attempt("rlimit", lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (hard * 2, hard * 2)))
attempt("environ", opener("/proc/1/environ", "rb"))
attempt("nsenter", opener("/proc/1/ns/mnt", "rb"))
attempt("passwd-write", opener("/etc/passwd", "a"))
attempt("shadow", opener("/etc/shadow", "r"))
attempt("ip_forward", opener("/proc/sys/net/ipv4/ip_forward", "w"))
attempt("cgroup-mkdir", lambda: os.mkdir("/sys/fs/cgroup/fbx"))
attempt("tun", opener("/dev/net/tun", "rb"))
import socket
attempt("raw-socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))
print("passwd-read", "root:" in open("/etc/passwd").read())
PY
create_sandbox rprobe "$T/alert.json"
copy_in rprobe "$T/probe.py"
out=$("$FB" exec rprobe --tool attack --step 1 -- python3 /workspace/probe.py 2>&1) || fail "probe: $out"
assert_eq "$out" "chroot refused 1
kill-init refused 1
kill-all done
signalable []
rlimit refused value
environ refused 1
nsenter refused 1
passwd-write refused 1
shadow refused 1
ip_forward refused 1
cgroup-mkdir done
tun refused 1
raw-socket refused 1
passwd-read True" "what each attempt got back (EPERM where the kernel would refuse; the mkdir lands in the sandbox's own tmpfs)"
# kill(-1, 0) "succeeds": the next step's process, made ahead, is in the pid namespace, the step's
# Landlock scope refuses the signal to it (EPERM), and kill(-1) says 0 when every target refused
# with EPERM. That no process but the probe itself can be signalled is the "signalable" line.
sleep 0.5
"$FB" timeline rprobe --json >"$T/rprobe.json"
python3 - "$T/rprobe.json" <<'PY' || fail "the attempts' events: $(grep -v '"kind":"proc\.' "$T/rprobe.json" | tail -30)"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
def one(kind, **want):
    hits = [e for e in ev if e["kind"] == kind and all(e["fields"].get(k) == v for k, v in want.items())]
    assert hits, (kind, want)
    assert all(e["step"] == 1 and e["tool"] == "attack" and e["comm"].startswith("python3") for e in hits), hits
one("seccomp.denied", name="chroot")
one("seccomp.denied", name="kill")
one("seccomp.logged", name="kill")
one("seccomp.logged", name="prlimit64")
for path, lure in [("/proc/1/environ", "process"), ("/proc/1/ns/mnt", "process"),
                   ("/etc/passwd", "system"), ("/etc/shadow", "secret"),
                   ("/proc/sys/net/ipv4/ip_forward", "kernel"), ("/dev/net/tun", "device")]:
    one("lure.tripwire", path=path, lure=lure, refused=True)
one("file.create", path="/sys/fs/cgroup/fbx")
assert [e for e in ev if e["kind"] == "seccomp.denied" and e["fields"]["name"] == "socket"
        and e["step"] == 1], "no refused raw socket"
reads = [e for e in ev if e["kind"] == "lure.tripwire" and e["fields"]["path"] == "/etc/passwd"
         and not e["fields"]["refused"]]
assert not reads, reads
rules = sorted(e["fields"]["rule"] for e in ev if e["kind"] == "verdict")
assert rules == (["escape.cgroup-write"] + ["escape.seccomp"] * 2 + ["escape.tripwire"] * 6 +
                 ["signal.beyond-step"] * 2), rules
PY
ok "chroot, kill 1, kill -1, a limit raise, init's environ and ns, /etc/passwd and /etc/shadow, ip_forward, a cgroup mkdir: each an event of step 1, judged; an honest passwd read unrecorded"

# An honest `ls -l` and `id` read the account files: no event, no verdict.
create_sandbox rhonest "$POLICY"
echo 'import pwd, grp; print(pwd.getpwuid(0).pw_name, grp.getgrgid(0).gr_name)' >"$T/lookup.py"
copy_in rhonest "$T/lookup.py"
"$FB" exec rhonest --tool attack --step 1 -- python3 /workspace/lookup.py >"$T/h.out" 2>&1 ||
	fail "honest lookups: $(cat "$T/h.out")"
assert_eq "$(cat "$T/h.out")" "root root" "account lookups work through the tripwires"
monitor_marker rhonest # a tripwire's record is stored as its open is answered, before the call ends
assert_eq "$(verdict_rules rhonest)" "" "honest account lookups get no verdict"
"$FB" timeline rhonest --json | grep -q '"kind":"lure.tripwire"' && fail "an honest account lookup was recorded"
ok "account lookups read the host's files through the tripwires: no event, no verdict"

# By default each escape kills.
attack_killed rnsenter escape.tripwire 'import time
try:
    open("/proc/1/ns/mnt", "rb")
except OSError:
    pass
time.sleep(10)'
attack_killed rkill signal.beyond-step 'import os, time
try:
    os.kill(1, 9)
except OSError:
    pass
time.sleep(10)'
attack_killed rchroot escape.seccomp 'import os, time
try:
    os.chroot("/tmp")
except OSError:
    pass
time.sleep(10)'
# With children of its own: killed with the sandbox, they are no processes left behind.
attack_killed rcgroup escape.cgroup-write 'import os, subprocess, time
[subprocess.Popen(["/usr/bin/sleep", "30"]) for _ in range(30)]
os.mkdir("/sys/fs/cgroup/escape")
time.sleep(10)'
attack_killed rmknod escape.seccomp 'import os, stat, time
try:
    os.mknod("/tmp/sda", stat.S_IFBLK | 0o600, os.makedev(8, 0))
except OSError:
    pass
time.sleep(10)'
attack_killed rpasswd escape.tripwire 'import time
try:
    open("/etc/passwd", "a").write("x::0:0::/:/bin/sh\n")
except OSError:
    pass
time.sleep(10)'

# A freeze under a running call: the caller hears of it at once (125, one line), not after the
# tool's 60 s call_timeout, and the frozen step is left as it is for the operator.
create_sandbox rfrozen "$POLICY"
printf '%s\n' 'import socket, time
s = socket.socket()
s.settimeout(1)
try:
    s.connect(("10.9.9.9", 80))
except OSError:
    pass
time.sleep(30)' >"$T/frozen.py"
copy_in rfrozen "$T/frozen.py"
t0=$(date +%s%N)
"$FB" exec rfrozen --tool attack --step 1 -- python3 /workspace/frozen.py >"$T/frozen.out" 2>&1
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
assert_eq "$rc" 125 "a call frozen under it exits 125 ($(cat "$T/frozen.out"))"
[ "$ms" -lt 10000 ] || fail "the frozen call took $ms ms to return"
grep -q "was frozen while attack ran" "$T/frozen.out" || fail "no line saying the call was frozen: $(cat "$T/frozen.out")"
wait_event rfrozen step.end || fail "no step.end for the frozen call"
"$FB" timeline rfrozen --json | grep '"kind":"step.end"' | grep '"step":1,' | grep -q '"frozen":true' ||
	fail "step.end does not say the call was frozen: $("$FB" timeline rfrozen --json | grep step.end)"
wait_cgroup rfrozen frozen 1 || fail "the sandbox is not frozen"
ok "a freeze under a running call: exit 125 after $ms ms, step.end frozen, the step held for the operator"
check "destroy the frozen sandbox" "$FB" destroy rfrozen
for s in rprobe rhonest rnsenter rkill rchroot rcgroup rmknod rpasswd; do "$FB" destroy "$s" >/dev/null 2>&1; done
FB_SANDBOXES=""
assert_no_leftovers "after the refused-attempt tests"
