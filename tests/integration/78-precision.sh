#!/bin/bash
# Precision: honest coding-agent work, through examples/policy.json's tools and a plain shell
# tool (the example plus "shell": bash -c, no egress), in the test world, raises no verdict at
# all. Each workload is one tool call, as an agent would make it: pip's import (its IPv6 probe),
# a venv with its pip, a test's own server on loopback, pytest runs and collection, git, a
# parallel C build, archives, searches, a docs download, CPU and memory use, pipelines and a
# loopback port check through /dev/tcp. Any detector rule added later must keep this at zero.
. "$(dirname "$0")/../lib.sh"
fb_setup
world_up
start_daemon --config "$FB_CONF"

# The example, and a shell tool beside its own tools (as a user adds one).
python3 - "$FB_ROOT/examples/policy.json" "$T/precision.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["name"] = "precision"
p["tools"]["shell"] = {
    "description": "a plain shell, no egress (the precision test's)",
    "call_timeout": "1m",  # a frozen sandbox (a false verdict) fails the call within a minute
    "wrappers": ["bash"],
    "commands": [{"program": "/usr/bin/bash", "flags": {"allow": ["-c="]}, "operands": "any"}],
}
p["tests"] = []
json.dump(p, open(sys.argv[2], "w"), indent=1)
PY
create_sandbox pr1 "$T/precision.json"
verdicts() { "$FB" status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["detectors"]["verdicts"])'; }

n=0
# run NAME TOOL ARGV...: one honest tool call; it must succeed.
run() {
	local name=$1
	shift
	n=$((n + 1))
	"$FB" exec pr1 --step "$n" --tool "$@" >"$T/out.$n" 2>&1 ||
		fail "$name (step $n) failed: $(tail -5 "$T/out.$n")"
}
sh_() { run "$1" shell -- bash -c "$2"; }

printf 'def add(a, b):\n    return a + b\n' | "$FB" exec pr1 --tool edit_file -- tee calc.py >/dev/null
run "a new test folder" edit_file -- mkdir -p tests/unit
printf 'import calc\n\ndef test_add():\n    assert calc.add(2, 2) == 4\n' |
	"$FB" exec pr1 --tool edit_file -- tee tests/unit/test_calc.py >/dev/null
run "pytest" run_tests -- python3 -m pytest -q
run "pytest -x -k" run_tests -- python3 -m pytest -q -x -k add
run "pytest --co" run_tests -- python3 -m pytest --co -q
run "pytest --collect-only" run_tests -- python3 -m pytest --collect-only -q
run "pytest --lf" run_tests -- python3 -m pytest -q --lf
echo "demo==1.0" | "$FB" exec pr1 --tool edit_file -- tee requirements.txt >/dev/null
run "install the requirements" install_deps -- python3 -m pip install --target /workspace/.deps -q \
	-r requirements.txt
run "a docs download" web_fetch -- curl -sSf -o index.html http://docs.test/simple/
run "a docs HEAD" web_fetch -- curl -sSfI http://docs.test/simple/demo/
run "ls" shell_readonly -- ls -la
run "cat" shell_readonly -- cat calc.py
run "grep" shell_readonly -- grep -n def calc.py
run "find" shell_readonly -- find . -name '*.py'
sh_ "pip's import (it probes IPv6 on ::1)" "python3 -m pip --version"
sh_ "a venv with its pip" "python3 -m venv /tmp/venv && /tmp/venv/bin/python -m pip --version"
sh_ "a test's own server on loopback" "python3 - <<'PY'
import http.server, threading, urllib.request
srv = http.server.HTTPServer(('127.0.0.1', 0), http.server.SimpleHTTPRequestHandler)
threading.Thread(target=srv.serve_forever, daemon=True).start()
urllib.request.urlopen('http://127.0.0.1:%d/' % srv.server_address[1]).read()
srv.shutdown()
PY"
sh_ "git init, add, commit" "git init -q && git add calc.py &&
	git -c user.name=a -c user.email=a@b commit -qm one && git log --oneline | wc -l"
run "git status in the git tool" git -- git status --short
run "git log in the git tool" git -- git log --oneline
sh_ "a parallel C build" "mkdir -p build && cd build && for i in 1 2 3 4; do
	printf 'int f%d(void) { return %d; }\n' \$i \$i >f\$i.c; done &&
	printf 'int main(void) { return 0; }\n' >main.c &&
	printf 'OBJ = main.o f1.o f2.o f3.o f4.o\nprog: \$(OBJ)\n\tgcc -o prog \$(OBJ)\n%%.o: %%.c\n\tgcc -O2 -c \$<\n' >Makefile &&
	make -s -j4 && ./prog"
sh_ "tar and gzip" "mkdir -p arch && seq 1 2000 >arch/n.txt && tar czf arch.tgz arch && mkdir -p x &&
	tar xzf arch.tgz -C x && cmp arch/n.txt x/arch/n.txt"
sh_ "zip and unzip" "zip -qr arch.zip arch && unzip -qo arch.zip -d y && cmp arch/n.txt y/arch/n.txt"
sh_ "xz" "xz -k -f arch/n.txt && xz -t arch/n.txt.xz"
sh_ "a search with a pipe" "grep -rn def . | sort | uniq -c | wc -l"
sh_ "a small file tree" "mkdir -p tree && for i in \$(seq 1 200); do echo \$i >tree/f\$i; done && ls tree | wc -l"
sh_ "CPU for two seconds" "python3 -c 'import time; t = time.time()
while time.time() - t < 2: pass'"
sh_ "200 MB of memory" "python3 -c 'b = bytearray(200 << 20); print(len(b))'"
sh_ "subprocesses" "for i in 1 2 3 4 5 6 7 8; do /bin/true & done; wait"
# The honest neighbours of the reverse-shell and pipe-to-shell rules.
sh_ "python's socket module in a one-liner" "python3 -c 'import socket; print(socket.gethostname())'"
sh_ "a base64 round trip" "echo hello | base64 | base64 -d"
sh_ "data piped into python" "git log --oneline | head -1 | python3 -c 'import sys; print(len(sys.stdin.read()))'"
sh_ "code piped into python from echo" "echo 'print(2)' | python3"
sh_ "a loopback port check through /dev/tcp" "python3 -m http.server 8123 --bind 127.0.0.1 >/dev/null 2>&1 &
	p=\$!; for i in \$(seq 50); do (echo >/dev/tcp/127.0.0.1/8123) 2>/dev/null && break; sleep 0.1; done;
	kill \$p; wait \$p; true"
monitor_marker pr1 shell /usr/bin/bash -c true
assert_eq "$(verdicts)" "0" "$n honest tool calls through the example policy and a shell tool: no verdict"
"$FB" timeline pr1 --json >"$T/tl.jsonl" || fail "timeline"
python3 - "$T/tl.jsonl" <<'PY' || fail "the honest calls left a verdict or an action in the timeline"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
bad = [e for e in ev if e["kind"] == "verdict" or e["kind"].startswith("action.")]
assert not bad, bad[:3]
print("   %d events, %d steps, no verdict" % (len(ev), len({e["step"] for e in ev if e["step"] is not None})))
# The installs and downloads resolve their hosts: the DNS rules saw honest lookups and kept quiet.
dns = [e for e in ev if e["kind"] == "dns.query"]
assert dns, "no DNS query was seen"
print("   %d DNS queries (%s), none judged a tunnel" % (len(dns), ", ".join(sorted({e["fields"]["name"] for e in dns}))))
# What the quiet rests on (docs/detectors.md, loader injection): the variables honest execs carry.
env = {}
for e in ev:
    for name in (e["fields"] or {}).get("loader_env", "").split(",") if e["kind"] == "proc.exec" else []:
        if name:
            env.setdefault(name, {}).setdefault((e["tool"], (e["fields"] or {}).get("parent_exe")), 0)
            env[name][(e["tool"], e["fields"].get("parent_exe"))] += 1
for name in sorted(env):
    print("   %s on execs of %s" % (name, ", ".join("%s (set by %s) x%d" % (t, p, n) for (t, p), n in sorted(env[name].items()))))
PY
ok "precision: every honest workload ran quiet"
check "destroy" "$FB" destroy pr1
