#!/usr/bin/python3
"""Fake package registry for the test world: the one destination a policy allowlists.

Serves plain HTTP (also on 443: the gate filters addresses and ports, not TLS) on
198.51.100.7:80 and :443 by default:
  /simple/                     PEP 503 index naming one project, demo
  /simple/demo/                a link to the sdist with its sha256
  /packages/demo-1.0.tar.gz    a small, valid sdist built in memory at start (same bytes every run)
  /big[?mib=N]                 N MiB of zeros (default --big-mib), streamed, for throughput
Every request, and every connection that sent none, is one JSON line in --log; a /big line
carries the bytes really sent and the seconds it took.

Usage: registry.py --log FILE --timeout SECONDS [--listen ADDR:PORT]... [--big-mib N]
"""
import gzip
import hashlib
import io
import tarfile
import time
from urllib.parse import parse_qs, urlsplit

from common import (ContactHandler, ContactLog, arg_parser, http_server, parse_addr, run_forever,
                    serve_in_thread)

BIG_MIB_MAX = 16384  # the largest /big a client may ask for
BIG_CHUNK = 64 * 1024
SDIST_NAME = "demo-1.0.tar.gz"

SETUP_PY = b'from setuptools import setup\nsetup(name="demo", version="1.0", packages=["demo"])\n'
PKG_INFO = b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nSummary: Firebreak test world demo\n"
INIT_PY = b'"""The Firebreak test world\'s demo package."""\nVERSION = "1.0"\n'


def build_sdist():
    """A reproducible demo-1.0.tar.gz of a few KB (fixed mtimes and owners, and a data file of
    hash-chained bytes that gzip cannot shrink, so the size is stable)."""
    data, block = b"", b"firebreak-world"
    while len(data) < 4096:
        block = hashlib.sha256(block).digest()
        data += block
    files = [("PKG-INFO", PKG_INFO), ("setup.py", SETUP_PY), ("demo/__init__.py", INIT_PY),
             ("demo/data.bin", data)]
    raw = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz:
        with tarfile.open(fileobj=gz, mode="w", format=tarfile.USTAR_FORMAT) as tar:
            for name, content in files:
                info = tarfile.TarInfo("demo-1.0/" + name)
                info.size, info.mtime, info.mode = len(content), 0, 0o644
                tar.addfile(info, io.BytesIO(content))
    return raw.getvalue()


SDIST = build_sdist()
SDIST_SHA256 = hashlib.sha256(SDIST).hexdigest()
INDEX = b'<!DOCTYPE html>\n<html><body>\n<a href="/simple/demo/">demo</a>\n</body></html>\n'
PROJECT = ('<!DOCTYPE html>\n<html><body>\n<a href="/packages/%s#sha256=%s">%s</a>\n'
           '</body></html>\n' % (SDIST_NAME, SDIST_SHA256, SDIST_NAME)).encode()


class Handler(ContactHandler):
    big_mib = 0  # set in main()

    def route(self, **extra):
        # The body is logged as its length, as api.py does: reply() takes the answer's body.
        body = extra.pop("body", "")
        if body:
            extra["body_bytes"] = len(body.encode())
        url = urlsplit(self.path)
        if url.path in ("/simple", "/simple/"):
            self.reply(200, INDEX, "text/html", **extra)
        elif url.path in ("/simple/demo", "/simple/demo/"):
            self.reply(200, PROJECT, "text/html", **extra)
        elif url.path == "/packages/" + SDIST_NAME:
            self.reply(200, SDIST, "application/gzip", **extra)
        elif url.path == "/big":
            self.big(parse_qs(url.query).get("mib", [None])[0], extra)
        else:
            self.reply(404, b"not found\n", **extra)

    def big(self, mib, extra):
        if mib is None:
            mib = self.big_mib
        elif not mib.isdigit() or int(mib) > BIG_MIB_MAX:
            self.reply(400, b"mib must be 0..%d\n" % BIG_MIB_MAX, **extra)
            return
        length, sent, start = int(mib) * 1024 * 1024, 0, time.monotonic()
        chunk = bytes(BIG_CHUNK)
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(length))
            self.end_headers()
            if self.command != "HEAD":
                while sent < length:
                    n = min(BIG_CHUNK, length - sent)
                    self.wfile.write(chunk[:n])
                    sent += n
        finally:
            self.contact(200, sent, seconds=round(time.monotonic() - start, 3), **extra)


def main():
    p = arg_parser(__doc__.splitlines()[0])
    p.add_argument("--listen", type=parse_addr, action="append",
                   help="ADDR:PORT (default 198.51.100.7:80 and 198.51.100.7:443)")
    p.add_argument("--big-mib", type=int, default=64, help="size of /big without ?mib= (MiB)")
    args = p.parse_args()
    if not 0 <= args.big_mib <= BIG_MIB_MAX:
        p.error("--big-mib must be 0..%d" % BIG_MIB_MAX)
    Handler.big_mib = args.big_mib
    listen = args.listen or [parse_addr("198.51.100.7:80"), parse_addr("198.51.100.7:443")]
    log = ContactLog(args.log, "registry")
    servers = [http_server(addr, Handler, log) for addr in listen]
    for server in servers:
        serve_in_thread(server)
    run_forever("registry", args.timeout)


if __name__ == "__main__":
    main()
