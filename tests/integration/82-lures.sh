#!/bin/bash
# The lures, live (docs/enforcer.md, "Lures"; docs/collectors.md): honest reads of a tunable and a
# cgroup file, and pip-style reads of ~/.netrc, are recorded with their step and tool and judged
# by nothing; each attack an escaped or coerced tool would try (a core_pattern write, moving into
# cgroup.procs, reading a disk, a decoy credential opened, a container runtime's socket asked for,
# the decoys' marker handed to a program) is refused where it can be, recorded with its step and
# tool, and gets its sandbox killed.
. "$(dirname "$0")/../lib.sh"
fb_setup
start_daemon
POLICY=$FB_ROOT/tests/policies/attack.json
HOST_CORE=$(cat /proc/sys/kernel/core_pattern)

# events SANDBOX KIND: that kind's events as JSON lines.
events() { "$FB" timeline "$1" --json | grep "\"kind\":\"$2\""; }

cat >"$T/honest.py" <<'PY'
import os
print(open("/proc/sys/kernel/core_pattern").read().strip(), open("/sys/fs/cgroup/memory.max").read().strip())
print(len(open(os.path.expanduser("~/.netrc")).read()) > 0, os.environ["HOME"])
PY
python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
p["sandbox"]["decoy_env"] = ["AWS_SECRET_ACCESS_KEY"]
json.dump(p, open(sys.argv[2], "w"))' "$POLICY" "$T/decoy-env.json"
create_sandbox lh "$T/decoy-env.json"
copy_in lh "$T/honest.py"
out=$("$FB" exec lh --tool attack --step 1 -- python3 /workspace/honest.py) || fail "honest: $out"
assert_eq "$(echo "$out" | tail -1)" "True /home/agent" "HOME is the sandbox's own home, with a .netrc in it"
marker=$(state_field lh decoy_marker)
assert_eq "$("$FB" exec lh --tool run -- printenv AWS_SECRET_ACCESS_KEY)" "$marker$marker" \
	"sandbox.decoy_env: the call's AWS_SECRET_ACCESS_KEY is a decoy carrying the sandbox's marker"
wait_event lh lure.decoy || fail "the .netrc read was not recorded"
monitor_marker lh # a tripwire's record is stored as its open is answered, before the call ends
events lh lure.tripwire | python3 -c '
import json, sys
ev = [json.loads(l) for l in sys.stdin]
got = sorted((e["fields"]["path"], e["fields"]["op"], e["fields"]["refused"], e["step"], e["tool"]) for e in ev)
assert got == [("/proc/sys/kernel/core_pattern", "read", False, 1, "attack"),
               ("/sys/fs/cgroup/memory.max", "read", False, 1, "attack")], got' ||
	fail "the tunable and cgroup reads are not recorded as let-through reads of step 1"
events lh lure.decoy | grep -q '"path":"/home/agent/.netrc".*"step"\|"step":1,"tool":"attack".*/home/agent/.netrc' ||
	fail "the .netrc open is not recorded with its step: $(events lh lure.decoy)"
assert_eq "$(verdict_rules lh)" "" "honest reads of lures get no verdict"
ok "honest reads of a tunable, a cgroup file and ~/.netrc: recorded with step and tool, no verdict"

# What each attack gets back, in a sandbox whose policy only alerts on critical verdicts (so the
# attacker lives to print it): EPERM from the tripwires, openat2's flags read from its memory.
python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
p["detectors"] = {"actions": {"critical": "alert"}}
json.dump(p, open(sys.argv[2], "w"))' "$POLICY" "$T/alert.json"
cat >"$T/probe.py" <<'PY'
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
class How(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]
def try_write(path, text):
    try:
        with open(path, "w") as f:
            f.write(text)
        return "written"
    except OSError as e:
        return "refused %d" % e.errno
print(try_write("/proc/sys/kernel/core_pattern", "|/tmp/x"))
print(try_write("/sys/fs/cgroup/cgroup.procs", str(os.getpid())))
how = How(os.O_RDONLY, 0, 0)
fd = libc.syscall(437, -100, b"/dev/sda", ctypes.byref(how), ctypes.sizeof(how))
print("refused %d" % ctypes.get_errno() if fd < 0 else "opened")
how = How(os.O_RDONLY, 0, 0)
fd = libc.syscall(437, -100, b"/sys/fs/cgroup/pids.max", ctypes.byref(how), ctypes.sizeof(how))
print("refused %d" % ctypes.get_errno() if fd < 0 else "read")
PY
create_sandbox lprobe "$T/alert.json"
copy_in lprobe "$T/probe.py"
out=$("$FB" exec lprobe --tool attack --step 1 -- python3 /workspace/probe.py 2>&1) || fail "probe: $out"
assert_eq "$out" "refused 1
refused 1
refused 1
read" "core_pattern and cgroup.procs writes and a /dev/sda read refused (EPERM); a read let through"
monitor_marker lprobe
assert_eq "$(verdict_rules lprobe)" "escape.tripwire escape.tripwire escape.tripwire" \
	"each refusal is an escape.tripwire verdict (alerted only, by this policy)"
assert_eq "$(cat /proc/sys/kernel/core_pattern)" "$HOST_CORE" "the host's core_pattern is untouched"

attack_killed lcore escape.tripwire 'import time
try:
    open("/proc/sys/kernel/core_pattern", "w").write("|/tmp/x")
except OSError:
    pass
time.sleep(10)'
events lcore lure.tripwire | grep -q '"op":"write","refused":true' || fail "the refused write is not an event"

attack_killed lcg escape.tripwire 'import os, time
try:
    with open("/sys/fs/cgroup/cgroup.procs", "w") as f:
        f.write(str(os.getpid()))
except OSError:
    pass
time.sleep(10)'

attack_killed ldev escape.tripwire 'import time
try:
    open("/dev/sda", "rb")
except OSError:
    pass
time.sleep(10)'

attack_killed ldecoy credential.decoy 'import os, time
print(open(os.path.expanduser("~/.aws/credentials")).read().splitlines()[1])
time.sleep(10)'

attack_killed lsock escape.runtime-socket 'import socket, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
print(s.connect_ex("/var/run/docker.sock"))
time.sleep(10)'

# The marker leaving: ~/.netrc read (recorded only), its password handed to a program.
attack_killed lmark exfil.decoy-marker 'import os, subprocess, time
pw = open(os.path.expanduser("~/.netrc")).read().split()[-1]
subprocess.run(["/usr/bin/python3", "-c", "import sys", "https://exfil.example/?p=" + pw])
time.sleep(10)'
[ "$(state_field lmark decoy_marker 2>/dev/null)" != "$(state_field lh decoy_marker)" ] ||
	fail "two sandboxes share a marker"

"$FB" status --json | python3 -c '
import json, sys
c = json.load(sys.stdin)["lure"]
assert c["refused"] == 6 and c["mark_failed"] == 0 and c["overflows"] == 0 and c["unknown"] == 0, c' ||
	fail "lure counters: $("$FB" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["lure"])')"
ok "lure counters: 6 refusals, nothing unmarked, lost or unknown"
