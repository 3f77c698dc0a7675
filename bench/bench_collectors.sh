#!/bin/bash
# bench/bench_collectors.sh [REPS]: what the monitor (firebreakd: the tp_btf exec/fork/exit
# programs, the 250 ms cgroup stats, seccomp audit and NFLOG readers, the store writer) costs the
# workloads around it. Every figure is a ratio measured side by side in this one run:
#
#   A   no monitor running, workload on the host
#   B   firebreakd running and watching one live sandbox (bcw-*), workload on the host (a bystander)
#   C0  workload inside an unwatched sandbox (bcu-*, created --unwatched), no monitor running
#   C   workload inside the watched sandbox (bcw-*), firebreakd running
#
# B/A is the monitor's cost to bystanders, C/C0 its cost to what it watches (the sandbox's own
# costs, seccomp filter and cgroup limits, are in both C0 and C). Only the workload's own timing
# counts (bench/workload/getppid_loop.c prints its elapsed ns), never firebreak exec's launch.
#
# A round runs every workload once in each configuration: one phase with the monitor running
# (B and C) and one without (A and C0), the phase order alternating from round to round, host and
# sandbox alternating within a phase. Round 0 is a warm-up and is discarded; the table shows
# medians of REPS rounds (default 7) and the range of the per-round ratios.
#
# Part c: firebreakd's and its watchdog's RSS (VmRSS) and CPU (utime+stime over a WINDOW-second
# window) idle with no sandbox, and with BC_SANDBOXES (100) sandboxes of tests/policies/bench.json
# (no egress). BC_REST_ONLY=1 runs part c alone.
#
# Needs root and a built tree (make). Everything it makes is in two mktemp directories
# (/var/tmp/firebreak-collectors.*, /dev/shm/firebreak-collectors.*), its sandboxes are named bc*,
# and the EXIT trap destroys the sandboxes, stops the daemon it started (by pid) and removes both.
# Knobs (environment): BC_GETPPID_N (2000000), BC_OPEN_N (500000), BC_FORK_N (2000),
# BC_FILES (3000), BC_WINDOW (10), BC_SANDBOXES (100), BC_SETTLE (1, seconds after a start),
# BC_KILL_N (500000), BC_RENAME_N (500000), BC_WORKLOADS (all).
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
REPS=${1:-7}
N_GETPPID=${BC_GETPPID_N:-2000000}
N_OPEN=${BC_OPEN_N:-500000}
N_FORK=${BC_FORK_N:-2000}
N_FILES=${BC_FILES:-3000}
WINDOW=${BC_WINDOW:-10}
N_MANY=${BC_SANDBOXES:-100}
SETTLE=${BC_SETTLE:-1}
POLICY=$ROOT/bench/policies/collectors.json
SMALL_POLICY=$ROOT/tests/policies/bench.json
LDSO=/lib64/ld-linux-x86-64.so.2
# BC_WORKLOADS picks some: kill and rename time the global signal_generate and task_rename
# tracepoints' cost to bystanders (and to the sandbox, where each is a recorded event).
WORKLOADS=${BC_WORKLOADS:-"getppid openclose forkexec tar gcc kill rename"}
N_KILL=${BC_KILL_N:-500000}
N_RENAME=${BC_RENAME_N:-500000}
# The project's CFLAGS (Makefile) without -MMD -MP (no .d file), with -pipe (no temp files, so
# the host's /tmp on disk and the sandbox's tmpfs /tmp do not differ).
GCC_FLAGS="-O2 -g -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter -Wshadow -Wformat=2
-Wmissing-prototypes -Wstrict-prototypes -fno-strict-aliasing -D_GNU_SOURCE
-fstack-protector-strong -D_FORTIFY_SOURCE=2 -pipe"
GCC_SRC=lib/cgroup.c

die() {
	echo "bench_collectors: $*" >&2
	exit 1
}

[ "$(id -u)" = 0 ] || die "needs root (sandboxes, BPF)"
[ -x "$ROOT/build/firebreak" ] && [ -x "$ROOT/build/firebreakd" ] || die "build/firebreak or build/firebreakd missing: run make"
[ -x "$LDSO" ] || die "$LDSO missing"
case $REPS in '' | *[!0-9]* | 0) die "REPS must be a positive number" ;; esac

T=$(mktemp -d /var/tmp/firebreak-collectors.XXXXXX) || die "mktemp"
SHM=$(mktemp -d /dev/shm/firebreak-collectors.XXXXXX) || { rm -rf "$T"; die "mktemp"; }
DPID=""
SANDBOXES="" # created by this run and not destroyed yet
TAG=$$       # sandbox names: bcw-PID, bcu-PID, bcm-PID-N (unique if two runs overlap)
SBW=bcw-$TAG
SBU=bcu-$TAG
D_CPU_TICKS=0 # the daemon's utime+stime over the measured phases with it running (not round 0)
D_WALL_NS=0

FB_BIN=$T/bin/firebreak
FBD=$T/bin/firebreakd

fb() {
	"$FB_BIN" --config "$T/fb.conf" --runtime-dir "$T/run" --db "$T/state/fb.db" "$@"
}

# Waits up to 5 s for our child $1 to exit (it is a zombie until waited, so kill -0 is no test).
reap() {
	local pid=$1 st
	for _ in $(seq 50); do
		st=$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) || break
		[ "$st" = Z ] && break
		sleep 0.1
	done
	if [ -e "/proc/$pid/stat" ] && [ "$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null)" != Z ]; then
		echo "bench_collectors: firebreakd $pid ignored SIGTERM for 5 s, SIGKILL" >&2
		kill -KILL "$pid" 2>/dev/null
	fi
	wait "$pid" 2>/dev/null
}

cleanup() {
	set +e
	trap - EXIT
	local s
	for s in $SANDBOXES; do
		fb destroy "$s" >/dev/null 2>&1 || echo "bench_collectors: warning: destroy $s failed" >&2
	done
	if [ -n "$DPID" ]; then
		kill -TERM "$DPID" 2>/dev/null
		reap "$DPID"
	fi
	rm -rf "$T" "$SHM"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# Private copies, so that a concurrent make cannot swap the binaries in the middle of the run.
mkdir -p "$T/bin" && cp "$ROOT/build/firebreak" "$ROOT/build/firebreakd" "$ROOT/build/firebreak-nftset.so" \
	"$T/bin/" || die "copy binaries"

forget() { # forget NAME: destroyed, no longer the trap's business
	local s keep=""
	for s in $SANDBOXES; do [ "$s" = "$1" ] || keep="$keep $s"; done
	SANDBOXES=$keep
}

destroy() {
	fb destroy "$1" >/dev/null || echo "bench_collectors: warning: destroy $1 failed" >&2
	forget "$1"
}

cpu_ticks() { # utime+stime of the whole process (all threads), in clock ticks
	sed 's/^.*) //' "/proc/$1/stat" | awk '{print $12 + $13}'
}

rss_kb() {
	awk '/^VmRSS:/ {print $2}' "/proc/$1/status"
}

start_daemon() {
	"$FBD" --foreground --config "$T/fb.conf" --db "$T/state/fb.db" --runtime-dir "$T/run" \
		>>"$T/firebreakd.log" 2>&1 &
	DPID=$!
	for _ in $(seq 200); do
		fb status >/dev/null 2>&1 && break
		kill -0 "$DPID" 2>/dev/null || { tail -n 20 "$T/firebreakd.log" >&2; die "firebreakd exited"; }
		sleep 0.05
	done
	fb status >/dev/null 2>&1 || die "firebreakd does not answer"
	sleep "$SETTLE"
}

stop_daemon() {
	[ -n "$DPID" ] || return 0
	kill -0 "$DPID" 2>/dev/null || { tail -n 20 "$T/firebreakd.log" >&2; die "firebreakd died"; }
	kill -TERM "$DPID"
	reap "$DPID"
	DPID=""
}

create() { # create NAME POLICY [--unwatched]
	SANDBOXES="$SANDBOXES $1"
	fb create "$1" --policy "$2" ${3:-} >>"$T/create.log" 2>&1 || {
		tail -n 5 "$T/create.log" >&2
		die "create $1"
	}
}

# --- the workload program and inputs -------------------------------------------------------------
gcc -O2 -std=gnu11 -Wall -Wextra -o "$T/getppid_loop" "$ROOT/bench/workload/getppid_loop.c" ||
	die "cannot build bench/workload/getppid_loop.c"

# gcc's input: the source and the project headers it includes, in one tar for the sandbox (which
# does not see the source tree) and unpacked on the host (in /dev/shm, like the sandbox's tmpfs).
mkdir -p "$T/gcc" "$SHM/gcc" "$T/state" "$T/res"
# No HTTP API in the benchmarks. No share of the ring per sandbox: the kill and rename rounds
# send 10,000 records each from the one watched sandbox, which a slower machine's reader did not
# drain within the share's burst (148 signal records over it, monitor.blind froze the sandbox):
# the tracer's cost is measured here, not its fairness (bench_pipeline.sh does the same).
printf 'listen = off\nproc_sandbox_rate = 0\n' >"$T/fb.conf"
(cd "$ROOT" && gcc -MM -Ilib -I build "$GCC_SRC") | sed 's/^[^:]*://; s/\\$//' | tr ' ' '\n' |
	grep -v '^$' >"$T/gcc.deps" || die "gcc -MM $GCC_SRC"
(cd "$ROOT" && tar cf "$T/gcc/src.tar" $(cat "$T/gcc.deps")) || die "tar of $GCC_SRC"
tar xf "$T/gcc/src.tar" -C "$SHM/gcc"
# Each side gets a gcc response file (@FILE) naming its own paths: the gate would judge flags
# given on the command line as flags of ld.so.
printf '%s\n' $GCC_FLAGS -I/workspace/gcc/lib -I/workspace/gcc/build -c "/workspace/gcc/$GCC_SRC" \
	-o /workspace/gcc/out.o >"$T/gcc/args"
printf '%s\n' $GCC_FLAGS -I"$SHM/gcc/lib" -I"$SHM/gcc/build" -c "$SHM/gcc/$GCC_SRC" \
	-o "$SHM/gcc/out.o" >"$SHM/gcc/args"
(cd "$T/gcc" && tar rf src.tar args) || die "tar"
"$T/getppid_loop" cmd /usr/bin/gcc "@$SHM/gcc/args" >/dev/null ||
	die "$GCC_SRC does not compile on its own with the project's CFLAGS"

wl_args() { # wl_args WORKLOAD host|sb: the program's arguments
	local dir
	[ "$2" = host ] && dir=$SHM || dir=/workspace
	case $1 in
	getppid) echo "getppid $N_GETPPID" ;;
	openclose) echo "openclose $N_OPEN" ;;
	forkexec) echo "forkexec $N_FORK /bin/true" ;;
	tar) echo "tarcx $dir/tar $N_FILES" ;;
	gcc) echo "cmd /usr/bin/gcc @$dir/gcc/args" ;;
	# In a watched sandbox each is an event (signal.sent, proc.rename): a fiftieth as many,
	# in both C0 and C, so the ratio stays a per-call one without flooding the store.
	kill) [ "$2" = host ] && echo "kill $N_KILL" || echo "kill $((N_KILL / 50))" ;;
	rename) [ "$2" = host ] && echo "rename $N_RENAME" || echo "rename $((N_RENAME / 50))" ;;
	esac
}

# measure CONFIG WORKLOAD ROUND: one run; appends its ns to res/WORKLOAD.CONFIG (round > 0).
measure() {
	local cfg=$1 w=$2 r=$3 out
	case $cfg in
	A | B) out=$("$T/getppid_loop" $(wl_args "$w" host)) ;;
	# Through a file, not a pipe: a sandbox frozen mid-call keeps its processes (and a pipe's
	# write end) until it is destroyed, and $(...) would wait for them for ever.
	C0) fb exec "$SBU" --tool bench -- "$LDSO" /workspace/getppid_loop $(wl_args "$w" sb) \
		>"$T/out" ;;
	C) fb exec "$SBW" --tool bench -- "$LDSO" /workspace/getppid_loop $(wl_args "$w" sb) \
		>"$T/out" ;;
	esac
	case $cfg in C0 | C) out=$(cat "$T/out") ;; esac
	case $out in '' | *[!0-9]*) die "$w in $cfg: no timing (got '$out')" ;; esac
	[ "$r" -gt 0 ] && echo "$out" >>"$T/res/$w.$cfg"
	echo "$r $cfg $w $out" >>"$T/res/all"
}

others() { # firebreakd processes this run did not start (noise: their BPF is on the host too)
	local n=0 p
	for p in $(pgrep -x firebreakd); do [ "$p" = "$DPID" ] || n=$((n + 1)); done
	echo "$n"
}

phase() { # phase on|off ROUND
	local on=$1 r=$2 i=0 w host sb
	if [ "$on" = on ]; then
		[ -n "$DPID" ] || start_daemon
		host=B sb=C
	else
		stop_daemon
		host=A sb=C0
	fi
	echo "$r $on $(others)" >>"$T/res/others"
	local t0 w0
	[ -n "$DPID" ] && t0=$(cpu_ticks "$DPID") && w0=$(date +%s%N)
	for w in $WORKLOADS; do
		if [ $(((r + i) % 2)) = 0 ]; then
			measure "$host" "$w" "$r"
			measure "$sb" "$w" "$r"
		else
			measure "$sb" "$w" "$r"
			measure "$host" "$w" "$r"
		fi
		i=$((i + 1))
	done
	if [ -n "$DPID" ] && [ "$r" -gt 0 ]; then
		D_CPU_TICKS=$((D_CPU_TICKS + $(cpu_ticks "$DPID") - t0))
		D_WALL_NS=$((D_WALL_NS + $(date +%s%N) - w0))
	fi
}

if [ "${BC_REST_ONLY:-0}" = 0 ]; then # BC_REST_ONLY=1: part c alone
# --- set up: monitor, the watched and the unwatched sandbox --------------------------------------
echo "bench_collectors: $REPS rounds (+1 warm-up); getppid N=$N_GETPPID, open+close N=$N_OPEN," \
	"fork+exec N=$N_FORK, tar of $N_FILES files, gcc -c $GCC_SRC"
echo "binaries: build/firebreakd $(date -r "$FBD" '+%F %T') sha256:$(sha256sum <"$FBD" | cut -c1-16)," \
	"build/firebreak sha256:$(sha256sum <"$FB_BIN" | cut -c1-16); other firebreakd now: $(others)"
start_daemon
create "$SBW" "$POLICY"
create "$SBU" "$POLICY" --unwatched
for s in "$SBW" "$SBU"; do
	fb exec "$s" --tool setup -- tee /workspace/getppid_loop <"$T/getppid_loop" >/dev/null &&
		fb exec "$s" --tool setup -- tee /workspace/gcc.tar <"$T/gcc/src.tar" >/dev/null &&
		fb exec "$s" --tool setup -- mkdir -p /workspace/gcc &&
		fb exec "$s" --tool setup -- tar xf /workspace/gcc.tar -C /workspace/gcc ||
		die "copying the workload into $s"
done

# --- rounds ----------------------------------------------------------------------------------------
START=$(date +%s)
for r in $(seq 0 "$REPS"); do
	if [ $((r % 2)) = 0 ]; then
		phase on "$r"
		phase off "$r"
	else
		phase off "$r"
		phase on "$r"
	fi
	echo "  round $r done ($(($(date +%s) - START)) s)" >&2
done

# Was the watched sandbox really watched? Its process events in the store.
[ -n "$DPID" ] || start_daemon
sleep 0.5
EBPF_EVENTS=$(fb timeline "$SBW" --json 2>/dev/null | grep -c '"source":"ebpf"')
STATUS=$(fb status --json)
DAEMON_CPU_PCT=$(awk -v t="$D_CPU_TICKS" -v w="$D_WALL_NS" -v hz="$(getconf CLK_TCK)" \
	'BEGIN { printf "%.1f", (w > 0) ? (100 * t / hz / (w / 1e9)) : 0 }')

# --- table -----------------------------------------------------------------------------------------
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# Per-round ratio X/Y of workload w: "min max" over the rounds.
ratio_range() {
	awk -v w="$1" -v x="$2" -v y="$3" '$1 > 0 && $3 == w && $2 == x { a[$1] = $4 }
		$1 > 0 && $3 == w && $2 == y { b[$1] = $4 }
		END { lo = 1e9; hi = 0
		      for (r in a) if (r in b) { q = a[r] / b[r]; if (q < lo) lo = q; if (q > hi) hi = q }
		      printf "%.2f-%.2f", lo, hi }' "$T/res/all"
}

echo
echo "Medians of $REPS rounds, in ms (each workload's own timing); ratios are of the medians,"
echo "[brackets: the lowest and highest per-round ratio]"
printf '%-22s %9s %9s %6s %13s %9s %9s %6s %13s\n' workload A B B/A "[range]" C0 C C/C0 "[range]"
for w in $WORKLOADS; do
	for c in A B C0 C; do
		eval "m_$c=\$(median <\"\$T/res/$w.$c\")"
	done
	case $w in
	getppid) label="getppid x$N_GETPPID" ;;
	openclose) label="open+close x$N_OPEN" ;;
	forkexec) label="fork+exec x$N_FORK" ;;
	tar) label="tar c+x $N_FILES files" ;;
	gcc) label="gcc -c $(basename $GCC_SRC)" ;;
	kill) label="kill x$N_KILL (C: /50)" ;;
	rename) label="rename x$N_RENAME (C: /50)" ;;
	esac
	awk -v l="$label" -v a="$m_A" -v b="$m_B" -v c0="$m_C0" -v c="$m_C" \
		-v rb="$(ratio_range "$w" B A)" -v rc="$(ratio_range "$w" C C0)" \
		'BEGIN { printf "%-22s %9.1f %9.1f %6.3f %13s %9.1f %9.1f %6.3f %13s\n",
			 l, a / 1e6, b / 1e6, b / a, "[" rb "]", c0 / 1e6, c / 1e6, c / c0, "[" rc "]" }'
done
for w in $WORKLOADS; do # make bench's table: inside a watched sandbox against an unwatched one
	python3 "$ROOT/bench/figures.py" add collectors "$w inside a watched sandbox, median" \
		"$(median <"$T/res/$w.C" | awk '{ print $1 / 1e6 }')" ms "unwatched sandbox" \
		"$(median <"$T/res/$w.C0" | awk '{ print $1 / 1e6 }')"
done
echo
echo "Watched sandbox $SBW: $EBPF_EVENTS process events (source ebpf) in the store."
echo "Last monitor run's counters: $(echo "$STATUS" | grep -o '"proc_trace":{[^}]*}')"
echo "                             $(echo "$STATUS" | grep -o '"writer":{[^}]*}')"
echo "firebreakd CPU during the measured phases with it running: ${DAEMON_CPU_PCT}% of one CPU" \
	"($D_CPU_TICKS ticks over $((D_WALL_NS / 1000000)) ms)"
echo "Other firebreakd processes (not this run's) seen at phase starts: $(awk '{s += $3; if ($3 > m) m = $3} END {printf "max %d, in %d of %d phases", m, 0 + c, NR} $3 > 0 {c++}' "$T/res/others")"

destroy "$SBW"
destroy "$SBU"
fi

# --- part c: RSS and CPU idle, with 0 and with N_MANY sandboxes ------------------------------------
stop_daemon
start_daemon
sleep 2

# The daemon's watchdog: its child run as `firebreakd --watchdog FD`.
watchdog_pid() {
	local p
	for p in $(cat "/proc/$DPID/task/"*/children 2>/dev/null); do
		tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q -- '--watchdog' && { echo "$p"; return; }
	done
}

window() { # window LABEL: RSS now and CPU over WINDOW seconds, of firebreakd and of its watchdog
	local t0 t1 w0 w1 rss wd wt0 wt1 wrss
	wd=$(watchdog_pid)
	[ -n "$wd" ] || die "firebreakd has no watchdog"
	t0=$(cpu_ticks "$DPID")
	wt0=$(cpu_ticks "$wd")
	w0=$(date +%s%N)
	sleep "$WINDOW"
	t1=$(cpu_ticks "$DPID")
	wt1=$(cpu_ticks "$wd")
	w1=$(date +%s%N)
	rss=$(rss_kb "$DPID")
	wrss=$(rss_kb "$wd")
	awk -v l="$1" -v t=$((t1 - t0)) -v w=$((w1 - w0)) -v hz="$(getconf CLK_TCK)" -v rss="$rss" \
		-v wt=$((wt1 - wt0)) -v wrss="$wrss" \
		'BEGIN { printf "%-32s VmRSS %7.1f MiB   CPU %4d ticks in %.1f s = %5.2f%% of one CPU\n",
			 l, rss / 1024, t, w / 1e9, 100 * t / hz / (w / 1e9)
			 printf "%-32s VmRSS %7.1f MiB   CPU %4d ticks = %5.2f%%;  with firebreakd: %.1f MiB\n",
			 "  its watchdog", wrss / 1024, wt, 100 * wt / hz / (w / 1e9), (rss + wrss) / 1024 }'
	# make bench's table; the goals (quiet at rest) are of the many idle sandboxes' window.
	local at=${1%% (*} g=${2:-}
	python3 "$ROOT/bench/figures.py" add rest "firebreakd CPU, $at" \
		"$(awk -v t=$((t1 - t0)) -v w=$((w1 - w0)) -v hz="$(getconf CLK_TCK)" \
			'BEGIN { print 100 * t / hz / (w / 1e9) }')" "% of a CPU" ${g:+--goal value "<=" 1}
	python3 "$ROOT/bench/figures.py" add rest "firebreakd VmRSS, $at" "$(awk -v r="$rss" 'BEGIN { print r / 1024 }')" MiB \
		${g:+--goal value "<=" 20}
	python3 "$ROOT/bench/figures.py" add rest "firebreakd and watchdog VmRSS, $at" \
		"$(awk -v r=$((rss + wrss)) 'BEGIN { print r / 1024 }')" MiB ${g:+--goal value "<=" 28}
}

echo
echo "firebreakd at rest (utime+stime of all its threads; BPF programs run in the traced tasks'"
echo "context and are not in these figures):"
window "0 sandboxes"
c0=$(date +%s%N)
for i in $(seq -w 1 "$N_MANY"); do
	create "bcm-$TAG-$i" "$SMALL_POLICY"
done
c1=$(date +%s%N)
sleep 2
n=$(fb ps | awk -v p="bcm-$TAG-" 'index($1, p) == 1 && $2 == "running"' | wc -l)
window "$N_MANY sandboxes ($n running)" goals
d0=$(date +%s%N)
for i in $(seq -w 1 "$N_MANY"); do
	destroy "bcm-$TAG-$i"
done
d1=$(date +%s%N)
sleep 1
printf '%-32s VmRSS %7.1f MiB\n' "after destroying them" "$(awk '{print $1 / 1024}' <<<"$(rss_kb "$DPID")")"
echo "create of $N_MANY: $(((c1 - c0) / 1000000)) ms; destroy of $N_MANY: $(((d1 - d0) / 1000000)) ms"
stop_daemon
grep -qiE 'error|warn' "$T/firebreakd.log" && {
	echo "firebreakd log (all runs of this bench), warnings and errors, by count:"
	grep -iE 'error|warn' "$T/firebreakd.log" | sed 's/^[0-9T:.Z-]* //' | sort | uniq -c | sort -rn | head -10
}
exit 0
