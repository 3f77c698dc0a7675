#!/bin/bash
# bench/bench_hardrules.sh [N]: the in-kernel hard rules (issue 6), in the test world.
#
#   exec   a confined step (its tool declares children) runs N out-of-scope execs of
#          /usr/bin/touch, each asked to create a marker file: how long from the kernel's exec
#          record to the task's exit (both kernel timestamps), and how many markers exist
#          afterwards (goal 0: not one instruction of the new image ran, so not its first syscall)
#   connect  a tool without egress makes N connects to the C2 (203.0.113.66:443), which the
#          egress hook refuses: packets and bytes that left the sandbox on its link at the gate
#          (its counters before and after) and contacts the C2 logged (goal 0 and 0)
#   cost   what confining a step costs a tool call: `firebreak exec` of /usr/bin/true in a tool
#          with children against the same tool without, alternating, N each (the exec-scope
#          round trip to firebreakd), medians side by side
#
# detector_actions is off so that the verdicts the attempts cause (recorded) do not freeze the
# sandbox between attempts: the kernel rules alone act. Needs root and a built tree; everything is
# in a mktemp directory under /var/tmp, sandboxes bh-*, and the test world, all removed on exit.
set -u

BENCH=bench_hardrules
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
N=${1:-200}
need_root
need_build
case $N in '' | *[!0-9]* | 0) die "N must be a positive number" ;; esac
bench_tmp /var/tmp/firebreak-hardrules.XXXXXX
copy_binaries
world_up 600 || die "world up"
printf '%sdetector_actions = off\nlisten = off\n' "$WORLD_CONF" >"$T/fb.conf"
start_firebreakd || die "firebreakd does not answer"

cat >"$T/policy.json" <<'EOF'
{
  "version": 1,
  "name": "bench-hardrules",
  "sandbox": {"memory": "256M", "pids": 64, "cpu": 1.0, "workspace": "16M", "tmp": "16M"},
  "egress": {"allow": [{"name": "registry", "host": "registry.test", "ports": [80]}]},
  "tools": {
    "setup": {"commands": [{"program": "/usr/bin/tee", "operands": "any"}]},
    "confined": {"children": ["/usr/bin/python3*"], "commands": [{"program": "/usr/bin/python3", "operands": "any"}]},
    "free": {"commands": [{"program": "/usr/bin/python3", "operands": "any"}]},
    "true_confined": {"children": [], "commands": [{"program": "/usr/bin/true", "operands": "none"}]},
    "true_free": {"commands": [{"program": "/usr/bin/true", "operands": "none"}]}
  }
}
EOF
MADE="bh-$$"
fb create "bh-$$" --policy "$T/policy.json" >/dev/null || die "create"
put() { fb exec "bh-$$" --tool setup -- tee "/workspace/$1" <"$2" >/dev/null || die "copy $1"; }

# exec: N out-of-scope touches, each of its own marker.
printf 'import subprocess, sys\nfor i in range(int(sys.argv[1])):\n    subprocess.run(["/usr/bin/touch", "/workspace/m%%d" %% i])\n' >"$T/touches.py"
put touches.py "$T/touches.py"
fb exec "bh-$$" --tool confined --step 1 -- python3 /workspace/touches.py "$N" || die "the touches"
printf 'import glob\nprint(len(glob.glob("/workspace/m*")))\n' >"$T/count.py"
put count.py "$T/count.py"
markers=$(fb exec "bh-$$" --tool free --step 2 -- python3 /workspace/count.py) || die "count"

# connect: N refused connects to the C2 from a tool without egress; the link's counters at the gate.
link=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["link"])' "$T/run/sandboxes/bh-$$/state.json")
counters() { ip -n firebreak-gate -s -j link show "fb-s$link" | python3 -c 'import json, sys; s = json.load(sys.stdin)[0]["stats64"]["rx"]; print(s["packets"], s["bytes"])'; }
printf 'import socket, sys\nn = 0\nfor _ in range(int(sys.argv[1])):\n    s = socket.socket()\n    try:\n        s.connect(("203.0.113.66", 443))\n    except PermissionError:\n        n += 1\n    s.close()\nprint(n)\n' >"$T/connects.py"
put connects.py "$T/connects.py"
before=$(counters)
refused=$(fb exec "bh-$$" --tool free --step 3 -- python3 /workspace/connects.py "$N") || die "the connects"
after=$(counters)
c2=$(bash "$ROOT/tests/world/world.sh" contacts "$T/world" c2 2>/dev/null | grep -c '"accept"')

# cost: true in a confined tool against true in a free one, alternating.
step=10
for i in $(seq "$N"); do
	for tool in true_confined true_free; do
		step=$((step + 1))
		t0=$(date +%s%N)
		fb exec "bh-$$" --tool "$tool" --step "$step" -- true >/dev/null || die "exec $tool"
		echo "$tool $(($(date +%s%N) - t0))"
	done
done >"$T/cost.txt"
sleep 0.5

fb timeline "bh-$$" --step 1 --json | python3 -c '
import json, sys
ev = [json.loads(l) for l in sys.stdin]
killed = {e["pid"]: e["ts"] for e in ev if e["kind"] == "proc.exec" and e["fields"].get("killed_in_kernel")}
died = {e["pid"]: e["ts"] for e in ev if e["kind"] == "proc.exit" and e["pid"] in killed and e["fields"]["signal"] == 9}
lat = sorted((died[p] - killed[p]) / 1e3 for p in died)
def pct(p): return lat[min(len(lat) - 1, int(round(p / 100 * (len(lat) - 1))))]
print("exec     %d out-of-scope execs killed in the kernel (%d exits with SIGKILL seen)" % (len(killed), len(died)))
if lat:
    print("         exec record -> exit: median %.1f us, p99 %.1f us, max %.1f us" % (pct(50), pct(99), lat[-1]))
'
echo "         markers created by the killed touches: $markers (goal 0)"
python3 - "$before" "$after" "$refused" "$c2" "$N" <<'PY'
import sys
b = [int(x) for x in sys.argv[1].split()]
a = [int(x) for x in sys.argv[2].split()]
print("connect  %s of %s connects to the C2 refused with EPERM; the sandbox's link at the gate received %d packets, %d bytes meanwhile; the C2 logged %s contacts (goal 0, 0, 0)"
      % (sys.argv[3], sys.argv[5], a[0] - b[0], a[1] - b[1], sys.argv[4]))
PY
python3 - "$T/cost.txt" <<'PY'
import sys, statistics
d = {}
for line in open(sys.argv[1]):
    tool, ns = line.split()
    d.setdefault(tool, []).append(int(ns) / 1e6)
c, f = statistics.median(d["true_confined"]), statistics.median(d["true_free"])
print("cost     firebreak exec of /usr/bin/true, median of %d each: confined %.2f ms, free %.2f ms (%.2fx, +%.2f ms)"
      % (len(d["true_free"]), c, f, c / f, c - f))
PY
