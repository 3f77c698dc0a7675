# Looks around from inside a sandbox and prints one JSON object: what it can see and do. The test
# asserts each field; nothing here changes anything outside the sandbox.
import json, os, socket, stat

def exists(p):
    try:
        os.lstat(p)
        return True
    except OSError:
        return False

def can_write(p):
    try:
        with open(p, "w") as f:
            f.write("x")
        os.unlink(p)
        return True
    except OSError:
        return False

def status():
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            out[k] = v.strip()
    return out

def connect_unix(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        return "connected"
    except OSError as e:
        return e.strerror
    finally:
        s.close()

def move_cgroup():
    for p in ("/sys/fs/cgroup/unified/cgroup.procs", "/sys/fs/cgroup/cgroup.procs",
              "/sys/fs/cgroup/memory/cgroup.procs"):
        try:
            with open(p, "w") as f:
                f.write(str(os.getpid()))
            return "moved via " + p
        except OSError:
            pass
    return "refused"

def open_tty():
    try:
        os.close(os.open("/dev/tty", os.O_RDWR))
        return "opened"
    except OSError as e:
        return e.strerror

st = status()
pids = sorted(int(d) for d in os.listdir("/proc") if d.isdigit())
with open("/proc/net/dev") as f:
    ifaces = sorted(l.split(":")[0].strip() for l in f.readlines()[2:])
print(json.dumps({
    "uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups(),
    "cap_eff": st["CapEff"], "cap_prm": st["CapPrm"], "cap_bnd": st["CapBnd"],
    "cap_amb": st["CapAmb"], "no_new_privs": st["NoNewPrivs"], "seccomp": st["Seccomp"],
    "pids": pids, "hostname": socket.gethostname(), "interfaces": ifaces,
    "visible": {p: exists(p) for p in ["/root", "/home", "/run", "/run/firebreak", "/var",
                                       "/var/lib", "/var/lib/firebreak", "/var/run/docker.sock",
                                       "/srv", "/sys/fs/cgroup", "/sys/fs/cgroup/unified",
                                       "/sys/class", "/etc/shadow", "/etc/ssh/ssh_host_rsa_key",
                                       "/work", "/tmp", "/workspace", "/usr/bin/python3"]},
    # What the lures add (docs/enforcer.md): its own home, a token's directory, the tripwires.
    "listed": {p: sorted(os.listdir(p)) if exists(p) else None
               for p in ["/home", "/var", "/var/run", "/sys", "/sys/fs"]},
    "shadow_readable": os.access("/etc/shadow", os.R_OK) and os.path.getsize("/etc/shadow") > 0,
    "writable": {p: can_write(p) for p in ["/etc/firebreak-probe", "/firebreak-probe",
                                           "/usr/firebreak-probe", "/tmp/firebreak-probe",
                                           "/workspace/firebreak-probe", "/proc/sys/kernel/hostname"]},
    "cgroup_move": move_cgroup(),
    "proc_cgroup": open("/proc/self/cgroup").read().strip().splitlines(),
    "cwd": os.getcwd(),
    "dev_tty": open_tty(),
    "session_leader": os.getsid(0) == os.getpid(),
    "fds": sorted(int(x) for x in os.listdir("/proc/self/fd")),
}))
