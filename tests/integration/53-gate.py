#!/usr/bin/env python3
"""The per-tool command gate on the real exec path: every argv test vector of examples/policy.json
(the injection forms: joined, bundled and abbreviated flags, `--`, wrappers, inline code, find
-exec, git -c/--upload-pack/ext::) goes through `firebreak exec` into a real sandbox. A refused
one exits 126 with one line naming its rule, is recorded in the monitor's timeline with that
rule, and never starts a step; an allowed one really runs (its own exit status, never 126)."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from fbtest import FB, ROOT, Failure, check, main, ok  # noqa: E402

POLICY = os.path.join(ROOT, "examples", "policy.json")


def run(w):
    w.start()
    sb = "gate1"
    w.fb("create", sb, "--policy", POLICY)
    try:
        vectors = [t for t in json.load(open(POLICY))["tests"] if "argv" in t]
        check(len(vectors) >= 25, "examples/policy.json has %d argv vectors" % len(vectors))
        refused_steps, allowed_steps = [], []
        for i, t in enumerate(vectors):
            step = 1000 + i
            r = subprocess.run([FB, "--runtime-dir", w.run, "exec", sb, "--tool", t["tool"], "--step", str(step),
                                "--call-id", "vec-%d" % i, "--"] + t["argv"],
                               stdin=subprocess.DEVNULL, capture_output=True, env=w.env, timeout=120)
            err = r.stderr.decode(errors="replace").strip().splitlines()
            what = "%s %s" % (t["tool"], t["argv"])
            if t["expect"] == "deny":
                if r.returncode != 126 or len(err) != 1 or (t.get("rule") and t["rule"] not in err[0]):
                    raise Failure("not refused as expected (exit %d): %s: %s" % (r.returncode, what, err))
                refused_steps.append((step, t.get("rule")))
            else:
                if r.returncode == 126:
                    raise Failure("an allowed call was refused: %s: %s" % (what, err))
                allowed_steps.append(step)
        ok("%d injection forms refused with 126 and their rule" % len(refused_steps))
        ok("%d legitimate forms ran (exit status their own)" % len(allowed_steps))

        events = [json.loads(l) for l in w.fb("timeline", sb, "--json").stdout.splitlines()]
        by_step = {}
        for e in events:
            if e["source"] == "enforcer":  # its records (not resource samples, process traces)
                by_step.setdefault(e["step"], []).append(e)
        for step, rule in refused_steps:
            kinds = [e["kind"] for e in by_step.get(step, [])]
            if kinds != ["gate.refused"]:
                raise Failure("step %d: expected only gate.refused, got %s" % (step, kinds))
            f = by_step[step][0]["fields"]
            if (rule and f["rule"] != rule) or not f["policy_hash"].startswith("sha256:"):
                raise Failure("step %d recorded as %s" % (step, f))
        ok("every refusal is in the timeline with its rule and the policy hash, and no step started")
        for step in allowed_steps:
            kinds = [e["kind"] for e in by_step.get(step, [])]
            if kinds != ["step.start", "step.end"]:
                raise Failure("allowed step %d recorded as %s" % (step, kinds))
        traced = {e["step"] for e in events if e["kind"] == "proc.exec"}
        if not set(allowed_steps) <= traced or traced & {s for s, _ in refused_steps}:
            raise Failure("process traces: allowed %s, traced %s" % (allowed_steps, sorted(traced)))
        ok("every allowed call is recorded with its start and end, and its exec was traced; "
           "no refused call executed anything")
    finally:
        w.fb("destroy", sb, check=False)
    check(w.stop() == 0, "SIGTERM: exit 0")


if __name__ == "__main__":
    main(run)
