#!/bin/bash
# firebreakd starts, answers, keeps its sockets to root, refuses a second instance and bad configs,
# upgrades nothing it should not, and exits 0 on SIGTERM leaving no socket behind.
. "$(dirname "$0")/../lib.sh"
fb_setup

start_daemon
check "status answers" "$FB" status
assert_eq "$(stat -c %a "$FIREBREAK_RUNTIME_DIR")" "700" "runtime dir is root's only (no firebreak group here)"
assert_eq "$(stat -c %a "$FIREBREAK_RUNTIME_DIR/trace.sock")" "600" "trace socket is mode 600"
assert_eq "$(stat -c %a "$FIREBREAK_RUNTIME_DIR/control.sock")" "600" "control socket is mode 600"
assert_eq "$(stat -c %a "$FIREBREAK_DB")" "640" "store file is not world-readable"
assert_eq "$(cat "$FIREBREAK_RUNTIME_DIR/firebreakd.pid")" "$DAEMON_PID" "pid file names the daemon"

assert_eq "$(stat -c %U:%G "$FIREBREAK_RUNTIME_DIR/control.sock")" "root:root" "control socket is root's"
assert_eq "$(stat -c %U:%G "$FIREBREAK_RUNTIME_DIR/trace.sock")" "root:root" "trace socket is root's"

# An unprivileged user can reach neither socket, and not only because the file modes above keep
# it out: with the way opened (the test's dir and the runtime dir traversable, the sockets world-writable), nobody's
# connection gets through to the daemon, which refuses it by its SO_PEERCRED (neither root nor the
# firebreak group), answers "permission denied" and counts it.
refused_peer() {
	"$FB" status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)[sys.argv[1]]["refused_peer"])' "$1"
}
chmod 0711 "$T" "$FIREBREAK_RUNTIME_DIR"
chmod 0666 "$FIREBREAK_RUNTIME_DIR/control.sock" "$FIREBREAK_RUNTIME_DIR/trace.sock"
for sock in control trace; do
	before=$(refused_peer "${sock}_socket") || fail "no refused_peer count for the $sock socket"
	setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1])  # the way is open: this must succeed, the refusal is the daemon'"'"'s
print("connected", flush=True)
try:
    s.sendall(b"{\"op\":\"ping\"}\n")
except OSError:
    pass
print(s.makefile().readline().strip())' "$FIREBREAK_RUNTIME_DIR/$sock.sock" >"$T/nobody.out" 2>&1
	head -1 "$T/nobody.out" | grep -qx connected ||
		fail "nobody could not even connect to the opened $sock socket: $(cat "$T/nobody.out")"
	assert_eq "$(sed -n 2p "$T/nobody.out")" '{"ok":false,"error":"permission denied"}' \
		"the daemon refuses nobody on the $sock socket by its credentials"
	assert_eq "$(refused_peer "${sock}_socket")" "$((before + 1))" "the refusal on the $sock socket is counted"
done
chmod 0700 "$T" "$FIREBREAK_RUNTIME_DIR"
chmod 0600 "$FIREBREAK_RUNTIME_DIR/control.sock" "$FIREBREAK_RUNTIME_DIR/trace.sock"
ok "an unprivileged user cannot reach the control or trace socket, even with the way open"

# A second daemon on the same store and runtime dir is refused and the first keeps serving.
if "$FBD" --foreground --config "$FB_CONF" --db "$FIREBREAK_DB" \
	--runtime-dir "$FIREBREAK_RUNTIME_DIR" >"$T/second.log" 2>&1; then
	fail "a second firebreakd started on the same runtime dir"
fi
grep -q "another firebreakd already uses" "$T/second.log" || fail "second daemon gave no clear reason"
check "the first daemon still answers" "$FB" status

# The CLI's usage and error exits.
"$FB" >/dev/null 2>&1; assert_eq "$?" "2" "firebreak without a command exits 2"
"$FB" nosuch >/dev/null 2>&1; assert_eq "$?" "2" "an unknown command exits 2"
"$FB" timeline >/dev/null 2>&1; assert_eq "$?" "2" "timeline without a sandbox exits 2"
"$FB" timeline nosuch >/dev/null 2>&1; assert_eq "$?" "1" "timeline of an unknown sandbox exits 1"
# Every command of the CLI's own table (as `firebreak help` prints it, checked against the table
# in cli/main.c so neither list can drift): --help exits 0 with a usage naming the command.
"$FB" help >"$T/help.out" || fail "firebreak help"
cmds=$(awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }' "$T/help.out")
table=$(sed -n '/^static const struct cli_command commands\[\]/,/^};/s/^\t{ "\([a-z-]*\)",.*/\1/p' \
	"$FB_ROOT/cli/main.c")
[ -n "$table" ] || fail "no command table found in cli/main.c"
assert_eq "$(echo $cmds)" "$(echo $table)" "firebreak help lists every command of its table"
for cmd in $cmds; do
	"$FB" "$cmd" --help >"$T/usage.out" 2>"$T/usage.err" || fail "firebreak $cmd --help exited $?"
	[ -s "$T/usage.err" ] && fail "firebreak $cmd --help wrote to stderr: $(cat "$T/usage.err")"
	head -1 "$T/usage.out" | grep -Eq "^Usage: firebreak ([a-z-]+\|)*$cmd(\|[a-z-]+)*( |$)" ||
		fail "firebreak $cmd --help: no usage line for it: $(head -3 "$T/usage.out")"
done
ok "every command of firebreak has --help (exit 0, its usage): $(echo $cmds | wc -w) commands"
for h in --help -h; do
	"$FBD" $h >"$T/usage.out" 2>&1 || fail "firebreakd $h exited $?"
	head -1 "$T/usage.out" | grep -q "^Usage: firebreakd" || fail "firebreakd $h: $(head -3 "$T/usage.out")"
	[ "$(wc -l <"$T/usage.out")" -gt 3 ] || fail "firebreakd $h: a usage of $(wc -l <"$T/usage.out") lines"
done
ok "firebreakd has --help and -h (it has no subcommands: its options are its commands)"
# More flags than it keeps is a usage error, not a write past its table.
"$FBD" --foreground $(for i in $(seq 9); do printf -- '--db %s ' "$T/x.db"; done) \
	>"$T/many.log" 2>&1
assert_eq "$?" "2" "firebreakd with nine store flags exits 2"
grep -q "too many options" "$T/many.log" || fail "too many flags gave no clear reason"

check "register a sandbox" "$FB" register lifecycle-1
"$FB" register "../etc" >/dev/null 2>&1 && fail "a path-like sandbox name was registered"
ok "a path-like sandbox name is refused"
trace_line lifecycle-1 1 run_tests c1 start | "$FB" trace lifecycle-1 --quiet || fail "trace one line"
"$FB" ps | grep -q "^lifecycle-1 " || fail "ps lists the sandbox"
"$FB" ps --json | grep -q '"name":"lifecycle-1"' || fail "ps --json lists the sandbox"
ok "ps lists the registered sandbox, also as JSON"

stop_daemon
ok "SIGTERM: exit 0"
[ -e "$FIREBREAK_RUNTIME_DIR/trace.sock" ] && fail "trace socket left behind"
[ -e "$FIREBREAK_RUNTIME_DIR/control.sock" ] && fail "control socket left behind"
ok "no socket left behind"
"$FB" status >/dev/null 2>&1 && fail "status succeeded with no daemon"
ok "status fails with no daemon"
# Readers still work on the store with the daemon gone.
"$FB" timeline lifecycle-1 | grep -q "tool call started" || fail "timeline after the daemon stopped"
ok "the timeline reads the store with no daemon"

# A bad config file is refused with FILE:LINE, before anything starts.
printf 'db = %s\nbatch_max = lots\n' "$FIREBREAK_DB" >"$T/bad.conf"
"$FBD" --foreground --config "$T/bad.conf" --runtime-dir "$FIREBREAK_RUNTIME_DIR" >"$T/bad.log" 2>&1
assert_eq "$?" "1" "a bad config value stops firebreakd"
grep -q "bad.conf:2: batch_max" "$T/bad.log" || fail "no FILE:LINE in: $(cat "$T/bad.log")"
ok "the config error names FILE:LINE"
printf 'no_such_key = 1\n' >"$T/unknown.conf"
"$FBD" --foreground --config "$T/unknown.conf" >"$T/unknown.log" 2>&1 && fail "unknown key accepted"
grep -q 'unknown key "no_such_key"' "$T/unknown.log" || fail "unknown key not named"
ok "an unknown config key is named"
"$FBD" --foreground --config "$T/missing.conf" >/dev/null 2>&1 && fail "a missing --config accepted"
ok "a missing --config file is an error"

# The config file is read and flags win over it.
{ cat "$FB_CONF"; printf 'db = %s/other.db\nlog_level = debug\n' "$T"; } >"$T/good.conf"
start_daemon --config "$T/good.conf"
[ -e "$T/other.db" ] && fail "--db did not win over the config file"
ok "--db wins over the config file"
stop_daemon

# A store of a newer schema is refused with a clear message, and left as it was.
version=$(sqlite3 "$FIREBREAK_DB" "PRAGMA user_version")
sqlite3 "$FIREBREAK_DB" "PRAGMA user_version = 99"
"$FBD" --foreground --config "$FB_CONF" --db "$FIREBREAK_DB" --runtime-dir "$FIREBREAK_RUNTIME_DIR" \
	>"$T/newer.log" 2>&1
assert_eq "$?" "1" "a newer store stops firebreakd"
grep -q "schema version 99 is newer" "$T/newer.log" || fail "no clear message: $(cat "$T/newer.log")"
assert_eq "$(sqlite3 "$FIREBREAK_DB" "PRAGMA user_version")" "99" "the newer store is untouched"
"$FB" ps >/dev/null 2>&1 && fail "the CLI read a newer store"
ok "the CLI refuses a newer store too"

# The daemon mode (no --foreground) detaches and still answers, and SIGTERM ends it.
sqlite3 "$FIREBREAK_DB" "PRAGMA user_version = $version"
"$FBD" --config "$FB_CONF" --db "$FIREBREAK_DB" --runtime-dir "$FIREBREAK_RUNTIME_DIR" ||
	fail "daemon mode start"
pid=$(cat "$FIREBREAK_RUNTIME_DIR/firebreakd.pid")
FB_PIDS="$FB_PIDS $pid"
check "the detached daemon answers" "$FB" status
# Its HTTP child logs to syslog too, and keeps running (it once closed syslog's socket under it).
HTTP_PORT=$(http_port)
child=$(http_child_pid)
sleep 1
api "" GET /healthz >/dev/null
expect_status 200 "the detached daemon's HTTP API answers"
assert_eq "$(http_child_pid)" "$child" "its HTTP child is the one it started (not restarting)"
kill -TERM "$pid"
for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
kill -0 "$pid" 2>/dev/null && fail "the detached daemon did not stop on SIGTERM"
ok "the detached daemon stops on SIGTERM"
