#!/usr/bin/python3
"""A small client for the test world's services, for world.sh's readiness probe and for tests
(Debian has no dig here, and curl may be missing inside a sandbox). Stdlib only; never reads
proxy settings or resolv.conf: every address is numeric and every call has a timeout.

Usage:
  client.py http URL [--method M] [--out FILE | --count]   body to stdout (or FILE); --count
                                                            prints the bytes received instead;
                                                            exit 0 on 2xx, 1 otherwise
  client.py tcp ADDR PORT DATA                              sends DATA, prints the reply line
  client.py udp ADDR PORT DATA [--no-reply]                 sends one datagram, prints the reply
  client.py dns SERVER NAME [--tcp] [--type A|AAAA|TXT]     prints "RCODE addr..."
Options common to all: --timeout SECONDS (default 3). Exit 2 on a network error.
"""
import argparse
import http.client
import random
import socket
import struct
import sys
from urllib.parse import urlsplit

RCODES = {0: "NOERROR", 1: "FORMERR", 2: "SERVFAIL", 3: "NXDOMAIN", 4: "NOTIMP", 5: "REFUSED"}
QTYPES = {"A": 1, "AAAA": 28, "TXT": 16}
DNS_MSG_MAX = 65535


def family_of(addr):
    return socket.AF_INET6 if ":" in addr else socket.AF_INET


def cmd_http(args):
    url = urlsplit(args.url)
    if url.scheme != "http" or not url.hostname:
        sys.exit("client.py: only http://NUMERIC-ADDRESS[:PORT]/PATH URLs")
    conn = http.client.HTTPConnection(url.hostname, url.port or 80, timeout=args.timeout)
    path = url.path or "/"
    if url.query:
        path += "?" + url.query
    conn.request(args.method, path)
    resp = conn.getresponse()
    out = open(args.out, "wb") if args.out else sys.stdout.buffer
    total = 0
    while True:
        chunk = resp.read(256 * 1024)
        if not chunk:
            break
        total += len(chunk)
        if not args.count:
            out.write(chunk)
    out.flush()
    if args.count:
        print(total)
    print("HTTP %d, %d bytes" % (resp.status, total), file=sys.stderr)
    return 0 if 200 <= resp.status < 300 else 1


def cmd_tcp(args):
    with socket.create_connection((args.addr, args.port), timeout=args.timeout) as s:
        s.sendall(args.data.encode())
        reply = s.makefile("rb").readline()
    sys.stdout.write(reply.decode(errors="backslashreplace"))
    return 0


def cmd_udp(args):
    with socket.socket(family_of(args.addr), socket.SOCK_DGRAM) as s:
        s.settimeout(args.timeout)
        s.sendto(args.data.encode(), (args.addr, args.port))
        if args.no_reply:
            return 0
        reply, _ = s.recvfrom(65535)
    sys.stdout.write(reply.decode(errors="backslashreplace"))
    return 0


def dns_query(name, qtype):
    qid = random.randrange(65536)
    header = struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    qname = b""
    for label in name.rstrip(".").split("."):
        if not 0 < len(label) <= 63:
            sys.exit("client.py: bad DNS label in %r" % name)
        qname += bytes([len(label)]) + label.encode()
    return qid, header + qname + b"\0" + struct.pack("!HH", qtype, 1)


def skip_name(msg, i):
    while True:
        n = msg[i]
        if n == 0:
            return i + 1
        if n & 0xC0 == 0xC0:
            return i + 2
        i += 1 + n


def dns_answer(msg, qid):
    """"RCODE addr..." from a response; raises ValueError when it is not the answer to qid."""
    rid, flags, qd, an = struct.unpack("!HHHH", msg[:8])
    if rid != qid or not flags & 0x8000:
        raise ValueError("not the answer to our query")
    i = 12
    for _ in range(qd):
        i = skip_name(msg, i) + 4
    out = [RCODES.get(flags & 0xF, "RCODE%d" % (flags & 0xF))]
    for _ in range(an):
        i = skip_name(msg, i)
        rtype, _, _, rdlen = struct.unpack("!HHIH", msg[i:i + 10])
        rdata = msg[i + 10:i + 10 + rdlen]
        i += 10 + rdlen
        if rtype == 1:
            out.append(socket.inet_ntop(socket.AF_INET, rdata))
        elif rtype == 28:
            out.append(socket.inet_ntop(socket.AF_INET6, rdata))
        elif rtype == 16:
            out.append(repr(rdata[1:1 + rdata[0]].decode(errors="backslashreplace")))
    return " ".join(out)


def cmd_dns(args):
    qid, query = dns_query(args.name, QTYPES[args.type])
    if args.tcp:
        with socket.create_connection((args.server, 53), timeout=args.timeout) as s:
            s.sendall(struct.pack("!H", len(query)) + query)
            f = s.makefile("rb")
            n = struct.unpack("!H", f.read(2))[0]
            msg = f.read(n)
    else:
        with socket.socket(family_of(args.server), socket.SOCK_DGRAM) as s:
            s.settimeout(args.timeout)
            s.sendto(query, (args.server, 53))
            msg, _ = s.recvfrom(DNS_MSG_MAX)
    print(dns_answer(msg, qid))
    return 0


def main():
    p = argparse.ArgumentParser(description="client for the Firebreak test world")
    p.add_argument("--timeout", type=float, default=3.0)
    sub = p.add_subparsers(dest="cmd", required=True)
    h = sub.add_parser("http")
    h.add_argument("url")
    h.add_argument("--method", default="GET")
    h.add_argument("--out")
    h.add_argument("--count", action="store_true")
    t = sub.add_parser("tcp")
    t.add_argument("addr")
    t.add_argument("port", type=int)
    t.add_argument("data")
    u = sub.add_parser("udp")
    u.add_argument("addr")
    u.add_argument("port", type=int)
    u.add_argument("data")
    u.add_argument("--no-reply", action="store_true")
    d = sub.add_parser("dns")
    d.add_argument("server")
    d.add_argument("name")
    d.add_argument("--tcp", action="store_true")
    d.add_argument("--type", choices=sorted(QTYPES), default="A")
    args = p.parse_args()
    try:
        return {"http": cmd_http, "tcp": cmd_tcp, "udp": cmd_udp, "dns": cmd_dns}[args.cmd](args)
    except (OSError, ValueError, struct.error, http.client.HTTPException) as e:
        print("client.py %s: %s" % (args.cmd, e), file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
