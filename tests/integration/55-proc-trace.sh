#!/bin/bash
# The eBPF process tracer on a real sandbox: a tool call's exec, fork, child exec and both exits
# arrive as events of its sandbox, step and tool, in order, with exit codes; host processes
# outside any sandbox produce none; a monitor restarted (SIGKILL) re-adopts the running sandbox
# and keeps attributing its processes.
. "$(dirname "$0")/../lib.sh"
fb_setup
start_daemon
create_sandbox pr1 "$FB_ROOT/tests/policies/attack.json"
printf 'import subprocess, sys\nsubprocess.run(["/usr/bin/true"])\nsys.exit(3)\n' >"$T/sp.py"
copy_in pr1 "$T/sp.py"

check_step() { # check_step STEP: the step's process events are exactly the expected sequence
	"$FB" timeline pr1 --step "$1" --json >"$T/step-$1.jsonl" || fail "timeline"
	python3 - "$T/step-$1.jsonl" <<'PY' || fail "process events of step $1"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
proc = [e for e in ev if e["source"] == "ebpf"]
got = [(e["kind"], e["comm"]) for e in proc]
want = [("proc.exec", "python3.11"), ("proc.fork", "python3.11"), ("proc.exec", "true"),
        ("proc.exit", "true"), ("proc.exit", "python3.11")]
assert got == want, "got %s" % got
assert all(e["tool"] == "attack" and e["sandbox"] == "pr1" for e in proc), proc
execs = [e for e in proc if e["kind"] == "proc.exec"]
assert execs[0]["fields"]["argv"] == ["python3", "/workspace/sp.py"], execs[0]["fields"]
assert execs[1]["fields"]["path"] == "/usr/bin/true"
exits = {e["comm"]: e["fields"]["exit_code"] for e in proc if e["kind"] == "proc.exit"}
assert exits == {"true": 0, "python3.11": 3}, exits
assert proc[1]["ppid"] == proc[0]["pid"] and proc[2]["pid"] == proc[1]["pid"]
PY
}

"$FB" exec pr1 --tool attack --step 800 -- python3 /workspace/sp.py
assert_eq "$?" "3" "the tool call exits 3"
for _ in $(seq 20); do /bin/true; done # bystanders, outside any sandbox
monitor_marker pr1 # the step's records, and the bystanders' (none may be stored), are read
check_step 800
ok "exec, fork, the child's exec and both exits, on step 800 of tool attack, in order"
stats=$("$FB" status --json)
echo "$stats" | python3 -c "import json,sys; p=json.load(sys.stdin)['proc_trace']; sys.exit(0 if p['unattributed'] == 0 and p['lost_exec'] == 0 else 1)" \
	|| fail "records no sandbox owns, or lost ones: $stats"
total=$("$FB" timeline pr1 --json | grep -c '"source":"ebpf"')
stored=$(echo "$stats" | python3 -c "import json,sys; print(json.load(sys.stdin)['proc_trace']['stored'])")
assert_eq "$stored" "$total" "every stored process event is the sandbox's (host processes produced none)"

kill -KILL "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
start_daemon
"$FB" exec pr1 --tool attack --step 801 -- python3 /workspace/sp.py
monitor_marker pr1
check_step 801
ok "a restarted monitor re-adopts the running sandbox and keeps attributing its processes"
check "destroy" "$FB" destroy pr1
stop_daemon
