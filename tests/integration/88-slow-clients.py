#!/usr/bin/env python3
"""Slow and greedy clients cannot exhaust the daemon's slots. On the Unix sockets a non-root member
of the firebreak group gets at most socket_clients_per_uid_max connections (one more is refused,
counted); connections that send half a line are closed after trace_request_timeout; a client
that asks for big replies and never reads them is closed after trace_stall_timeout, and root's
clients are served within a deadline the whole time. Over HTTP, half-sent requests from one
address stop at http_clients_per_ip_max and are closed after http_idle_timeout, as is a live
stream that is never read, while a normal client and a stream that is read are served. Short
timeouts come from the test's config. A throwaway user firebreak-test-s* (and the firebreak
group, if the host has none) is made and removed, also on failure."""
import grp
import http.client
import json
import os
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from fbtest import check, main, ok, read_replies, trace  # noqa: E402

SB = "slow-1"
MEMBER = "firebreak-test-s%d" % os.getpid()
PER_UID = 4
PER_IP = 6

# As the member: N connections to SOCKET, each sends half a line and stops. Prints how many were
# refused at once, then (once the rest are closed) how each was closed and after how long.
HALF = r'''
import json, socket, sys, time
path, n = sys.argv[1], int(sys.argv[2])
conns = []
for i in range(n):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    try:
        s.sendall(b'{"gen_ai.operation.name": "execute_')
    except BrokenPipeError:  # refused and closed already
        pass
    conns.append(s)
time.sleep(0.5)
refused, kept = 0, []
for s in conns:
    s.setblocking(False)
    try:
        data = s.recv(4096)
    except BlockingIOError:
        kept.append(s)
        continue
    except ConnectionResetError:
        data = b"too many clients of this user"  # refused, and the refusal's bytes lost
    refused += b"too many clients of this user" in data
print(refused, flush=True)
t0 = time.time()
closed = []
for s in kept:
    s.settimeout(20)
    data = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    closed.append([data.decode(errors="replace").strip(), time.time() - t0])
print(json.dumps(closed), flush=True)
'''


def as_member(w, script, *args):
    return subprocess.Popen(["runuser", "-u", MEMBER, "--", "python3", "-c", script] + list(args),
                            stdout=subprocess.PIPE, text=True)


def root_served(w, what):
    """A trace line and a status from root, each answered within 1 s."""
    s = w.connect()
    t0 = time.time()
    s.sendall((trace(SB, 1, "run_tests", "served-%f" % t0, "start") + "\n").encode())
    r = read_replies(s, 1, timeout=2)
    s.close()
    check(r and r[0].get("ok") and time.time() - t0 < 1,
          "root's trace line is acknowledged in %.2fs %s" % (time.time() - t0, what))
    t0 = time.time()
    w.fb("status")
    check(time.time() - t0 < 1, "root's status is answered in %.2fs %s" % (time.time() - t0, what))


def unix_half_lines(w, sock, n):
    p = as_member(w, HALF, os.path.join(w.run, sock), str(n))
    refused = int(p.stdout.readline())
    check(refused == n - PER_UID, "%s: %d of the member's %d connections are refused at the "
          "per-uid cap of %d" % (sock, refused, n, PER_UID))
    root_served(w, "while the member's %d half lines hang on %s" % (PER_UID, sock))
    closed = json.loads(p.stdout.readline())
    p.wait(timeout=30)
    check(len(closed) == PER_UID and all("request timeout" in c[0] and c[1] < 5 for c in closed),
          "%s: each half line is closed with 'request timeout' in under 5 s: %s" % (sock, closed))


def metrics(port):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    c.request("GET", "/metrics", headers={"Authorization": "Bearer " + READ[0]})
    text = c.getresponse().read().decode()
    c.close()
    return {l.split()[0]: float(l.split()[1]) for l in text.splitlines()
            if l and not l.startswith("#")}


def connect_from(src, port, rcvbuf=None):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    return s


def closed_within(s, seconds):
    """Whether the peer closes s within seconds (whatever it sent before is read and dropped)."""
    s.settimeout(0.2)
    deadline = time.time() + seconds
    while time.time() < deadline:
        try:
            if not s.recv(65536):
                return True
        except socket.timeout:
            continue
        except OSError:
            return True
    return False


READ = [""]


def http_clients(w):
    port = w.stats()["http"]["port"]
    READ[0] = open(os.path.join(w.dir, "http-read.token")).read().strip()
    # Half-sent requests from 127.0.0.2: PER_IP are kept, the rest are closed at once.
    half = []
    for _ in range(PER_IP + 3):
        s = connect_from("127.0.0.2", port)
        s.sendall(b"GET /api/v1/incidents HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ")
        half.append(s)
    t0 = time.time()
    refused = sum(closed_within(s, 0.5) for s in half[PER_IP:])
    check(refused == 3, "HTTP: the 3 half requests over the per-address cap of %d are closed "
          "at once (%d)" % (PER_IP, refused))
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    t1 = time.time()
    c.request("GET", "/api/v1/sandboxes", headers={"Authorization": "Bearer " + READ[0]})
    r = c.getresponse()
    r.read()
    c.close()
    check(r.status == 200 and time.time() - t1 < 1,
          "HTTP: a normal client is served in %.2fs while %d half requests hang"
          % (time.time() - t1, PER_IP))
    hung = [closed_within(s, 6) for s in half[:PER_IP]]
    check(all(hung) and time.time() - t0 < 7,
          "HTTP: the %d half requests are closed after the 2 s idle timeout (%.1fs)"
          % (PER_IP, time.time() - t0))
    for s in half:
        s.close()

    # A stream that is read stays open past the idle timeout on its keepalives; one that is
    # never read is closed once the events it is sent fill the buffers.
    reader = connect_from("127.0.0.3", port)
    reader.sendall(("GET /api/v1/events/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s"
                    "\r\n\r\n" % READ[0]).encode())
    got = {"bytes": 0, "eof": None}

    def read_stream():
        reader.settimeout(30)
        try:
            while True:
                chunk = reader.recv(65536)
                if not chunk:
                    break
                got["bytes"] += len(chunk)
        except OSError:
            pass
        got["eof"] = time.time()

    th = threading.Thread(target=read_stream, daemon=True)
    th.start()
    greedy = connect_from("127.0.0.4", port, rcvbuf=4096)
    greedy.sendall(("GET /api/v1/events/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s"
                    "\r\n\r\n" % READ[0]).encode())
    time.sleep(3)  # no events: past the 2 s idle timeout on keepalives alone
    m = metrics(port)
    check(m["firebreak_http_stream_clients"] == 2 and got["eof"] is None and got["bytes"] > 0,
          "HTTP: both streams are open 3 s later with no events (the read one got %d bytes of "
          "keepalives)" % got["bytes"])
    t0 = time.time()
    s = w.connect()
    n = 40000
    pad = "x" * 200
    acks = []
    for b in range(0, n, 1000):  # in batches, reading the acks: this client is no slow reader
        s.sendall(b"".join((trace(SB, 1000 + i, "run_tests", "flood-%d" % i, "start",
                                  annotations={"pad": pad}) + "\n").encode()
                           for i in range(b, b + 1000)))
        acks += read_replies(s, 1000, timeout=60)
    s.close()
    check(len(acks) == n and all(a.get("ok") for a in acks), "%d events flooded" % n)
    deadline = time.time() + 15
    while time.time() < deadline and metrics(port)["firebreak_http_stream_clients"] > 1:
        time.sleep(0.2)
    m = metrics(port)
    check(m["firebreak_http_stream_clients"] == 1 and m["firebreak_http_closed_timeout_total"] >= 1,
          "HTTP: the stream that is never read is closed and counted (%.1fs after the flood began)"
          % (time.time() - t0))
    time.sleep(2.5)
    check(got["eof"] is None and got["bytes"] > 0,
          "HTTP: the stream that is read stays open through the flood (%d bytes)"
          % got["bytes"])
    reader.close()
    greedy.close()


def unix_greedy_control(w):
    # Asks for stats (a few KiB each) again and again and never reads the answers.
    g = w.connect("control.sock")
    g.setblocking(False)
    req = b'{"op":"stats"}\n' * 20000
    sent, deadline = 0, time.time() + 1.5
    while sent < len(req) and time.time() < deadline:
        try:
            sent += g.send(req[sent:sent + 65536])
        except BlockingIOError:
            time.sleep(0.01)
    check(sent < len(req), "control: the daemon stopped reading a client that reads no replies "
          "(%d of %d bytes taken)" % (sent, len(req)))
    root_served(w, "while a control client reads none of its replies")
    deadline = time.time() + 10
    while time.time() < deadline and w.stats()["control_socket"]["closed_stalled"] < 1:
        time.sleep(0.2)
    check(w.stats()["control_socket"]["closed_stalled"] == 1,
          "control: the client that read no replies was closed after the stall timeout")
    g.close()


def run(w):
    made_group = False
    try:
        try:
            grp.getgrnam("firebreak")
        except KeyError:
            subprocess.run(["groupadd", "--system", "firebreak"], check=True)
            made_group = True
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin",
                        "--groups", "firebreak", MEMBER], check=True)
        os.chmod(w.dir, 0o711)  # the member reaches run/ (the daemon's, group firebreak)
        w.start(config={"listen": "127.0.0.1:0",
                        "http_read_token": os.path.join(w.dir, "http-read.token"),
                        "http_action_token": os.path.join(w.dir, "http-action.token"),
                        "http_idle_timeout": "2s", "http_clients_per_ip_max": str(PER_IP),
                        "trace_request_timeout": "2s", "trace_idle_timeout": "60s",
                        "trace_stall_timeout": "2s", "trace_reply_buffer_max": "65536",
                        "socket_clients_per_uid_max": str(PER_UID)})
        w.fb("register", SB)
        unix_half_lines(w, "trace.sock", PER_UID + 6)
        unix_half_lines(w, "control.sock", PER_UID + 2)
        st = w.stats()
        check(st["trace_socket"]["refused_uid"] == 6 and st["control_socket"]["refused_uid"] == 2,
              "the per-uid refusals are counted (trace 6, control 2)")
        check(st["trace_socket"]["closed_partial"] == PER_UID and
              st["control_socket"]["closed_partial"] == PER_UID,
              "the closed half lines are counted as closed_partial")
        unix_greedy_control(w)
        http_clients(w)
        ok("slow and greedy clients are refused or closed, and counted; others are served")
    finally:
        subprocess.run(["userdel", MEMBER], stderr=subprocess.DEVNULL)
        if made_group:
            subprocess.run(["groupdel", "firebreak"])


main(run)
