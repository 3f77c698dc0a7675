#!/usr/bin/python3
"""What a tool (or an attacker in it) sends over HTTP(S), and what came back, as one JSON line.

  http-try.py METHOD URL [body=N | bodyfile=F | bodytext=T] ['header=Name: value']... [host=H]
              [sni=NAME] [chunked=1 | chunksize=N] [pad=N] [decoyvar=NAME]
              [repeat=N every=SECONDS]
  http-try.py raw HOST PORT TEXT         bytes of TEXT ('\\r\\n' escapes) on a plain TCP connection
  http-try.py tunnel HOST SNI TARGET      TLS to HOST with SNI, then "CONNECT TARGET" inside it

(key=value, not --flags: the tool gate lets python3 take operands, not flags.) "@DECOY@" in the
URL, a header or bodytext= stands for the sandbox's decoy key ($OPENAI_API_KEY, or the variable
decoyvar=NAME names), so the decoy is put in inside, never on the command line.
The TLS context is Python's default: the sandbox's trust store (the deployment CA's bundle).
pad=N puts N bytes of "w" before the body (a decoy straddling the proxy's preview); chunksize=N
sends the body chunked in pieces of N bytes (chunked=1: one chunk).
Prints {"status": ..., "body": first 400 characters, "error": ..., "sent_sha256": the body's}, a
line per request: repeat=N makes the request N times, each on a new connection, sleeping
every=SECONDS between them (the rhythm of a beacon, or of a poll).
"""
import hashlib
import http.client
import json
import os
import socket
import ssl
import sys
import time
from urllib.parse import urlsplit


def out(**kv):
    print(json.dumps(kv, sort_keys=True))


def request(args):
    var = next((a.partition("=")[2] for a in args[2:] if a.startswith("decoyvar=")),
               "OPENAI_API_KEY")
    decoy = os.environ.get(var, "")
    method, url = args[0], args[1].replace("@DECOY@", decoy)
    body, headers, host, sni, chunked, pad = None, {}, None, None, 0, 0
    for a in args[2:]:
        k, _, v = a.partition("=")
        if k == "body":
            body = b"w" * int(v)
        elif k == "bodyfile":
            body = open(v, "rb").read()
        elif k == "bodytext":
            body = v.replace("@DECOY@", decoy).encode()
        elif k == "pad":
            pad = int(v)
        elif k == "chunksize":
            chunked = int(v)
        elif k == "header":
            name, _, value = v.partition(": ")
            headers[name] = value.replace("@DECOY@", decoy)
        elif k == "host":
            host = v
        elif k == "sni":
            sni = v
        elif k == "chunked":
            chunked = 1 << 30  # one chunk
        elif k in ("decoyvar", "repeat", "every"):
            pass  # read above, or by main
        else:
            raise SystemExit("unknown argument %r" % a)
    if body is not None and pad:
        body = b"w" * pad + body
    u = urlsplit(url)
    if u.scheme == "https":
        ctx = ssl.create_default_context()
        if sni:
            ctx.check_hostname = False  # the attacker's point: a name that is not the URL's
        conn = http.client.HTTPSConnection(u.hostname, u.port or 443, timeout=10, context=ctx)
        if sni:
            raw = socket.create_connection((u.hostname, u.port or 443), timeout=10)
            conn.sock = ctx.wrap_socket(raw, server_hostname=sni)
    else:
        conn = http.client.HTTPConnection(u.hostname, u.port or 80, timeout=10)
    path = u.path or "/"
    if u.query:
        path += "?" + u.query
    conn.putrequest(method, path, skip_host=True)
    conn.putheader("Host", host or u.netloc)
    for k, v in headers.items():
        conn.putheader(k, v)
    if body is not None and chunked:
        conn.putheader("Transfer-Encoding", "chunked")
    elif body is not None:
        conn.putheader("Content-Length", str(len(body)))
    conn.endheaders()
    if body is not None and chunked:
        for i in range(0, len(body), chunked):
            piece = body[i:i + chunked]
            conn.send(b"%x\r\n%s\r\n" % (len(piece), piece))
        conn.send(b"0\r\n\r\n")
    elif body is not None:
        conn.send(body)
    r = conn.getresponse()
    out(status=r.status, body=r.read()[:4000].decode("utf-8", "replace")[:400],
        sent_sha256=hashlib.sha256(body).hexdigest() if body is not None else None)


def raw(args):
    s = socket.create_connection((args[0], int(args[1])), timeout=10)
    s.sendall(args[2].encode().decode("unicode_escape").encode("latin-1"))
    data = b""
    try:
        while len(data) < 4000:
            chunk = s.recv(4000)
            if not chunk:
                break
            data += chunk
    except socket.timeout:
        pass
    out(status=None, body=data[:400].decode("utf-8", "replace"))


def tunnel(args):
    host, sni, target = args
    ctx = ssl.create_default_context()
    s = ctx.wrap_socket(socket.create_connection((host, 443), timeout=10), server_hostname=sni)
    s.sendall(b"CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target.encode(), target.encode()))
    data = s.recv(4000)
    line = data.split(b"\r\n", 1)[0].decode("utf-8", "replace")
    out(status=int(line.split()[1]) if len(line.split()) > 1 else None,
        body=data[:400].decode("utf-8", "replace"))


def once(args):
    try:
        if args[0] == "raw":
            raw(args[1:])
        elif args[0] == "tunnel":
            tunnel(args[1:])
        else:
            request(args)
    except (OSError, http.client.HTTPException) as e:
        out(status=None, error="%s: %s" % (type(e).__name__, e),
            errno=getattr(e, "errno", None))


def main():
    opts = dict(a.split("=", 1) for a in sys.argv[3:] if a.startswith(("repeat=", "every=")))
    for i in range(int(opts.get("repeat", 1))):
        if i:
            time.sleep(float(opts.get("every", 0)))
        once(sys.argv[1:])
        sys.stdout.flush()


if __name__ == "__main__":
    main()
