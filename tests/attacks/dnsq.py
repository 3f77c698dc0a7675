# DNS from inside a sandbox, as a tool (or an attacker) would: through the C library, and by
# hand to the nameserver in resolv.conf. dig may be missing: the packets are built here.
# usage: dnsq.py getaddrinfo NAME | query NAME TYPE [tcp] | tunnel DOMAIN N | garbage | flood N
#        | queries NAME N PAUSE (N A queries, ids 1..N, PAUSE seconds apart, each asked again
#          until answered: prints "answered N")
#        | qflood SECONDS [PROCS] (well-formed queries for one name the gate refuses, as fast as
#          they go from PROCS processes for SECONDS of wall-clock time, answers not awaited: a
#          flood frozen past its end stops once thawed; prints each process's count)
import os, random, socket, string, struct, sys, time

def nameserver():
    for line in open("/etc/resolv.conf"):
        w = line.split()
        if len(w) >= 2 and w[0] == "nameserver":
            return w[1]
    raise SystemExit("no nameserver")

TYPES = {"A": 1, "NULL": 10, "TXT": 16, "AAAA": 28}

def packet(name, qtype, qid):
    q = b"".join(bytes([len(l)]) + l.encode() for l in name.rstrip(".").split(".")) + b"\0"
    return struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0) + q + struct.pack(">HH", TYPES[qtype], 1)

def query(name, qtype, tcp=False, qid=None):
    qid = random.randrange(65536) if qid is None else qid
    msg = packet(name, qtype, qid)
    if tcp:
        s = socket.create_connection((nameserver(), 53), timeout=3)
        s.sendall(struct.pack(">H", len(msg)) + msg)
        n = struct.unpack(">H", s.recv(2))[0]
        data = b""
        while len(data) < n:
            data += s.recv(n - len(data))
    else:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(3)
        s.sendto(msg, (nameserver(), 53))
        data = s.recv(4096)
    s.close()
    return qid, data[3] & 0xF

cmd = sys.argv[1]
if cmd == "getaddrinfo":
    try:
        addrs = sorted({a[4][0] for a in socket.getaddrinfo(sys.argv[2], 80, proto=socket.IPPROTO_TCP)})
        print(" ".join(addrs))
    except socket.gaierror as e:
        print("gaierror", e.errno)
elif cmd == "query":
    qid, rcode = query(sys.argv[2], sys.argv[3], len(sys.argv) > 4 and sys.argv[4] == "tcp")
    print(qid, rcode)
elif cmd == "tunnel":
    alphabet = string.ascii_lowercase + string.digits
    for i in range(int(sys.argv[3])):
        label = "".join(random.choice(alphabet) for _ in range(50))
        query(label + "." + sys.argv[2], "A", qid=i)
    print("sent", sys.argv[3])
elif cmd == "flood":  # N datagrams too short to be DNS, as fast as they go: the gate ignores them
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for i in range(int(sys.argv[2])):
        s.sendto(b"flood%02d" % (i % 100), (nameserver(), 53))
    print("sent", sys.argv[2])
elif cmd == "queries":
    for i in range(1, int(sys.argv[3]) + 1):
        while True:
            try:
                query(sys.argv[2], "A", qid=i)
                break
            except socket.timeout:
                pass
        time.sleep(float(sys.argv[4]))
    print("answered", sys.argv[3])
elif cmd == "qflood":
    end = time.monotonic() + float(sys.argv[2])
    kids = []
    for _ in range(int(sys.argv[3]) - 1 if len(sys.argv) > 3 else 0):
        pid = os.fork()
        if pid == 0:
            kids = None  # a child floods, and waits for no one
            break
        kids.append(pid)
    # Connected: a datagram with no address of its own is no sendmsg record of the process
    # tracer, so the flood is the DNS tracer's alone.
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect((nameserver(), 53))
    n = 0
    while time.monotonic() < end:  # read before each query: thawed past its end, no more
        try:
            s.send(packet("flood.invalid", "A", n & 0xFFFF))
        except OSError:  # ECONNREFUSED, ENOBUFS: the flood goes on
            pass
        n += 1
    print(n, flush=True)
    for pid in kids or []:
        os.waitpid(pid, 0)
elif cmd == "garbage":
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(os.urandom(7), (nameserver(), 53))  # shorter than a header
    s.sendto(b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\xc0\x0c", (nameserver(), 53))  # a pointer to itself
    print("sent")
