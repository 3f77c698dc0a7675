#!/bin/bash
# Resource caps hold from inside a real sandbox: a fork bomb stops at the pids cap while the host
# stays responsive, a memory balloon is OOM-killed inside its cgroup only, a CPU spinner gets its
# quota, filling the workspace or /tmp stops at their size, and the sandbox's wall clock ends it.
. "$(dirname "$0")/../lib.sh"
fb_setup
POLICY=$FB_ROOT/tests/policies/attack.json # pids 48, memory 128M, cpu 0.25, workspace 24M, tmp 8M

start_daemon
create_sandbox caps1 "$POLICY"
for f in forkbomb balloon spinner fill; do copy_in caps1 "$FB_ROOT/tests/attacks/$f.py"; done
V1=/sys/fs/cgroup

# The io caps sit on every real disk (this host has blkio in v1 only).
disk=$(cat /sys/block/vda/dev 2>/dev/null || ls /sys/block | grep -v -e loop -e ram -e zram | head -1 | xargs -I{} cat /sys/block/{}/dev)
grep -q "^$disk $((50 << 20))$" $V1/blkio/firebreak/caps1/blkio.throttle.read_bps_device \
	|| fail "no read cap on $disk: $(cat $V1/blkio/firebreak/caps1/blkio.throttle.read_bps_device)"
grep -q "^$disk $((20 << 20))$" $V1/blkio/firebreak/caps1/blkio.throttle.write_bps_device \
	|| fail "no write cap on $disk"
ok "io caps are set on the host's disk $disk (50 MiB/s read, 20 MiB/s write)"
assert_eq "$(cat $V1/memory/firebreak/caps1/memory.limit_in_bytes)" "$((128 << 20))" "memory cap"
assert_eq "$(cat $V1/memory/firebreak/caps1/memory.memsw.limit_in_bytes)" "$((128 << 20))" "memory+swap cap (no swap)"

# Fork bomb, with the host's own fork+exec latency measured while it runs.
"$FB" exec caps1 --tool attack -- python3 /workspace/forkbomb.py 3 >"$T/bomb.out" &
bomb=$!
FB_PIDS="$FB_PIDS $bomb"
sleep 1
worst=0
for _ in $(seq 20); do
	t0=$(date +%s%N)
	/bin/true
	t=$((($(date +%s%N) - t0) / 1000))
	[ "$t" -gt "$worst" ] && worst=$t
done
wait "$bomb"
read -r children refused < <(sed -n 's/children=\([0-9]*\) refused=\([0-9]*\)/\1 \2/p' "$T/bomb.out")
[ -n "$children" ] || fail "the fork bomb printed nothing: $(cat "$T/bomb.out")"
[ "$children" -lt 48 ] || fail "the fork bomb made $children processes (cap 48)"
[ "$refused" -gt 0 ] || fail "the fork bomb was never refused"
ok "the fork bomb stopped at the pids cap ($children children, $refused forks refused)"
# The monitor saw the refusals in the cgroup's pids.events: a resource.pids-cap verdict (medium:
# an alert on the sandbox's incident; nothing is frozen or killed for it).
wait_verdict_line caps1 "resource.pids-cap medium alert" || fail "the fork bomb gave no resource.pids-cap verdict"
ok "the fork bomb's refused forks are a resource.pids-cap verdict (medium, alert)"
[ "$worst" -lt 200000 ] || fail "the host's fork+exec took ${worst} us during the bomb"
ok "the host stayed responsive (worst fork+exec ${worst} us during the bomb)"
# Killed with the step; the sandbox's init reaps the zombies a moment later (pids counts them).
# What stays: the init, the exec launcher and the next step's process (docs/enforcer.md, exec).
for _ in $(seq 40); do
	[ "$(cat $V1/pids/firebreak/caps1/pids.current)" = 3 ] && break
	sleep 0.05
done
assert_eq "$(cat $V1/pids/firebreak/caps1/pids.current)" "3" "the bomb's processes died with its step"

# Memory balloon: OOM-killed in its cgroup; the sandbox (its init) and the host live on.
# A marker in the kernel log: the OOM line must come after it (the log is a ring; counting
# lines across runs is not reliable once it wraps).
marker="firebreak-test-oom-$$-$(date +%s%N)"
echo "$marker" >/dev/kmsg
"$FB" exec caps1 --tool attack --step 500 -- python3 /workspace/balloon.py 1024 >"$T/balloon.out" 2>&1
rc=$?
assert_eq "$rc" "137" "the balloon was killed by SIGKILL"
grep -q survived "$T/balloon.out" && fail "the balloon survived"
last=$(grep -o 'allocated [0-9]*' "$T/balloon.out" | tail -1 | cut -d' ' -f2)
[ "${last:-0}" -lt 128 ] || fail "the balloon got ${last} MiB past a 128 MiB cap"
# The kernel says which memory cgroup ran out and where the victim was: ours (a step has a memory
# cgroup of its own only where memory is a v2 controller: docs/enforcer.md, exec), and the
# monitor places the victim in its step by its v2 cgroup.
dmesg | sed -n "/$marker/,\$p" | grep -Eq "oom_memcg=/firebreak/caps1,task_memcg=/firebreak/caps1(/step-500)?," \
	|| fail "no OOM kill inside firebreak/caps1 in the kernel log"
wait_for 5 has_event caps1 proc.oom-kill step=500 \
	|| fail "the monitor did not place the OOM kill in step 500"
end=$("$FB" timeline caps1 --step 500 --json | grep '"kind":"step.end"')
if [ -d $V1/memory/firebreak/caps1 ]; then
	echo "$end" | grep -q '"memory_peak":null' || fail "a step without a memory cgroup has a peak: $end"
	peak=none
else
	peak=$(echo "$end" | sed -n 's/.*"memory_peak":\([0-9]*\).*/\1/p')
	[ "${peak:-0}" -gt $((100 << 20)) ] && [ "${peak:-0}" -le $((128 << 20)) ] \
		|| fail "step 500's recorded memory peak is ${peak:-none}"
fi
ok "the balloon was OOM-killed at ${last:-0} MiB inside its cgroup, in step 500 (peak $peak)"
check "the sandbox still runs tool calls after the OOM" "$FB" exec caps1 --tool run -- true
check "the monitor is unaffected" "$FB" status

# CPU spinner: 0.25 cores.
thr_before=$(sed -n 's/^nr_throttled //p' $V1/cpu/firebreak/caps1/cpu.stat)
out=$("$FB" exec caps1 --tool attack -- python3 /workspace/spinner.py 2)
cpu=$(echo "$out" | sed -n 's/cpu=\([0-9.]*\) .*/\1/p')
awk -v c="$cpu" 'BEGIN { exit !(c > 0.2 && c < 0.8) }' || fail "the spinner got $cpu CPU s in 2 s (quota 0.25)"
thr_after=$(sed -n 's/^nr_throttled //p' $V1/cpu/firebreak/caps1/cpu.stat)
[ "$thr_after" -gt "$thr_before" ] || fail "no throttling counted"
ok "the spinner was throttled to its quota ($cpu CPU s in 2 s wall, throttled $((thr_after - thr_before)) times)"

# Filling the workspace and /tmp stops at their sizes.
out=$("$FB" exec caps1 --tool attack -- python3 /workspace/fill.py /workspace)
case "$out" in "written="*" error=ENOSPC") ;; *) fail "workspace fill: $out" ;; esac
written=${out#written=}; written=${written%% *}
[ "$written" -le $((24 << 20)) ] || fail "wrote $written bytes into a 24 MiB workspace"
ok "filling /workspace stopped at its size ($written bytes, ENOSPC)"
out=$("$FB" exec caps1 --tool attack -- python3 /workspace/fill.py /tmp)
case "$out" in "written="*" error=ENOSPC") ;; *) fail "tmp fill: $out" ;; esac
ok "filling /tmp stopped at its size (${out})"
check "destroy caps1" "$FB" destroy caps1

# The sandbox's own wall clock: 2 s, then everything in it dies.
create_sandbox caps2 "$FB_ROOT/tests/policies/short-lived.json"
"$FB" exec caps2 --tool run -- sleep 1 || fail "a call inside the sandbox's lifetime"
sleep 2.5
"$FB" exec caps2 --tool run -- true 2>/dev/null && fail "the sandbox outlived its wall clock"
[ "$(cat "$V2/firebreak/caps2/cgroup.events" | sed -n 's/^populated //p')" = 0 ] \
	|| fail "processes are left in the expired sandbox"
ok "the sandbox's wall clock ended it"
check "destroy caps2" "$FB" destroy caps2
assert_no_leftovers "after the caps tests"
stop_daemon
