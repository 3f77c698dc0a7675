#!/bin/bash
# check-page.sh OUT_DIR: loads $FB_DEMO_URL (the demo's incident) in headless Chromium, saves the
# rendered DOM and a screenshot in OUT_DIR, and checks the DOM shows the incident's swimlanes and
# story. Run by test 76 through the demo's FIREBREAK_DEMO_THEN, while the demo's daemon is up.
# Chromium is kept off every network but loopback: no name resolves but 127.0.0.1, and its
# background services (updates, sync, metrics) are off.
set -u
OUT=$1
mkdir -p "$OUT"
chrome() {
	chromium --headless=new --no-sandbox --disable-gpu --user-data-dir="$OUT/profile" \
		--no-first-run --disable-background-networking --disable-component-update --disable-sync \
		--disable-default-apps --disable-extensions --metrics-recording-only --no-proxy-server \
		--host-resolver-rules="MAP * ~NOTFOUND , EXCLUDE 127.0.0.1" \
		--virtual-time-budget=10000 "$@" 2>>"$OUT/chromium.log"
}
chrome --dump-dom "$FB_DEMO_URL&replay=1" >"$OUT/dom.html" || { echo "chromium failed"; exit 1; }
chrome --hide-scrollbars --window-size=1400,700 --screenshot="$OUT/incident.png" "$FB_DEMO_URL" >/dev/null ||
	{ echo "no screenshot"; exit 1; }
rm -rf "$OUT/profile"
python3 - "$OUT/dom.html" <<'PY'
import html.parser, sys

class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.summary, self.lanes, self.ready = [], "", {}, False
        self.replay, self.in_same = "", False
        self.lane = None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = (a.get("class") or "").split()
        if "same" in cls:
            self.in_same = True
        if tag == "body" and a.get("data-ready") == "1":
            self.ready = True
        if "lane" in cls:
            self.lane = a["data-step"]
            self.lanes[self.lane] = {"coerced": "coerced" in cls, "events": []}
        if "ev" in cls and self.lane is not None:
            self.lanes[self.lane]["events"].append((cls[1][3:], a.get("data-kind")))
        self.stack.append(a.get("id"))
    def handle_endtag(self, tag):
        if self.stack:
            self.stack.pop()
    def handle_data(self, d):
        if self.in_same:
            self.replay += d
            self.in_same = False
        if self.stack and self.stack[-1] == "summary":
            self.summary += d

p = Page()
p.feed(open(sys.argv[1]).read())
assert p.ready, "the page did not finish loading the incident"
want = "coerced @ step 14, ran cmd @ 15, egress denied @ 15, flagged @ 15, killed @ 15"
assert p.summary.strip() == want, "summary: %r" % p.summary
assert "14" in p.lanes and "15" in p.lanes, "lanes: %s" % sorted(p.lanes)
assert p.lanes["14"]["coerced"], "step 14's lane is not marked coerced"
cats15 = {c for c, k in p.lanes["15"]["events"]}
assert {"exec", "denied", "verdict"} <= cats15, "step 15's lane: %s" % sorted(cats15)
actions = [k for lane in p.lanes.values() for c, k in lane["events"] if c == "action"]
assert "action.kill" in actions, "no kill on the lanes: %s" % actions
assert "identical to the recorded ones" in p.replay, "the page's replay: %r" % p.replay
print("   lanes: %s; step 15: %s; replay: %s" % (", ".join(sorted(p.lanes)), ", ".join(sorted(cats15)), p.replay))
PY
