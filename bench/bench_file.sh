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
# A round runs every workload once with the collector on and once off (the daemon restarted with
# the other setting; the phase order alternates, round 0 is a warm-up). Then, with it on, a flood
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
bench_tmp /var/tmp/firebreak-file.XXXXXX
SHM=$(mktemp -d /dev/shm/firebreak-file.XXXXXX) || die "mktemp"
cleanup_more() { rm -rf "$SHM"; }
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
phase() { # phase on|off ROUND
	local w out
	daemon "$1"
	for w in $HOST_WL; do
		out=$(run host "$w") || die "host $w"
		[ "$2" -gt 0 ] && echo "$out" >>"$T/res/host.$w.$1"
	done
	for w in $SB_WL; do
		out=$(run sb "$w") || die "sandbox $w"
		[ "$2" -gt 0 ] && echo "$out" >>"$T/res/sb.$w.$1"
	done
}
START=$(date +%s)
for r in $(seq 0 "$REPS"); do
	if [ $((r % 2)) = 0 ]; then phase on "$r"; phase off "$r"; else phase off "$r"; phase on "$r"; fi
	echo "  round $r done ($(($(date +%s) - START)) s)" >&2
done

median() { sort -n | awk '{ v[NR] = $1 } END { printf "%.0f\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "bench_file: $REPS rounds; ratio = median with the collector on / median with it off (range of per-round ratios)"
printf '%-10s %-10s %12s %12s %7s  %s\n' where workload "off (ms)" "on (ms)" ratio range
for where in host sb; do
	[ $where = host ] && wl=$HOST_WL || wl=$SB_WL
	for w in $wl; do
		on=$(median <"$T/res/$where.$w.on")
		off=$(median <"$T/res/$where.$w.off")
		range=$(paste "$T/res/$where.$w.on" "$T/res/$where.$w.off" | awk '{ r = $1 / $2; if (NR == 1 || r < lo) lo = r; if (NR == 1 || r > hi) hi = r } END { printf "%.2f-%.2f", lo, hi }')
		printf '%-10s %-10s %12.1f %12.1f %7.3f  %s\n' "$where" "$w" "$(echo "$off / 1000000" | bc -l)" \
			"$(echo "$on / 1000000" | bc -l)" "$(echo "$on / $off" | bc -l)" "$range"
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
