#!/bin/bash
# The L7 proxy's cost (issue 18, item 7), in one run, peers interleaved (the machine is noisy):
#   1. latency of small GETs (a 100-byte body) from inside a sandbox, through the sandbox's squid
#      (registry.test:80, api.model.test:443 with TLS intercepted) against the same server
#      reached directly through the gate on ports of the same rules that are not proxied (8080,
#      8443): p50 and p99 of REQUESTS sequential requests per variant, keep-alive off (a fresh
#      TCP and TLS connection each, as tools do) and on; the proxy's added p99 (goal <= 2 ms);
#   2. throughput of a MIB download the same four ways, RUNS each, MiB/s and the ratio
#      proxied/direct (goal >= 0.8); the rules have no "http" limits, so no reply_body_max_size
#      (max_response), which the run checks in the generated squid.conf;
#   3. the proxy's memory with SANDBOXES sandboxes with proxied rules (a squid each): PSS and
#      private memory of each squid, its certificate helpers and its minder
#      (/proc/PID/smaps_rollup), idle after create and after one HTTP and one HTTPS request
#      each; create time with a proxied rule against the same policy with only the direct ports
#      (no proxy), interleaved, and during the ramp. A create that fails in the ramp ends it:
#      the count reached is reported as the limit, and the run fails.
# One server (bench/proxy_server.py) answers on all four ports, in the test world's netns: the
# run stops the world's own registry and API (which hold 198.51.100.7:80 and 198.51.100.8:443)
# and serves HTTP on 198.51.100.7:80 and :8080, HTTPS with the world's api.model.test
# certificate on 198.51.100.8:443 and :8443. One client (bench/proxy_client.py) in the sandbox.
# All traffic stays between namespaces this run creates (the world, the gate, the sandboxes);
# nothing is sent from or to the host's own namespace. Everything is torn down on exit, also on
# failure: the sandboxes, the server, the world, our files.
# Usage: bench_proxy.sh [REQUESTS [MIB [RUNS [SANDBOXES [CREATES]]]]]
set -eu
BENCH=bench_proxy
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
REQUESTS=${1:-2000}
MIB=${2:-1024}
RUNS=${3:-5}
SANDBOXES=${4:-100}
CREATES=${5:-10}
case "$REQUESTS$MIB$RUNS$SANDBOXES$CREATES" in *[!0-9]*) die "the arguments are numbers" ;; esac
BATCHES=10 # latency samples come in this many batches per variant, the order rotated each
POLICY=$ROOT/bench/policies/proxy.json
CLIENT=$ROOT/bench/proxy_client.py
SERVER=$ROOT/bench/proxy_server.py
WORLD_NS=firebreak-world-net
GATE_NS=firebreak-gate
PY=/usr/bin/python3
WEB=198.51.100.7 # registry.test
API=198.51.100.8 # api.model.test
SERVER_PID=""
LIFETIME=7200 # the world's services and our server end on their own after this

need_root
need_build
for t in "$PY" nft ip; do command -v "$t" >/dev/null || die "$t is missing"; done
bench_tmp /var/tmp/firebreak-proxybench.XXXXXX
copy_binaries # a build running beside us does not change them mid-run
WORLD=$T/world

# cleanup_more (bench_cleanup calls it after the sandboxes, before the world): our server; and
# a sandbox whose destroy failed is tried once more, then kept with what destroying it needs
# (bench_cleanup removes $T, and without its state a sandbox could not be destroyed any more).
cleanup_more() {
	local s keep=""
	for s in $MADE; do
		[ -d "$FB_RUN/sandboxes/$s" ] || continue
		fb destroy "$s" >/dev/null 2>>"$T/destroy.err" && continue
		[ -n "$keep" ] || keep=$(mktemp -d /var/tmp/firebreak-proxybench-kept.XXXXXX)
		echo "$BENCH: destroy $s failed: $(tail -n 1 "$T/destroy.err")" >&2
	done
	if [ -n "$keep" ]; then
		cp -a "$FB_RUN" "$FB_DB" "$FB_CONF" "$FB_BIN" "$keep/" 2>/dev/null
		echo "$BENCH: kept $keep; retry: $keep/bin/firebreak --config $keep/fb.conf --runtime-dir $keep/run --db $keep/fb.db destroy NAME" >&2
	fi
	if [ -n "$SERVER_PID" ]; then
		kill -TERM "$SERVER_PID" 2>/dev/null
		wait "$SERVER_PID" 2>/dev/null
	fi
}

now_us() {
	local t=$EPOCHREALTIME
	echo "${t/./}"
}

# ---- the world (its names are fixed: if another run holds it, wait for it)
for try in $(seq 10); do
	if ! ip netns list | awk '{print $1}' | grep -qx "$WORLD_NS"; then
		if world_up "$LIFETIME"; then
			break
		fi
		grep -q "already exists" "$T/world.log" || { cat "$T/world.log" >&2; die "world up failed"; }
	fi
	[ "$try" = 10 ] && die "another test world stays up ($WORLD_NS); not touching it"
	echo "$BENCH: a test world is up already (someone else's run?); retrying in 60 s" >&2
	sleep 60
done
# The gate gets its link to the world only when it is created: it must not exist yet.
for try in $(seq 30); do
	ip netns list | awk '{print $1}' | grep -qx "$GATE_NS" || break
	[ "$try" = 30 ] && die "$GATE_NS exists (another run's sandboxes hold it, with no link to our world)"
	sleep 10
done

# stop_world_service NAME: stops the world's service NAME (a process group this run's world.sh
# started, recorded "PID STARTTIME"), checked by its start time; world.sh down skips it after.
stop_world_service() {
	local pid start now
	read -r pid start <"$WORLD/run/$1.pid" || die "no record of the world's $1"
	now=$(awk '{ sub(/.*\) /, ""); print $20 }' "/proc/$pid/stat" 2>/dev/null) || now=""
	[ "$now" = "$start" ] || die "the world's $1 ($pid) is not the process world.sh recorded"
	kill -TERM -- "-$pid"
	for _ in $(seq 100); do [ -e "/proc/$pid" ] || return 0; sleep 0.05; done
	die "the world's $1 ($pid) did not stop"
}
stop_world_service registry
stop_world_service api
ip netns exec "$WORLD_NS" "$PY" "$SERVER" --timeout "$LIFETIME" \
	--http "$WEB:80" --http "$WEB:8080" --https "$API:443" --https "$API:8443" \
	--cert "$WORLD/tls/api.pem" --key "$WORLD/tls/api.key" </dev/null >/dev/null 2>"$T/server.err" &
SERVER_PID=$!
for _ in $(seq 100); do grep -q listening "$T/server.err" 2>/dev/null && break; sleep 0.05; done
grep -q listening "$T/server.err" || die "the server did not start: $(cat "$T/server.err")"

{
	echo "$WORLD_CONF"
	echo "listen = off"
	echo "gate_proxy_upstream_ca = $WORLD/tls/world-ca.pem"
} >"$FB_CONF"
# The peer policy: the same rules with only their direct ports, so no proxy.
"$PY" - "$POLICY" "$T/noproxy.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
rules = []
for r in p["egress"]["allow"]:
    r["ports"] = [x for x in r["ports"] if x not in (80, 443)]
    if r["ports"]:
        rules.append(r)
p["egress"]["allow"] = rules
names = {r["name"] for r in rules}
for scope in p["tools"].values():
    if "egress" in scope:
        scope["egress"] = [n for n in scope["egress"] if n in names]
p["name"] = "bench-proxy-none"
p.pop("tests", None)
json.dump(p, open(sys.argv[2], "w"), indent=1)
PY

# create_sb NAME POLICY: an unwatched sandbox (no monitor needed), destroyed on exit.
create_sb() {
	MADE="$MADE $1"
	fb create "$1" --policy "$2" --unwatched >/dev/null 2>>"$T/create.err" ||
		die "create $1: $(tail -n 3 "$T/create.err")"
}
destroy_sb() {
	fb destroy "$1" >/dev/null 2>>"$T/destroy.err" || die "destroy $1: $(tail -n 3 "$T/destroy.err")"
	MADE=$(echo "$MADE" | tr ' ' '\n' | grep -vx -- "$1" | tr '\n' ' ')
}
SB=bp
SBDIR=$FB_RUN/sandboxes/$SB
# squid_alive NAME: whether the sandbox's squid (its proxy.pid) still runs.
squid_alive() {
	local pid
	pid=$(cat "$FB_RUN/sandboxes/$1/proxy.pid" 2>/dev/null) && [ -n "$pid" ] &&
		[ "$(cat "/proc/$pid/comm" 2>/dev/null)" = squid ]
}
# A squid can be gone right after its create (its minder's jail_drop sees create exit and ends,
# "the parent is gone"; the ramp below counts how often): the peers need one that runs, so the
# main sandbox is made again, up to 3 times, and the run says so.
for try in 1 2 3; do
	create_sb "$SB" "$POLICY"
	sleep 0.5
	squid_alive "$SB" && break
	echo "$BENCH: $SB's squid is gone after create ($(tail -n 1 "$SBDIR/proxy-minder.log" 2>/dev/null)); making it again" >&2
	echo "$SB" >>"$T/bp-retries"
	[ "$try" = 3 ] && die "$SB's squid is gone after each of 3 creates"
	destroy_sb "$SB"
done
ip -n "$GATE_NS" link show fb-gate-in >/dev/null 2>&1 || die "the gate has no link to the world"
SQUID=$(cat "$SBDIR/proxy.pid")
grep -q '^reply_body_max_size' "$SBDIR/proxy/squid.conf" &&
	die "the proxy's config has a reply_body_max_size: $(grep '^reply_body_max_size' "$SBDIR/proxy/squid.conf")"
fb exec "$SB" --tool setup -- tee /workspace/proxy_client.py <"$CLIENT" >/dev/null || die "copy the client in"
fb exec "$SB" --tool setup -- tee /workspace/world-ca.pem <"$WORLD/tls/world-ca.pem" >/dev/null ||
	die "copy the world's CA in"

# client ARGS...: the client in $SB as its tool (or in sandbox $CLIENT_SB).
client() {
	fb exec "${CLIENT_SB:-$SB}" --tool client -- "$PY" /workspace/proxy_client.py "$@"
}
# The variants: NAME SCHEME HOST PORT
VARIANTS="http-proxy:http:registry.test:80 http-direct:http:registry.test:8080
	https-proxy:https:api.model.test:443 https-direct:https:api.model.test:8443"
CA=/workspace/world-ca.pem
# squid_lines: transactions in the proxy's log so far.
squid_lines() { grep -c . "$SBDIR/proxy-access.log" 2>/dev/null || true; }

# Sanity: each variant answers; the proxied ones are in squid's log, the direct ones are not.
for v in $VARIANTS; do
	IFS=: read -r name scheme host port <<<"$v"
	before=$(squid_lines)
	out=$(client lat "$scheme" "$host" "$port" /small 3 0 "$CA") || die "$name: $out"
	after=$(squid_lines)
	case $name in
	*-proxy) [ "$after" -ge $((before + 3)) ] || die "$name: squid's log did not grow ($before -> $after)" ;;
	*-direct) [ "$after" = "$before" ] || die "$name: went through squid ($before -> $after)" ;;
	esac
done

# cpu_ticks PID: utime + stime of a process, in clock ticks.
cpu_ticks() { awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; }
HZ=$(getconf CLK_TCK)

echo "L7 proxy vs direct through the gate ($(nproc) CPUs; sandbox $SB, squid pid $SQUID; one server"
echo "  in $WORLD_NS on $WEB:80,8080 (HTTP) and $API:443,8443 (HTTPS); client in the sandbox)"
if rev=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null); then
	git -C "$ROOT" diff --quiet HEAD -- . ':!bench' || rev="$rev + uncommitted changes outside bench/"
else
	rev="(not a git checkout)"
fi
echo "  tree $rev, built $(date -r "$ROOT/build/firebreak" '+%F %T')"

# ---- 1. latency, in batches; the order of the variants rotates each batch
per=$(((REQUESTS + BATCHES - 1) / BATCHES))
LAT=()
for ka in 0 1; do for v in $VARIANTS; do LAT+=("$v:$ka"); done; done
for b in $(seq "$BATCHES"); do
	order=()
	for j in "${!LAT[@]}"; do order+=("${LAT[$(((b + j) % ${#LAT[@]}))]}"); done
	if [ $((b % 2)) = 0 ]; then
		mapfile -t order < <(printf '%s\n' "${order[@]}" | tac)
	fi
	for v in "${order[@]}"; do
		IFS=: read -r name scheme host port ka <<<"$v"
		client lat "$scheme" "$host" "$port" /small "$per" "$ka" "$CA" >>"$T/lat-$name-$ka" ||
			die "latency $name keep-alive $ka: $(tail -n 1 "$T/lat-$name-$ka" | cut -c1-300)"
	done
done

# ---- 2. throughput, the order alternating
for r in $(seq "$RUNS"); do
	runs=$VARIANTS
	# shellcheck disable=SC2086 # the variants are words
	[ $((r % 2)) = 0 ] && runs=$(printf '%s\n' $VARIANTS | tac)
	for v in $runs; do
		IFS=: read -r name scheme host port <<<"$v"
		s0=$(cpu_ticks "$SQUID")
		w0=$(cpu_ticks "$SERVER_PID")
		out=$(client get "$scheme" "$host" "$port" "/big?mib=$MIB" "$CA") || die "download $name: $out"
		s1=$(cpu_ticks "$SQUID")
		w1=$(cpu_ticks "$SERVER_PID")
		echo "$out" | "$PY" -c 'import json, sys
x = json.load(sys.stdin); x["squid_cpu"] = float(sys.argv[1]); x["server_cpu"] = float(sys.argv[2])
print(json.dumps(x))' "$(((s1 - s0) * 1000 / HZ))e-3" "$(((w1 - w0) * 1000 / HZ))e-3" >>"$T/tput-$name"
	done
done
cp "$SBDIR/proxy-cache.log" "$T/bp-cache.log" 2>/dev/null || : >"$T/bp-cache.log"
squid_total=$(squid_lines)

# ---- 3a. create time with and without a proxied rule (the gate up, $SB alive), alternating
for i in $(seq "$CREATES"); do
	if [ $((i % 2)) = 1 ]; then kinds="proxy none"; else kinds="none proxy"; fi
	for kind in $kinds; do
		name=bc$kind$i
		[ "$kind" = proxy ] && pol=$POLICY || pol=$T/noproxy.json
		t0=$(now_us)
		create_sb "$name" "$pol"
		t1=$(now_us)
		destroy_sb "$name"
		t2=$(now_us)
		echo "$kind $((t1 - t0)) $((t2 - t1))" >>"$T/create-times"
	done
done

# ---- 3b. SANDBOXES proxied sandboxes alive at once; every tenth create also a create and
# destroy of a sandbox without a proxy, at the same population.
# mem_of LABEL: the memory of every live ramp sandbox's proxy: squid, its certificate helpers,
# its minder and what else the minder started (c-icap, the ICAP service, and its children).
mem_of() {
	"$PY" - "$1" "$FB_RUN/sandboxes" >>"$T/mem" <<'PY'
import json, os, sys
label, root = sys.argv[1], sys.argv[2]
ppid, comm = {}, {}
for d in os.listdir("/proc"):
    if d.isdigit():
        try:
            st = open("/proc/%s/stat" % d).read()
        except OSError:
            continue
        comm[int(d)] = st[st.index("(") + 1:st.rindex(")")]
        ppid[int(d)] = int(st[st.rindex(")") + 2:].split()[1])
kids = {}
for p, pp in ppid.items():
    kids.setdefault(pp, []).append(p)

def rollup(pid):
    m = {}
    try:
        for l in open("/proc/%d/smaps_rollup" % pid):
            f = l.split()
            if len(f) == 3 and f[2] == "kB":
                m[f[0].rstrip(":")] = int(f[1])
    except OSError:
        return None
    return {"rss": m.get("Rss", 0), "pss": m.get("Pss", 0),
            "private": m.get("Private_Clean", 0) + m.get("Private_Dirty", 0)}

out = []
for name in sorted(os.listdir(root)):
    if not name.startswith("bs"):
        continue
    try:
        squid = int(open(os.path.join(root, name, "proxy.pid")).read().split()[0])
    except (OSError, ValueError, IndexError):
        continue
    def subtree(root):
        tree, todo = [], [root]
        while todo:
            p = todo.pop()
            tree.append(p)
            todo += kids.get(p, [])
        return tree
    # The minder (squid's parent) starts c-icap and squid; squid starts its certificate helpers.
    minder = ppid.get(squid)
    of_squid = set(subtree(squid))
    procs = [(p, "squid" if p == squid else "helper") for p in sorted(of_squid)]
    if minder and comm.get(minder) != "squid":
        procs.append((minder, "minder"))
        procs += [(p, "icap") for p in subtree(minder) if p != minder and p not in of_squid]
    rec = {"label": label, "sandbox": name, "procs": []}
    for p, role in procs:
        r = rollup(p)
        if r:
            r.update(pid=p, role=role, comm=comm.get(p))
            rec["procs"].append(r)
    out.append(rec)
for rec in out:
    print(json.dumps(rec))
PY
}
ramp_failed=""
n_ok=0
for i in $(seq "$SANDBOXES"); do
	name=bs$i
	MADE="$MADE $name"
	t0=$(now_us)
	if ! fb create "$name" --policy "$POLICY" --unwatched >/dev/null 2>"$T/ramp.err"; then
		ramp_failed="create #$i ($name) failed: $(tr '\n' ' ' <"$T/ramp.err" | cut -c1-400)"
		break
	fi
	t1=$(now_us)
	n_ok=$i
	echo "proxy $i $((t1 - t0))" >>"$T/ramp-times"
	if [ $((i % 10)) = 0 ]; then
		t0=$(now_us)
		create_sb bsnone "$T/noproxy.json"
		t1=$(now_us)
		destroy_sb bsnone
		echo "none $i $((t1 - t0))" >>"$T/ramp-times"
	fi
done
sleep 2 # let the new squids settle
# The ramp's squids that are gone already (nothing was sent through them yet).
gone=""
for i in $(seq "$n_ok"); do
	squid_alive "bs$i" && continue
	gone="$gone bs$i"
	echo "$BENCH: bs$i's squid is gone after create; its minder said: $(tail -n 1 "$FB_RUN/sandboxes/bs$i/proxy-minder.log" 2>/dev/null)" >&2
done
mem_of idle
# sb_diag NAME: what a sandbox's proxy left to say (after a request through it failed).
sb_diag() {
	local d=$FB_RUN/sandboxes/$1 pid
	pid=$(cat "$d/proxy.pid" 2>/dev/null) || pid=""
	if [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = squid ]; then
		echo "  its squid ($pid) is alive"
	else
		echo "  its squid (${pid:-no pid}) is gone"
	fi
	echo "  --- the tail of its proxy-cache.log:"
	tail -n 15 "$d/proxy-cache.log" 2>/dev/null | sed 's/^/    /'
	echo "  --- the tail of its proxy-minder.log:"
	tail -n 5 "$d/proxy-minder.log" 2>/dev/null | sed 's/^/    /'
}
# One HTTP and one HTTPS request through each ramp sandbox's proxy (a certificate minted); a
# failure is shown and counted, the run goes on (and fails at the end).
used_failed=""
for i in $(seq "$n_ok"); do
	case "$gone " in *" bs$i "*) continue ;; esac
	CLIENT_SB=bs$i
	fb exec "$CLIENT_SB" --tool setup -- tee /workspace/proxy_client.py <"$CLIENT" >/dev/null ||
		die "copy the client into bs$i"
	for req in "http registry.test 80" "https api.model.test 443"; do
		# shellcheck disable=SC2086 # scheme, host, port
		if ! out=$(client lat $req /small 1 0 -); then
			case "$used_failed " in *" bs$i "*) ;; *) used_failed="$used_failed bs$i" ;; esac
			{
				echo "$BENCH: $req through bs$i's proxy failed: $out"
				sb_diag "bs$i"
			} >&2
		fi
	done
done
CLIENT_SB=""
mem_of used
# The squids' errors and warnings, across the ramp.
for i in $(seq "$n_ok"); do
	grep -hiE 'error|warning|fatal' "$FB_RUN/sandboxes/bs$i/proxy-cache.log" 2>/dev/null || true
done | sed -E 's/^[0-9\/]+ [0-9:.]+\| *(kid[0-9]+\| )?//' | sort | uniq -c | sort -rn >"$T/ramp-cache-errors"
t0=$(now_us)
for i in $(seq "$n_ok"); do destroy_sb "bs$i"; done
t1=$(now_us)
destroy_all_us=$((t1 - t0))
# None of the ramp's proxy processes (squid, helpers, minder, as mem_of found them) may be left
# (a minder ends just after its squid: 2 s for the last of them).
proxies_left() {
	"$PY" - "$T/mem" <<'PY'
import json, sys
left = 0
for rec in map(json.loads, open(sys.argv[1])):
    for p in rec["procs"]:
        try:
            st = open("/proc/%d/stat" % p["pid"]).read()
        except OSError:
            continue
        left += st[st.index("(") + 1:st.rindex(")")] == p["comm"]
print(left)
PY
}
for _ in $(seq 20); do
	left=$(proxies_left)
	[ "$left" = 0 ] && break
	sleep 0.1
done

# ---- report
"$PY" - "$T" "$MIB" "$REQUESTS" "$n_ok" "$SANDBOXES" "$squid_total" "$destroy_all_us" "$left" \
	"$ramp_failed" "$used_failed" "$gone" <<'PY'
import collections, json, os, statistics, sys
T, mib, requests, n_ok, n_want, squid_total, destroy_us, left, ramp_failed, used_failed, gone = sys.argv[1:12]
n_ok, n_want = int(n_ok), int(n_want)

def rows(name):
    return [json.loads(l) for l in open("%s/%s" % (T, name)) if l.strip()]

def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(round(p / 100.0 * len(xs) + 0.5)) - 1))]

goals = []
print("  1. small GETs (100-byte body), %s per variant in 10 batches, order rotated (ms)" % requests)
print("     %-14s %-11s %6s %8s %8s %8s %8s  %s" % ("", "keep-alive", "n", "p50", "p90", "p99", "max",
                                               "conns"))
lat = {}
for ka in ("0", "1", "reused"):
    for v in ("http-proxy", "http-direct", "https-proxy", "https-direct"):
        us, conns, errs = [], 0, 0
        for x in rows("lat-%s-%s" % (v, "0" if ka == "0" else "1")):
            first = set(x["opened"])
            us += [u for i, u in enumerate(x["us"]) if ka != "reused" or i not in first]
            conns += x["connections"] if ka != "reused" else 0
            errs += x["n_errors"]
        ms = [u / 1000.0 for u in us]
        lat[v, ka] = ms
        print("     %-14s %-11s %6d %8.3f %8.3f %8.3f %8.3f  %s%s" % (
            v, {"0": "off", "1": "on", "reused": "on, reused"}[ka], len(ms), pct(ms, 50), pct(ms, 90),
            pct(ms, 99), max(ms),
            conns or "", ("  errors %d" % errs) if errs else ""))
print("     (\"on, reused\": the keep-alive requests that did not open their connection)")
print("     added by the proxy (proxy - direct; ratio proxy/direct):")
for ka in ("0", "1", "reused"):
    for s in ("http", "https"):
        p, d = lat[s + "-proxy", ka], lat[s + "-direct", ka]
        add50, add99 = pct(p, 50) - pct(d, 50), pct(p, 99) - pct(d, 99)
        kal = {"0": "off", "1": "on", "reused": "on, reused"}[ka]
        line = "     %-5s keep-alive %-10s  p50 %+8.3f ms (x%.2f)   p99 %+8.3f ms (x%.2f)" % (
            s, kal, add50, pct(p, 50) / pct(d, 50), add99, pct(p, 99) / pct(d, 99))
        ok = add99 <= 2.0
        print(line + "   [goal added p99 <= 2 ms: %s]" % ("met" if ok else "NOT met"))
        goals.append(("added p99 <= 2 ms, %s keep-alive %s" % (s, kal), ok))

print("  2. download of %s MiB, %d runs per variant, order alternating (MiB/s)" % (mib, len(rows("tput-http-proxy"))))
tp = {}
for v in ("http-proxy", "http-direct", "https-proxy", "https-direct"):
    r = rows("tput-" + v)
    xs = [x["bytes"] / 1048576.0 / x["seconds"] for x in r]
    tp[v] = xs
    gib = sum(x["bytes"] for x in r) / 1073741824.0
    print("     %-14s median %8.1f   min %8.1f   max %8.1f   CPU s/GiB: client %5.2f  squid %5.2f  server %5.2f"
          % (v, statistics.median(xs), min(xs), max(xs), sum(x["cpu_seconds"] for x in r) / gib,
             sum(x["squid_cpu"] for x in r) / gib, sum(x["server_cpu"] for x in r) / gib))
for s in ("http", "https"):
    p, d = tp[s + "-proxy"], tp[s + "-direct"]
    ratio = statistics.median(p) / statistics.median(d)
    pairs = [a / b for a, b in zip(p, d)]
    ok = ratio >= 0.8
    print("     %-5s proxy/direct %.3f (of medians); per run pair median %.3f, min %.3f, max %.3f   [goal >= 0.8: %s]"
          % (s, ratio, statistics.median(pairs), min(pairs), max(pairs), "met" if ok else "NOT met"))
    goals.append(("throughput >= 0.8x direct, %s" % s, ok))
print("     the rules have no max_response (no reply_body_max_size in squid.conf); squid logged %s transactions" % squid_total)

print("  3. memory and create time")
ct = collections.defaultdict(lambda: ([], []))
for l in open(T + "/create-times"):
    k, c, d = l.split()
    ct[k][0].append(int(c) / 1000.0)
    ct[k][1].append(int(d) / 1000.0)
for k, label in (("proxy", "create, proxied rules"), ("none", "create, direct ports only")):
    c, d = ct[k]
    print("     %-28s n %3d   median %7.1f   min %7.1f   max %7.1f ms   (destroy median %6.1f)"
          % (label, len(c), statistics.median(c), min(c), max(c), statistics.median(d)))
print("     the proxy adds %+.1f ms to create (median; 1 other sandbox alive)"
      % (statistics.median(ct["proxy"][0]) - statistics.median(ct["none"][0])))
ramp = collections.defaultdict(list)
for l in open(T + "/ramp-times"):
    k, i, us = l.split()
    ramp[k].append((int(i), int(us) / 1000.0))
pr = [t for _, t in ramp["proxy"]]
if pr:
    first, last = pr[:10], pr[-10:]
    print("     ramp to %d proxied sandboxes: create median %.1f ms (first 10: %.1f, last 10: %.1f, max %.1f); total %.1f s"
          % (len(pr), statistics.median(pr), statistics.median(first), statistics.median(last), max(pr), sum(pr) / 1000))
if ramp["none"]:
    print("     during the ramp, create without a proxy (every 10th): " + ", ".join(
        "%d alive %.1f ms" % (i, t) for i, t in ramp["none"]))
if ramp_failed:
    print("     LIMIT: only %d of %d sandboxes: %s" % (n_ok, n_want, ramp_failed))
else:
    print("     all %d sandboxes created" % n_ok)
gone = gone.split()
print("     squids gone right after create (minder: \"the parent is gone\"): %d of %d%s"
      % (len(gone), n_ok, (": " + " ".join(gone)) if gone else ""))
if os.path.exists(T + "/bp-retries"):
    print("     the main sandbox bp was made again %d time(s): its squid was gone after create"
          % len(open(T + "/bp-retries").read().split()))
if used_failed:
    print("     FAILED: a request through the proxy of%s (see above)" % used_failed)
for label in ("idle", "used"):
    recs = [r for r in rows("mem") if r["label"] == label]
    if not recs:
        continue
    tot = collections.Counter()
    per = []
    for r in recs:
        c = collections.Counter()
        for p in r["procs"]:
            for f in ("pss", "private", "rss"):
                c[f] += p[f]
                c[p["role"] + "_" + f] += p[f]
            c[p["role"] + "_n"] += 1
        per.append(c)
        tot.update(c)
    # Per sandbox whose squid runs: one that is gone has no memory to count.
    n = sum(1 for c in per if c["squid_n"])
    per = [c for c in per if c["squid_n"]]
    mib_ = lambda kb: kb / 1024.0
    print("     proxy memory, %s (%s), %d sandboxes with a live squid (of %d):" % (
          label, "after create" if label == "idle" else "after one HTTP and one HTTPS request each",
          n, len(recs)))
    for role in ("squid", "helper", "icap", "minder"):
        print("       %-7s procs %4d   PSS %7.1f MiB total, %5.2f per sandbox   private %7.1f total, %5.2f per sandbox"
              % (role, tot[role + "_n"], mib_(tot[role + "_pss"]), mib_(tot[role + "_pss"]) / n,
                 mib_(tot[role + "_private"]), mib_(tot[role + "_private"]) / n))
    pss = sorted(mib_(c["pss"]) for c in per)
    print("       %-7s             PSS %7.1f MiB total, %5.2f per sandbox   private %7.1f total, %5.2f per sandbox (PSS per sandbox min %.2f, max %.2f)"
          % ("all", mib_(tot["pss"]), mib_(tot["pss"]) / n, mib_(tot["private"]),
             mib_(tot["private"]) / n, pss[0], pss[-1]))
print("     destroying the %d took %.1f s; proxy processes left after: %s" % (n_ok, int(destroy_us) / 1e6, left))

errs = open(T + "/bp-cache.log").read().splitlines()
bad = [l for l in errs if any(w in l.lower() for w in ("error", "warning", "fatal"))]
print("  squid's cache.log of %s: %d lines, %d with error/warning/fatal%s" % ("bp", len(errs), len(bad),
      "" if not bad else ":"))
for l in collections.Counter(l.split("| ", 1)[-1] for l in bad).most_common(8):
    print("       %4d x %s" % (l[1], l[0][:150]))
re = open(T + "/ramp-cache-errors").read().splitlines()
print("  the ramp sandboxes' cache.logs: %d distinct error/warning lines%s" % (len(re), ":" if re else ""))
for l in re[:8]:
    print("       " + l[:160])
print("  goals: " + "; ".join("%s: %s" % (g, "met" if ok else "NOT met") for g, ok in goals))
PY
[ -z "$ramp_failed" ] || die "$ramp_failed"
[ -z "$gone" ] || die "the squids of$gone were gone right after create"
[ -z "$used_failed" ] || die "requests through the proxies of$used_failed failed"
[ "$left" = 0 ] || die "$left proxy processes outlived their sandboxes"
