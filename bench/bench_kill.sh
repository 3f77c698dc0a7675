#!/bin/bash
# bench/bench_kill.sh [TRIALS]: how fast a user-space verdict stops a busy sandbox (verdict ->
# cgroup dead, median and p99; 5000 trials by default, and not one may be missed).
#
# Each trial makes a cgroup (firebreak-killbench-PID-N, outside firebreak/), starts BUSY (2)
# spinning processes in it, adopts it (firebreak watch), then a process in it tries to connect to
# 169.254.169.254:80 from a network namespace of its own with no interface (unshare -n): the
# cgroup hook sees the attempt, so the net.metadata detector fires (critical: kill), and nothing
# leaves the machine (no route, not even loopback). From the kill's action event:
#
#   queue    from the verdict to the kill path's thread taking it (monitor/killer.h)
#   act      the cgroup.kill write
#   dead     queue + act + confirm: from the verdict until cgroup.events says no process is left
#            (the goal: p99 <= 1 ms)
#   trigger  from the kernel's record of the connect to dead (ring drain and detector included)
#
#   floor    the same processes at the same point of their lives, killed by bench_kill_floor (no
#            monitor: SCHED_FIFO, the cgroup.kill write, poll for "populated 0"), in trials that
#            alternate with the monitor's: what the kernel itself takes to end them
#
# A trial whose sandbox is not dead within 3 s is a missed kill: the run stops there and prints
# what the monitor saw of that sandbox (its timeline) and the end of the daemon's log.
#
# Needs root and a built tree (make). Everything is in a mktemp directory under /var/tmp and the
# trial cgroups; the EXIT trap stops the daemon it started (by pid) and removes them.
set -u

BENCH=bench_kill
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
TRIALS=${1:-5000}
BUSY=${BK_BUSY:-2}

need_root
need_build
case $TRIALS in '' | *[!0-9]* | 0) die "TRIALS must be a positive number" ;; esac
V2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$V2" ] || die "no cgroup2 mount"
PREFIX=firebreak-killbench-$$
bench_tmp /var/tmp/firebreak-killbench.XXXXXX

# Before firebreakd stops (bench_cleanup): the trial cgroups, killed and removed.
cleanup_more() {
	for d in "$V2/$PREFIX"-*; do
		[ -d "$d" ] || continue
		echo 1 >"$d/cgroup.kill" 2>/dev/null
		for _ in $(seq 50); do rmdir "$d" 2>/dev/null && break; sleep 0.02; done
	done
}
exec 2> >(grep -v -e ' Killed ' >&2) # the killed trial processes, reported by this shell

copy_binaries
echo "listen = off" >"$T/fb.conf"
start_firebreakd || die "firebreakd does not answer"

# The trigger says when it has made its attempt (on fd 3, if open): the floor's trials kill it
# at the same point of its life as the monitor's do.
TRIGGER='import os, socket
s = socket.socket()
try:
    s.connect(("169.254.169.254", 80))
except OSError:
    pass
try:
    os.write(3, b"x")
except OSError:
    pass
import time
time.sleep(60)'
FLOOR=$ROOT/build/bench/bench_kill_floor
[ -x "$FLOOR" ] || die "run make bench first (no $FLOOR)"
mkfifo "$T/ready" || die "mkfifo"

# spawn CG: BUSY spinners and the trigger in cgroup CG; their pids in $pids.
spawn() {
	pids=""
	for _ in $(seq "$BUSY"); do
		sh -c 'echo $$ >"$0/cgroup.procs" && exec sh -c "while :; do :; done"' "$V2/$1" &
		pids="$pids $!"
	done
	[ "${2:-}" = watch ] && { fb watch "$1" --name "kb-$i" >/dev/null || die "watch $1"; }
	sh -c 'echo $$ >"$0/cgroup.procs" && exec unshare -n /usr/bin/python3 -c "$1"' "$V2/$1" "$TRIGGER" \
		3>"${3:-/dev/null}" &
	pids="$pids $!"
}

# Trials alternate: the monitor's (the trigger's attempt is a verdict, the kill path kills) and
# the floor's (the same processes, killed by bench_kill_floor at real-time priority at the same
# point: what the kernel itself takes).
for i in $(seq "$TRIALS"); do
	cg=$PREFIX-$i
	mkdir "$V2/$cg" || die "mkdir $cg"
	spawn "$cg" watch
	if ! "$FLOOR" wait "$V2/$cg" 3000; then
		echo "$BENCH: trial $i: MISSED: the sandbox was not killed within 3 s; what the monitor saw:" >&2
		fb timeline "kb-$i" --json >&2
		echo "$BENCH: cgroup.events: $(tr '\n' ' ' <"$V2/$cg/cgroup.events"); procs: $(tr '\n' ' ' <"$V2/$cg/cgroup.procs")" >&2
		python3 "$ROOT/bench/figures.py" add kill "kills missed in $i trials" 1 "" --goal value == 0
		DIE_LOG=1 die "trial $i: missed kill"
	fi
	for p in $pids; do wait "$p" 2>/dev/null; done
	fb unwatch "kb-$i" >/dev/null 2>&1
	rmdir "$V2/$cg" || die "rmdir $cg"

	cg=$PREFIX-floor-$i
	mkdir "$V2/$cg" || die "mkdir $cg"
	spawn "$cg" "" "$T/ready"
	head -c 1 "$T/ready" >/dev/null
	"$FLOOR" kill "$V2/$cg" >>"$T/floor" || die "floor trial $i"
	for p in $pids; do wait "$p" 2>/dev/null; done
	rmdir "$V2/$cg" || die "rmdir $cg"
done
sleep 0.3
for i in $(seq "$TRIALS"); do fb timeline "kb-$i" --json; done | python3 -c '
import json, sys
acts = [json.loads(l)["fields"] for l in sys.stdin if "\"kind\":\"action.kill\"" in l]
n = len(acts)
if n == 0:
    sys.exit("bench_kill: no kill recorded")
def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]
queue = [a.get("queue_ns", 0) / 1e3 for a in acts]
act = [a["act_ns"] / 1e3 for a in acts]
dead = [(a.get("queue_ns", 0) + a["act_ns"] + a["confirm_ns"]) / 1e3 for a in acts]
trig = [a["latency_ns"] / 1e3 for a in acts]
print("bench_kill: %d trials, %s busy processes each (+ the trigger), 0 missed" % (n, sys.argv[1]))
for name, v in (("queue (to the thread)", queue), ("act (kill write)", act),
                ("verdict -> dead", dead), ("kernel event -> dead", trig)):
    print("  %-22s median %8.1f us   p99 %8.1f us   max %8.1f us" % (name, pct(v, 50), pct(v, 99), max(v)))
floor = [int(l.split()[1]) / 1e3 for l in open(sys.argv[3])]
print("  %-22s median %8.1f us   p99 %8.1f us   max %8.1f us   (%d trials, no monitor)"
      % ("floor: write -> dead", pct(floor, 50), pct(floor, 99), max(floor), len(floor)))
print("  verdict -> dead / floor: median x%.2f, p99 x%.2f"
      % (pct(dead, 50) / pct(floor, 50), pct(dead, 99) / pct(floor, 99)))
print("  goal: verdict -> dead p99 <= 1000 us: %s" % ("met" if pct(dead, 99) <= 1000 else "NOT met"))
assert n == int(sys.argv[2]), "%d trials, %d kills recorded" % (int(sys.argv[2]), n)
assert all(a["result"] == "ok" for a in acts), "a kill was not confirmed"
sys.path.insert(0, sys.argv[4])
from figures import record
record("kill", "verdict -> cgroup empty, median", pct(dead, 50), "us", "kernel floor", pct(floor, 50))
record("kill", "verdict -> cgroup empty, p99", pct(dead, 99), "us", "kernel floor", pct(floor, 99),
       ("value", "<=", 1000))
record("kill", "kills missed in %d trials" % n, 0, "", None, None, ("value", "==", 0))
' "$BUSY" "$TRIALS" "$T/floor" "$ROOT/bench"
