#!/bin/bash
# The file collector's fanotify groups when there are more sandboxes than the kernel gives groups
# (/proc/sys/fs/fanotify/max_user_groups: 128 for all of root's fanotify users here, two per
# sandbox): past the collector's share, sandboxes share a pair of groups, and each event is still
# its own sandbox's and step's (by its file system's fsid, its /proc mount's id, its process's
# cgroup); an overflow of a shared queue is loss for every sandbox in it; one sandbox going takes
# only its own marks; and a sandbox the kernel gives no group at all to is not trusted (a
# monitor.loss, judged blind) instead of running unseen.
. "$(dirname "$0")/../lib.sh"
fb_setup
detectors_record_only
printf 'file_groups_max = 1\n' >>"$FB_CONF"
start_daemon --config "$FB_CONF"
POLICY=$FB_ROOT/tests/policies/file.json

counter() { "$FB" status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["file"][sys.argv[1]])' "$1"; }
# others SANDBOX NAMES...: file events in SANDBOX's timeline that name another sandbox's file.
others() {
	local sb=$1
	shift
	"$FB" timeline "$sb" --json | python3 -c '
import json, sys
names = sys.argv[1:]
for e in map(json.loads, sys.stdin):
    if e["kind"].startswith("file.") and any(f"own-{n}" in json.dumps(e.get("fields")) for n in names):
        print(e["kind"], e["fields"])' "$@"
}

# 1. Three sandboxes, one pair of groups: the first has it, the two after share it.
for s in fs1 fs2 fs3; do create_sandbox "$s" "$POLICY"; done
assert_eq "$(counter groups)" "1" "three sandboxes, one pair of groups (file_groups_max 1)"
assert_eq "$(counter shared)" "2" "the second and third sandbox share it"

# 2. Each one's writes, and its /proc reads, are its own and its step's; none shows another's.
step=100
for s in fs1 fs2 fs3; do
	step=$((step + 1))
	"$FB" exec "$s" --tool shell --step "$step" -- dash -c "echo x >/workspace/own-$s" ||
		fail "the write in $s"
	file_marker "$s" shell # its write and its /proc/self/stat read, each through the shared pair
	has_event "$s" file.write step="$step" tool=shell path="/workspace/own-$s" ||
		fail "$s's write is not its own step's event"
done
ok "each sandbox's write and /proc read are its own events, on its own step"
for s in fs1 fs2 fs3; do
	left=$(others "$s" $(echo fs1 fs2 fs3 | tr ' ' '\n' | grep -vx "$s"))
	[ -z "$left" ] || fail "$s's timeline has another sandbox's file events: $left"
done
ok "no sandbox's timeline has another's file events"

# 3. A flood in fs1 while the monitor is stopped overflows the shared queue: whose events were
# lost is not known, so it is a monitor.loss of each sandbox in the group, each judged blind.
"$FB" exec fs1 --tool shell --step 110 -- dash -c 'sleep 0.3; i=0
while [ $i -lt 20000 ]; do : >/workspace/f$i; i=$((i + 1)); done' &
FLOOD=$!
sleep 0.2
kill -STOP "$DAEMON_PID"
sleep 1
kill -CONT "$DAEMON_PID"
wait "$FLOOD" || fail "the flood"
overflow_loss() {
	"$FB" timeline "$1" --json | python3 -c '
import json, sys
sys.exit(0 if any(e["kind"] == "monitor.loss" and (e.get("fields") or {}).get("stage") == "file events"
	and e["fields"].get("queue_overflows", 0) >= 1 for e in map(json.loads, sys.stdin)) else 1)'
}
for s in fs1 fs2 fs3; do
	wait_for 5 overflow_loss "$s" || fail "the shared queue's overflow is no monitor.loss of $s"
	wait_loss_judged "$s"
done
ok "the shared queue's overflow is a monitor.loss of each of its sandboxes, each judged blind"

# 4. fs1 goes (the group's first): the others keep their marks and their sight.
check "destroy fs1" "$FB" destroy fs1
FB_SANDBOXES="fs2 fs3"
assert_eq "$(counter groups)" "1" "the pair stays while sandboxes share it"
for s in fs2 fs3; do file_marker "$s" shell; done
ok "after fs1 went, fs2 and fs3 are still seen"

# 5. Every group the kernel gives root taken (by a holder of this test's, by pid): a sandbox made
# now gets none, and is not trusted. The last two sandboxes go first, so no pair is left to share.
check "destroy fs2" "$FB" destroy fs2
check "destroy fs3" "$FB" destroy fs3
FB_SANDBOXES=""
assert_eq "$(counter groups)" "0" "the pair went with its last sandbox"
python3 -c '
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
fds = []
while libc.fanotify_init(0, os.O_RDONLY) >= 0:
    fds.append(1)
print(len(fds), os.strerror(ctypes.get_errno()), flush=True)
time.sleep(600)' >"$T/holder.out" 2>&1 &
HOLDER=$!
FB_PIDS="$FB_PIDS $HOLDER"
wait_for 5 grep -q "Too many open files" "$T/holder.out" ||
	fail "the holder did not take every fanotify group: $(cat "$T/holder.out")"
failed=$(counter watch_failed)
create_sandbox fs4 "$POLICY"
assert_eq "$(counter watch_failed)" "$((failed + 1))" "no group for fs4: counted in file.watch_failed"
has_event fs4 monitor.loss stage="file events" unwatched=True ||
	fail "fs4 runs unseen by the file collector without a monitor.loss"
wait_loss_judged fs4
ok "fs4, given no fanotify group, is a monitor.loss judged blind"
kill -KILL "$HOLDER"
wait "$HOLDER" 2>/dev/null
create_sandbox fs5 "$POLICY"
file_marker fs5 shell
ok "with the groups back, fs5 is seen"

check "destroy fs4" "$FB" destroy fs4
check "destroy fs5" "$FB" destroy fs5
FB_SANDBOXES=""
assert_no_leftovers "file groups"
