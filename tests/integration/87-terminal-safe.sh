#!/bin/bash
# From inside a sandbox, an attacker names a process, files and a program with escape sequences
# (an OSC title, a screen clear, an 8-bit CSI) and a newline that forges a timeline line, then
# runs that program out of its tool's scope, so the names reach the verdict's reason too. Nothing
# the monitor's tools print for humans (timeline, the incident's story, incidents, ps, replay of
# the exported bundle, the daemon's log) carries a control byte of the sandbox's: each shows as
# \xNN, and no forged line appears. The --json output still parses and keeps the bytes exactly.
. "$(dirname "$0")/../lib.sh"
fb_setup
start_daemon
create_sandbox te1 "$FB_ROOT/tests/policies/confined.json"
copy_in te1 "$FB_ROOT/tests/attacks/termesc.py"
# The gate's refusal quotes the command: the agent's words reach the harness's terminal too.
if "$FB" exec te1 --tool run -- $'/usr/bin/\e]0;pwned\a' >"$T/refused.txt" 2>&1; then
	fail "the gate ran a program outside the tool's commands"
fi
# The gate quotes the argument (\x1b) and the message is escaped again on its way out (\\x1b).
grep -qF '\\x1b]0;pwned\\x07' "$T/refused.txt" || fail "the refusal does not show the program escaped: $(cat -v "$T/refused.txt")"
"$FB" exec te1 --tool run --step 5 -- python3 /workspace/termesc.py >"$T/exec.out" 2>&1
wait_cgroup te1 frozen 1 5 || fail "the out-of-scope exec did not get te1 frozen: $(cat "$T/exec.out")"
wait_event te1 verdict || fail "no verdict"

"$FB" timeline te1 >"$T/timeline.txt" 2>&1 || fail "timeline"
"$FB" timeline te1 --incident 1 >"$T/story.txt" 2>&1 || fail "timeline --incident"
"$FB" incidents >"$T/incidents.txt" 2>&1 || fail "incidents"
"$FB" ps >"$T/ps.txt" 2>&1 || fail "ps"
"$FB" export 1 -o "$T/te1.db" >"$T/export.txt" 2>&1 || fail "export"
"$FB" replay "$T/te1.db" >"$T/replay.txt" 2>&1 || fail "replay: $(cat "$T/replay.txt")"
"$FB" timeline te1 --json >"$T/timeline.json" || fail "timeline --json"

# clean FILE...: no control byte but newline, no C1 control, valid UTF-8 only.
python3 - "$T"/timeline.txt "$T"/story.txt "$T"/incidents.txt "$T"/ps.txt "$T"/export.txt \
	"$T"/replay.txt "$T"/refused.txt "$FB_LOG" <<'PY' || fail "a control byte of the sandbox's reached a terminal"
import sys
for path in sys.argv[1:]:
    data = open(path, "rb").read()
    bad = [b for b in data if (b < 0x20 and b != 0x0a) or b == 0x7f]
    assert not bad, f"{path}: raw control bytes {sorted(set(bad))}"
    text = data.decode("utf-8")  # strict: invalid UTF-8 raises
    c1 = [c for c in text if 0x80 <= ord(c) <= 0x9f]
    assert not c1, f"{path}: C1 controls {c1}"
    forged = [l for l in text.splitlines() if l.startswith("2026-01-01T00:00:00")]
    assert not forged, f"{path}: a forged line: {forged}"
    print(f"ok - {path.rsplit('/', 1)[-1]}: {len(data)} bytes, no control byte")
PY
ok "no raw control byte, C1 control, invalid UTF-8 or forged line in any output"

# The escaped forms are there: the names are shown, not hidden.
grep -qF '\x1b]0;pwned\x07' "$T/timeline.txt" || fail "the timeline does not show the OSC name escaped"
grep -qF '\x1b[31mevil' "$T/timeline.txt" || fail "the timeline does not show the comm escaped"
grep -qF '\x0a2026-01-01T00:00:00' "$T/timeline.txt" || fail "the forged newline is not shown escaped"
grep -qF '\xc2\x9b31m' "$T/timeline.txt" || grep -qF '\x9b31m' "$T/timeline.txt" ||
	fail "the 8-bit CSI is not shown escaped"
for f in story.txt replay.txt; do
	grep -qF '\x1b[2Jrun\x0a' "$T/$f" || fail "$f does not show the verdict's program escaped"
done
grep -qF '\x1b[2Jrun\x0a' "$FB_LOG" || fail "the daemon's log does not show the program escaped"
ok "timeline, the incident's story, replay and the daemon's log show each name as \\xNN"

python3 - "$T/timeline.json" <<'PY' || fail "timeline --json"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
paths = [e["fields"].get("path", "") for e in ev if e["kind"] == "proc.exec"]
assert any(p.startswith("/workspace/\033[2Jrun\n2026-01-01") for p in paths), paths
PY
ok "--json keeps the bytes exactly, as valid JSON"
check "kill te1" "$FB" kill te1
check "destroy te1" "$FB" destroy te1
stop_daemon
