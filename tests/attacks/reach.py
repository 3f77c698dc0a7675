# Connects (TCP) or sends (UDP) to one destination and prints one JSON line: what happened.
# Usage: reach.py tcp|udp HOST PORT. HOST may be a name (resolved through the sandbox's
# resolver, the DNS gate) or an address. "errno" 1 (EPERM) is the kernel hook's refusal.
import json, socket, sys

kind, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
out = {"kind": kind, "host": host, "port": port}
try:
    addr = socket.getaddrinfo(host, port, socket.AF_INET)[0][4][0]
    out["addr"] = addr
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM if kind == "tcp" else socket.SOCK_DGRAM)
    s.settimeout(2)
    if kind == "tcp":
        s.connect((addr, port))
        s.sendall(b"GET /simple/ HTTP/1.0\r\nHost: registry.test\r\n\r\n")
        out["answer"] = s.recv(12).decode(errors="replace")
    else:
        s.sendto(b"ping", (addr, port))
    out["source"] = s.getsockname()[0]
    out["ok"] = True
except OSError as e:
    out["ok"] = False
    out["errno"] = e.errno
    out["error"] = str(e)
print(json.dumps(out))
