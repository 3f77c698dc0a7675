#!/bin/bash
# bench/bench_replay.sh [EVENTS]: replay speed (issue 9: >= 1,000,000 events/s for a
# 1,000,000-event history).
#
# A sandbox's history of EVENTS events, of the kinds and shapes the collectors write (execs,
# sockets, connects, some refused, seccomp refusals, cgroup stats, tool calls), is written into a
# store made by firebreakd's own schema, with the detectors.start marker a live monitor leaves and
# its policy kept. Then `firebreak replay --summary --json` replays it, three times with the
# recorded policy and three with a tighter one; the figure is the replay engine's own time (the
# store's reads and the detectors), as the command reports it, and the wall time of the command.
# Needs a built tree (make); everything is in a mktemp directory under /var/tmp.
set -u

BENCH=bench_replay
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"
EVENTS=${1:-1000000}

need_build
case $EVENTS in '' | *[!0-9]*) die "EVENTS is a number" ;; esac
bench_tmp /var/tmp/firebreak-replaybench.XXXXXX
# The daemon reads this run's config (the HTTP API off); the CLI is given none.
FBD_CONF=$FB_CONF
FB_CONF=

# The schema, from firebreakd's own migrations (a daemon started and stopped on the store).
printf 'listen = off\n' >"$FBD_CONF"
start_firebreakd
kill -TERM "$DPID"
wait "$DPID" || die "firebreakd: $(tail -3 "$FB_LOG")"
DPID=""

python3 - "$T/fb.db" "$EVENTS" "$ROOT/tests/policies/replay.json" <<'PY' || die "the history"
import hashlib, json, random, sqlite3, sys
db, n, policy_path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
text = open(policy_path).read()
# The hash firebreak gives a policy: sha256 of its canonical form; ask the CLI's way instead of
# guessing: store the text under the hash policy_check prints (below, by the shell).
c = sqlite3.connect(db)
c.execute("PRAGMA synchronous = OFF")
c.execute("INSERT INTO sandboxes (id, name, state, created_ts, updated_ts) VALUES (1, 'bench', 'destroyed', 0, 0)")
rnd = random.Random(7)
t = 1_796_000_000_000_000_000
rows = []
def ev(i, step, tool, source, kind, fields, pid=0):
    rows.append((i, t + i * 1000, 1, step, tool, source, kind, pid, 0, None, "", json.dumps(fields, separators=(",", ":"))))
ev(1, None, "", "detector", "detectors.start", {"first_event_id": 2, "policy_hash": "POLICY_HASH"})
i = 2
step = 0
while i <= n:
    step += 1
    tool = "attack"
    ev(i, step, tool, "trace", "tool_call.start", {"call_id": "c%d" % step}); i += 1
    for _ in range(rnd.randint(20, 60)):
        if i > n - 1:
            break
        k = rnd.random()
        if k < 0.25:
            ev(i, step, tool, "ebpf", "proc.exec", {"path": "/usr/bin/python3", "argv": ["python3", "t.py"], "cgroup_id": 7}, 1000 + i % 50)
        elif k < 0.45:
            ev(i, step, tool, "ebpf", "proc.fork", {"cgroup_id": 7}, 1000 + i % 50)
        elif k < 0.6:
            ev(i, step, tool, "ebpf", "proc.exit", {"exit_code": 0, "signal": None, "cgroup_id": 7}, 1000 + i % 50)
        elif k < 0.7:
            ev(i, step, tool, "ebpf", "net.socket", {"family": "inet", "type": 1, "protocol": 6, "cgroup_id": 7})
        elif k < 0.85:
            refused = rnd.random() < 0.02
            ev(i, step, tool, "ebpf", "net.connect", {"family": "inet", "type": 1, "protocol": 6, "cgroup_id": 7,
               "dst": "198.51.100.%d" % rnd.randint(1, 9), "port": 443, "egress_hook": "refused" if refused else "passed"})
        elif k < 0.86:
            ev(i, step, tool, "audit", "seccomp.denied", {"syscall": 165, "name": "mount", "action": "errno"})
        else:
            ev(i, None, "", "cgroup", "cgroup.stats", {"cgroup": "firebreak/bench", "memory_current": rnd.randint(1, 100) << 20,
               "memory_max": 128 << 20, "pids_current": rnd.randint(1, 40), "pids_max": 64, "cpu_usage_us": i * 10})
        i += 1
    if i <= n:
        ev(i, step, tool, "trace", "tool_call.end", {"call_id": "c%d" % step, "exit_code": 0}); i += 1
    if len(rows) > 100000:
        c.executemany("INSERT INTO events (id, ts, sandbox_id, step, tool, source, kind, pid, ppid, uid, comm, fields) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", rows)
        rows = []
c.executemany("INSERT INTO events (id, ts, sandbox_id, step, tool, source, kind, pid, ppid, uid, comm, fields) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", rows)
c.commit()
PY
HASH=$(fb policy check "$ROOT/tests/policies/replay.json" 2>/dev/null | grep -o 'sha256:[0-9a-f]*' | head -1)
[ -n "$HASH" ] || die "the policy's hash"
sqlite3 "$T/fb.db" "UPDATE events SET fields = replace(fields, 'POLICY_HASH', '$HASH') WHERE kind = 'detectors.start';
	UPDATE sandboxes SET policy_hash = '$HASH';
	INSERT INTO policies (hash, name, text, first_ts) VALUES ('$HASH', 'replay-recorded', CAST(readfile('$ROOT/tests/policies/replay.json') AS TEXT), 0)" ||
	die "the policy"
total=$(sqlite3 "$T/fb.db" "SELECT count(*) FROM events")
echo "replay bench: a history of $total events ($(du -h "$T/fb.db" | cut -f1) store)"
for policy in recorded tighter; do
	for run in 1 2 3; do
		args=""
		[ $policy = tighter ] && args="--policy $ROOT/tests/policies/replay-tighter.json"
		t0=$(date +%s%N)
		out=$(fb replay bench --summary --json $args | tail -1)
		t1=$(date +%s%N)
		python3 -c '
import json, sys
d = json.loads(sys.argv[1]); wall = (int(sys.argv[3]) - int(sys.argv[2])) / 1e9
print("  %-8s run %s: %d events, %d fed, %d verdicts: engine %.3f s = %.2fM events/s; command %.3f s = %.2fM events/s"
      % (sys.argv[4], sys.argv[5], d["events"], d["fed"], d["replayed"], d["seconds"], d["events"] / d["seconds"] / 1e6, wall, d["events"] / wall / 1e6))' \
			"$out" "$t0" "$t1" "$policy" "$run"
	done
done
