#!/bin/bash
# bench/bench_pipeline.sh [N]: events per second from the kernel to the store, and what is lost at
# each stage, for the process tracer's records (issue 5, benchmark b).
#
# The generator is bench/workload/getppid_loop.c "connect": one UDP socket connect()ed N times to
# 127.0.0.1:9, the cheapest syscall firebreakd records (one net.connect each, from the cgroup
# hook), run in a cgroup this script makes outside firebreak/ and adopts with firebreak watch (so
# no enforcer layer taxes the generator). Three phases, each of N connects (default 1,000,000):
#
#   floor  before firebreakd watches: its tracer (same programs, ring, hooks) read by a reader that
#          only counts (bench/bench_tracer_floor.c), two generators racing it: the live phase's
#          peer in make bench's table (goal: live >= 0.9x of it)
#   burst  firebreakd (and its watchdog) is stopped (SIGSTOP) while the generator fills the
#          256 MiB ring buffer, then continued: the reader's and the writer's rates with a full
#          ring waiting.
#   live   firebreakd runs; two generators (N/2 each, one per CPU) race it.
#
# Figures per phase:
#   generated    N / the generators' own elapsed time (live only)
#   read         records taken from the ring per second of the reader's time (proc_trace.read
#                over proc_trace.read_ns: the reader's capacity, JSON building and hand-over to
#                the writer included), and per second of wall time until all were read
#   stored       events committed per second of the writer thread's busy time (writer.events
#                over writer.busy_ns), and per second of wall time until all were stored
#   lost         per stage: kernel ring (proc_trace.lost_connect), unattributed, store
#                (writer.lost_events); unaccounted = N - stored - lost must be 0
# The stored count is read from the store itself (SELECT count(*) ... kind = 'net.connect').
#
# PIPELINE_PERF=FILE: the live phase is also recorded with `perf record -g` of firebreakd into
# FILE (read with `perf report -i FILE`); the figures are then the profiled daemon's.
#
# Needs root and a built tree (make). Everything is in a mktemp directory under /var/tmp and one
# cgroup named firebreak-bench-PID; the EXIT trap stops the daemon it started (by pid) and
# removes both.
set -u

BENCH=bench_pipeline
. "$(dirname "$0")/lib.sh"
N=${1:-1000000}
RING=$((256 << 20))

need_root
need_build
case $N in '' | *[!0-9]* | 0) die "N must be a positive number" ;; esac

bench_tmp /var/tmp/firebreak-pipeline.XXXXXX
# Before bench_cleanup stops firebreakd: it may be stopped (SIGSTOP) mid-phase; its cgroup goes.
cleanup_more() {
	[ -n "${FLOOR:-}" ] && kill "$FLOOR" 2>/dev/null
	[ -n "${PERF:-}" ] && kill -INT "$PERF" 2>/dev/null
	[ -n "$DPID" ] && kill -CONT "$DPID" 2>/dev/null
	[ -n "${WPID:-}" ] && kill -CONT "$WPID" 2>/dev/null
	bench_cgroup_remove
}

copy_binaries
build_generator
# The pipeline's throughput is measured, not fairness: the one sandbox may fill the whole ring.
printf 'proc_ring_size = %d\nproc_sandbox_rate = 0\nlisten = off\n' "$RING" >"$FB_CONF"
DIE_LOG=1
start_firebreakd || die "firebreakd does not answer"


gen() { # gen N: runs the generator in the cgroup; prints its elapsed ns
	sh -c 'echo $$ >"$0/cgroup.procs" && exec "$1" connect "$2"' "$V2/$CG" "$T/bin/gen" "$1"
}

# A snapshot of the counters: read read_ns lost unattributed writer_events busy_ns lost_events pending
snap() {
	fb status --json | python3 -c '
import json, sys
s = json.load(sys.stdin); p = s["proc_trace"]; w = s["writer"]
print(p["read"], p["read_ns"], p["lost_connect"], p["unattributed"], w["events"], w["busy_ns"],
      w["lost_events"], w["pending"], p["pending"])'
}
stored_connects() {
	sqlite3 -readonly "$FB_DB" "SELECT count(*) FROM events WHERE kind = 'net.connect'"
}
now_ns() { date +%s%N; }

# measure PHASE N0 BEFORE T_START GEN_NS: waits until every record is read and stored, prints.
measure() {
	local phase=$1 want=$2 before=$3 t0=$4 gen_ns=$5 s t_read="" t_stored=""
	local r0 rn0 l0 u0 we0 wb0 wl0 r rn l u we wb wl wp pp
	read -r r0 rn0 l0 u0 we0 wb0 wl0 _ _ <<<"$before"
	for _ in $(seq 6000); do # at most 60 s
		s=$(snap)
		read -r r rn l u we wb wl wp pp <<<"$s"
		if [ -z "$t_read" ] && [ $((r - r0 + l - l0)) -ge "$want" ]; then t_read=$(now_ns); fi
		if [ -n "$t_read" ] && [ "$wp" = 0 ] && [ "$pp" = 0 ]; then t_stored=$(now_ns); break; fi
		sleep 0.01
	done
	[ -n "$t_stored" ] || die "$phase: not everything was stored within 60 s (counters: $s)"
	local stored
	stored=$(stored_connects)
	python3 - "$phase" "$want" "$stored" "$STORED_BEFORE" "$t0" "$t_read" "$t_stored" "$gen_ns" \
		"$r0 $rn0 $l0 $u0 $we0 $wb0 $wl0" "$r $rn $l $u $we $wb $wl" "$ROOT/bench" \
		"$FLOOR_READ" "$FLOOR_NS" <<'PY'
import sys
sys.path.insert(0, sys.argv[11])
from figures import record
phase, want, stored, stored0, t0, t_read, t_stored, gen_ns = sys.argv[1:9]
want, stored, t0, t_read, t_stored, gen_ns = int(want), int(stored) - int(stored0), int(t0), int(t_read), int(t_stored), int(gen_ns)
a = [int(x) for x in sys.argv[9].split()]
b = [int(x) for x in sys.argv[10].split()]
d = [y - x for x, y in zip(a, b)]
read, read_ns, lost, unattr, wev, wbusy, wlost = d
unacc = want - stored - lost - unattr - wlost
print("%-6s %9d generated%s" % (phase, want, "" if not gen_ns else ", %.0fk/s by the generators" % (want / gen_ns * 1e6)))
print("       read    %9d: %6.0fk/s of reader time, %6.0fk/s of wall time" % (read, read / read_ns * 1e6 if read_ns else 0, read / (t_read - t0) * 1e6))
print("       stored  %9d: %6.0fk/s of writer time, %6.0fk/s of wall time" % (stored, wev / wbusy * 1e6 if wbusy else 0, stored / (t_stored - t0) * 1e6))
print("       lost    kernel ring %d, unattributed %d, store %d; unaccounted %d" % (lost, unattr, wlost, unacc))
floor = int(sys.argv[12]) / int(sys.argv[13]) * 1e6  # the counting reader's, k/s of wall time
if phase == "live":
    record("pipeline", "kernel -> store, live, of wall time", stored / (t_stored - t0) * 1e6, "k/s",
           "bare tracer", floor, ("ratio", ">=", 0.9))
else:
    record("pipeline", "kernel -> store, %s, of wall time" % phase, stored / (t_stored - t0) * 1e6, "k/s")
record("pipeline", "records unaccounted, %s" % phase, unacc, "", None, None, ("value", "==", 0))
if unacc != 0:
    sys.exit("bench_pipeline: %d records unaccounted in phase %s" % (unacc, phase))
PY
}

# floor: before firebreakd watches the cgroup, its own tracer (the same BPF programs, ring size and
# hooks) read by a reader that only counts (bench/bench_tracer_floor.c), two generators racing it
# as in the live phase below: the rate the live phase is measured against.
mkdir "$V2/$CG" || die "mkdir $V2/$CG"
"$ROOT/build/bench/bench_tracer_floor" "$CG" "$RING" "$N" >"$T/floor" 2>&1 &
FLOOR=$!
for _ in $(seq 100); do grep -q ready "$T/floor" && break; sleep 0.05; done
grep -q ready "$T/floor" || die "the floor reader did not start: $(cat "$T/floor")"
t0=$(date +%s%N)
gen $((N / 2)) >/dev/null &
g1=$!
gen $((N - N / 2)) >/dev/null &
g2=$!
wait "$g1" && wait "$g2" || die "generator (floor)"
wait "$FLOOR" || die "the floor reader failed: $(cat "$T/floor")"
FLOOR=""
FLOOR_NS=$(($(date +%s%N) - t0))
read -r _ FLOOR_READ _ FLOOR_LOST <<<"$(grep '^read ' "$T/floor")"
echo "floor  $N generated; a counting reader on the same tracer: $((FLOOR_READ * 1000000 / FLOOR_NS))k/s of wall time, $FLOOR_LOST lost in the ring"
bench_cgroup "bp-$$"

echo "bench_pipeline: N=$N connects per phase, ring $((RING >> 20)) MiB, store $FB_DB"
# burst: the ring fills while firebreakd is stopped. Its watchdog is stopped first: it would
# freeze the generator's cgroup 1.5 s into firebreakd's silence (and the burst would never end
# where the generator takes longer than that); it goes on once firebreakd beats again.
WPID=$(sed -n 's/.*watchdog \([0-9]*\) started.*/\1/p' "$FB_LOG" | tail -n 1)
[ -n "$WPID" ] || die "firebreakd's log names no watchdog"
STORED_BEFORE=$(stored_connects)
before=$(snap)
kill -STOP "$WPID" "$DPID"
gen "$N" >/dev/null || { kill -CONT "$DPID" "$WPID"; die "generator"; }
t0=$(now_ns)
kill -CONT "$DPID"
sleep 0.5
kill -CONT "$WPID"
WPID=""
measure burst "$N" "$before" "$t0" 0 || exit 1

# live: two generators race a running firebreakd.
STORED_BEFORE=$(stored_connects)
before=$(snap)
PERF=""
if [ -n "${PIPELINE_PERF:-}" ]; then
	perf record -q -g -e cpu-clock -p "$DPID" -o "$PIPELINE_PERF" 2>"$T/perf.log" &
	PERF=$!
	sleep 0.5
fi
t0=$(now_ns)
gen $((N / 2)) >"$T/g1" &
g1=$!
gen $((N - N / 2)) >"$T/g2" &
g2=$!
wait "$g1" && wait "$g2" || die "generator"
gen_ns=$(($(now_ns) - t0))
measure live "$N" "$before" "$t0" "$gen_ns" || exit 1
if [ -n "$PERF" ]; then
	kill -INT "$PERF" && wait "$PERF"
	PERF=""
	echo "bench_pipeline: the live phase's profile is in $PIPELINE_PERF"
fi
# VmRSS counts the ring's pages the reader touched (this bench's ring is 256 MiB, mapped twice):
# RssAnon is firebreakd's own memory (bench_memory.sh bounds it under a storm).
echo "bench_pipeline: firebreakd" \
	"$(awk '/^(VmRSS|RssAnon)/ { printf "%s %s %s ", $1, $2, $3 }' "/proc/$DPID/status")"
python3 "$ROOT/bench/figures.py" add pipeline "firebreakd RssAnon after the phases" \
	"$(awk '/RssAnon/ { print $2 / 1024 }' "/proc/$DPID/status")" MiB
