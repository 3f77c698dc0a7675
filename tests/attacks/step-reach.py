"""From one step, goes after another step's process (argv[1]: its pid in the sandbox) and after
its own child, as an attacker who took this step would; prints what each attempt gave, as JSON."""
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import time

victim = int(sys.argv[1])
out = {}


def attempt(name, fn):
    try:
        r = fn()
        out[name] = {"ok": True, "value": r}
    except OSError as e:
        out[name] = {"ok": False, "errno": e.errno}


def read(path):
    with open(path, "rb") as f:
        return f.read(200).decode(errors="replace")


def open_rw(path):
    os.close(os.open(path, os.O_RDWR))
    return "opened for writing"


def poke(pid):
    """dd of one byte into the text of pid: the first executable mapping of its program."""
    with open("/proc/%d/maps" % pid) as f:
        text = [int(l.split("-")[0], 16) for l in f if " r-xp " in l]
    if not text:
        raise OSError(0, "no executable mapping in /proc/%d/maps" % pid)
    start = text[0]
    fd = os.open("/proc/%d/mem" % pid, os.O_RDWR)
    try:
        os.pwrite(fd, b"\xcc", start)
    finally:
        os.close(fd)
    return "wrote"


def connect_abstract():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect("\0firebreak-victim")
    s.close()
    return "connected"


out["listed"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
out["self"] = os.getpid()
attempt("victim_environ", lambda: read("/proc/%d/environ" % victim))
attempt("victim_cmdline", lambda: read("/proc/%d/cmdline" % victim))
attempt("victim_mem", lambda: open_rw("/proc/%d/mem" % victim))
attempt("victim_poke", lambda: poke(victim))
attempt("victim_signal0", lambda: os.kill(victim, 0))
attempt("victim_kill", lambda: os.kill(victim, signal.SIGKILL))
attempt("victim_socket", connect_abstract)
attempt("init_cmdline", lambda: read("/proc/1/cmdline"))


def shm_attach():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.shmget(0x46425354, 0, 0) < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
    return "found"


attempt("victim_shm", shm_attach)
out["sysvipc_shm"] = open("/proc/sysvipc/shm").read().splitlines()[1:]

# Its own child: same step, same domain. Reading it stays possible (the control: the pid is
# right and reachable), writing its memory does not.
child = subprocess.Popen(["/usr/bin/sleep", "30"])
# Until it has executed sleep, the child is a copy of this python; its environment is in place
# a little after its exe is (the kernel sets both during the execve).
deadline = time.monotonic() + 5
while os.readlink("/proc/%d/exe" % child.pid) != "/usr/bin/sleep" and time.monotonic() < deadline:
    time.sleep(0.01)
attempt("child_environ", lambda: read("/proc/%d/environ" % child.pid))
while out["child_environ"] == {"ok": True, "value": ""} and time.monotonic() < deadline:
    time.sleep(0.01)
    attempt("child_environ", lambda: read("/proc/%d/environ" % child.pid))
attempt("child_mem", lambda: open_rw("/proc/%d/mem" % child.pid))
attempt("child_poke", lambda: poke(child.pid))
child.kill()
child.wait()
# What the step learns of the host.
out["mountinfo"] = open("/proc/self/mountinfo").read()
out["cgroup"] = open("/proc/self/cgroup").read()
out["env"] = dict(os.environ)
print(json.dumps(out))
