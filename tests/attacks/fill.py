# Writes 1 MiB blocks into a file under the given directory until the file system says no; prints
# how much got written and the error. The workspace's size cap must stop it.
import errno, os, sys

path = os.path.join(sys.argv[1] if len(sys.argv) > 1 else "/workspace", "fill.bin")
block, written = b"\0" * (1 << 20), 0
try:
    with open(path, "wb") as f:
        while written < (8 << 30):
            f.write(block)
            f.flush()
            written += len(block)
except OSError as e:
    print("written=%d error=%s" % (written, errno.errorcode.get(e.errno, e.errno)), flush=True)
    os.unlink(path)
    sys.exit(0)
print("written=%d error=none" % written)
