# Spins on the CPU for N seconds of wall time and prints the CPU seconds it got. With a cpu quota
# of Q cores it must get about Q * N, not N.
import os, sys, time

wall = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
t0, c0 = time.time(), os.times()
while time.time() - t0 < wall:
    pass
c1 = os.times()
print("cpu=%.3f wall=%.3f" % ((c1.user + c1.system) - (c0.user + c0.system), time.time() - t0))
