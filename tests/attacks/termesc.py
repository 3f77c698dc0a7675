# Inside a sandbox: names and arguments made to drive the terminal of whoever reads the monitor's
# output (tests/integration/85): an OSC title, a screen clear, an 8-bit CSI, a newline that forges a
# timeline line, then an out-of-scope exec of a program so named, which the verdict reports.
import ctypes
import os

ESC_TITLE = "\033]0;pwned\007"
FORGED = "\n2026-01-01T00:00:00.000000000Z  step 99    run            FORGED line"
libc = ctypes.CDLL(None)
libc.prctl(15, b"\033[31mevil\033[0m", 0, 0, 0)  # PR_SET_NAME: the comm of what follows
for name in (ESC_TITLE, "x" + FORGED, "\033[2J\x9b31m"):
    with open(os.path.join("/workspace", name), "w") as f:
        f.write("\033[2J")
prog = "/workspace/\033[2Jrun" + FORGED
os.symlink("/usr/bin/touch", prog)
try:
    os.execv(prog, [prog, ESC_TITLE, "/workspace/marker"])
except OSError as e:
    print("exec refused:", e.errno)
