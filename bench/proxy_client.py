#!/usr/bin/python3
"""The client of bench/bench_proxy.sh, run inside a sandbox. The same code measures a proxied
port (80, 443: the gate redirects it to the sandbox's squid) and a direct one (8080, 8443: the
gate forwards it at L3/L4), so the difference is the proxy's. Stdlib only; every socket has a
timeout. Arguments are positional (the sandbox's command gate allows the tool no flags).

HOST is resolved once per run through the system resolver (the sandbox's DNS gate, which puts
the address in the rule's sets, as a tool's lookup would); then the client connects to that
address, naming HOST in the Host header and, over TLS, in the SNI. Over TLS the server's
certificate is verified against the system's store (which, in a sandbox with an intercepted
rule, holds the deployment's CA) plus CAFILE ("-" for none), and its name against HOST.

Usage:
  proxy_client.py lat SCHEME HOST PORT PATH N KEEPALIVE CAFILE
      N sequential GETs; KEEPALIVE 0: a fresh TCP (and TLS) connection each, "Connection:
      close", timed from connect() to the body's last byte; 1: one kept-alive connection
      (reopened if the far end closes it, the reopening counted in that request's time).
      Prints {"us": [each request in µs], "opened": [the indexes in us of the requests that
      opened a connection], "connections", "n_errors", "errors": [first five]}
  proxy_client.py get SCHEME HOST PORT PATH CAFILE
      one GET; prints {"bytes", "seconds" (connect() to the last byte), "cpu_seconds", "status",
      "ok"}
Exit 0 on success, 1 on a failure (the JSON line says why).
"""
import json
import socket
import ssl
import sys
import time

TIMEOUT = 30.0
BUF = 1 << 20
HEAD_MAX = 65536


def resolve(host, port):
    infos = socket.getaddrinfo(host, int(port), socket.AF_INET, socket.SOCK_STREAM)
    return infos[0][4][0]


def tls_context(cafile):
    ctx = ssl.create_default_context()
    if cafile != "-":
        ctx.load_verify_locations(cafile)
    return ctx


def open_conn(scheme, addr, host, port, ctx):
    s = socket.create_connection((addr, int(port)), timeout=TIMEOUT)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if scheme == "https":
        s = ctx.wrap_socket(s, server_hostname=host)
    return s


class Reader:
    """Reads HTTP/1.1 responses off one connection, keeping what follows a response."""

    def __init__(self, sock):
        self.sock, self.buf = sock, b""

    def more(self):
        data = self.sock.recv(BUF)
        if not data:
            raise EOFError("connection closed")
        self.buf += data

    def response(self):
        """(status, body length, whether the server keeps the connection)."""
        while b"\r\n\r\n" not in self.buf:
            if len(self.buf) > HEAD_MAX:
                raise OSError("response head too long")
            self.more()
        head, _, self.buf = self.buf.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        length, keep = None, lines[0].startswith("HTTP/1.1")
        for line in lines[1:]:
            k, _, v = line.partition(":")
            k, v = k.strip().lower(), v.strip().lower()
            if k == "content-length":
                length = int(v)
            elif k == "connection":
                keep = v != "close"
        if length is None:
            raise OSError("no Content-Length")
        while len(self.buf) < length:
            self.more()
        self.buf = self.buf[length:]
        return status, length, keep


def request(host, path, keepalive):
    return ("GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: firebreak-bench\r\nAccept: */*\r\n%s\r\n"
            % (path, host, "" if keepalive else "Connection: close\r\n")).encode()


def lat(scheme, host, port, path, n, keepalive, cafile):
    keepalive = keepalive == "1"
    ctx = tls_context(cafile) if scheme == "https" else None
    addr = resolve(host, port)
    req = request(host, path, keepalive)
    samples, opened, errors, conns = [], [], [], 0
    sock = reader = None
    for _ in range(int(n)):
        t0 = time.perf_counter_ns()
        try:
            if sock is None:
                sock = open_conn(scheme, addr, host, port, ctx)
                reader, conns = Reader(sock), conns + 1
                opened.append(len(samples))
            sock.sendall(req)
            status, _, keep = reader.response()
            if status != 200:
                raise OSError("status %d" % status)
            samples.append((time.perf_counter_ns() - t0) / 1000.0)
            if not (keepalive and keep):
                sock.close()
                sock = None
        except (OSError, EOFError, ValueError) as e:
            errors.append("%s: %s" % (type(e).__name__, e))
            if sock is not None:
                sock.close()
                sock = None
    if sock is not None:
        sock.close()
    print(json.dumps({"us": samples, "opened": opened, "connections": conns,
                      "n_errors": len(errors), "errors": errors[:5]}))
    return 0 if not errors else 1


def get(scheme, host, port, path, cafile):
    ctx = tls_context(cafile) if scheme == "https" else None
    addr = resolve(host, port)
    buf = bytearray(BUF)
    view = memoryview(buf)
    c0, t0 = time.process_time(), time.perf_counter()
    s = open_conn(scheme, addr, host, port, ctx)
    try:
        s.sendall(request(host, path, False))
        head = b""
        while b"\r\n\r\n" not in head:
            n = s.recv_into(view)
            if n == 0:
                raise OSError("connection closed in the response head")
            head += bytes(view[:n])
            if b"\r\n\r\n" not in head and len(head) > HEAD_MAX:
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
            n = s.recv_into(view, BUF)
            if n == 0:
                break
            got += n
        t1, c1 = time.perf_counter(), time.process_time()
    finally:
        s.close()
    ok = status == 200 and length is not None and got == length
    print(json.dumps({"bytes": got, "seconds": t1 - t0, "cpu_seconds": c1 - c0, "status": status,
                      "ok": ok}))
    return 0 if ok else 1


def main(argv):
    cmds = {"lat": (lat, 7), "get": (get, 5)}
    if len(argv) < 2 or argv[1] not in cmds or len(argv) - 2 != cmds[argv[1]][1]:
        sys.stderr.write(__doc__)
        return 2
    fn = cmds[argv[1]][0]
    try:
        return fn(*argv[2:])
    except (OSError, EOFError, ValueError) as e:
        print(json.dumps({"error": "%s: %s" % (type(e).__name__, e), "ok": False}))
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
