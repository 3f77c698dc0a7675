"""A step an attacker in another step goes after: it holds a secret in its environment, listens on
an abstract unix socket, keeps a System V shared memory segment (key 0x46425354), says its pid (as the sandbox sees it) in /workspace/victim.pid, and waits
until /workspace/victim.done appears. It exits 0 if nothing reached it, 3 if a connection did."""
import ctypes
import os
import socket
import sys
import time

# A System V shared memory segment under a known key, as a worker pool might keep one.
libc = ctypes.CDLL(None, use_errno=True)
if libc.shmget(0x46425354, 4096, 0o1600) < 0:  # IPC_CREAT | 0600
    sys.exit("shmget: %s" % os.strerror(ctypes.get_errno()))
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.bind("\0firebreak-victim")
sock.listen(4)
sock.setblocking(False)
with open("/workspace/victim.pid.tmp", "w") as f:
    f.write(str(os.getpid()))
os.rename("/workspace/victim.pid.tmp", "/workspace/victim.pid")
reached = 0
deadline = time.monotonic() + 50
while not os.path.exists("/workspace/victim.done") and time.monotonic() < deadline:
    try:
        sock.accept()
        reached = 1
    except BlockingIOError:
        pass
    time.sleep(0.05)
sys.exit(3 if reached else 0)
