/*
 * The process side of a tool call: the child that enters the sandbox (cgroups, namespaces,
 * limits, identity, seccomp) and executes the program, and the wait for it. enforcer/exec.c
 * decides what runs and records it; this runs it.
 */
#ifndef FB_EXEC_STEP_H
#define FB_EXEC_STEP_H

#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"
#include "seccomp.h"
#include "state.h"

/* The namespaces a tool call joins besides pid: uts, net, cgroup and mnt (its ipc is its own). */
#define EXEC_STEP_NAMESPACES 4

/*
 * What the child needs, opened and filled by the parent before the clone. Not opaque: it lives on
 * the parent's stack (the filters are 64 KiB), so the launch path allocates nothing for it.
 */
struct exec_step {
	int ns_fds[EXEC_STEP_NAMESPACES];
	int pid_ns;	  /* joined by the parent (setns) so that the child is born in it */
	int cgroup_dirfd; /* the step's v2 cgroup: the child is born into it */
	int procs_fds[CGROUP_MAX_HIERARCHIES];
	int nprocs;
	int err_pipe[2];
	int landlock_fd;  /* the step's own Landlock domain, which the child enters */
	int landlock_abi; /* the kernel's Landlock ABI, asked once */
	const char *program;
	char **argv;
	char **envp;
	struct sandbox_seccomp filter;
	struct sandbox_seccomp ids; /* the second filter: no change of uid or gid */
	const struct sandbox_state *st;
};

/* Marks every fd of s as not open; call it before anything else on s. */
void exec_step_init(struct exec_step *s);

/*
 * Opens the step cgroup rel's join fds, st's init's namespaces, the error pipe and the step's
 * Landlock ruleset. 0 or -errno (-ESRCH: the init is gone; -EOPNOTSUPP: the kernel has no
 * Landlock, so steps could not be kept apart); exec_step_close() closes what is open either way.
 */
int exec_step_open(struct exec_step *s, const char *rel, const struct sandbox_state *st);

/* Closes every fd of s that is open. */
void exec_step_close(struct exec_step *s);

/*
 * Clones the child straight into the step's v2 cgroup, with a pidfd in *ret_pidfd; the child
 * enters the sandbox and executes s->program, and never returns. Returns like fork.
 */
pid_t exec_step_clone(const struct exec_step *s, int *ret_pidfd);

/*
 * Closes the parent's end of the error pipe and waits until the child has executed the program
 * (the pipe closes on exec) or failed to; returns the child's -errno, or 0.
 */
int exec_step_exec_error(struct exec_step *s);

/* *ret_why of exec_step_wait: the sandbox was frozen under the call. */
#define EXEC_WHY_FROZEN (-1)

/*
 * Waits for pid (pfd: its pidfd) until timeout_ns (0: none) or a signal to us (sfd: a signalfd for
 * SIGINT, SIGTERM, SIGHUP): either kills the whole step cgroup rel, so an interrupted harness
 * never leaves a tool call running. *ret_why says which: 0 exited, 1 timed out, or the signal
 * number. Or the sandbox was frozen (efd: its v2 cgroup.events open, or -1):
 * EXEC_WHY_FROZEN, and nothing is killed or reaped, as a frozen call is the operator's to look
 * at. 0 and *ret_status (not for a freeze), or -errno.
 */
int exec_step_wait(pid_t pid, int pfd, int sfd, int efd, const char *rel, int64_t timeout_ns,
		   int *ret_status, int *ret_why);

#endif
