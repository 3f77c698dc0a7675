# Helpers for the integration tests (bash). Each test sources this file, then calls fb_setup.
# Everything a test creates lives in one temporary directory and the daemons it started (by pid);
# the EXIT trap removes both, also when the test fails.
set -u

FB_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FB=$FB_ROOT/build/firebreak
FBD=$FB_ROOT/build/firebreakd
FB_PIDS=""
# The cgroup v2 hierarchy (on a hybrid host it is not /sys/fs/cgroup itself).
V2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)

# Commands the EXIT trap runs after the sandboxes are gone (e.g. taking a test world down).
FB_CLEANUP_AFTER=""

fb_cleanup() {
	local rc=$? replay_failed=""
	fb_cleanup_sandboxes
	[ -n "$FB_CLEANUP_AFTER" ] && eval "$FB_CLEANUP_AFTER"
	# The daemon stops cleanly first, so its store says where each detector state ended.
	if [ -n "${DAEMON_PID:-}" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then
		kill -TERM "$DAEMON_PID" 2>/dev/null
		for _ in $(seq 50); do kill -0 "$DAEMON_PID" 2>/dev/null || break; sleep 0.1; done
	fi
	for pid in $FB_PIDS; do
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	# Determinism: every scenario a test recorded replays to exactly its recorded verdicts.
	if [ $rc = 0 ] && [ -n "${T:-}" ] && [ -f "${FIREBREAK_DB:-}" ] &&
		! "$FB" replay --all >"$T/replay.out" 2>&1; then
		echo "FAIL: replaying this test's store did not give its recorded verdicts:"
		cat "$T/replay.out"
		replay_failed=1
	fi
	[ -n "${T:-}" ] && [ -d "$T" ] && rm -rf "$T"
	[ -n "$replay_failed" ] && exit 1
}

# Every program the tests run on the host, with the Debian package that has it; each package is in
# the Makefile's PACKAGES (make deps installs it). A missing one fails the test at once: a check
# such as `pgrep ... && fail` would otherwise pass without checking anything.
FB_TEST_TOOLS="pgrep:procps ps:procps nsenter:util-linux setpriv:util-linux unshare:util-linux
	setsid:util-linux flock:util-linux dmesg:util-linux curl:curl sqlite3:sqlite3 ip:iproute2
	nft:nftables tcpdump:tcpdump dnsmasq:dnsmasq-base timeout:coreutils python3:python3
	openssl:openssl squid:squid-openssl"

require_tools() {
	local pkgs entry
	pkgs=" $(sed -n '/^PACKAGES *:=/,/[^\\]$/p' "$FB_ROOT/Makefile" | sed 's/^PACKAGES *:=//; s/\\//' |
		tr -s ' \t\n' ' ') "
	for entry in $FB_TEST_TOOLS; do
		# coreutils is essential: on every Debian system, not in PACKAGES.
		case "${entry#*:}$pkgs" in coreutils* | "${entry#*:}"*" ${entry#*:} "*) ;;
		*) fail "the tests need ${entry%%:*}, but its package ${entry#*:} is not in the Makefile's PACKAGES" ;;
		esac
		command -v "${entry%%:*}" >/dev/null ||
			fail "the tests need ${entry%%:*}, which is not installed (package ${entry#*:}; run make deps)"
	done
}

fb_setup() {
	[ -n "$V2" ] && [ -d "$V2" ] || fail "no cgroup2 hierarchy in /proc/mounts"
	require_tools
	T=$(mktemp -d /tmp/firebreak-test.XXXXXX)
	trap fb_cleanup EXIT
	export FIREBREAK_DB=$T/state/firebreak.db
	export FIREBREAK_RUNTIME_DIR=$T/run
	FB_LOG=$T/firebreakd.log
	# The enforcer's commands take no FIREBREAK_* variable (the agent may control a harness's
	# environment): every call names the test's runtime dir, store and config with flags.
	# The HTTP API on a port of the kernel's choosing (status --json says which), its tokens in
	# the test's directory: never the host's /etc/firebreak or port 9137.
	cat >"$T/firebreak.conf" <<CONF
listen = 127.0.0.1:0
http_read_token = $T/http-read.token
http_action_token = $T/http-action.token
CONF
	FB_CONF=$T/firebreak.conf
	cat >"$T/fb" <<WRAP
#!/bin/sh
exec "$FB_ROOT/build/firebreak" --config "\$FB_CONF_PATH" --runtime-dir "$T/run" \\
	--db "$T/state/firebreak.db" "\$@"
WRAP
	chmod 0755 "$T/fb"
	export FB_CONF_PATH=$FB_CONF
	FB=$T/fb
}

fail() {
	echo "FAIL: $*" >&2
	if [ -n "${FB_LOG:-}" ] && [ -f "$FB_LOG" ]; then
		echo "--- last lines of $FB_LOG" >&2
		tail -n 20 "$FB_LOG" >&2
	fi
	exit 1
}

ok() {
	echo "ok - $*"
}

# check DESCRIPTION COMMAND...: the command must succeed.
check() {
	local what=$1
	shift
	"$@" >/dev/null || fail "$what (command: $*)"
	ok "$what"
}

assert_eq() {
	[ "$1" = "$2" ] || fail "$3: expected '$2', got '$1'"
	ok "$3"
}

# Starts firebreakd in the foreground (as a child we own) with extra args; waits until it answers.
start_daemon() {
	"$FBD" --foreground --config "$FB_CONF" --db "$FIREBREAK_DB" \
		--runtime-dir "$FIREBREAK_RUNTIME_DIR" "$@" \
		>>"$FB_LOG" 2>&1 &
	DAEMON_PID=$!
	FB_PIDS="$FB_PIDS $DAEMON_PID"
	for _ in $(seq 100); do
		"$FB" status >/dev/null 2>&1 && return 0
		kill -0 "$DAEMON_PID" 2>/dev/null || fail "firebreakd exited during start-up"
		sleep 0.05
	done
	fail "firebreakd did not answer within 5 s"
}

# For a test that attacks a sandbox on purpose to check something other than the detectors (the
# enforcer's refusals, a collector's events): verdicts are still recorded, but never freeze or kill
# the sandbox under test. Call before start_daemon --config "$FB_CONF".
detectors_record_only() {
	printf 'detector_actions = off\n' >>"$FB_CONF"
}

# wait_cgroup SANDBOX KEY VALUE [SECONDS]: waits (3 s by default) for the sandbox's cgroup.events
# to say "KEY VALUE" (frozen 1, populated 0); fails (returns 1) if it never does.
wait_cgroup() {
	local i
	for i in $(seq $((${4:-3} * 100))); do
		grep -qx "$2 $3" "$V2/firebreak/$1/cgroup.events" 2>/dev/null && return 0
		sleep 0.01
	done
	return 1
}

# state_field SANDBOX KEY: a field of the enforcer's state.json of the sandbox (init_pid, link...).
state_field() {
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' \
		"$FIREBREAK_RUNTIME_DIR/sandboxes/$1/state.json" "$2"
}

# wait_event SANDBOX KIND: waits up to 2 s for an event of KIND in the sandbox's timeline (what
# the monitor acted on is stored right after it acted: a test that saw the act waits for its record).
wait_event() {
	for _ in $(seq 100); do
		"$FB" timeline "$1" --json | grep -q "\"kind\":\"$2\"" && return 0
		sleep 0.02
	done
	return 1
}

# monitor_marker SANDBOX [TOOL PROGRAM...]: before a negative check ("no verdict came"), proof that
# the monitor has processed the sandbox's kernel events up to now, in place of a fixed sleep: a
# marker call (run -- /usr/bin/true by default) on a fresh step, and a wait (5 s at most) for its
# proc.exit, which the process tracer delivers after everything the sandbox did before it.
FB_MARKER_STEP=90000
monitor_marker() {
	local sb=$1 tool=${2:-run} i
	shift $(($# > 1 ? 2 : 1))
	[ $# -gt 0 ] || set -- /usr/bin/true
	FB_MARKER_STEP=$((FB_MARKER_STEP + 1))
	"$FB" exec "$sb" --tool "$tool" --step "$FB_MARKER_STEP" -- "$@" </dev/null >/dev/null 2>&1 ||
		fail "the marker call $* in $sb failed"
	for i in $(seq 250); do
		"$FB" timeline "$sb" --step "$FB_MARKER_STEP" --json | grep -q '"kind":"proc.exit"' && return 0
		sleep 0.02
	done
	fail "the monitor never recorded the marker step $FB_MARKER_STEP of $sb"
}

# loss_judged SANDBOX: "LOSSES VERDICTS", its monitor.loss events and monitor.blind verdicts so far.
loss_judged() {
	"$FB" timeline "$1" --json | python3 -c '
import json, sys
ev = [json.loads(l) for l in sys.stdin]
print(sum(e["kind"] == "monitor.loss" for e in ev),
      sum(e["kind"] == "verdict" and e["fields"]["rule"] == "monitor.blind" for e in ev))'
}

# wait_loss_judged SANDBOX: waits (10 s at most) until every monitor.loss of the sandbox has its
# monitor.blind verdict and the counts stay so for a round (the detectors may run behind a flood:
# a loss judged after a thaw would freeze it again); fails if they never agree.
wait_loss_judged() {
	local j prev=""
	for _ in $(seq 50); do
		j=$(loss_judged "$1")
		[ "${j% *}" = "${j#* }" ] && [ "$j" = "$prev" ] && return 0
		prev=$j
		sleep 0.2
	done
	fail "$1's losses and monitor.blind verdicts: $j"
}

# assert_blind_acted ALERTED FROZEN: in the timelines $T/ALERTED.jsonl and $T/FROZEN.jsonl, every
# monitor.blind verdict of the first (on_lost_events "alert") alerted and none froze it; the
# second's first verdict froze it (severity high), naming its monitor.loss events.
assert_blind_acted() {
	python3 - "$T/$1.jsonl" "$T/$2.jsonl" <<'PY' || fail "the monitor.blind verdicts of $1 and $2"
import json, sys
alerted, frozen = ([json.loads(l) for l in open(f)] for f in sys.argv[1:3])
blind = [e for e in alerted if e["kind"] == "verdict" and e["fields"]["rule"] == "monitor.blind"]
assert blind and all(e["fields"]["action"] == "alert" for e in blind), blind
assert not [e for e in alerted if e["kind"] == "action.freeze"], "on_lost_events alert, and frozen"
blind = [e for e in frozen if e["kind"] == "verdict" and e["fields"]["rule"] == "monitor.blind"]
assert blind and blind[0]["fields"]["action"] == "freeze" and blind[0]["fields"]["severity"] == "high", blind
ids = {e["id"]: e for e in frozen}
assert all(ids[i]["kind"] == "monitor.loss" for i in blind[0]["fields"]["event_ids"]), blind[0]
fr = [e for e in frozen if e["kind"] == "action.freeze"]
assert fr and fr[0]["fields"]["requested_by"] == "monitor.blind", fr
PY
}

# credential_policy: a real model-API key, root's alone (0600), in $T/secrets/model-api, its value
# in REAL (a prefix that is not secret, "fbREAL-", then 32 hex digits: a scan from inside looks for
# the prefix followed by more of it), and tests/policies/credentials.json naming that file in
# $T/cred.json.
credential_policy() {
	mkdir -m 0700 "$T/secrets" || fail "secrets dir"
	REAL=fbREAL-$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
	printf '%s\n' "$REAL" >"$T/secrets/model-api"
	chmod 0600 "$T/secrets/model-api"
	sed "s|@SECRET@|$T/secrets/model-api|" "$FB_ROOT/tests/policies/credentials.json" >"$T/cred.json"
}

# json_field JSON KEY: the value of KEY in the one JSON object JSON (Python's repr; None if absent).
json_field() { python3 -c "import json,sys; print(json.loads(sys.argv[1]).get(sys.argv[2]))" "$1" "$2"; }

# world_contacts SERVICE PATTERN: how many lines of the test world's SERVICE contact log match.
world_contacts() { bash "$WORLDSH" contacts "$WORLD" "$1" 2>/dev/null | grep -c -- "$2" || true; }

# wait_for SECONDS COMMAND...: runs the command every 50 ms until it succeeds (returns 0) or
# SECONDS of wall clock have passed (returns 1): a wait for a condition with a deadline, where a
# fixed sleep would pass a negative check whenever the pipeline is merely slow.
wait_for() {
	local deadline=$(($(date +%s%N) + $1 * 1000000000))
	shift
	while :; do
		"$@" && return 0
		[ "$(date +%s%N)" -lt "$deadline" ] || return 1
		sleep 0.05
	done
}

# has_event SANDBOX KIND [KEY=VALUE...]: whether the sandbox's timeline holds an event of KIND
# whose fields have those values (compared as text; step=N and tool=NAME are the event's own).
has_event() {
	"$FB" timeline "$1" --json | python3 -c '
import json, sys
kind, want = sys.argv[1], dict(a.split("=", 1) for a in sys.argv[2:])
for e in map(json.loads, sys.stdin):
    f = dict(e.get("fields") or {}, step=e.get("step"), tool=e.get("tool"))
    if e["kind"] == kind and all(str(f.get(k)) == v for k, v in want.items()):
        sys.exit(0)
sys.exit(1)' "${@:2}"
}

# nflog_marker SANDBOX: before a check of the gate's denied packets (net.denied), proof that the
# monitor stored every aggregate of the packets denied before now, in place of a sleep. A root
# process in the sandbox's network namespace (outside its cgroup, as an escaped attacker)
# sends one datagram to a destination of its own (192.0.2.77, TEST-NET-1, on a fresh port); the
# gate drops and logs it after everything sent before it, and the wait (5 s at most) is for its
# net.denied. The collector (collectors/nflog) stores an aggregate once it is a second old, all
# of those of one pass in the order they were opened, so one opened before the marker's is stored
# no later than the marker's.
FB_NFLOG_MARKER_PORT=40000
nflog_marker() {
	local init
	init=$(state_field "$1" init_pid) || fail "no init pid of $1"
	FB_NFLOG_MARKER_PORT=$((FB_NFLOG_MARKER_PORT + 1))
	nsenter --net="/proc/$init/ns/net" python3 -c '
import socket, sys
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"marker", ("192.0.2.77", int(sys.argv[1])))' \
		"$FB_NFLOG_MARKER_PORT" || fail "the NFLOG marker from $1 was not sent"
	wait_for 5 has_event "$1" net.denied dst=192.0.2.77 port="$FB_NFLOG_MARKER_PORT" ||
		fail "the monitor never stored the NFLOG marker of $1 (192.0.2.77 udp/$FB_NFLOG_MARKER_PORT)"
}

# file_marker SANDBOX TOOL: before a check of file events (or of the verdicts they make), proof
# that the file collector read and judged everything the sandbox did before now, in place of a
# sleep. On a fresh step, TOOL (one that may run dash -c) writes /workspace/.fb-marker-STEP (the
# sandbox's file system group) and reads its own /proc/self/stat (the /proc group); the wait (5 s
# at most) is for both events: each group's queue is read in order.
file_marker() {
	local step
	FB_MARKER_STEP=$((FB_MARKER_STEP + 1))
	step=$FB_MARKER_STEP
	"$FB" exec "$1" --tool "$2" --step "$step" -- dash -c \
		"echo m >/workspace/.fb-marker-$step && read -r s </proc/self/stat" </dev/null \
		>/dev/null 2>&1 || fail "the file marker call in $1 failed"
	wait_for 5 has_event "$1" file.write step="$step" path="/workspace/.fb-marker-$step" ||
		fail "the monitor never recorded the file marker's write (step $step of $1)"
	wait_for 5 file_marker_proc "$1" "$step" ||
		fail "the monitor never recorded the file marker's /proc read (step $step of $1)"
}
file_marker_proc() {
	"$FB" timeline "$1" --step "$2" --json | grep -q '"kind":"file.open".*"path":"/proc/[0-9]*/stat"'
}

# Stops the daemon with SIGTERM and requires a clean exit 0.
stop_daemon() {
	kill -TERM "$DAEMON_PID"
	wait "$DAEMON_PID"
	local rc=$?
	[ $rc -eq 0 ] || fail "firebreakd exited $rc after SIGTERM"
}

# trace_line SANDBOX STEP TOOL CALL_ID PHASE [EXTRA_JSON_MEMBERS]
trace_line() {
	printf '{"gen_ai.operation.name":"execute_tool","gen_ai.tool.name":"%s","gen_ai.tool.call.id":"%s","firebreak.sandbox":"%s","firebreak.step":%s,"phase":"%s"%s}\n' \
		"$3" "$4" "$1" "$2" "$5" "${6:+,$6}"
}

# Sandboxes a test creates; the EXIT trap destroys them (also when the test fails).
FB_SANDBOXES=""

fb_cleanup_sandboxes() {
	for s in $FB_SANDBOXES; do
		"$FB" destroy "$s" >/dev/null 2>&1
	done
}

# create_sandbox NAME POLICY [ARGS]: creates it and remembers to destroy it.
create_sandbox() {
	local name=$1 policy=$2
	shift 2
	FB_SANDBOXES="$FB_SANDBOXES $name"
	"$FB" create "$name" --policy "$policy" "$@" || fail "create $name"
}

# copy_in NAME FILE [MODE]: puts a host file into the sandbox's /workspace through stdin.
copy_in() {
	local dest=/workspace/$(basename "$2")
	"$FB" exec "$1" --tool setup -- tee "$dest" <"$2" >/dev/null || fail "copy $2 into $1"
	if [ -n "${3:-}" ]; then
		"$FB" exec "$1" --tool setup -- chmod "$3" "$dest" || fail "chmod $dest"
	fi
}

# Nothing named firebreak may be left on the host once a test's sandboxes are gone: in no cgroup
# hierarchy the host mounts (the v2 one and each v1 controller's, as /proc/mounts lists them, not
# a fixed path that would pass unchecked on a host that mounts them elsewhere), nor in the
# runtime dir, nor as a process.
assert_no_leftovers() {
	local left mounts
	mounts=$(awk '$3 == "cgroup2" || $3 == "cgroup" { print $2 }' /proc/mounts)
	echo "$mounts" | grep -qx "$V2" || fail "no cgroup2 mount in /proc/mounts to check for leftovers"
	left=$(for m in $mounts; do ls -d "$m"/firebreak* 2>/dev/null; done
		ls "$FIREBREAK_RUNTIME_DIR/sandboxes" 2>/dev/null
		# An exec launcher or init of this test's runtime dir (a zombie has no command line).
		for p in $(pgrep -x 'firebreak-exec|firebreak-init'); do
			tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -q -- "$FIREBREAK_RUNTIME_DIR " &&
				echo "process $p ($(cat "/proc/$p/comm" 2>/dev/null))"
		done)
	[ -z "$left" ] || fail "left on the host: $left"
	ok "nothing left on the host ($1)"
}

# world_up: brings the test world (tests/world) up in $T/world, taken down when the test ends,
# and points the gate at it: its outside link in the world's network, its DNS at the world's.
world_up() {
	WORLDSH=$FB_ROOT/tests/world/world.sh
	WORLD=$T/world
	mkdir -p "$WORLD"
	FB_CLEANUP_AFTER='bash "$WORLDSH" down "$WORLD" >/dev/null 2>&1'
	bash "$WORLDSH" up -t 300 "$WORLD" >"$T/world-up.log" 2>&1 || {
		cat "$T/world-up.log"
		fail "world up"
	}
	printf 'gate_outside_netns = firebreak-world-net\ngate_dns_upstream = 198.51.100.53\n' >>"$FB_CONF"
	# The L7 proxy verifies the world's servers against the world's own CA.
	printf 'gate_proxy_upstream_ca = %s/tls/world-ca.pem\n' "$WORLD" >>"$FB_CONF"
}

# The HTTP API of the running daemon (tests start it on a port of the kernel's choosing).
http_port() {
	"$FB" status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["http"]["port"])'
}
http_child_pid() {
	"$FB" status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["http"]["child_pid"])'
}
# api TOKEN METHOD PATH [CURL ARGS...]: the body on stdout; the status in $T/status.
api() {
	local token=$1 method=$2 path=$3
	shift 3
	curl -sS --path-as-is -o "$T/body" -w '%{http_code}' -X "$method" \
		${token:+-H "Authorization: Bearer $token"} "$@" \
		"http://127.0.0.1:$HTTP_PORT$path" >"$T/status"
	cat "$T/body"
}
# expect_status CODE WHAT: the last api call's status.
expect_status() {
	assert_eq "$(cat "$T/status")" "$1" "$2"
}

# verdict_rules SANDBOX: the rules of its verdicts, sorted, on one line.
verdict_rules() {
	"$FB" timeline "$1" --json | python3 -c '
import json, sys
print(" ".join(sorted(e["fields"]["rule"] for e in map(json.loads, sys.stdin) if e["kind"] == "verdict")))'
}

# sandbox_verdicts SANDBOX: "rule severity action" of each of its verdicts, sorted and unique.
sandbox_verdicts() {
	"$FB" timeline "$1" --json | python3 -c '
import json, sys
for e in map(json.loads, sys.stdin):
    if e["kind"] == "verdict":
        f = e["fields"]; print(f["rule"], f["severity"], f["action"])' | sort -u
}

# wait_verdict_line SANDBOX "RULE SEVERITY ACTION" [SECONDS]: waits (5 s by default) for that
# verdict in the sandbox's timeline; says which verdicts there were if it never comes.
wait_verdict_line() {
	local i
	for i in $(seq $((${3:-5} * 20))); do
		sandbox_verdicts "$1" | grep -qx "$2" && return 0
		sleep 0.05
	done
	echo "verdicts of $1: $(sandbox_verdicts "$1" | tr '\n' ';')" >&2
	return 1
}

# attack_killed NAME RULE SCRIPT: in a fresh sandbox of tests/policies/attack.json ($POLICY),
# SCRIPT (python) runs in step 1 of tool attack; the sandbox must be killed for RULE, and the
# events that triggered the verdict carry step 1 and tool attack.
attack_killed() {
	local name=$1 rule=$2
	printf '%s\n' "$3" >"$T/$name.py"
	create_sandbox "$name" "$POLICY"
	copy_in "$name" "$T/$name.py"
	"$FB" exec "$name" --tool attack --step 1 -- python3 "/workspace/$name.py" >"$T/$name.out" 2>&1
	wait_event "$name" action.kill || fail "$name: not killed ($(cat "$T/$name.out")): $("$FB" timeline "$name" --json | tail -5)"
	wait_cgroup "$name" populated 0 || fail "$name: processes left after the kill"
	case " $(verdict_rules "$name") " in *" $rule "*) ;; *) fail "$name: no $rule verdict: $(verdict_rules "$name")" ;; esac
	case " $(verdict_rules "$name") " in *" behavior.step-outlived "*) fail "$name: the kill's own victims were taken for processes left behind" ;; esac
	"$FB" timeline "$name" --json | python3 -c '
import json, sys
ev = [json.loads(l) for l in sys.stdin]
v = [e for e in ev if e["kind"] == "verdict" and e["fields"]["rule"] == sys.argv[1]][0]
trig = [e for e in ev if e["id"] in v["fields"]["event_ids"]]
assert trig and all(e["step"] == 1 and e["tool"] == "attack" for e in trig), trig' "$rule" ||
		fail "$name: the triggering event is not step 1's"
	ok "$name: $rule, killed; the triggering event is step 1's"
}
