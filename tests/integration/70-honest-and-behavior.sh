#!/bin/bash
# The detectors on honest work and on the lesson's behaviour, in the test world with the example
# policy: a real pytest run (with a child python), git status in the git tool, ls in
# shell_readonly and a download from the allowed registry by install_deps get no verdict; a test
# that runs a program inside run_tests outside its declared children (touch, then git) has the
# exec killed in the kernel before the program runs (its marker file never appears), and the
# sandbox frozen by the verdict. Quarantine: frozen, the link at the gate down, and once thawed
# the registry it reached before is out of reach.
. "$(dirname "$0")/../lib.sh"
fb_setup
world_up
start_daemon --config "$FB_CONF"
POLICY=$FB_ROOT/examples/policy.json
verdicts() { "$FB" status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["detectors"]["verdicts"])'; }

create_sandbox hb1 "$POLICY"
printf 'import subprocess, sys\n\ndef test_add():\n    assert 1 + 1 == 2\n\ndef test_child():\n    assert subprocess.run([sys.executable, "-c", "pass"]).returncode == 0\n' >"$T/test_ok.py"
"$FB" exec hb1 --tool edit_file --step 1 -- tee test_ok.py <"$T/test_ok.py" >/dev/null || fail "edit_file"
check "a real pytest run (two tests, one with a child python)" \
	"$FB" exec hb1 --tool run_tests --step 2 -- python3 -m pytest -q test_ok.py
"$FB" exec hb1 --tool git --step 3 -- git status --short >/dev/null 2>&1
ok "git status in the git tool ran (exit $?: no repository here)"
check "ls in shell_readonly" "$FB" exec hb1 --tool shell_readonly --step 4 -- ls -la
# The example's install_deps on Debian 12: into /workspace/.deps (the system's python is
# externally managed), from the world's registry; run_tests imports it; a new test directory.
echo "demo==1.0" | "$FB" exec hb1 --tool edit_file --step 5 -- tee requirements.txt >/dev/null ||
	fail "edit_file requirements.txt"
"$FB" exec hb1 --tool install_deps --step 6 -- \
	python3 -m pip install --target /workspace/.deps -q -r requirements.txt >"$T/pip.out" 2>&1 ||
	fail "install_deps installs demo into the workspace: $(tail -5 "$T/pip.out")"
ok "install_deps installs demo into the workspace"
check "edit_file makes a new test directory" "$FB" exec hb1 --tool edit_file --step 7 -- mkdir -p tests/deps
printf 'import demo\n\ndef test_demo():\n    assert demo.VERSION == "1.0"\n' |
	"$FB" exec hb1 --tool edit_file --step 8 -- tee tests/deps/test_demo.py >/dev/null ||
	fail "edit_file tests/deps/test_demo.py"
check "run_tests imports what install_deps installed" \
	"$FB" exec hb1 --tool run_tests --step 9 -- python3 -m pytest -q tests/deps/test_demo.py
check "pytest --co -q collects" "$FB" exec hb1 --tool run_tests --step 10 -- python3 -m pytest --co -q
monitor_marker hb1 shell_readonly /usr/bin/ls /
assert_eq "$(verdicts)" "0" "honest work in the example policy's tools (an install and a collection included) gets no verdict"

create_sandbox hb2 "$FB_ROOT/tests/policies/egress-tools.json"
cat >"$T/fetch.py" <<'PY'
# A package download as pip does it: the PEP 503 page of the project, then its sdist, checked.
import hashlib, re, urllib.request
page = urllib.request.urlopen("http://registry.test/simple/demo/", timeout=5).read().decode()
href, digest = re.search(r'href="([^"#]+)#sha256=([0-9a-f]+)"', page).groups()
sdist = urllib.request.urlopen("http://registry.test" + href, timeout=5).read()
assert hashlib.sha256(sdist).hexdigest() == digest
open("/workspace/" + href.rsplit("/", 1)[1], "wb").write(sdist)
PY
copy_in hb2 "$T/fetch.py"
check "install_deps downloads from the allowed registry" \
	"$FB" exec hb2 --tool install_deps --step 1 -- python3 /workspace/fetch.py
monitor_marker hb2 setup /usr/bin/tee /dev/null
assert_eq "$(verdicts)" "0" "a download from the allowed registry gets no verdict"

printf 'import subprocess, time\n\ndef test_sneaky():\n    subprocess.run(["/usr/bin/touch", "/workspace/marker"])\n    subprocess.run(["/usr/bin/git", "status"])\n    time.sleep(30)\n' >"$T/test_sneaky.py"
"$FB" exec hb1 --tool edit_file --step 5 -- tee test_sneaky.py <"$T/test_sneaky.py" >/dev/null || fail "edit_file"
"$FB" exec hb1 --tool run_tests --step 6 -- python3 -m pytest -q test_sneaky.py >/dev/null 2>&1 &
RUN=$!
FB_PIDS="$FB_PIDS $RUN"
wait_cgroup hb1 frozen 1 3 || fail "git inside run_tests did not get hb1 frozen"
ok "a program run inside run_tests outside its children: the sandbox is frozen"
init=$(state_field hb1 init_pid)
[ -d "/proc/$init/root/workspace" ] || fail "cannot see hb1's workspace through its init $init"
[ -e "/proc/$init/root/workspace/marker" ] && fail "touch ran: the marker exists"
ok "the out-of-scope touch never ran (no marker in the workspace)"
wait_event hb1 verdict || fail "the verdict was not recorded"
"$FB" timeline hb1 --step 6 --json >"$T/tl.jsonl" || fail "timeline"
python3 - "$T/tl.jsonl" <<'PY' || fail "the kill in the kernel and the verdict"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
touch = [e for e in ev if e["kind"] == "proc.exec" and e["fields"]["path"] == "/usr/bin/touch"]
assert touch and touch[0]["fields"].get("killed_in_kernel") is True, touch
died = [e for e in ev if e["kind"] == "proc.exit" and e["pid"] == touch[0]["pid"]]
assert died and died[0]["fields"]["signal"] == 9, died
ok_execs = [e for e in ev if e["kind"] == "proc.exec" and "python3" in e["fields"]["path"]]
assert ok_execs and not any(e["fields"].get("killed_in_kernel") for e in ok_execs), ok_execs
v = [e["fields"] for e in ev if e["kind"] == "verdict"]
assert v and v[0]["rule"] == "behavior.exec-out-of-scope" and v[0]["action"] == "freeze", v
assert v[0]["event_ids"][0] == touch[0]["id"], (v, touch)
PY
ok "the exec of /usr/bin/touch was killed in the kernel (SIGKILL, killed_in_kernel); the verdict names it"
check "kill hb1" "$FB" kill hb1
wait "$RUN" 2>/dev/null
check "destroy hb1" "$FB" destroy hb1
# Quarantine: frozen, and its link at the gate down; thawed, it runs but reaches nothing.
link=$(state_field hb2 link)
check "quarantine hb2" "$FB" quarantine hb2 --reason "test: quarantine"
grep -qx "frozen 1" "$V2/firebreak/hb2/cgroup.events" || fail "quarantined, hb2 is not frozen"
ip -n firebreak-gate -o link show "fb-s$link" | grep -q "<[^>]*UP[,>]" && fail "quarantined, hb2's link fb-s$link at the gate is still up"
ok "quarantined: frozen, and its link fb-s$link at the gate is down"
check "thaw hb2" "$FB" thaw hb2
printf 'import urllib.request\ntry:\n    urllib.request.urlopen("http://registry.test/simple/", timeout=2)\nexcept OSError:\n    raise SystemExit(7)\n' >"$T/again.py"
copy_in hb2 "$T/again.py"
"$FB" exec hb2 --tool install_deps --step 3 -- python3 /workspace/again.py
assert_eq "$?" "7" "thawed after quarantine, the registry it reached before is unreachable"
"$FB" timeline hb2 --json | python3 -c '
import json, sys
q = [json.loads(l)["fields"] for l in sys.stdin if "\"action.quarantine\"" in l]
assert len(q) == 1 and q[0]["result"] == "ok" and q[0]["reason"] == "test: quarantine", q
' || fail "the quarantine is not recorded"
ok "the quarantine is recorded"
check "destroy hb2" "$FB" destroy hb2
stop_daemon
