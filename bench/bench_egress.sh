#!/bin/bash
# The egress gate's cost (issue 4, item 8), in one run, interleaved (the machine is noisy):
#   1. bulk TCP throughput from the test world's registry (198.51.100.7:80, /big?mib=N) into a
#      sandbox through the gate, against the same download into a world client netns attached to
#      the world by a plain veth (world.sh client-up: firebreak-world-c1); same Python client
#      (bench/egress_client.py) both times; MiB/s median of RUNS each and the ratio (goal >= 0.9);
#   2. TCP connect latency (connect + close) to 198.51.100.7:80, through the gate and over the
#      plain veth: median and p99;
#   3. the time to apply a sandbox's egress rules: `firebreak create` with an egress policy (a host
#      rule and a CIDR rule) against the same policy without its egress section, the gate already
#      up, and the nft transaction alone (`nft -f` of the same rulesets in the gate's netns).
# All traffic stays between namespaces this run creates (the world, the gate, the sandboxes, the
# world client); nothing is sent from or to the host's own namespace. Everything is torn down on
# exit, also on failure: the sandboxes (firebreak destroy), the world (world.sh down), our files.
# Usage: bench_egress.sh [MIB_PER_DOWNLOAD [RUNS [CONNECTS [CREATES]]]]
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
FB=$ROOT/build/firebreak
WORLDSH=$ROOT/tests/world/world.sh
CLIENT=$ROOT/bench/egress_client.py
POLICY=$ROOT/tests/policies/bench-egress.json
PY=/usr/bin/python3 # the interpreter a sandbox runs (the host's /usr), for both clients
MIB=${1:-1024}
RUNS=${2:-9}
CONNECTS=${3:-2000}
CREATES=${4:-15}
CONNECT_BATCHES=10 # connect samples come in this many alternating batches per path
CONNECT_PAUSE_MS=1 # between connects, so the registry's accept queue never overflows
REGISTRY=198.51.100.7
WORLD_CLIENT=1
CLIENT_NS=firebreak-world-c$WORLD_CLIENT
GATE_NS=firebreak-gate
NFT_T=fbbench_egress # the table the nft timing applies and deletes in the gate
NFT_IF=fb-bench      # its link name: no such interface exists, so its rules judge nothing

T=$(mktemp -d /var/tmp/firebreak-bench.XXXXXX)
WORLD=$T/world
SANDBOXES=""
WORLD_UP=0
NFT_DIRTY=0

fb() {
	"$FB" --config "$T/fb.conf" --runtime-dir "$T/run" --db "$T/fb.db" "$@"
}

cleanup() {
	local rc=$? s
	set +e
	trap - INT TERM
	if [ "$NFT_DIRTY" = 1 ]; then
		ip netns exec "$GATE_NS" sh -c "nft delete table inet ${NFT_T}_eg; nft delete table inet ${NFT_T}_noeg;
			nft delete element inet firebreak_gate links '{ \"$NFT_IF\" }'" >/dev/null 2>&1
	fi
	local keep=0
	for s in $SANDBOXES; do
		if ! fb destroy "$s" >/dev/null 2>"$T/destroy.err"; then
			echo "bench_egress: destroy $s failed: $(cat "$T/destroy.err")" >&2
			keep=1
		fi
	done
	# The world last: deleting it deletes the gate's outside link.
	[ "$WORLD_UP" = 1 ] && bash "$WORLDSH" down "$WORLD" >/dev/null 2>&1
	if [ "$keep" = 1 ]; then
		# Without its state a sandbox could not be destroyed any more: keep it.
		echo "bench_egress: kept $T; retry: $FB --config $T/fb.conf --runtime-dir $T/run --db $T/fb.db destroy NAME" >&2
	else
		rm -rf "$T"
	fi
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

die() {
	echo "bench_egress: $*" >&2
	exit 1
}

# now_us: microseconds, without a fork.
now_us() {
	local t=$EPOCHREALTIME
	echo "${t/./}"
}

[ "$(id -u)" = 0 ] || die "needs root (network namespaces, cgroups)"
for t in "$FB" "$PY" nft ip; do
	command -v "$t" >/dev/null || die "$t is missing (make first?)"
done

# ---- the world (its names are fixed: if another run holds it, wait for it)
mkdir -p "$WORLD"
for try in $(seq 10); do
	if ! ip netns list | awk '{print $1}' | grep -qx firebreak-world-net; then
		if bash "$WORLDSH" up -t 1200 "$WORLD" >"$T/world-up.log" 2>&1; then
			WORLD_UP=1
			break
		fi
		grep -q "already exists" "$T/world-up.log" || { cat "$T/world-up.log" >&2; die "world up failed"; }
	fi
	[ "$try" = 10 ] && die "another test world stays up (firebreak-world-net); not touching it"
	echo "bench_egress: a test world is up already (someone else's run?); retrying in 60 s" >&2
	sleep 60
done
bash "$WORLDSH" client-up "$WORLD" "$WORLD_CLIENT" >/dev/null || die "client-up"

# The gate is shared by every sandbox on the host; it gets its link to the world only when it
# is created, so it must not exist yet (another run's sandboxes would hold an offline gate).
for try in $(seq 30); do
	ip netns list | awk '{print $1}' | grep -qx "$GATE_NS" || break
	[ "$try" = 30 ] && die "$GATE_NS exists (another run's sandboxes hold it, with no link to our world)"
	sleep 10
done

printf 'gate_outside_netns = firebreak-world-net\ngate_dns_upstream = 198.51.100.53\nlisten = off\n' >"$T/fb.conf"
"$PY" - "$POLICY" "$T/noegress.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
del p["egress"]
for scope in p["tools"].values():
    scope.pop("egress", None)
p["name"] = "bench-noegress"
json.dump(p, open(sys.argv[2], "w"), indent=1)
PY

# create_sb NAME POLICY: an unwatched sandbox (no monitor needed), destroyed on exit.
create_sb() {
	SANDBOXES="$SANDBOXES $1"
	fb create "$1" --policy "$2" --unwatched 2>>"$T/create.err" || { tail -n 5 "$T/create.err" >&2; die "create $1"; }
}
create_sb bench-eg "$POLICY"
ip -n "$GATE_NS" link show fb-gate-in >/dev/null 2>&1 || die "the gate has no link to the world"
create_sb bench-noeg "$T/noegress.json"
fb exec bench-eg --tool setup -- tee /workspace/egress_client.py <"$CLIENT" >/dev/null || die "copy the client in"

in_sandbox() {
	fb exec bench-eg --tool client -- "$PY" /workspace/egress_client.py "$@"
}
in_plain() {
	ip netns exec "$CLIENT_NS" "$PY" "$CLIENT" "$@"
}

# Sanity: the name resolves through the DNS gate; both paths reach the registry.
resolved=$(in_sandbox resolve registry.test) || die "registry.test does not resolve in the sandbox: $resolved"
resolved=$(echo "$resolved" | "$PY" -c 'import json, sys; print(" ".join(json.load(sys.stdin)["addrs"]))')
out=$(in_sandbox get "$REGISTRY" 80 "/big?mib=16") || die "the registry is unreachable through the gate: $out"
out=$(in_plain get "$REGISTRY" 80 "/big?mib=16") || die "the registry is unreachable over the plain veth: $out"
# throttled_us: how long cpu.max (v2) or cpu.cfs_quota_us (v1) held bench-eg back, in µs.
throttled_us() {
	local f
	for f in /sys/fs/cgroup/firebreak/bench-eg/cpu.stat /sys/fs/cgroup/cpu*/firebreak/bench-eg/cpu.stat; do
		[ -r "$f" ] || continue
		awk '$1 == "throttled_usec" { print $2; exit } $1 == "throttled_time" { print int($2 / 1000); exit }' "$f"
		return
	done
}
throttled0=$(throttled_us)

echo "egress gate vs plain veth ($(nproc) CPUs; registry $REGISTRY:80 in firebreak-world-net;"
echo "  sandbox bench-eg via $GATE_NS, client $CLIENT_NS via a veth; registry.test resolves there to $resolved)"

# ---- 1. throughput, alternating which path goes first
for r in $(seq "$RUNS"); do
	if [ $((r % 2)) = 1 ]; then order="gate plain"; else order="plain gate"; fi
	for p in $order; do
		if [ "$p" = gate ]; then
			in_sandbox get "$REGISTRY" 80 "/big?mib=$MIB" >>"$T/tput-gate" || die "download through the gate: $(tail -n 1 "$T/tput-gate")"
		else
			in_plain get "$REGISTRY" 80 "/big?mib=$MIB" >>"$T/tput-plain" || die "download over the veth: $(tail -n 1 "$T/tput-plain")"
		fi
	done
done

# ---- 2. connect latency, in alternating batches
per=$(( (CONNECTS + CONNECT_BATCHES - 1) / CONNECT_BATCHES ))
for b in $(seq "$CONNECT_BATCHES"); do
	if [ $((b % 2)) = 1 ]; then order="gate plain"; else order="plain gate"; fi
	for p in $order; do
		if [ "$p" = gate ]; then
			in_sandbox connect "$REGISTRY" 80 "$per" "$CONNECT_PAUSE_MS" >>"$T/conn-gate" || die "connects through the gate: $(tail -n 1 "$T/conn-gate" | cut -c1-300)"
		else
			in_plain connect "$REGISTRY" 80 "$per" "$CONNECT_PAUSE_MS" >>"$T/conn-plain" || die "connects over the veth: $(tail -n 1 "$T/conn-plain" | cut -c1-300)"
		fi
	done
done
throttled1=$(throttled_us)

# The registry saw each download from where it should: the gate's masquerade address or the client.
srcs=$(bash "$WORLDSH" contacts "$WORLD" registry | "$PY" -c '
import json, sys, collections
c = collections.Counter(json.loads(l)["src"] for l in sys.stdin if "/big?mib='"$MIB"'" in l)
print(" ".join("%s:%d" % kv for kv in sorted(c.items())))')

# ---- 3. time to apply a sandbox's egress rules
# 3a. firebreak create (and destroy), with and without the egress section, alternating.
for i in $(seq "$CREATES"); do
	if [ $((i % 2)) = 1 ]; then order="eg noeg"; else order="noeg eg"; fi
	for kind in $order; do
		name=bench-c$kind-$i
		[ "$kind" = eg ] && pol=$POLICY || pol=$T/noegress.json
		SANDBOXES="$SANDBOXES $name"
		t0=$(now_us)
		fb create "$name" --policy "$pol" --unwatched --timings 2>"$T/create.one" ||
			die "create $name: $(tail -n 3 "$T/create.one")"
		t1=$(now_us)
		# Each phase's time, as create measured it (--timings): "kind phase ms".
		sed -n "s/^firebreak create: \([a-z-]*\) *\([0-9.]*\) ms$/$kind \1 \2/p" "$T/create.one" >>"$T/create-phases"
		fb destroy "$name" >/dev/null || die "destroy $name"
		t2=$(now_us)
		SANDBOXES=${SANDBOXES% $name}
		echo "$kind $((t1 - t0)) $((t2 - t1))" >>"$T/create-times"
	done
done

# 3b. The nft transaction alone: the very ruleset the enforcer applied for bench-eg (read back
# from the gate), renamed to a table of ours on a link name no interface has, applied with
# `nft -f` and deleted again in the gate's netns. bench-noeg has none to time: a policy with no
# egress allowlist gets no link and no table (enforcer/create.c), so its nft cost is zero.
link_of() {
	"$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["link"])' "$T/run/sandboxes/$1/state.json"
}
k=$(link_of bench-noeg)
[ "$k" = -1 ] || [ -z "$k" ] || [ "$k" = None ] ||
	! ip netns exec "$GATE_NS" nft list table inet "firebreak_gate_$k" >/dev/null 2>&1 ||
	die "bench-noeg has a gate table (firebreak_gate_$k): a no-egress sandbox should have none"
k=$(link_of bench-eg)
ip netns exec "$GATE_NS" nft -s list table inet "firebreak_gate_$k" |
	sed -e "s/firebreak_gate_$k\b/${NFT_T}_eg/" -e "s/\"fb-s$k\"/\"$NFT_IF\"/g" >"$T/nft-eg"
grep -q "$NFT_IF" "$T/nft-eg" || die "could not read back the gate's table for bench-eg"
echo "add element inet firebreak_gate links { \"$NFT_IF\" }" >>"$T/nft-eg"
printf 'delete element inet firebreak_gate links { "%s" }\ndelete table inet %s_eg\n' \
	"$NFT_IF" "$NFT_T" >"$T/nft-del-eg"
NFT_DIRTY=1
ip netns exec "$GATE_NS" bash -c '
	set -e
	us() { local t=$EPOCHREALTIME; echo "${t/./}"; }
	for i in $(seq '"$((CREATES * 2))"'); do
		t0=$(us); nft -f "'"$T"'/nft-eg"; t1=$(us)
		nft -f "'"$T"'/nft-del-eg"; t2=$(us)
		echo "eg $((t1 - t0)) $((t2 - t1))"
	done' >"$T/nft-times" || die "nft timing failed"
NFT_DIRTY=0
nft_lines_eg=$(grep -c . "$T/nft-eg")

# ---- report
"$PY" - "$T" "$MIB" "$srcs" "${throttled0:-}" "${throttled1:-}" "$nft_lines_eg" "$ROOT/bench" <<'PY'
import json, statistics, sys
T, mib, srcs, th0, th1, lines_eg = sys.argv[1:7]
sys.path.insert(0, sys.argv[7])
from figures import record

def rows(name):
    return [json.loads(l) for l in open("%s/%s" % (T, name)) if l.strip()]

def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(round(p / 100.0 * len(xs) + 0.5)) - 1))]

tp = {}
for path in ("gate", "plain"):
    r = rows("tput-" + path)
    tp[path] = [x["bytes"] / 1048576.0 / x["seconds"] for x in r]
print("  1. bulk TCP download, %s MiB each, %d runs per path (MiB/s)" % (mib, len(tp["gate"])))
for path, label in (("gate", "sandbox -> gate -> world"), ("plain", "client -> plain veth -> world")):
    xs = tp[path]
    cpu = statistics.median(x["cpu_seconds"] / x["seconds"] * 100 for x in rows("tput-" + path))
    print("     %-30s median %8.1f   min %8.1f   max %8.1f   (client CPU %3.0f%%)"
          % (label, statistics.median(xs), min(xs), max(xs), cpu))
ratio = statistics.median(tp["gate"]) / statistics.median(tp["plain"])
pairs = [g / p for g, p in zip(tp["gate"], tp["plain"])]
print("     ratio gate/plain: %.3f (of medians); per run pair: median %.3f, min %.3f, max %.3f  [goal >= 0.9: %s]"
      % (ratio, statistics.median(pairs), min(pairs), max(pairs), "met" if ratio >= 0.9 else "NOT met"))
print("     the registry saw the downloads from: %s (10.198.255.253 = the gate's masquerade)" % srcs)
record("egress", "bulk TCP download through the gate, median", statistics.median(tp["gate"]), "MiB/s",
       "plain veth", statistics.median(tp["plain"]), ("ratio", ">=", 0.9))

print("  2. TCP connect + close to 198.51.100.7:80 (µs)")
med = {}
for path, label in (("gate", "through the gate"), ("plain", "over the plain veth")):
    us, errs = [], 0
    for x in rows("conn-" + path):
        us += x["us"]
        errs += x["n_errors"]
    med[path] = statistics.median(us)
    print("     %-30s n %5d   median %7.1f   p90 %7.1f   p99 %8.1f   max %9.1f   errors %d"
          % (label, len(us), med[path], pct(us, 90), pct(us, 99), max(us), errs))
print("     gate adds %.1f µs to the median connect (x%.2f)" % (med["gate"] - med["plain"], med["gate"] / med["plain"]))
record("egress", "TCP connect + close through the gate, median", med["gate"], "us", "plain veth", med["plain"])

print("  3. time to apply a sandbox's egress rules (ms; gate already up)")
ct = {"eg": ([], []), "noeg": ([], [])}
for l in open(T + "/create-times"):
    k, c, d = l.split()
    ct[k][0].append(int(c) / 1000.0)
    ct[k][1].append(int(d) / 1000.0)
for k, label in (("eg", "create, egress (host + CIDR)"), ("noeg", "create, no egress section")):
    c, d = ct[k]
    print("     %-30s n %3d   median %7.2f   min %7.2f   max %7.2f   (destroy median %7.2f)"
          % (label, len(c), statistics.median(c), min(c), max(c), statistics.median(d)))
record("egress", "create with egress, median", statistics.median(ct["eg"][0]), "ms",
       "create without egress", statistics.median(ct["noeg"][0]), ("value", "<=", 30))
print("     create with egress - without: %+.2f ms (median; includes starting the sandbox's DNS gate and L7 proxy)"
      % (statistics.median(ct["eg"][0]) - statistics.median(ct["noeg"][0])))
phases = {}
for l in open(T + "/create-phases"):
    k, ph, ms = l.split()
    phases.setdefault(ph, {"eg": [], "noeg": []})[k].append(float(ms))
print("     phases of create (create --timings; median ms, egress / no egress):")
print("       " + "  ".join("%s %.1f/%.1f" % (ph, statistics.median(v["eg"]), statistics.median(v["noeg"]))
                          for ph, v in phases.items() if v["eg"] and v["noeg"]))
a, d = [], []
for l in open(T + "/nft-times"):
    k, x, y = l.split()
    a.append(int(x) / 1000.0)
    d.append(int(y) / 1000.0)
print("     %-30s n %3d   median %7.2f   min %7.2f   max %7.2f   (delete median %6.2f; %s lines)"
      % ("nft -f, egress ruleset", len(a), statistics.median(a), min(a), max(a),
         statistics.median(d), lines_eg))
print("     nft -f, no-egress sandbox: none (no link, no table)")
if th0 and th1:
    print("  sandbox cpu.max throttling during 1-2: %.1f ms" % ((int(th1) - int(th0)) / 1000.0))
PY
