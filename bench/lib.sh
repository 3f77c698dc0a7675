# bench/lib.sh: the set-up the benchmarks and examples/demo.sh share. Source it from bash with
# BENCH set to the name messages start with; it sets ROOT (the tree) and defines:
#
#   die MSG            MSG on stderr (and the tail of $FB_LOG if DIE_LOG=1), exit 1
#   need_root          die unless root
#   need_build         die unless the tree is built
#   bench_tmp TEMPLATE a mktemp -d directory T; the EXIT trap (bench_cleanup) removes it and
#                      everything the run made: the sandboxes named in $MADE, what the script's
#                      cleanup_more function (if defined) undoes, firebreakd, the test world
#   copy_binaries      firebreak and firebreakd copied into $T/bin, which FB_BIN then names
#   fb ARGS            the CLI on this run's config ($FB_CONF, if set), store and runtime dir
#   start_firebreakd   firebreakd in the background (its pid in DPID) on $FBD_CONF (else
#                      $FB_CONF), logging to $FB_LOG; returns 1 if it does not answer in 5 s
#   build_generator    bench/workload/getppid_loop.c built as $T/bin/gen
#   bench_cgroup NAME  a cgroup of the run's, $V2/$CG (firebreak-bench-PID), adopted by the running
#                      firebreakd as sandbox NAME (firebreak watch); bench_cgroup_remove, for
#                      cleanup_more, thaws it, kills what is in it and removes it
#   world_up TIMEOUT   the test world (tests/world) in $T/world, for TIMEOUT seconds at most
#   WORLD_CONF         the config lines that send the egress gate's traffic into that world
# shellcheck shell=bash

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FB_BIN=$ROOT/build
DPID=""
MADE=""
WORLD_UP=0
WORLD_CONF=$'gate_outside_netns = firebreak-world-net\ngate_dns_upstream = 198.51.100.53\n'

die() {
	echo "$BENCH: $*" >&2
	[ "${DIE_LOG:-0}" = 1 ] && [ -f "${FB_LOG:-}" ] && tail -n 15 "$FB_LOG" >&2
	exit 1
}

need_root() { [ "$(id -u)" = 0 ] || die "needs root"; }
need_build() { [ -x "$ROOT/build/firebreak" ] && [ -x "$ROOT/build/firebreakd" ] || die "run make first"; }

bench_cleanup() {
	set +e
	trap - EXIT
	for s in $MADE; do fb destroy "$s" >/dev/null 2>&1; done
	declare -F cleanup_more >/dev/null && cleanup_more
	if [ -n "$DPID" ]; then
		kill -TERM "$DPID" 2>/dev/null
		wait "$DPID" 2>/dev/null
	fi
	[ "$WORLD_UP" = 1 ] && bash "$ROOT/tests/world/world.sh" down "$T/world" >/dev/null 2>&1
	rm -rf "$T"
}

bench_tmp() {
	T=$(mktemp -d "$1") || die "mktemp"
	FB_CONF=$T/fb.conf
	FB_DB=$T/fb.db
	FB_RUN=$T/run
	FB_LOG=$T/firebreakd.log
	trap bench_cleanup EXIT
	trap 'exit 130' INT TERM HUP
}

copy_binaries() {
	# The DNS gate's nft shim and the proxy's ICAP module go beside firebreak, where create
	# looks for them.
	mkdir -p "$T/bin" && cp "$ROOT/build/firebreak" "$ROOT/build/firebreakd" \
		"$ROOT/build/firebreak-nftset.so" "$ROOT/build/firebreak-icap.so" "$T/bin/" || die "copy"
	FB_BIN=$T/bin
}

fb() { "$FB_BIN/firebreak" ${FB_CONF:+--config "$FB_CONF"} --runtime-dir "$FB_RUN" --db "$FB_DB" "$@"; }

start_firebreakd() {
	"$FB_BIN/firebreakd" --foreground --config "${FBD_CONF:-$FB_CONF}" --db "$FB_DB" \
		--runtime-dir "$FB_RUN" >"$FB_LOG" 2>&1 &
	DPID=$!
	for _ in $(seq 100); do fb status >/dev/null 2>&1 && return 0; sleep 0.05; done
	fb status >/dev/null 2>&1
}

build_generator() {
	gcc -O2 -std=gnu11 -Wall -Wextra -o "$T/bin/gen" "$ROOT/bench/workload/getppid_loop.c" ||
		die "build the generator"
}

V2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
CG=firebreak-bench-$$
bench_cgroup() {
	[ -n "$V2" ] || die "no cgroup2 mount"
	[ -d "$V2/$CG" ] || mkdir "$V2/$CG" || die "mkdir $V2/$CG"
	fb watch "$CG" --name "$1" >/dev/null || die "watch $CG"
}

bench_cgroup_remove() {
	[ -n "$V2" ] && [ -d "$V2/$CG" ] || return 0
	echo 0 >"$V2/$CG/cgroup.freeze" 2>/dev/null
	echo 1 >"$V2/$CG/cgroup.kill" 2>/dev/null
	for _ in $(seq 50); do rmdir "$V2/$CG" 2>/dev/null && break; sleep 0.05; done
}

world_up() {
	mkdir -p "$T/world"
	WORLD_UP=1
	bash "$ROOT/tests/world/world.sh" up -t "$1" "$T/world" >"$T/world.log" 2>&1
}
