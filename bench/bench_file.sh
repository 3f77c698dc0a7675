#!/bin/bash
# bench/bench_file.sh [REPS]: what the file collector (fanotify marks on a watched sandbox's own
# mounts, collectors/file) costs. Every figure is a ratio of runs side by side in this one run,
# firebreakd running in both, with `file_events = on` and with `file_events = off`:
#
#   bystanders (outside any sandbox, while the collector watches one): open+close of a /dev/shm
#   file, fork+exec of /bin/true, tar c+x of BF_FILES files in /dev/shm, gcc -c lib/cgroup.c;
#   inside the watched sandbox: tar c+x of BF_FILES files in /workspace, the same gcc, and a
#   pip-like churn (bench/workload/churn.py: 100 packages of 20 modules written, read, half
#   renamed, a RECORD each, all removed).
#
# A round runs every workload once in each of three phases, their order rotating from round to
# round (round 0 is a warm-up): "off" (firebreakd with `file_events = off`), "on" (with it on),
# and "floor": firebreakd off again, and build/bench/bench_file_floor holding the collector's very
# fanotify groups and marks on the sandbox, reading them in the same batches and doing nothing
# with the events. The floor is what the marks cost by themselves (the kernel making and queueing
# every event, and the least a reader costs); on/floor is the collector's own part. Each figure is
# the median of the rounds; the range is that of the per-round ratios. Then, with it on, a flood
# of BF_FLOOD opens of as many distinct files inside the sandbox: file events per second the collector took
# in, and whether every one is accounted for (individual events + summary counts = the opens).
# Its sandbox is named bf-PID; the EXIT trap destroys it, stops firebreakd, removes $T.
set -u
BENCH=bench_file
. "$(dirname "$0")/lib.sh"
REPS=${1:-5}
N_OPEN=${BF_OPEN_N:-500000}
N_FORK=${BF_FORK_N:-2000}
N_FILES=${BF_FILES:-3000}
N_FLOOD=${BF_FLOOD:-50000}
SB=bf-$$
LDSO=/lib64/ld-linux-x86-64.so.2
GCC_SRC=lib/cgroup.c
GCC_FLAGS="-O2 -g -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter -D_GNU_SOURCE -pipe"
need_root
need_build
[ -x "$ROOT/build/bench/bench_file_floor" ] || make -C "$ROOT" -s build/bench/bench_file_floor ||
	die "build bench_file_floor"
bench_tmp /var/tmp/firebreak-file.XXXXXX
SHM=$(mktemp -d /dev/shm/firebreak-file.XXXXXX) || die "mktemp"
FLOOR_PID=""
cleanup_more() {
	[ -n "$FLOOR_PID" ] && kill -TERM "$FLOOR_PID" 2>/dev/null
	rm -rf "$SHM"
}
copy_binaries
mkdir -p "$T/res" "$T/gcc" "$SHM/gcc"

gcc -O2 -o "$T/loop" "$ROOT/bench/workload/getppid_loop.c" || die "build the workload program"
(cd "$ROOT" && gcc -MM -Ilib -I build "$GCC_SRC") | sed 's/^[^:]*://; s/\\$//' | tr ' ' '\n' |
	grep -v '^$' >"$T/gcc.deps" || die "gcc -MM"
(cd "$ROOT" && tar cf "$T/gcc/src.tar" $(cat "$T/gcc.deps")) || die "tar of the gcc input"
tar xf "$T/gcc/src.tar" -C "$SHM/gcc"
printf '%s\n' $GCC_FLAGS -I/workspace/gcc/lib -I/workspace/gcc/build -c "/workspace/gcc/$GCC_SRC" \
	-o /workspace/gcc/out.o >"$T/gcc/args"
printf '%s\n' $GCC_FLAGS -I"$SHM/gcc/lib" -I"$SHM/gcc/build" -c "$SHM/gcc/$GCC_SRC" \
	-o "$SHM/gcc/out.o" >"$SHM/gcc/args"
(cd "$T/gcc" && tar rf src.tar args) || die "tar"

conf() { printf 'listen = off\nfile_events = %s\n' "$1" >"$FB_CONF"; }
daemon() { # daemon on|off: firebreakd (re)started with the collector on or off
	if [ -n "$DPID" ]; then
		kill -TERM "$DPID"
		wait "$DPID" 2>/dev/null
		DPID=""
	fi
	conf "$1"
	start_firebreakd || DIE_LOG=1 die "firebreakd does not answer"
	sleep 0.5
}

daemon on
MADE=$SB
fb create "$SB" --policy "$ROOT/bench/policies/file.json" >"$T/create.log" 2>&1 || die "create: $(tail -3 "$T/create.log")"
fb exec "$SB" --tool setup -- tee /workspace/loop <"$T/loop" >/dev/null &&
	fb exec "$SB" --tool setup -- tee /workspace/gcc.tar <"$T/gcc/src.tar" >/dev/null &&
	fb exec "$SB" --tool setup -- tee /workspace/churn.py <"$ROOT/bench/workload/churn.py" >/dev/null &&
	fb exec "$SB" --tool setup -- mkdir -p /workspace/gcc &&
	fb exec "$SB" --tool setup -- tar xf /workspace/gcc.tar -C /workspace/gcc ||
	die "copying the workloads in"

HOST_WL="openclose forkexec tar gcc"
SB_WL="tar gcc churn"
run() { # run host|sb WORKLOAD: prints its ns
	case $1:$2 in
	host:openclose) "$T/loop" openclose "$N_OPEN" ;;
	host:forkexec) "$T/loop" forkexec "$N_FORK" /bin/true ;;
	host:tar) "$T/loop" tarcx "$SHM/tar" "$N_FILES" ;;
	host:gcc) "$T/loop" cmd /usr/bin/gcc "@$SHM/gcc/args" ;;
	sb:tar) fb exec "$SB" --tool bench -- "$LDSO" /workspace/loop tarcx /workspace/tar "$N_FILES" ;;
	sb:gcc) fb exec "$SB" --tool bench -- "$LDSO" /workspace/loop cmd /usr/bin/gcc @/workspace/gcc/args ;;
	sb:churn) fb exec "$SB" --tool bench -- python3 /workspace/churn.py churn /workspace/churn ;;
	esac
}
floor_start() { # the floor's reader on the sandbox's marks; FLOOR_PID
	local init
	init=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["init_pid"])' \
		"$FB_RUN/sandboxes/$SB/state.json") || die "the sandbox's init"
	"$ROOT/build/bench/bench_file_floor" "$init" >"$T/floor.out" 2>&1 &
	FLOOR_PID=$!
	for _ in $(seq 100); do grep -q ready "$T/floor.out" && return 0; sleep 0.05; done
	die "bench_file_floor: $(cat "$T/floor.out")"
}
floor_stop() {
	kill -TERM "$FLOOR_PID"
	wait "$FLOOR_PID" 2>/dev/null
	FLOOR_PID=""
}
phase() { # phase on|off|floor ROUND
	local w out
	if [ "$1" = floor ]; then
		daemon off
		floor_start
	else
		daemon "$1"
	fi
	for w in $HOST_WL; do
		out=$(run host "$w") || die "host $w"
		[ "$2" -gt 0 ] && echo "$out" >>"$T/res/host.$w.$1"
	done
	for w in $SB_WL; do
		out=$(run sb "$w") || die "sandbox $w"
		[ "$2" -gt 0 ] && echo "$out" >>"$T/res/sb.$w.$1"
	done
	[ "$1" = floor ] && floor_stop
	return 0
}
PHASES=(on off floor)
START=$(date +%s)
for r in $(seq 0 "$REPS"); do
	for i in 0 1 2; do phase "${PHASES[$(((r + i) % 3))]}" "$r"; done
	echo "  round $r done ($(($(date +%s) - START)) s)" >&2
done

median() { sort -n | awk '{ v[NR] = $1 } END { printf "%.0f\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratios() { # ratios WHERE WORKLOAD A B: "median ratio (range of per-round ratios)" of A over B
	local f=$T/res/$1.$2
	printf '%5.2f (%s)' "$(echo "$(median <"$f.$3") / $(median <"$f.$4")" | bc -l)" \
		"$(paste "$f.$3" "$f.$4" | awk '{ r = $1 / $2; if (NR == 1 || r < lo) lo = r; if (NR == 1 || r > hi) hi = r } END { printf "%.2f-%.2f", lo, hi }')"
}
ms() { echo "$(median <"$1") / 1000000" | bc -l; }
echo "bench_file: $REPS rounds, medians; ratio = median / median of off (range of the per-round ratios)"
printf '%-6s %-9s %9s %9s %9s  %-18s %-18s %-18s\n' where workload "off ms" "floor ms" "on ms" \
	"floor/off" "on/off" "on/floor"
for where in host sb; do
	[ $where = host ] && wl=$HOST_WL || wl=$SB_WL
	for w in $wl; do
		printf '%-6s %-9s %9.1f %9.1f %9.1f  %-18s %-18s %-18s\n' "$where" "$w" \
			"$(ms "$T/res/$where.$w.off")" "$(ms "$T/res/$where.$w.floor")" \
			"$(ms "$T/res/$where.$w.on")" "$(ratios $where "$w" floor off)" \
			"$(ratios $where "$w" on off)" "$(ratios $where "$w" on floor)"
	done
done

# The event rate, with the collector on.
daemon on
counters() { fb status --json | python3 -c 'import json, sys; f = json.load(sys.stdin)["file"]; print(f["stored"] + f["summarized"], f["overflows"] + f["read_errors"] + f["store_full"])'; }
read -r h0 l0 <<<"$(counters)"
t0=$(date +%s%N)
ns=$(fb exec "$SB" --tool bench -- python3 /workspace/churn.py flood /workspace "$N_FLOOD") || die "flood"
for _ in $(seq 50); do
	read -r h1 l1 <<<"$(counters)"
	sleep 0.2
	read -r h2 l2 <<<"$(counters)"
	[ "$h1" = "$h2" ] && break
done
t1=$(($(date +%s%N) - 200000000 - 1000000000)) # less the last poll and the flood's pause
accounted=$(fb timeline "$SB" --json | python3 -c '
import json, sys
n = 0
for e in map(json.loads, sys.stdin):
    f = e.get("fields") or {}
    if e["kind"] == "file.open" and f.get("path", "").startswith("/workspace/flood/"):
        n += 1
    if e["kind"] == "file.summary" and f.get("of") == "file.open" and f.get("dir") == "/workspace/flood":
        n += f["count"]
print(n)')
echo "flood: $N_FLOOD opens in $(echo "$ns / 1000000" | bc) ms inside the sandbox: $((h2 - h0)) file events taken in," \
	"$(echo "($h2 - $h0) * 1000000000 / ($t1 - $t0)" | bc) per second (from the call's start until every one was taken in); lost (counted) $((l2 - l0));" \
	"opens of the flood's files accounted for: $accounted of $N_FLOOD, unaccounted $((N_FLOOD - accounted))"
