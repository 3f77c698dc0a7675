/*
 * The exec launcher: one per sandbox, from create to destroy. It holds what every tool call needs,
 * opened and checked once (the policy, compiled and its hash checked; the namespaces; the seccomp
 * filters; the Landlock ruleset; the monitor's connection), and keeps the next step's process made
 * ahead, already in its cgroups and namespaces. `firebreak exec`, or any harness, asks it for a
 * call on a unix socket (launcher-wire.h) and passes its stdin, stdout and stderr along.
 *
 * It runs as root on the host, outside the sandbox's cgroup: a freeze of the sandbox does not
 * freeze it, so it tells the caller, and a kill does not kill it, so the killed call's end is
 * still recorded. It ends when the sandbox's init does, or at destroy.
 */
#ifndef FB_LAUNCHER_H
#define FB_LAUNCHER_H

#include "config.h"
#include "sandbox.h"
#include "state.h"

#define LAUNCHER_SOCKET "launcher.sock"
#define LAUNCHER_PID "launcher.pid"
#define LAUNCHER_LOG "launcher.log"
#define LAUNCHER_COMM "firebreak-exec"

/* Calls one launcher runs at once; past it a call is refused (EBUSY) and counted. */
#define LAUNCHER_CALLS_MAX 64

struct policy;

/*
 * Starts the launcher of sandbox st (saved, registered) with its policy and limits, and waits
 * until it listens. 0 or -errno after logging why.
 */
int launcher_spawn(const struct config *cfg, const struct sandbox_state *st,
		   const struct policy *policy, const struct sandbox_limits *lim);

/* Ends the sandbox's launcher, if it runs (its running calls are killed with it). */
void launcher_stop(const struct config *cfg, const char *name);

#endif
