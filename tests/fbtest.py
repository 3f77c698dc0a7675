"""Helpers for the Python integration tests: a real firebreakd in a temporary directory, real
Unix-socket clients, and cleanup of everything (also on failure). Nothing here fakes a part."""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FB = os.path.join(ROOT, "build", "firebreak")
FBD = os.path.join(ROOT, "build", "firebreakd")


def ok(what):
    print("ok - " + what, flush=True)


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)
    ok(what)


class World:
    """One test's temporary state dir and the daemons it started (ended by pid at close)."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="firebreak-test.", dir="/tmp")
        self.db = os.path.join(self.dir, "state", "firebreak.db")
        self.run = os.path.join(self.dir, "run")
        self.log = os.path.join(self.dir, "firebreakd.log")
        self.daemon = None
        self.env = dict(os.environ, FIREBREAK_DB=self.db, FIREBREAK_RUNTIME_DIR=self.run)

    def start(self, *extra, config=None):
        args = [FBD, "--foreground", "--db", self.db, "--runtime-dir", self.run]
        # These tests do not use the HTTP API: no port, no tokens on the host.
        config = dict({"listen": "off"}, **(config or {}))
        if config:
            path = os.path.join(self.dir, "firebreakd.conf")
            with open(path, "w") as f:
                for k, v in config.items():
                    f.write("%s = %s\n" % (k, v))
            args += ["--config", path]
        args += list(extra)
        logf = open(self.log, "ab")
        self.daemon = subprocess.Popen(args, stdout=logf, stderr=logf)
        deadline = time.time() + 5
        while time.time() < deadline:
            if self.daemon.poll() is not None:
                raise Failure("firebreakd exited during start-up")
            if self.fb("status", check=False).returncode == 0:
                return
            time.sleep(0.05)
        raise Failure("firebreakd did not answer within 5 s")

    def stop(self):
        self.daemon.send_signal(signal.SIGTERM)
        rc = self.daemon.wait(timeout=30)
        self.daemon = None
        return rc

    def kill(self):
        self.daemon.send_signal(signal.SIGKILL)
        self.daemon.wait(timeout=30)
        self.daemon = None

    def fb(self, *args, input=None, check=True):
        # Flags, not the environment: the enforcer's commands ignore FIREBREAK_* variables.
        r = subprocess.run([FB, "--runtime-dir", self.run, "--db", self.db] + list(args),
                           input=input, capture_output=True, env=self.env, timeout=600)
        if check and r.returncode != 0:
            raise Failure("firebreak %s exited %d: %s" % (" ".join(args), r.returncode,
                                                         r.stderr.decode(errors="replace")))
        return r

    def stats(self):
        return json.loads(self.fb("status", "--json").stdout)

    def connect(self, name="trace.sock"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(os.path.join(self.run, name))
        return s

    def close(self):
        if self.daemon is not None:
            self.daemon.kill()
            self.daemon.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def dump_log(self):
        try:
            with open(self.log, errors="replace") as f:
                lines = f.readlines()
            sys.stderr.write("--- last lines of %s\n" % self.log)
            sys.stderr.writelines(lines[-30:])
        except OSError:
            pass


def trace(sandbox, step, tool, call_id, phase, **extra):
    obj = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool,
           "gen_ai.tool.call.id": call_id, "firebreak.sandbox": sandbox,
           "firebreak.step": step, "phase": phase}
    obj.update(extra)
    return json.dumps(obj)


def read_replies(sock, n, timeout=10):
    """Reads n reply lines (parsed) from sock."""
    sock.settimeout(timeout)
    buf = b""
    out = []
    while len(out) < n:
        chunk = sock.recv(65536)
        if not chunk:
            break
        buf += chunk
        while b"\n" in buf and len(out) < n:
            line, buf = buf.split(b"\n", 1)
            out.append(json.loads(line))
    return out


def main(test):
    """Runs test(world); exit 0 if it passed, 1 with the reason and the daemon's log if not."""
    w = World()
    try:
        test(w)
    except Exception as e:  # any failure, including Failure and socket errors
        print("FAIL: %s: %s" % (type(e).__name__, e), file=sys.stderr, flush=True)
        w.dump_log()
        w.close()
        sys.exit(1)
    # Determinism: the scenario the test recorded replays to exactly its recorded verdicts.
    if w.daemon is not None:
        w.stop()
    if os.path.exists(w.db):
        r = w.fb("replay", "--all", check=False)
        if r.returncode != 0:
            print("FAIL: replaying this test's store did not give its recorded verdicts:\n%s%s"
                  % (r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")),
                  file=sys.stderr, flush=True)
            w.close()
            sys.exit(1)
    w.close()
