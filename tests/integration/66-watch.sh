#!/bin/bash
# firebreak watch: a cgroup the enforcer did not make (here, a "container" the test makes outside
# firebreak/, with a nested cgroup inside) is adopted as a sandbox: its processes (in it and
# below it), sockets and resource use arrive as that sandbox's events, and a bystander's do not;
# bad adoptions are refused with a reason; a monitor killed and restarted re-adopts it; unwatch
# stops the recording; a container that ends is marked destroyed. Then the start-up scan: a
# monitor that comes up on a fresh store re-adopts the enforcer's running sandboxes.
. "$(dirname "$0")/../lib.sh"
fb_setup
start_daemon

# The "container": a v2 cgroup with a nested one, and (on a hybrid host such as these) its
# memory and pids cgroups in the v1 hierarchies, as a container runtime makes them.
[ -n "$V2" ] || fail "no cgroup2 mount"
CG=firebreak-watchtest-$$
CGDIR=$V2/$CG
V1DIRS=""
for c in memory pids; do
	m=$(awk -v c="$c" '$3 == "cgroup" && $4 ~ ("(^|,)" c "(,|$)") { print $2; exit }' /proc/mounts)
	[ -n "$m" ] && V1DIRS="$V1DIRS $m/$CG"
done
remove_cgroups() {
	for d in "$CGDIR/inner" "$CGDIR" "$V2/$CG-d" "$V2/$CG-k"; do
		[ -d "$d" ] || continue
		echo 1 >"$d/cgroup.kill" 2>/dev/null
		for _ in $(seq 50); do rmdir "$d" 2>/dev/null && break; sleep 0.05; done
	done
	for d in $V1DIRS; do
		for _ in $(seq 50); do [ -d "$d" ] || break; rmdir "$d" 2>/dev/null && break; sleep 0.05; done
	done
}
FB_CLEANUP_AFTER=remove_cgroups
mkdir "$CGDIR" "$CGDIR/inner" $V1DIRS || fail "make the test's cgroups"

# in_cgroup DIR CMD...: runs CMD as a process of v2 cgroup DIR (and of the container's v1
# cgroups), as a container runtime would.
in_cgroup() {
	local dir=$1
	shift
	sh -c 'for d in $V1DIRS; do echo $$ >"$d/cgroup.procs" || exit 1; done
		echo $$ >"$0/cgroup.procs" && exec "$@"' "$dir" "$@"
}
export V1DIRS

refused() { # refused WHY ARGS...: firebreak watch ARGS must fail, saying WHY
	local why=$1 out
	shift
	out=$("$FB" watch "$@" 2>&1) && fail "watch $* was accepted"
	echo "$out" | grep -q "$why" || fail "watch $*: expected '$why', got: $out"
	ok "refused: watch $* ($why)"
}
refused "root cgroup" "$V2" --name ad0
refused "not under the cgroup v2 mount" /etc --name ad0
refused "enforcer" firebreak --name ad0
refused "no empty" "$CG/../$CG" --name ad0
refused "no such cgroup" "$CG/nope" --name ad0
refused "not a valid sandbox name" "$CG" --name '../x'
mkdir "$V2/$CG-d" && echo "$DAEMON_PID" >"$V2/$CG-d/cgroup.procs" || fail "move firebreakd"
refused "holds firebreakd" "$CG-d" --name ad0
echo "$DAEMON_PID" >"$V2/cgroup.procs" && rmdir "$V2/$CG-d" || fail "move firebreakd back"

check "watch $CGDIR as ad1 (absolute path, with a policy)" \
	"$FB" watch "$CGDIR" --name ad1 --policy "$FB_ROOT/tests/policies/attack.json"
check "watching it again is no change" "$FB" watch "$CG" --name ad1
refused "inside, or holds, another" "$CG/inner" --name ad2
refused "another cgroup" "$CG/inner" --name ad1

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
in_cgroup "$CGDIR" /bin/echo outer >/dev/null
in_cgroup "$CGDIR/inner" /usr/bin/python3 -c "
import socket, sys
s = socket.socket()
try:
    s.connect(('127.0.0.1', $port))
except OSError:
    pass
sys.exit(4)"
for _ in $(seq 20); do /bin/true; done # bystanders
sleep 1.2 # a stats round and a drain

tl_check() { # tl_check PYTHON: asserts over the events of ad1 (list ev)
	"$FB" timeline ad1 --json >"$T/tl.jsonl" || fail "timeline ad1"
	python3 -c "
import json, sys
ev = [json.loads(l) for l in open('$T/tl.jsonl')]
$1" || fail "timeline of ad1: $2"
	ok "$2"
}
tl_check '
proc = [e for e in ev if e["source"] == "ebpf"]
execs = [e["fields"]["path"] for e in proc if e["kind"] == "proc.exec"]
assert execs == ["/bin/echo", "/usr/bin/python3"], execs
assert all(e["sandbox"] == "ad1" and e["step"] is None for e in proc), proc
exits = [e["fields"]["exit_code"] for e in proc if e["kind"] == "proc.exit"]
assert exits == [0, 4], exits
conn = [e for e in proc if e["kind"] == "net.connect"]
assert len(conn) == 1 and conn[0]["fields"]["dst"] == "127.0.0.1" and conn[0]["fields"]["port"] == '"$port"', conn
assert any(e["kind"] == "net.socket" for e in proc)
' "exec, exit, socket and connect in the adopted cgroup and below it are ad1's; no bystander's"
tl_check '
w = [e for e in ev if e["kind"] == "sandbox.watch"]
assert len(w) == 1 and w[0]["fields"]["cgroup"] == "'"$CG"'" and w[0]["fields"]["level"] == 1, w
assert w[0]["fields"]["policy_hash"].startswith("sha256:") or len(w[0]["fields"]["policy_hash"]) >= 64, w
st = [e for e in ev if e["kind"] == "cgroup.stats"]
assert st and all(e["fields"]["cgroup"] == "'"$CG"'" for e in st), st
' "the adoption is an event with its cgroup and policy hash; the cgroup's stats are sampled"
"$FB" ps | grep -w ad1 | grep -qw running || fail "ps does not show ad1 running: $("$FB" ps)"
kept=$(sqlite3 -readonly "$FIREBREAK_DB" "SELECT count(*) FROM policies p JOIN sandboxes s ON s.policy_hash = p.hash WHERE s.name = 'ad1' AND p.text = CAST(readfile('$FB_ROOT/tests/policies/attack.json') AS TEXT)")
assert_eq "$kept" "1" "the policy sent with watch is kept in the store, byte for byte, under its hash"
ok "ps shows ad1 running"

kill -KILL "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
start_daemon
in_cgroup "$CGDIR/inner" /bin/echo after-restart >/dev/null
sleep 0.5
tl_check '
execs = [e for e in ev if e["kind"] == "proc.exec"]
assert [e["fields"]["argv"] for e in execs][-1] == ["/bin/echo", "after-restart"], execs
' "a restarted monitor re-adopts the cgroup and keeps attributing its processes"

check "trace-syscalls on for an adopted cgroup" "$FB" trace-syscalls ad1 on
in_cgroup "$CGDIR/inner" /usr/bin/python3 -c 'import os; [os.getppid() for _ in range(30)]'
sleep 0.5
check "trace-syscalls off" "$FB" trace-syscalls ad1 off
tl_check '
sysev = [e for e in ev if e["kind"] == "sys.enter" and e["fields"].get("name") == "getppid"]
assert len(sysev) >= 30 and all(e["sandbox"] == "ad1" for e in sysev), len(sysev)
' "the flight recorder follows the adopted cgroup's level"

check "unwatch ad1" "$FB" unwatch ad1
in_cgroup "$CGDIR" /bin/echo unwatched >/dev/null
"$FB" ps | grep ad1 | grep -q unwatched || fail "ps does not show ad1 unwatched"
if "$FB" unwatch nosuch 2>/dev/null; then fail "unwatch of an unknown sandbox"; fi
ok "unwatch of an unknown name is refused"

# Watched again, a marker exec is recorded: the tracer has delivered everything before it, and the
# exec made while unwatched is not among it.
check "watch it again" "$FB" watch "$CG" --name ad1
in_cgroup "$CGDIR" /bin/echo marker-rewatched >/dev/null
for _ in $(seq 100); do
	"$FB" timeline ad1 --json | grep -q '"argv":\["/bin/echo","marker-rewatched"\]' && break
	sleep 0.05
done
tl_check '
argvs = [e["fields"]["argv"] for e in ev if e["kind"] == "proc.exec"]
assert ["/bin/echo", "marker-rewatched"] in argvs, argvs[-3:]
assert ["/bin/echo", "unwatched"] not in argvs, "recorded while unwatched"
' "unwatched, the cgroup's processes are not recorded (a later marker is)"
remove_cgroups
for _ in $(seq 40); do
	"$FB" ps | grep ad1 | grep -q destroyed && break
	sleep 0.1
done
"$FB" ps | grep ad1 | grep -q destroyed || fail "a vanished cgroup is not marked destroyed: $("$FB" ps)"
tl_check 'assert any(e["kind"] == "sandbox.gone" for e in ev)' \
	"an adopted cgroup that vanished is destroyed, with a sandbox.gone event"

# A killed adopted cgroup is let go by unwatch, or when it vanishes: its hooks and the tracers'
# map entries go with it (a bench that adopted and killed 1660 of them once filled them), and it
# stays "killed" on record.
watched() { "$FB" status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["proc_trace"]["watched"])'; }
w0=$(watched)
for round in unwatch vanish; do
	mkdir "$V2/$CG-k" || fail "mkdir $CG-k"
	check "watch ak-$round" "$FB" watch "$CG-k" --name "ak-$round"
	assert_eq "$(watched)" "$((w0 + 1))" "one more cgroup watched"
	check "kill ak-$round" "$FB" kill "ak-$round"
	if [ "$round" = unwatch ]; then
		check "unwatch the killed ak-$round" "$FB" unwatch "ak-$round"
		"$FB" ps | grep -w "ak-$round" | grep -qw killed || fail "ak-$round is not killed on record"
	fi
	for _ in $(seq 50); do rmdir "$V2/$CG-k" 2>/dev/null && break; sleep 0.05; done
	for _ in $(seq 40); do [ "$(watched)" = "$w0" ] && break; sleep 0.1; done
	assert_eq "$(watched)" "$w0" "a killed adopted cgroup is no longer watched ($round)"
done
ok "a killed adopted cgroup is let go: by unwatch, and when its cgroup vanishes"

# The start-up scan: the store is replaced while a sandbox runs; the new monitor finds it.
create_sandbox sc1 "$FB_ROOT/tests/policies/attack.json"
echo 'pass' >"$T/nop.py"
copy_in sc1 "$T/nop.py"
stop_daemon
mkdir "$T/old-store" && mv "$T"/state/firebreak.db* "$T/old-store/"
start_daemon
"$FB" ps | grep sc1 | grep -q running || fail "the fresh store does not know sc1 running"
"$FB" exec sc1 --tool attack --step 5 -- python3 /workspace/nop.py || fail "exec in sc1"
sleep 0.3
"$FB" timeline sc1 --json >"$T/sc1.jsonl"
python3 -c "
import json
ev = [json.loads(l) for l in open('$T/sc1.jsonl')]
assert any(e['kind'] == 'sandbox.readopt' for e in ev)
assert any(e['kind'] == 'proc.exec' and e['step'] == 5 for e in ev), [e['kind'] for e in ev]
" || fail "sc1 after the start-up scan"
ok "a monitor on a fresh store re-adopts the enforcer's running sandbox and records it"
check "destroy sc1" "$FB" destroy sc1
stop_daemon
