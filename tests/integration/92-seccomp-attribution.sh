#!/bin/bash
# Seccomp refusals are attributed as the kernel saw them, and every refusal the filter makes for
# an escape is judged. (1) 30 processes each make one refused syscall (ptrace) and exit at once
# (tests/probe/seccomp-probe.c `once`): their /proc entries are gone before the audit records
# are read, yet each refusal is an event of its step and tool, attributed by the process tracer's
# pid -> cgroup record (seccomp.by_proc does not move). (2) From inside, each refused socket
# family and protocol (packet, vsock, alg, raw inet and inet6, netlink audit, sock_diag and
# uevents, a packet socketpair) and each namespace flag of clone and unshare, one per step: each
# gets the errno the filter gives, is a seccomp.denied of its step and an escape.seccomp verdict.
. "$(dirname "$0")/../lib.sh"
fb_setup
start_daemon
python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
p["detectors"] = {"actions": {"critical": "alert", "high": "alert"}}
json.dump(p, open(sys.argv[2], "w"))' "$FB_ROOT/tests/policies/attack.json" "$T/alert.json"
create_sandbox sa "$T/alert.json"
copy_in sa "$FB_ROOT/build/probe/seccomp-probe" 0755
cat >"$T/quick.py" <<'PY'
import subprocess
ps = [subprocess.Popen(["/lib64/ld-linux-x86-64.so.2", "/workspace/seccomp-probe", "once", "ptrace"],
                       stdout=subprocess.DEVNULL) for _ in range(30)]
assert all(p.wait() == 0 for p in ps)
PY
copy_in sa "$T/quick.py"
by_proc() { "$FB" status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["seccomp"]["by_proc"])'; }

before=$(by_proc)
check "30 processes make a refused ptrace and exit at once" "$FB" exec sa --tool attack --step 3 -- python3 /workspace/quick.py
for _ in $(seq 100); do
	[ "$("$FB" timeline sa --step 3 --json | grep -c '"name":"ptrace"')" -ge 30 ] && break
	sleep 0.02
done
"$FB" timeline sa --step 3 --json >"$T/s3.jsonl" || fail "timeline"
python3 - "$T/s3.jsonl" <<'PY' || fail "the quick processes' refusals"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
d = [e for e in ev if e["kind"] == "seccomp.denied" and e["fields"]["name"] == "ptrace"]
assert len(d) == 30, "%d of 30 refusals attributed to step 3" % len(d)
assert all(e["sandbox"] == "sa" and e["tool"] == "attack" for e in d), d
assert len({e["pid"] for e in d}) == 30, "not 30 processes"
ex = {e["pid"] for e in ev if e["kind"] == "proc.exit"}
assert {e["pid"] for e in d} <= ex, "a refusing process did not exit"
PY
assert_eq "$(by_proc)" "$before" "none of them was attributed by /proc: the kernel's record did it"
ok "30 refusals of processes gone at once: each on step 3 of tool attack"

# name errno: each attempt, one per step from 10 on, must get errno from the filter.
i=10
while read -r name want; do
	out=$("$FB" exec sa --tool attack --step "$i" -- /lib64/ld-linux-x86-64.so.2 /workspace/seccomp-probe once "$name") ||
		fail "$name: the probe did not run"
	echo "$out" | python3 -c 'import json, sys; r = json.load(sys.stdin); assert r["ret"] == -1 and r["errno"] == int(sys.argv[1]), r' "$want" ||
		fail "$name: not refused with errno $want: $out"
	echo "$i $name" >>"$T/steps"
	i=$((i + 1))
done <<'LIST'
socket-packet 97
socket-vsock 97
socket-alg 97
socket-raw 1
socket-raw6 1
socket-netlink-audit 93
socket-netlink-diag 93
socket-netlink-uevent 93
socketpair-packet 97
unshare-net 1
unshare-mnt 1
clone-newnet 1
clone-newpid 1
clone-newns 1
clone-newuser 1
LIST
ok "every refused socket family and protocol, and each namespace flag, refused inside"
# Each refusal's record and verdict are stored a moment after the call returns: wait (10 s at
# most) until every step has its seccomp.denied and escape.seccomp verdict, then judge them.
all_judged() {
	"$FB" timeline sa --json >"$T/all.jsonl" || return 1
	python3 - "$T/all.jsonl" "$T/steps" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
have = {(e["step"], e["kind"] if e["kind"] != "verdict" else e["fields"]["rule"]) for e in ev}
sys.exit(any((int(l.split()[0]), k) not in have
             for l in open(sys.argv[2]) for k in ("seccomp.denied", "escape.seccomp")))
PY
}
wait_for 10 all_judged || echo "   not every refusal was stored within 10 s; judging what there is"
python3 - "$T/all.jsonl" "$T/steps" <<'PY' || fail "escape-class refusals"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
for line in open(sys.argv[2]):
    step, name = line.split()
    step = int(step)
    call = name.split("-")[0]
    d = [e for e in ev if e["kind"] == "seccomp.denied" and e["step"] == step and e["fields"]["name"] == call]
    assert d and all(e["tool"] == "attack" for e in d), "%s: no seccomp.denied %s on step %d" % (name, call, step)
    v = [e["fields"] for e in ev if e["kind"] == "verdict" and e["step"] == step and e["fields"]["rule"] == "escape.seccomp"]
    assert v and v[0]["severity"] == "critical" and call in v[0]["reason"], "%s: no escape.seccomp verdict: %s" % (name, v)
    assert set(v[0]["event_ids"]) & {e["id"] for e in d}, (name, v)
    print("   %-22s %s" % (name, v[0]["reason"]))
# clone3 is refused whatever its flags (libc falls back to clone): never a verdict.
c3 = [e for e in ev if e["kind"] == "verdict" and "clone3" in e["fields"]["reason"]]
assert not c3, c3
PY
ok "each is a seccomp.denied of its step and an escape.seccomp verdict (critical)"
check "destroy" "$FB" destroy sa
stop_daemon
