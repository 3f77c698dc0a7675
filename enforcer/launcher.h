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

/* A launcher forked and waiting for its go-ahead. */
struct launcher_start {
	pid_t pid;
	int go_fd;    /* one byte: go; EOF: give up */
	int ready_fd; /* its answer: one byte, 0 or errno */
};

/*
 * Forks the launcher of sandbox name as soon as its init (pid init, waiting for its go-ahead)
 * exists. It moves the init into the sandbox's cgroups (launcher_attached says when), joins the
 * resource cgroups itself right after (cheap then: lib/cgroup.h), and waits for launcher_go,
 * which create sends once the sandbox is saved and registered. 0 or -errno after logging why.
 */
int launcher_fork(const struct config *cfg, const char *name, const struct policy *policy,
		  const struct sandbox_limits *lim, pid_t init, struct launcher_start *ls);

/* Waits until the init is in the sandbox's cgroups: 0, or -errno (it has not moved it). */
int launcher_attached(struct launcher_start *ls);

/* Lets it load the saved state, open what the calls share and listen; waits until it does. 0 or
 * -errno after logging why (it has exited then). */
int launcher_go(struct launcher_start *ls);

/* A launcher forked but never sent its go-ahead exits, and is waited for. */
void launcher_abandon(struct launcher_start *ls);

/* Ends the sandbox's launcher, if it runs (its running calls are killed with it). */
void launcher_stop(const struct config *cfg, const char *name);

#endif
