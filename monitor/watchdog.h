/*
 * Fail closed. firebreakd starts a watchdog: itself re-executed (`firebreakd --watchdog DIR`), a
 * separate process that needs nothing of the daemon once started. The daemon feeds it, over a
 * pipe, a heartbeat every 250 ms and the cgroups it watches whenever they change. If the pipe
 * closes without a goodbye (the daemon died) or the heartbeat stops for 1.5 s (it hangs), the
 * watchdog freezes every one of those cgroups, writes what it did to DIR/watchdog.json and exits.
 * A daemon that starts (or finds its watchdog gone) reads that file: each sandbox gets the outage
 * as a monitor.outage event and the watchdog's freeze as an action, and the sandboxes the
 * watchdog froze are thawed, since they are watched again. docs/fail-closed.md.
 */
#ifndef FB_WATCHDOG_H
#define FB_WATCHDOG_H

struct daemon;

/* The watchdog process: fd 3 is the pipe from the daemon, fd 4 its lock. Returns the exit code. */
int watchdog_main(const char *runtime_dir);

/* Recovers from a previous watchdog's freeze, if any, and starts a watchdog; 0 or -errno. */
int watchdog_start(struct daemon *d);

/* The daemon's heartbeat (a loop timer): the watched list when it changed, else a beat. */
void watchdog_tick(struct daemon *d);

/* Says goodbye (the daemon stops cleanly: nothing is frozen) and reaps the watchdog. */
void watchdog_stop(struct daemon *d);

#endif
