# bench/bench_file.sh's pip-like file churn: DIR/pkgN/modM.py written, read back, half renamed,
# a RECORD per package, then everything removed; prints the elapsed ns. "flood DIR N": opens and
# closes N distinct files of DIR/flood (made first, untimed) as fast as it can; prints ns.
import os, shutil, sys, time

def churn(d, pkgs=100, mods=20):
    t = time.perf_counter_ns()
    for p in range(pkgs):
        pd = f"{d}/pkg{p}"
        os.makedirs(pd)
        for m in range(mods):
            with open(f"{pd}/mod{m}.py", "w") as f:
                f.write("x = 1\n" * 20)
        for m in range(mods):
            with open(f"{pd}/mod{m}.py") as f:
                f.read()
        for m in range(0, mods, 2):
            os.rename(f"{pd}/mod{m}.py", f"{pd}/mod{m}_.py")
        with open(f"{pd}/RECORD", "w") as f:
            f.write("\n".join(os.listdir(pd)))
    shutil.rmtree(d)
    return time.perf_counter_ns() - t

def flood(d, n):
    # Distinct files: the kernel merges a process's queued events on one file into one.
    fd = f"{d}/flood"
    os.makedirs(fd, exist_ok=True)
    for i in range(n):
        open(f"{fd}/f{i}", "w").close()
    time.sleep(1)
    t = time.perf_counter_ns()
    for i in range(n):
        os.close(os.open(f"{fd}/f{i}", os.O_RDONLY))
    return time.perf_counter_ns() - t

if sys.argv[1] == "churn":
    print(churn(sys.argv[2]))
else:
    print(flood(sys.argv[2], int(sys.argv[3])))
