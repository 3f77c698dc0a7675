"""Shared parts of the test world's services (metadata.py, c2.py, registry.py): one JSON line per
contact, a hard lifetime, address parsing and an HTTP server for IPv4 or IPv6.

Stdlib only, for Debian's /usr/bin/python3. Nothing here resolves a name or opens a socket that
is not a listener given on the command line: the world has no route to anything real, and a
service must not even try."""
import argparse
import datetime
import json
import os
import signal
import socket
import socketserver
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOG_DATA_MAX = 512  # bytes of a contact's payload (or request line) kept in its log line
HTTP_BODY_MAX = 64 * 1024  # request body read (and discarded) per HTTP request
HTTP_IDLE_TIMEOUT = 30  # seconds a silent HTTP client may hold a connection


class ContactLog:
    """Appends one JSON object per line to a file. Each line goes out in one write() on an
    O_APPEND descriptor, so lines of concurrent threads never interleave and a reader sees
    whole lines only."""

    def __init__(self, path, service):
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
        self.service = service

    def write(self, **fields):
        now = datetime.datetime.now(datetime.timezone.utc)
        rec = {"time": now.isoformat(timespec="milliseconds"), "service": self.service}
        rec.update(fields)
        os.write(self.fd, (json.dumps(rec, separators=(",", ":")) + "\n").encode())


def text(data):
    """A payload as loggable text: its first LOG_DATA_MAX bytes, undecodable bytes escaped."""
    return data[:LOG_DATA_MAX].decode("utf-8", errors="backslashreplace")


def endpoints(sock_local, sock_peer):
    """The src/sport/dst/dport members of a log line from getsockname()/getpeername()."""
    return {"src": sock_peer[0], "sport": sock_peer[1], "dst": sock_local[0],
            "dport": sock_local[1]}


def parse_addr(s):
    """"198.51.100.7:80" or "[fd00:ec2::254]:80" -> (family, host, port)."""
    if s.startswith("["):
        host, sep, port = s[1:].partition("]:")
        family = socket.AF_INET6
    else:
        host, sep, port = s.rpartition(":")
        family = socket.AF_INET
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError("not ADDR:PORT or [ADDR6]:PORT: %r" % s)
    try:
        socket.inet_pton(family, host)
    except OSError:
        raise argparse.ArgumentTypeError("not a numeric address: %r" % host) from None
    return family, host, int(port)


def arg_parser(description):
    """The options every service takes: its log file and its lifetime."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--log", required=True, help="contact log (JSON lines, appended)")
    p.add_argument("--timeout", type=int, required=True,
                   help="seconds after which the service exits on its own")
    return p


def run_forever(name, timeout):
    """Arms the lifetime and parks the main thread; the serving threads are daemons, so the
    process ends as soon as the main thread does (SIGALRM after timeout s, or SIGTERM)."""
    def expire(signum, frame):
        sys.stderr.write("%s: lifetime of %d s over, exiting\n" % (name, timeout))
        os._exit(0)

    def term(signum, frame):
        os._exit(0)

    signal.signal(signal.SIGALRM, expire)
    signal.signal(signal.SIGTERM, term)
    signal.alarm(timeout)
    sys.stderr.write("%s: serving for %d s\n" % (name, timeout))
    sys.stderr.flush()
    while True:
        signal.pause()


def serve_in_thread(server):
    threading.Thread(target=server.serve_forever, daemon=True).start()


class HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def server_bind(self):
        # HTTPServer.server_bind calls socket.getfqdn(), a reverse DNS lookup: skip it.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]


def http_server(addr, handler, log):
    """A listening HTTP server on addr (from parse_addr) whose handler logs to log."""
    family, host, port = addr
    cls = type("HTTPServer%d" % family, (HTTPServer,), {"address_family": family})
    server = cls((host, port), handler)
    server.contact_log = log
    return server


class ContactHandler(BaseHTTPRequestHandler):
    """Logs one line per HTTP request (event "request"), and one line (event "connect") for a
    connection that never sent a request we could parse, so every contact leaves a trace.
    Subclasses implement route()."""

    server_version = "firebreak-world"
    sys_version = ""
    protocol_version = "HTTP/1.1"
    timeout = HTTP_IDLE_TIMEOUT

    def setup(self):
        super().setup()
        self.logged = False

    def log_message(self, fmt, *args):
        pass  # the contact log says it all

    def contact(self, status, nbytes, **extra):
        self.logged = True
        self.server.contact_log.write(
            event="request", **endpoints(self.connection.getsockname(), self.client_address),
            method=self.command, path=self.path, host=self.headers.get("Host"),
            user_agent=self.headers.get("User-Agent"), status=status, bytes=nbytes, **extra)

    def finish(self):
        try:
            super().finish()
        finally:
            if not self.logged:
                self.server.contact_log.write(
                    event="connect",
                    **endpoints(self.connection.getsockname(), self.client_address),
                    request=text(getattr(self, "raw_requestline", b"")))

    def read_body(self):
        """The request body (up to HTTP_BODY_MAX bytes kept; the rest is read and dropped)."""
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            return self.read_chunked()
        try:
            left = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            left = 0
        kept = b""
        while left > 0:
            chunk = self.rfile.read(min(left, 65536))
            if not chunk:
                break
            left -= len(chunk)
            if len(kept) < HTTP_BODY_MAX:
                kept += chunk[:HTTP_BODY_MAX - len(kept)]
        return kept

    def read_chunked(self):
        """A chunked request body, as read_body keeps it (chunk extensions and trailers
        dropped)."""
        kept = b""
        while True:
            size = int(self.rfile.readline(1024).split(b";")[0].strip() or b"0", 16)
            if size == 0:
                break
            while size > 0:
                chunk = self.rfile.read(min(size, 65536))
                if not chunk:
                    return kept
                size -= len(chunk)
                if len(kept) < HTTP_BODY_MAX:
                    kept += chunk[:HTTP_BODY_MAX - len(kept)]
            self.rfile.readline(1024)  # the CRLF after a chunk
        while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
            pass  # trailers
        return kept

    def reply(self, status, body, ctype="text/plain", headers=None, **extra):
        """Sends a whole response and logs the request (also when the client went away)."""
        try:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
        finally:
            self.contact(status, len(body), **extra)

    def handle_any(self):
        body = self.read_body()
        self.body_raw, self.body_len = body, len(body)  # whole, up to HTTP_BODY_MAX
        extra = {"body": text(body)} if body else {}
        self.route(**extra)

    do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = do_PATCH = do_OPTIONS = handle_any
