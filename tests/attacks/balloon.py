# Allocates and touches memory in 16 MiB chunks until it dies; prints how far it got. Inside a
# sandbox with a memory cap the kernel's OOM killer must end it within its cgroup.
import sys

chunks = []
limit_mb = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
for i in range(limit_mb // 16):
    chunks.append(bytearray(16 << 20))  # bytearray touches every page (zeroed)
    print("allocated %d MiB" % ((i + 1) * 16), flush=True)
print("survived", flush=True)
