#!/usr/bin/python3
"""The server of bench/bench_proxy.sh, run in the test world's netns: one process serving the
same two paths on every address it is given, plain HTTP or HTTPS, so the proxied ports (80,
443) and the direct ones (8080, 8443) are answered by the very same code:

  /small        a 100-byte body
  /big?mib=N    N MiB of zeros, streamed in 1 MiB writes (N <= BIG_MIB_MAX)

HTTP/1.1 with Content-Length, so a client may keep the connection alive; "Connection: close"
closes it after the answer. Stdlib only; numeric listen addresses only; it resolves nothing,
logs nothing per request, and exits on its own after --timeout seconds (or on SIGTERM).

Usage: proxy_server.py --timeout S [--http ADDR:PORT]... [--https ADDR:PORT]... [--cert PEM --key PEM]
"""
import argparse
import os
import signal
import socket
import socketserver
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

BIG_MIB_MAX = 16384
SMALL = b"x" * 99 + b"\n"
CHUNK = bytes(1 << 20)
IDLE_TIMEOUT = 30  # seconds a silent client may hold a connection


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "firebreak-bench"
    sys_version = ""
    timeout = IDLE_TIMEOUT

    def setup(self):
        super().setup()
        # As a real server does: a response is not held back by Nagle's algorithm waiting for
        # the ACK of its head (with the client's delayed ACKs, 40 ms on a kept-alive connection).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, fmt, *args):
        pass

    def do_GET(self):
        url = urlsplit(self.path)
        if url.path == "/small":
            self.head(200, len(SMALL), SMALL)
        elif url.path == "/big":
            mib = parse_qs(url.query).get("mib", ["0"])[0]
            if not mib.isdigit() or int(mib) > BIG_MIB_MAX:
                self.head(400, 0)
                return
            self.head(200, int(mib) << 20)
            for _ in range(int(mib)):
                self.wfile.write(CHUNK)
        else:
            self.head(404, 0)

    def head(self, status, length, body=b""):
        """The response head, and a small body with it in the same write."""
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(length))
        self._headers_buffer.append(b"\r\n" + body)
        self.flush_headers()


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def server_bind(self):
        # HTTPServer.server_bind would call socket.getfqdn(), a reverse lookup: skip it.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]


def addr(s):
    host, sep, port = s.rpartition(":")
    if not sep or not port.isdigit():
        raise argparse.ArgumentTypeError("not ADDR:PORT: %r" % s)
    return host, int(port)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--timeout", type=int, required=True)
    p.add_argument("--http", type=addr, action="append", default=[])
    p.add_argument("--https", type=addr, action="append", default=[])
    p.add_argument("--cert")
    p.add_argument("--key")
    args = p.parse_args()
    servers = [Server(a, Handler) for a in args.http]
    if args.https:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.cert, args.key)
        for a in args.https:
            s = Server(a, Handler)
            # The handshake runs in the serving thread, on the first read.
            s.socket = ctx.wrap_socket(s.socket, server_side=True, do_handshake_on_connect=False)
            servers.append(s)
    for s in servers:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    signal.signal(signal.SIGALRM, lambda *_: os._exit(0))
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    signal.alarm(args.timeout)
    sys.stderr.write("proxy_server: listening\n")
    sys.stderr.flush()
    while True:
        signal.pause()


if __name__ == "__main__":
    main()
