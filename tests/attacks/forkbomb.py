# Forks until it cannot, for a few seconds, then reports how far it got. Inside a sandbox the pids
# cap must stop it (fork fails with EAGAIN) long before the host feels it.
import os, sys, time

children, refused = 0, 0
deadline = time.time() + float(sys.argv[1] if len(sys.argv) > 1 else 3)
while time.time() < deadline:
    try:
        pid = os.fork()
    except OSError:
        refused += 1
        time.sleep(0.001)
        continue
    if pid == 0:
        time.sleep(30)  # hold the pid; the step's cgroup kill ends it
        os._exit(0)
    children += 1
print("children=%d refused=%d" % (children, refused), flush=True)
