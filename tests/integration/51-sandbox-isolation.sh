#!/bin/bash
# From inside a real sandbox: the host's processes, secrets, the monitor's files and sockets are
# out of sight and out of reach; the process has no privilege; every refused syscall is refused
# through every entry (native, i386, x32), and the same probe outside a sandbox shows that the
# refusals come from the filter.
. "$(dirname "$0")/../lib.sh"
fb_setup
POLICY=$FB_ROOT/tests/policies/attack.json

detectors_record_only
start_daemon --config "$FB_CONF"
create_sandbox iso1 "$POLICY"
copy_in iso1 "$FB_ROOT/tests/attacks/inside.py"
"$FB" exec iso1 --tool attack -- python3 /workspace/inside.py >"$T/inside.json" || fail "inside.py"

check_json() { # check_json PYTHON-EXPRESSION-ON-d DESCRIPTION
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($1) else 1)" \
		"$T/inside.json" || fail "$2: $(cat "$T/inside.json")"
	ok "$2"
}
check_json 'd["uid"] >= 420000 and d["gid"] == d["uid"] and d["groups"] in ([], [d["gid"]])' \
	"runs as the sandbox's own unprivileged uid (not nobody, not shared) with no extra groups"
check_json 'all(d[k] == "0000000000000000" for k in ("cap_eff","cap_prm","cap_bnd","cap_amb"))' \
	"every capability set is empty, bounding and ambient too"
check_json 'd["no_new_privs"] == "1" and d["seccomp"] == "2"' "no_new_privs and a seccomp filter"
check_json 'len(d["pids"]) == 1' "/proc shows only the step's own process (not the init, not other steps)"
check_json 'd["hostname"] == "iso1"' "its own hostname"
check_json 'd["interfaces"] == ["lo"]' "no egress allowlist: its network namespace has loopback only"
check_json 'not any(d["visible"][p] for p in ["/root","/run","/run/firebreak","/var/lib",
	"/var/lib/firebreak","/var/run/docker.sock","/srv","/sys/fs/cgroup/unified","/sys/class",
	"/work","/etc/ssh/ssh_host_rsa_key"])' \
	"no /root, /run, /var/lib (the store), container sockets, the host's /sys or cgroups, host keys"
check_json 'd["listed"] == {"/home": ["agent"], "/var": ["run"], "/var/run": ["secrets"],
	"/sys": ["fs", "kernel"], "/sys/fs": ["cgroup"]}' \
	"of /home, /var and /sys only the lures: its own home, a token's directory, the tripwires"
check_json 'not d["shadow_readable"]' "/etc/shadow shows nothing"
check_json 'd["visible"]["/usr/bin/python3"] and d["visible"]["/tmp"]' "programs and /tmp are there"
check_json 'not any(d["writable"][p] for p in ["/etc/firebreak-probe","/firebreak-probe",
	"/usr/firebreak-probe","/proc/sys/kernel/hostname"])' "the root, /etc, /usr and /proc/sys are read-only"
check_json 'd["writable"]["/tmp/firebreak-probe"] and d["writable"]["/workspace/firebreak-probe"]' \
	"/tmp and /workspace take writes"
check_json 'd["cgroup_move"] == "refused"' "a process cannot move itself to another cgroup"
check_json 'all(l.startswith("0::/step-") for l in d["proc_cgroup"] if l.startswith("0::"))' \
	"its cgroup namespace is rooted at the sandbox (it sees /step-N, no host path)"
check_json 'd["cwd"] == "/workspace"' "it starts in /workspace"
check_json 'd["session_leader"] and d["dev_tty"] != "opened"' \
	"a session of its own: the harness's terminal is not its controlling tty"
check_json 'max(d["fds"]) <= 3' "only fds 0-2 cross into the tool"

# The monitor's socket path is not there; even the host path is not reachable from inside.
printf 'import socket, sys\ns = socket.socket(socket.AF_UNIX)\ntry:\n    s.connect(sys.argv[1]); print("connected")\nexcept OSError as e:\n    print("refused", e.errno)\n' >"$T/reach.py"
copy_in iso1 "$T/reach.py"
out=$("$FB" exec iso1 --tool attack -- python3 /workspace/reach.py "$FIREBREAK_RUNTIME_DIR/control.sock")
case "$out" in refused*) ok "the monitor's control socket cannot be reached ($out)" ;;
*) fail "the monitor's socket was reached from inside: $out" ;; esac

# Host processes cannot be signalled: the daemon's pid does not even exist in there.
printf 'import os, sys\ntry:\n    os.kill(int(sys.argv[1]), 0); print("reached")\nexcept OSError as e:\n    print("refused", e.errno)\n' >"$T/signal.py"
copy_in iso1 "$T/signal.py"
out=$("$FB" exec iso1 --tool attack -- python3 /workspace/signal.py "$DAEMON_PID")
case "$out" in refused*) ok "host processes cannot be signalled ($out)" ;;
*) fail "a host process was signalled: $out" ;; esac

# seccomp: every refused syscall, native, i386 and x32.
copy_in iso1 "$FB_ROOT/build/probe/seccomp-probe" 0755
"$FB" exec iso1 --tool attack -- /lib64/ld-linux-x86-64.so.2 /workspace/seccomp-probe \
	>"$T/probe-in.jsonl" || fail "the seccomp probe did not run"
setpriv --reuid=65534 --regid=65534 --clear-groups "$FB_ROOT/build/probe/seccomp-probe" \
	>"$T/probe-out.jsonl" 2>/dev/null || fail "the control probe did not run"
python3 - "$T/probe-in.jsonl" "$T/probe-out.jsonl" <<'PY' || fail "seccomp probe results"
import json, sys
inside = [json.loads(l) for l in open(sys.argv[1])]
outside = {(r["syscall"], r["entry"]): r for r in map(json.loads, open(sys.argv[2]))}
bad = []
# A kernel without IA-32 emulation has no i386 entry to refuse (int 0x80 faults for everyone):
# then the probe says so inside and outside alike, and the x32 and native entries are checked.
absent = {r["syscall"] for r in inside if r.get("entry_absent")}
assert absent == {s for (s, e), r in outside.items() if r.get("entry_absent")}, absent
for r in inside:
    if r.get("entry_absent"):
        continue
    if r["syscall"] == "getpid":
        want = 0 if r["entry"] == "native" else 1          # the i386/x32 entries are refused
        if (r["ret"] < 0) != bool(want) or (want and r["errno"] != 1):
            bad.append(r)
        continue
    want = 1
    if r["entry"] == "native" and r["syscall"] == "clone3":
        want = 38                                   # ENOSYS: libc falls back to clone
    if r["entry"] == "native" and r["syscall"].startswith("socket-"):
        want = 97                                   # EAFNOSUPPORT
    if r["ret"] >= 0 or r["errno"] != want:
        bad.append(r)
if bad:
    print("not refused as expected:", *bad, sep="\n  ")
    sys.exit(1)
# The control: outside the filter these succeed for the same unprivileged uid, so the refusals
# above are the filter's doing, not a missing capability.
must_work = ["ptrace", "keyctl", "add_key", "io_uring_setup", "personality", "name_to_handle_at",
             "process_vm_readv", "pidfd_getfd", "fanotify_init", "socket-vsock",
             "socket-vsock-high-bits"]
failed = [s for s in must_work if outside[(s, "native")]["ret"] < 0]
if failed or (outside[("getpid", "i386")]["ret"] <= 0 and not absent):
    print("control run: these failed without the filter too:", failed)
    sys.exit(1)
print("%d attempts refused inside; %d of them succeed outside%s" % (len(inside) - len(absent),
      len(must_work) + (not absent), "; this kernel has no i386 entry" if absent else ""))
PY
ok "every escape-class syscall is refused through each entry the kernel has (native, x32, i386 where it exists)"
check "destroy" "$FB" destroy iso1
assert_no_leftovers "after the isolation tests"
stop_daemon
