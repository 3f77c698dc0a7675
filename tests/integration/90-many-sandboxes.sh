#!/bin/bash
# Seventy sandboxes under the default configuration, more than two of the kernel's and the
# daemon's per-sandbox budgets allowed before: every one's exec launcher holds a control
# connection (there were 64 slots: the 65th sandbox could run no tool call), and every one needs
# fanotify groups (two each against root's 128: the 64th ran without file sight). Each runs a tool
# call, each is watched for file events (a pair of its own while the collector's share lasts,
# shared after), the first and the last are seen, and nothing is left when they go.
. "$(dirname "$0")/../lib.sh"
fb_setup
start_daemon --config "$FB_CONF"
POLICY=$FB_ROOT/tests/policies/file.json
N=70

file_counter() { "$FB" status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["file"][sys.argv[1]])' "$1"; }

for i in $(seq -w 1 $N); do create_sandbox "fbn-$i" "$POLICY"; done
ok "$N sandboxes created"
for i in $(seq -w 1 $N); do
	"$FB" exec "fbn-$i" --tool shell -- dash -c 'exit 0' </dev/null >"$T/exec.out" 2>&1 ||
		fail "a tool call in fbn-$i: $(cat "$T/exec.out")"
done
ok "each of the $N runs a tool call (the control socket takes every launcher's connection)"

# The collector's own pairs: half of the kernel's per-user limit less 16 (file-events.c), or fewer
# if the kernel ran out first; the rest share them. None of the 70 is unwatched.
limit=$(cat /proc/sys/fs/fanotify/max_user_groups)
own=$(((limit - 16) / 2))
groups=$(file_counter groups)
shared=$(file_counter shared)
assert_eq "$(file_counter watch_failed)" "0" "every sandbox's mounts are marked"
assert_eq "$((groups + shared))" "$N" "each sandbox has a pair of its own or shares one ($groups own, $shared sharing)"
[ "$groups" -le "$own" ] || fail "$groups pairs open, past the collector's share of $own"
[ $N -le "$own" ] || [ "$shared" -gt 0 ] || fail "$N sandboxes and $own pairs at most, yet none shares"
ok "at most $own pairs of the kernel's $limit groups are the collector's; the rest share"
file_marker "fbn-01" shell
file_marker "fbn-$N" shell
ok "the first sandbox (a pair of its own) and the last (sharing) are both seen"

for i in $(seq -w 1 $N); do "$FB" destroy "fbn-$i" >/dev/null || fail "destroy fbn-$i"; done
FB_SANDBOXES=""
assert_eq "$(file_counter groups)" "0" "every pair went with its sandboxes"
assert_no_leftovers "many sandboxes"
