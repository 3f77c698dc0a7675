#!/usr/bin/env python3
"""Every kind of bad input on the trace socket gets an error naming its class, is counted, and
costs nothing else: the same connection and every other client keep being served, and every line
the daemon acknowledged is in the store. Runs a real firebreakd and real socket clients."""
import json
import os
import random
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from fbtest import check, main, ok, read_replies, trace  # noqa: E402

SB = "bad-input"


def line(obj):
    return (json.dumps(obj) + "\n").encode()


def base(**over):
    obj = json.loads(trace(SB, 1, "run_tests", "base", "start"))
    obj.update(over)
    return obj


def without(key):
    obj = base()
    del obj[key]
    return obj


def run(w):
    w.start(config={"trace_idle_timeout": "1s", "trace_stall_timeout": "3s",
                    "trace_reply_buffer_max": "4096", "trace_clients_max": "8"})
    w.fb("register", SB)
    rng = random.Random(7)
    garbage = bytes(b for b in rng.randbytes(3000) if b != 0x0A)

    cases = [
        (b"{not json\n", "json"),
        (b'{"a": 1} trailing\n', "json"),
        (b'"a string"\n', "not_object"),
        (b"[1, 2, 3]\n", "not_object"),
        (garbage + b"\n", "json"),
        (b'{"gen_ai.tool.name": "a\x00b"}\n', "json"),
        (b'{"gen_ai.tool.name": "\xff\xfe"}\n', "json"),
        (b'{"phase": "start", "phase": "end"}\n', "json"),
        (line(without("gen_ai.tool.name")), "missing_field"),
        (line(without("gen_ai.tool.call.id")), "missing_field"),
        (line(without("firebreak.sandbox")), "missing_field"),
        (line(without("firebreak.step")), "missing_field"),
        (line(without("phase")), "missing_field"),
        (line(base(**{"firebreak.step": "1"})), "wrong_type"),
        (line(base(**{"firebreak.step": 1.5})), "wrong_type"),
        (line(base(annotations=[1])), "wrong_type"),
        (line(base(phase="middle")), "bad_value"),
        (line(base(**{"gen_ai.operation.name": "chat"})), "bad_value"),
        (line(base(**{"firebreak.sandbox": "../etc"})), "bad_value"),
        (line(base(annotations={"x": "y" * 9000})), "bad_value"),
        (line(base(surprise=1)), "unknown_key"),
        (line(base(**{"firebreak.sandbox": "nobody-registered-this"})), "unknown_sandbox"),
        (b"{" + b" " * 70000 + b"}\n", "too_long"),
    ]
    s = w.connect()
    good = 0
    for i, (data, cls) in enumerate(cases):
        s.sendall(data)
        # A good line right behind each bad one: the connection must go on working.
        s.sendall(line(json.loads(trace(SB, 100 + i, "run_tests", "after-%d" % i, "start"))))
        replies = read_replies(s, 2)
        check(len(replies) == 2, "case %d (%s): two replies" % (i, cls))
        r = replies[0]
        check(r.get("ok") is False and r.get("class") == cls and r.get("line") == 2 * i + 1
              and r.get("error"), "case %d refused as %s: %s" % (i, cls, r.get("error")))
        check(replies[1] == {"ok": True, "line": 2 * i + 2},
              "case %d: the next line on the connection is stored" % i)
        good += 1

    # A call id already stored with another step is a conflict, not a second row.
    s.sendall(line(json.loads(trace(SB, 999, "run_tests", "after-0", "start"))))
    r = read_replies(s, 1)[0]
    check(r.get("class") == "conflict", "a call id reused with another step is a conflict")
    # The same phase again is acknowledged as a duplicate and not stored twice.
    s.sendall(line(json.loads(trace(SB, 100, "run_tests", "after-0", "start"))))
    r = read_replies(s, 1)[0]
    check(r.get("ok") is True and r.get("duplicate") is True, "a replayed phase is a duplicate")

    stats = w.stats()
    expected = {}
    for _, cls in cases:
        expected[cls] = expected.get(cls, 0) + 1
    expected["conflict"] = 1
    for cls, n in expected.items():
        check(stats["trace"]["refused"][cls] == n, "counted %d refusals of class %s" % (n, cls))
    check(stats["trace_socket"]["oversize"] == 1, "the over-long line is counted")
    s.close()

    # A client that connects and never writes is closed after the idle timeout, with a reason.
    idle = w.connect()
    t0 = time.time()
    r = read_replies(idle, 1, timeout=10)
    check(r and r[0].get("error") == "idle timeout" and time.time() - t0 < 5,
          "a silent client is told 'idle timeout' and closed")
    check(idle.recv(10) == b"", "the silent client's connection is closed")
    # So is one that sends half a line and stops (slowloris).
    half = w.connect()
    half.sendall(b'{"gen_ai.operation.name": "execute_')
    r = read_replies(half, 1, timeout=10)
    check(r and r[0].get("error") == "idle timeout", "a client stuck mid-line is closed too")

    # A client that never reads its acks: the daemon stops reading it, keeps serving others,
    # and drops it after the stall timeout.
    slow = w.connect()
    slow.setblocking(False)
    payload = b"".join(line(json.loads(trace(SB, 10000 + i, "run_tests", "slow-%d" % i, "start")))
                       for i in range(50000))
    sent = 0
    deadline = time.time() + 1  # well inside the 3 s stall timeout
    while sent < len(payload) and time.time() < deadline:
        try:
            sent += slow.send(payload[sent:sent + 65536])
        except BlockingIOError:
            time.sleep(0.01)
    check(sent < len(payload), "the daemon stopped reading a client that reads no acks "
          "(%d of %d bytes taken)" % (sent, len(payload)))
    other = w.connect()
    t0 = time.time()
    other.sendall(b"".join(line(json.loads(trace(SB, 200000 + i, "run_tests", "other-%d" % i,
                                                 "start"))) for i in range(200)))
    replies = read_replies(other, 200)
    check(len(replies) == 200 and all(r.get("ok") for r in replies) and time.time() - t0 < 2,
          "another client is served meanwhile (200 acks in %.2fs)" % (time.time() - t0))
    good += 200
    other.close()
    deadline = time.time() + 10
    while time.time() < deadline and w.stats()["trace_socket"]["closed_stalled"] < 1:
        time.sleep(0.2)
    check(w.stats()["trace_socket"]["closed_stalled"] == 1, "the non-reading client was dropped")
    slow.close()

    # More clients than allowed: the extra one is told so; the others are unaffected.
    conns = [w.connect() for _ in range(8)]
    extra = w.connect()
    r = read_replies(extra, 1)
    check(r and r[0].get("error") == "too many clients", "a ninth client is refused")
    for c in conns:
        c.close()
    extra.close()

    # Nothing acknowledged is lost: every stored line is in the timeline exactly once.
    stats = w.stats()
    out = w.fb("timeline", SB, "--json").stdout.decode().splitlines()
    events = [json.loads(x) for x in out]
    keys = [(e["fields"]["call_id"], e["kind"]) for e in events]
    check(len(keys) == len(set(keys)), "no line is stored twice")
    check(len(events) == stats["trace"]["accepted"],
          "the store holds exactly the %d lines acknowledged as new" % stats["trace"]["accepted"])
    ids = set(k[0] for k in keys)
    check(all("after-%d" % i in ids for i in range(len(cases))) and
          all("other-%d" % i in ids for i in range(200)), "every acknowledged good line is there")
    check(w.stop() == 0, "SIGTERM after all that: exit 0")


if __name__ == "__main__":
    main(run)
