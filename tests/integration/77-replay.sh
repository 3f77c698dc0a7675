#!/bin/bash
# Replay. A recorded scenario (six refused connects: a deny burst at the fifth under the recorded
# policy) replays to exactly its verdicts, from the store and from a bundle read with nothing
# else (another machine's view); a tighter policy fires earlier and the diff says where and what
# it would have done; the API serves the bundle and the what-if. Bad bundles (a newer schema, a
# truncated or random file, an extra trigger, SQL in a name, a huge row) are refused with a clear
# reason and nothing of them runs.
. "$(dirname "$0")/../lib.sh"
fb_setup
start_daemon
HTTP_PORT=$(http_port)
READ=$(cat "$T/http-read.token")
POLICY=$FB_ROOT/tests/policies/replay.json
TIGHT=$FB_ROOT/tests/policies/replay-tighter.json
cat >"$T/burst.py" <<'PY'
import socket, time
for i in range(6):
    s = socket.socket()
    try:
        s.connect(("203.0.113.66", 443))
    except OSError:
        pass
    s.close()
    time.sleep(0.05)
PY
create_sandbox rp1 "$POLICY"
copy_in rp1 "$T/burst.py"
trace_line rp1 1 attack c1 start | "$FB" trace rp1 >/dev/null 2>&1 || fail "trace"
"$FB" exec rp1 --tool attack --step 1 -- python3 /workspace/burst.py || fail "the burst"
wait_event rp1 verdict || { "$FB" timeline rp1; fail "no verdict"; }
monitor_marker rp1 # every connect of the burst is judged: a second verdict would be stored
rec=$("$FB" timeline rp1 --json | python3 -c '
import json, sys
print(" ".join(json.loads(l)["fields"]["rule"] for l in sys.stdin if json.loads(l)["kind"] == "verdict"))')
assert_eq "$rec" "net.deny-burst" "recorded: one deny burst (at the fifth refused connect)"

out=$("$FB" replay rp1) || fail "replay with the recorded policy: $out"
echo "$out" | grep -q "REPLAYED net.deny-burst (high) -> alert" || fail "no replayed verdict in: $out"
echo "$out" | tail -1 | grep -q "1 verdicts recorded, 1 replayed: identical" || fail "not identical: $(echo "$out" | tail -1)"
ok "replayed with its own policy: the same verdict, identical"

"$FB" export rp1 -o "$T/rp1.bundle" >/dev/null || fail "export"
# Another machine: no store, no runtime dir, only the bundle.
out=$("$FB_ROOT/build/firebreak" --db "$T/nowhere.db" --runtime-dir "$T/nowhere" replay "$T/rp1.bundle" --summary --json | tail -1)
python3 -c 'import json, sys; d = json.loads(sys.argv[1]); assert d["differences"] == 0 and d["recorded"] == d["replayed"] == 1, d' "$out" ||
	fail "the bundle replays differently: $out"
ok "the bundle replays alone (no store) to the same verdict"

"$FB" replay rp1 --policy "$TIGHT" >"$T/whatif.txt" || fail "what-if"
grep -q "^ADDED rp1: net.deny-burst (high) -> kill" "$T/whatif.txt" || fail "no added burst: $(cat "$T/whatif.txt")"
grep -q "^REMOVED rp1: net.deny-burst (high)" "$T/whatif.txt" || fail "the recorded burst is not removed: $(cat "$T/whatif.txt")"
grep -q "^the new policy would have acted at event .*: kill, by net.deny-burst" "$T/whatif.txt" ||
	fail "no earliest action: $(cat "$T/whatif.txt")"
grep -q "the recorded policy did not act at all" "$T/whatif.txt" || fail "$(cat "$T/whatif.txt")"
"$FB" replay rp1 --policy "$TIGHT" --json --summary >"$T/whatif.json" || fail "what-if --json"
python3 - "$T/whatif.json" <<'PY' || fail "the what-if's burst"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
added = [l for l in lines if l.get("tag") == "added"]
removed = [l for l in lines if l.get("tag") == "removed"]
assert len(added) == 1 and len(removed) == 1, lines
# The third refused connect instead of the fifth: earlier, by two connects' worth of events.
assert added[0]["event_ids"][-1] < removed[0]["event_ids"][-1], (added, removed)
assert len(added[0]["event_ids"]) == 3 and len(removed[0]["event_ids"]) == 5, (added, removed)
first = [l for l in lines if l.get("kind") == "first_action"][0]
assert first["recorded"] is None and first["would_have"]["action"] == "kill", first
PY
ok "a tighter policy fires at the third refused connect, not the fifth, and would have killed there"

# The API: the bundle, and the what-if.
id=$("$FB" incidents --json | python3 -c 'import json, sys; print(json.loads(sys.stdin.readline())["id"])')
api "$READ" GET "/api/v1/incidents/$id/bundle" >"$T/api.bundle"
expect_status 200 "GET /api/v1/incidents/$id/bundle"
"$FB" replay "$T/api.bundle" --summary | tail -1 | grep -q "identical" || fail "the API's bundle does not replay identically"
ok "the API's bundle replays identically"
api "$READ" POST "/api/v1/incidents/$id/replay" --data-binary @"$TIGHT" >"$T/api-whatif.json"
expect_status 200 "POST /api/v1/incidents/$id/replay with another policy"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [v["rule"] for v in d["added"]] == ["net.deny-burst"] and d["replayed_first_stop"]["action"] == "kill", d
assert d["recorded_first_stop"] is None, d' "$T/api-whatif.json" || fail "the API's what-if: $(cat "$T/api-whatif.json")"
ok "the API's what-if names the added verdict and its kill"
api "$READ" POST "/api/v1/incidents/$id/replay" >"$T/api-same.json"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["determinism_bugs"] == [] and len(d["replayed"]) == 1, d' "$T/api-same.json" ||
	fail "the API's replay with the recorded policy"
ok "the API's replay with the recorded policy: no determinism bug"

# Bad bundles: refused, with the reason.
refused() { # refused WHY FILE
	local out
	out=$("$FB" replay "$2" --summary 2>&1) && fail "$2 was replayed: $out"
	echo "$out" | grep -q "$1" || fail "$2: expected '$1', got: $out"
	ok "refused: $(basename "$2") ($1)"
}
cp "$T/rp1.bundle" "$T/newer.bundle" && sqlite3 "$T/newer.bundle" "PRAGMA user_version = 99"
refused "another schema version" "$T/newer.bundle"
head -c 50000 "$T/rp1.bundle" >"$T/truncated.bundle"
refused "refused" "$T/truncated.bundle"
head -c 65536 /dev/urandom >"$T/random.bundle"
refused "not a Firebreak bundle" "$T/random.bundle"
cp "$T/rp1.bundle" "$T/trigger.bundle" &&
	sqlite3 "$T/trigger.bundle" "CREATE TRIGGER boom AFTER INSERT ON events BEGIN DELETE FROM sandboxes; END"
refused "schema" "$T/trigger.bundle"
cp "$T/rp1.bundle" "$T/view.bundle" && sqlite3 "$T/view.bundle" "CREATE VIEW v AS SELECT 1"
refused "schema" "$T/view.bundle"
cp "$T/rp1.bundle" "$T/name.bundle" && sqlite3 "$T/name.bundle" "UPDATE sandboxes SET name = 'x''; DROP TABLE events; --'"
refused "not a valid sandbox name" "$T/name.bundle"
cp "$T/rp1.bundle" "$T/huge.bundle" &&
	sqlite3 "$T/huge.bundle" "UPDATE events SET fields = json_object('x', hex(zeroblob(1100000))) WHERE id = (SELECT min(id) FROM events)"
refused "over" "$T/huge.bundle"
cp "$T/rp1.bundle" "$T/two.bundle" && sqlite3 "$T/two.bundle" "INSERT INTO sandboxes (id, name, state, created_ts, updated_ts) VALUES (99, 'other', 'running', 0, 0)"
refused "one sandbox" "$T/two.bundle"
assert_eq "$(sqlite3 "$T/trigger.bundle" 'SELECT count(*) FROM sandboxes')" "1" "the trigger never ran"

# Pacing: the recorded pace, a hundred times faster, still replays the same.
"$FB" replay rp1 --pace 100x --summary | tail -1 | grep -q identical || fail "--pace 100x"
ok "--pace 100x replays identically"
