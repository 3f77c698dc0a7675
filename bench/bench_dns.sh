#!/bin/bash
# bench/bench_dns.sh [REPS [LOOKUPS]]: what the DNS collector costs a sandbox's lookups. One
# sandbox with egress (tests/policies/egress-tools.json) asks the DNS gate LOOKUPS (2,000) times
# for registry.test through the C library (python socket.getaddrinfo: an A and an AAAA query
# each) and prints the loop's own time; the collector's two cgroup_skb programs are attached to
# the sandbox's cgroup in one half of each round and detached in the other (bpftool, by program
# id: the very programs and ring the monitor reads), the order alternating. The monitor runs in
# both halves (its other collectors too), so the ratio is the DNS hooks' cost alone, user-space
# parsing and storing of their events included (it shares the machine's cores). Round 0 is a
# warm-up. The machine is noisy: the figure to read is the median of the per-round ratios (each
# round's two halves run back to back). Everything runs between namespaces the run makes (the test world, the gate, the
# sandbox); the EXIT trap destroys the sandbox, stops the daemon and takes the world down.
set -u
BENCH=bench_dns
. "$(dirname "$0")/lib.sh"
REPS=${1:-7}
N=${2:-2000}
need_root
need_build
bench_tmp /var/tmp/firebreak-bench-dns.XXXXXX
printf '%sdetector_actions = off\n' "$WORLD_CONF" >"$FB_CONF"
world_up 900 || die "world up"
start_firebreakd || DIE_LOG=1 die "firebreakd did not start"
MADE="bdns1"
fb create bdns1 --policy "$ROOT/tests/policies/egress-tools.json" >/dev/null || die "create"
cat >"$T/lk.py" <<'PY'
import socket, sys, time
n = int(sys.argv[1])
t = time.perf_counter_ns()
for _ in range(n):
    socket.getaddrinfo("registry.test", 80, proto=socket.IPPROTO_TCP)
print((time.perf_counter_ns() - t) // n)
PY
fb exec bdns1 --tool setup -- tee /workspace/lk.py <"$T/lk.py" >/dev/null || die "copy"

CG=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)/firebreak/bdns1
prog_id() { bpftool prog show | awk -v n="$1" '$2 == "cgroup_skb" && $3 == "name" && $4 == n { sub(":", "", $1); id = $1 } END { print id }'; }
PE=$(prog_id dns_egress)
PI=$(prog_id dns_ingress)
[ -n "$PE" ] && [ -n "$PI" ] || die "the DNS programs are not loaded"
# The monitor's links go; the same programs are attached and detached by hand from now on.
links=$(bpftool -j link show | python3 -c '
import json, sys
ids = {int(a) for a in sys.argv[1:]}
print(" ".join(str(l["id"]) for l in json.load(sys.stdin) if l.get("prog_id") in ids))' "$PE" "$PI")
[ -n "$links" ] || die "the monitor's DNS links are not found"
for l in $links; do
	bpftool link detach id "$l" || die "detach link $l"
done
attached() { bpftool cgroup show "$CG" | grep -c 'dns_'; }
[ "$(attached)" = 0 ] || die "the DNS hooks are still attached after the links' detach"
hooks() {
	local op=$1
	bpftool cgroup "$op" "$CG" egress id "$PE" ${2:-} && bpftool cgroup "$op" "$CG" ingress id "$PI" ${2:-}
}
cleanup_more() { hooks detach >/dev/null 2>&1; }
run() { fb exec bdns1 --tool install_deps -- python3 /workspace/lk.py "$N"; }
# cpu: firebreakd's utime + stime so far, in clock ticks (its share of parsing and storing).
cpu() { awk '{ print $14 + $15 }' "/proc/$DPID/stat"; }

on=() off=() ratios=()
for r in $(seq 0 "$REPS"); do
	for half in $( [ $((r % 2)) = 0 ] && echo "on off" || echo "off on"); do
		if [ "$half" = on ]; then
			hooks attach multi || die "attach"
			[ "$(attached)" = 2 ] || die "the DNS hooks did not attach"
			c0=$(cpu)
			ns=$(run) || die "lookups"
			c1=$(cpu)
			hooks detach || die "detach"
		else
			[ "$(attached)" = 0 ] || die "the DNS hooks did not detach"
			c0=$(cpu)
			ns=$(run) || die "lookups"
			c1=$(cpu)
		fi
		[ "$r" = 0 ] && continue
		eval "$half+=($ns)"
		eval "cpu_$half=\$((\${cpu_$half:-0} + c1 - c0))"
	done
	[ "$r" = 0 ] || ratios+=("$(awk -v a="${on[-1]}" -v b="${off[-1]}" 'BEGIN { printf "%.3f", a / b }')")
done
median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
mon=$(median "${on[@]}")
moff=$(median "${off[@]}")
echo "per lookup (getaddrinfo, A + AAAA), median of $REPS rounds of $N:"
echo "  without the DNS hooks: $moff ns; with: $mon ns; ratio $(awk -v a="$mon" -v b="$moff" 'BEGIN { printf "%.3f", a / b }')"
echo "  per-round ratios (with / without, the same round): median $(median "${ratios[@]}"), all: ${ratios[*]}"
echo "  rounds without: ${off[*]}"
echo "  rounds with:    ${on[*]}"
echo "  firebreakd CPU over all rounds' halves: with $((cpu_on * 10)) ms, without $((cpu_off * 10)) ms ($REPS x $N lookups each; 4 DNS events a lookup with)"
# The hooks' own time in the kernel, per packet, from the kernel's BPF statistics: switched on
# for one more pass only (they cost every BPF program on the host a little), then put back.
stats0=$(cat /proc/sys/kernel/bpf_stats_enabled)
cleanup_stats() { echo "$stats0" >/proc/sys/kernel/bpf_stats_enabled; }
cleanup_more() { hooks detach >/dev/null 2>&1; cleanup_stats; }
echo 1 >/proc/sys/kernel/bpf_stats_enabled
hooks attach multi || die "attach"
run >/dev/null || die "lookups"
hooks detach || die "detach"
cleanup_stats
for p in "$PE" "$PI"; do
	bpftool -j prog show id "$p" | python3 -c '
import json, sys
d = json.load(sys.stdin)
n, t = d.get("run_cnt", 0), d.get("run_time_ns", 0)
print("  %s: %d runs, %.0f ns a packet in the kernel" % (d["name"], n, t / n if n else 0))'
done
# The same programs on one packet, in the kernel's test runner (no preemption, no other load
# in the figure): a DNS query (copied into the ring) and a UDP packet to port 443 (what every
# other packet of a watched sandbox pays). 1,000 runs: the ring holds them all.
packet() {
	python3 - "$1" "$2" <<'PY'
import struct, sys
port, out = int(sys.argv[1]), sys.argv[2]
dns = struct.pack(">HHHHHH", 1, 0x0100, 1, 0, 0, 0) + b"\x08registry\x04test\x00" + struct.pack(">HH", 1, 1)
udp = struct.pack(">HHHH", 40000, port, 8 + len(dns), 0) + dns
ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 1, 0, 64, 17, 0,
                 bytes([10, 199, 0, 66]), bytes([10, 199, 0, 65])) + udp
open(out, "wb").write(b"\x02" * 6 + b"\x04" * 6 + b"\x08\x00" + ip)
PY
}
packet 53 "$T/dns.pkt" && packet 443 "$T/other.pkt" || die "packets"
for pkt in dns other; do
	d=$(bpftool prog run id "$PE" data_in "$T/$pkt.pkt" repeat 1000 | sed -n 's/.*duration (average): \([0-9]*\) *ns.*/\1/p')
	echo "  dns_egress in the test runner, a $pkt packet: ${d} ns a run"
	sleep 0.2
done
events=$(fb status --json | python3 -c 'import json, sys; d = json.load(sys.stdin)["dns"]; print(d["queries"], d["answers"], d["malformed"], d["unattributed"], d["lost"]["ring"], d["lost"]["load"])')
echo "  expected: queries and answers $((REPS + 2)) passes x $N x 2 each, 1,000 unattributed (the test runner's packets are no sandbox's)"
echo "  dns counters (queries answers malformed unattributed lost.ring lost.load): $events"
