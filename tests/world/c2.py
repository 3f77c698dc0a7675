#!/usr/bin/python3
"""Fake command-and-control server for the test world: the place a secret would be sent to.

TCP listeners (default 203.0.113.66:443 and :4444) accept, log the connection at once (event
"accept": a bare connect is already a contact), answer the first data with one line, read until
the client closes, goes quiet for TCP_IDLE_TIMEOUT s or sends TCP_READ_MAX bytes, and log what came
(event "recv"). UDP listeners (default 203.0.113.66:53) log every datagram (event "datagram",
with the DNS query name when it parses as one, so a DNS tunnel shows its payload) and answer it
with one short datagram.

Usage: c2.py --log FILE --timeout SECONDS [--tcp ADDR:PORT]... [--udp ADDR:PORT]...
"""
import socket
import threading

from common import ContactLog, arg_parser, endpoints, parse_addr, run_forever, text

TCP_IDLE_TIMEOUT = 5  # seconds of silence before a connection is logged and closed
TCP_READ_MAX = 1024 * 1024  # bytes read from one connection, at most
UDP_DATAGRAM_MAX = 65535
REPLY = b"firebreak-world c2\n"


def dns_qname(data):
    """The query name of a DNS message, or None when data is not one."""
    if len(data) < 13:
        return None
    labels, i = [], 12
    while i < len(data) and data[i] != 0:
        n = data[i]
        if n > 63 or i + 1 + n > len(data):
            return None
        labels.append(data[i + 1:i + 1 + n].decode("ascii", errors="backslashreplace"))
        i += 1 + n
    return ".".join(labels) if i < len(data) else None


def serve_tcp_conn(conn, peer, log):
    with conn:
        ends = endpoints(conn.getsockname(), peer)
        log.write(event="accept", proto="tcp", **ends)
        conn.settimeout(TCP_IDLE_TIMEOUT)
        data, total, end = b"", 0, "eof"
        try:
            while total < TCP_READ_MAX:
                chunk = conn.recv(65536)
                if not chunk:
                    break
                if total == 0:
                    conn.sendall(REPLY)
                total += len(chunk)
                data += chunk[:max(0, 4096 - len(data))]
            else:
                end = "read limit"
        except socket.timeout:
            end = "idle"
        except OSError as e:
            end = "error: %s" % e.strerror
        log.write(event="recv", proto="tcp", **ends, bytes=total, data=text(data), end=end)


def serve_tcp(sock, log):
    while True:
        conn, peer = sock.accept()
        threading.Thread(target=serve_tcp_conn, args=(conn, peer, log), daemon=True).start()


def serve_udp(sock, log):
    local = sock.getsockname()
    while True:
        data, peer = sock.recvfrom(UDP_DATAGRAM_MAX)
        log.write(event="datagram", proto="udp", **endpoints(local, peer), bytes=len(data),
                  data=text(data), dns_qname=dns_qname(data))
        try:
            sock.sendto(REPLY, peer)
        except OSError:
            pass


def listener(addr, kind):
    family, host, port = addr
    sock = socket.socket(family, kind)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    if kind == socket.SOCK_STREAM:
        sock.listen(64)
    return sock


def main():
    p = arg_parser(__doc__.splitlines()[0])
    p.add_argument("--tcp", type=parse_addr, action="append",
                   help="TCP ADDR:PORT (default 203.0.113.66:443 and 203.0.113.66:4444)")
    p.add_argument("--udp", type=parse_addr, action="append",
                   help="UDP ADDR:PORT (default 203.0.113.66:53)")
    args = p.parse_args()
    tcp = args.tcp or [parse_addr("203.0.113.66:443"), parse_addr("203.0.113.66:4444")]
    udp = args.udp or [parse_addr("203.0.113.66:53")]
    log = ContactLog(args.log, "c2")
    # Bind everything before serving anything: a port that cannot be had fails the start.
    socks = [(listener(a, socket.SOCK_STREAM), serve_tcp) for a in tcp]
    socks += [(listener(a, socket.SOCK_DGRAM), serve_udp) for a in udp]
    for sock, serve in socks:
        threading.Thread(target=serve, args=(sock, log), daemon=True).start()
    run_forever("c2", args.timeout)


if __name__ == "__main__":
    main()
