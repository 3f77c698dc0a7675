#!/usr/bin/env python3
"""make bench's one table: each benchmark adds its figures, this prints them and keeps them.

  figures.py add BENCH FIGURE VALUE UNIT [--peer NAME VALUE] [--goal value|ratio OP LIMIT]
      one figure into $BENCH_RESULTS (JSON lines; nothing without it, so a benchmark run on
      its own only prints). The ratio is VALUE / the peer's VALUE, both measured in the same run.
  figures.py table RESULTS DIR
      the table on stdout; the figures as DIR/COMMIT.json and DIR/latest.json (the tree's commit,
      "-dirty" if it has changes), for comparing two commits.
  figures.py compare OLD.json NEW.json
      the figures of both, side by side, with the change of each.
"""
import json
import os
import subprocess
import sys

OPS = {"<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b, "==": lambda a, b: a == b}


def record(bench, name, value, unit, peer=None, peer_value=None, goal=None):
    """One figure into $BENCH_RESULTS; goal: ("value" or "ratio", "<=" or ">=" or "==", limit)."""
    fig = {"bench": bench, "figure": name, "value": float(value), "unit": unit}
    if peer is not None:
        fig["peer"], fig["peer_value"] = peer, float(peer_value)
        if fig["peer_value"] > 0:
            fig["ratio"] = fig["value"] / fig["peer_value"]
    if goal:
        of, op, limit = goal
        if of not in ("value", "ratio") or op not in OPS:
            sys.exit("figures.py: a goal is value|ratio <=|>=|== LIMIT")
        fig["goal"] = {"of": of, "op": op, "limit": float(limit)}
        got = fig.get(of)
        fig["met"] = got is not None and OPS[op](got, float(limit))
    path = os.environ.get("BENCH_RESULTS")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps(fig) + "\n")
    return fig


def add(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    kw = {}
    rest = argv[4:]
    while rest:
        if rest[0] == "--peer" and len(rest) >= 3:
            kw["peer"], kw["peer_value"] = rest[1], rest[2]
            rest = rest[3:]
        elif rest[0] == "--goal" and len(rest) >= 4:
            kw["goal"] = (rest[1], rest[2], rest[3])
            rest = rest[4:]
        else:
            sys.exit("figures.py add: unknown argument %r" % rest[0])
    record(argv[0], argv[1], argv[2], argv[3], **kw)


def fmt(v):
    if v is None:
        return "-"
    if abs(v) >= 1000:
        return "%.0f" % v
    if abs(v) >= 10:
        return "%.1f" % v
    return "%.3g" % v


def goal_text(f):
    g = f.get("goal")
    if not g:
        return ""
    return "%s %s%s" % (g["op"], fmt(g["limit"]), "x" if g["of"] == "ratio" else " " + f["unit"])


def load(path):
    figs = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                figs.append(json.loads(line))
    return figs


def commit(root):
    try:
        sha = subprocess.run(["git", "-C", root, "rev-parse", "--short=12", "HEAD"],
                             capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True).stdout.strip()
        return sha + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def table(argv):
    results, outdir = argv[0], argv[1]
    figs = load(results) if os.path.exists(results) else []
    rows = [("bench", "figure", "value", "peer (same run)", "ratio", "goal", "")]
    for f in figs:
        peer = "%s %s" % (f["peer"], fmt(f["peer_value"])) if "peer" in f else ""
        met = "" if "met" not in f else ("met" if f["met"] else "NOT met")
        rows.append((f["bench"], f["figure"], "%s %s" % (fmt(f["value"]), f["unit"]), peer,
                     fmt(f.get("ratio")) + "x" if "ratio" in f else "", goal_text(f), met))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    print()
    for k, r in enumerate(rows):
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        if k == 0:
            print("  ".join("-" * w for w in widths))
    goals = [f for f in figs if "met" in f]
    print("\n%d figures, %d with a goal: %d met, %d not met" %
          (len(figs), len(goals), sum(f["met"] for f in goals), sum(not f["met"] for f in goals)))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.makedirs(outdir, exist_ok=True)
    doc = {"commit": commit(root), "figures": figs}
    name = os.path.join(outdir, doc["commit"] + ".json")
    for path in (name, os.path.join(outdir, "latest.json")):
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
    print("figures kept in %s (compare two: python3 bench/figures.py compare OLD NEW)" % name)


def compare(argv):
    old, new = (json.load(open(p)) for p in argv[:2])
    key = lambda f: (f["bench"], f["figure"])
    before = {key(f): f for f in old["figures"]}
    print("%-12s %-52s %14s %14s %8s" % ("bench", "figure", old["commit"][:14], new["commit"][:14], "change"))
    for f in new["figures"]:
        o = before.pop(key(f), None)
        a = "%s%s" % (fmt(o["value"]), f["unit"]) if o else "-"
        ch = "%+.0f%%" % (100 * (f["value"] / o["value"] - 1)) if o and o["value"] else ""
        print("%-12s %-52s %14s %14s %8s" % (f["bench"], f["figure"][:52], a,
                                             "%s%s" % (fmt(f["value"]), f["unit"]), ch))
    for (b, n), o in before.items():
        print("%-12s %-52s %14s %14s" % (b, n[:52], fmt(o["value"]) + o["unit"], "-"))


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in ("add", "table", "compare"):
        sys.exit(__doc__)
    {"add": add, "table": table, "compare": compare}[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    main()
