#!/bin/bash
# The web page against a daemon running the demo's scenario: headless Chromium (Debian's) loads
# it, and its DOM shows the incident's story and swimlanes (a lane per step, step 14 marked
# coerced, step 15's exec, denied egress and verdict, the kill). The screenshot and the DOM are
# kept in build/test-artifacts/ for people to look at.
. "$(dirname "$0")/../lib.sh"
fb_setup
command -v chromium >/dev/null || fail "chromium is not installed (make installs it)"
ART=$FB_ROOT/build/test-artifacts/web
rm -rf "$ART"
FIREBREAK_DEMO_THEN="bash '$FB_ROOT/tests/web/check-page.sh' '$ART'" timeout 120 \
	bash "$FB_ROOT/examples/demo.sh" >"$T/demo.out" 2>&1 || { tail -20 "$T/demo.out"; fail "the page check failed"; }
grep '^   lanes:' "$T/demo.out"
ok "Chromium shows the incident: the lesson's story and its swimlanes"
[ -s "$ART/incident.png" ] || fail "no screenshot"
ok "screenshot: build/test-artifacts/web/incident.png ($(stat -c %s "$ART/incident.png") bytes)"
