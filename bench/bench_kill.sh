#!/bin/bash
# bench/bench_kill.sh [TRIALS]: how fast a user-space verdict stops a busy sandbox (issue 6,
# benchmark: verdict -> cgroup dead, median and p99 over >= 200 trials).
#
# Each trial makes a cgroup (firebreak-killbench-PID-N, outside firebreak/), starts BUSY (2)
# spinning processes in it, adopts it (firebreak watch), then a process in it tries to connect to
# 169.254.169.254:80 from a network namespace of its own with no interface (unshare -n): the
# cgroup hook sees the attempt, so the net.metadata detector fires (critical: kill), and nothing
# leaves the machine (no route, not even loopback). From the kill's action event:
#
#   act      the cgroup.kill write (the verdict's kill path)
#   dead     act + confirm: until cgroup.events says no process is left (the goal: p99 <= 1 ms)
#   trigger  from the kernel's record of the connect to dead (ring drain and detector included)
#
# Needs root and a built tree (make). Everything is in a mktemp directory under /var/tmp and the
# trial cgroups; the EXIT trap stops the daemon it started (by pid) and removes them.
set -u

BENCH=bench_kill
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
TRIALS=${1:-200}
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

TRIGGER='import socket
s = socket.socket()
try:
    s.connect(("169.254.169.254", 80))
except OSError:
    pass
import time
time.sleep(60)'

for i in $(seq "$TRIALS"); do
	cg=$PREFIX-$i
	mkdir "$V2/$cg" || die "mkdir $cg"
	pids=""
	for _ in $(seq "$BUSY"); do
		sh -c 'echo $$ >"$0/cgroup.procs" && exec sh -c "while :; do :; done"' "$V2/$cg" &
		pids="$pids $!"
	done
	fb watch "$cg" --name "kb-$i" >/dev/null || die "watch $cg"
	sh -c 'echo $$ >"$0/cgroup.procs" && exec unshare -n /usr/bin/python3 -c "$1"' "$V2/$cg" "$TRIGGER" &
	pids="$pids $!"
	for _ in $(seq 300); do
		grep -qx "populated 0" "$V2/$cg/cgroup.events" && break
		sleep 0.01
	done
	grep -qx "populated 0" "$V2/$cg/cgroup.events" || die "trial $i: the sandbox was not killed within 3 s"
	for p in $pids; do wait "$p" 2>/dev/null; done
	fb unwatch "kb-$i" >/dev/null 2>&1
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
act = [a["act_ns"] / 1e3 for a in acts]
dead = [(a["act_ns"] + a["confirm_ns"]) / 1e3 for a in acts]
trig = [a["latency_ns"] / 1e3 for a in acts]
print("bench_kill: %d trials, %s busy processes each (+ the trigger)" % (n, sys.argv[1]))
for name, v in (("act (kill write)", act), ("verdict -> dead", dead), ("kernel event -> dead", trig)):
    print("  %-22s median %8.1f us   p99 %8.1f us   max %8.1f us" % (name, pct(v, 50), pct(v, 99), max(v)))
assert all(a["result"] == "ok" for a in acts), "a kill was not confirmed"
' "$BUSY"
