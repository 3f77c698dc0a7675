#!/usr/bin/python3
"""The client of bench/bench_egress.sh. The same file runs inside a sandbox (through the egress
gate) and in a test-world client netns (a plain veth), so both paths are measured by the same
code. Stdlib only; numeric addresses only (except `resolve`); every socket has a timeout.
Arguments are positional (the sandbox's command gate allows the tool no flags).

Usage:
  egress_client.py get ADDR PORT PATH           one HTTP GET; prints {"bytes", "seconds",
                                                "cpu_seconds", "status"} (seconds from connect()
                                                to the last body byte; CPU time of the client)
  egress_client.py connect ADDR PORT N PAUSE_MS N times connect() + close(), PAUSE_MS apart;
                                                prints {"us": [each connect+close in µs], "errors"}
  egress_client.py resolve NAME                 getaddrinfo through the system resolver; prints
                                                {"addrs": [...]}
Exit 0 on success, 1 on a failure (the JSON line says why).
"""
import json
import socket
import sys
import time

TIMEOUT = 30.0
BUF = 1 << 20


def get(addr, port, path):
    buf = bytearray(BUF)
    view = memoryview(buf)
    c0, t0 = time.process_time(), time.perf_counter()
    s = socket.create_connection((addr, int(port)), timeout=TIMEOUT)
    try:
        s.sendall(("GET %s HTTP/1.0\r\nHost: %s\r\nUser-Agent: firebreak-bench\r\n\r\n"
                   % (path, addr)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            n = s.recv_into(view)
            if n == 0:
                raise OSError("connection closed in the response head")
            head += bytes(view[:n])
            if b"\r\n\r\n" not in head and len(head) > 65536:
                raise OSError("response head too long")
        head, _, rest = head.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        length = None
        for line in lines[1:]:
            k, _, v = line.partition(":")
            if k.strip().lower() == "content-length":
                length = int(v.strip())
        got = len(rest)
        while length is None or got < length:
            n = s.recv_into(view)
            if n == 0:
                break
            got += n
        t1, c1 = time.perf_counter(), time.process_time()
    finally:
        s.close()
    ok = 200 <= status < 300 and (length is None or got == length)
    print(json.dumps({"bytes": got, "seconds": t1 - t0, "cpu_seconds": c1 - c0, "status": status,
                      "ok": ok}))
    return 0 if ok else 1


def connect(addr, port, n, pause_ms):
    samples, errors = [], []
    pause = float(pause_ms) / 1000.0
    target = (addr, int(port))
    for _ in range(int(n)):
        s = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(TIMEOUT)
        t0 = time.perf_counter_ns()
        try:
            s.connect(target)
            s.close()
            samples.append((time.perf_counter_ns() - t0) / 1000.0)
        except OSError as e:
            s.close()
            errors.append(str(e))
        if pause:
            time.sleep(pause)
    print(json.dumps({"us": samples, "errors": errors[:5], "n_errors": len(errors)}))
    return 0 if not errors else 1


def resolve(name):
    try:
        infos = socket.getaddrinfo(name, 80, socket.AF_INET, socket.SOCK_STREAM)
    except socket.gaierror as e:
        print(json.dumps({"addrs": [], "error": str(e)}))
        return 1
    print(json.dumps({"addrs": sorted({i[4][0] for i in infos})}))
    return 0


def main(argv):
    cmds = {"get": (get, 3), "connect": (connect, 4), "resolve": (resolve, 1)}
    if len(argv) < 2 or argv[1] not in cmds or len(argv) - 2 != cmds[argv[1]][1]:
        sys.stderr.write(__doc__)
        return 2
    fn = cmds[argv[1]][0]
    try:
        return fn(*argv[2:])
    except (OSError, ValueError) as e:
        print(json.dumps({"error": "%s: %s" % (type(e).__name__, e), "ok": False}))
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
