# Floods the process tracer with socket() and connect() records: PROCS processes (default 2), each
# opening a TCP socket and connecting it to loopback port 9 (nothing listens: refused at once) in
# a tight loop for SECONDS. Prints how many connects were made.
# Usage: flood.py SECONDS [PROCS]
import os, socket, sys, time

seconds, procs = float(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 2
kids = []
for _ in range(procs):
    pid = os.fork()
    if pid == 0:
        # The clock is read each time round: frozen past its end, it stops as soon as thawed.
        n, end = 0, time.monotonic() + seconds
        while time.monotonic() < end:
            s = socket.socket()
            s.connect_ex(("127.0.0.1", 9))
            s.close()
            n += 1
        print(n, flush=True)
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.waitpid(pid, 0)
