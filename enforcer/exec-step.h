/*
 * The process side of a tool call. A step's process is made before its call arrives: the exec
 * launcher (enforcer/launcher.c) clones it straight into the next step's v2 cgroup (its resource
 * cgroups, the sandbox's, it has by birth: the launcher lives in them), where it joins the
 * sandbox's namespaces and limits, gives up everything it may not keep (its own Landlock domain,
 * the sandbox's uid without capabilities, the seccomp filters) and then waits, holding nothing of
 * the launcher's; the call hands it its program, argv, environment and stdin/stdout/stderr, and
 * it executes the program. What is left on the call's path is an execve.
 * enforcer/exec.c decides what runs and records it; this runs it.
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

/* What every step of a sandbox enters, opened once by the launcher. */
struct exec_sandbox {
	int ns_fds[EXEC_STEP_NAMESPACES];
	int landlock_fd;  /* the steps' Landlock ruleset: each step enters a domain of its own */
	int landlock_abi; /* the kernel's Landlock ABI, asked once */
	struct sandbox_seccomp filter;
	struct sandbox_seccomp ids; /* the second filter: no change of uid or gid */
	const struct sandbox_state *st;
};

/* Marks every fd of sb as not open; call it before anything else on sb. */
void exec_sandbox_init(struct exec_sandbox *sb);

/*
 * Opens st's init's namespaces and the steps' Landlock ruleset, and joins the init's pid
 * namespace for our children (we stay in ours). 0 or -errno (-ESRCH: the init is gone;
 * -EOPNOTSUPP: the kernel has no Landlock, so steps could not be kept apart). The filters are the
 * caller's to fill.
 */
int exec_sandbox_open(struct exec_sandbox *sb, const struct sandbox_state *st);

void exec_sandbox_close(struct exec_sandbox *sb);

/* One step's process, made ahead of its call. */
struct exec_step {
	int64_t step;
	char rel[160]; /* its cgroup */
	uint64_t cgid; /* its v2 cgroup id */
	pid_t pid;     /* 0: none */
	int pidfd;
	int ctl;      /* our end of its socket: its readiness, then its call */
	int err_pipe; /* our end: its execve()'s -errno, or EOF once it executed */
	int ready;    /* it said it is in place (1), or failed to be (-errno) */
};

/* Marks s as holding nothing. */
void exec_step_init(struct exec_step *s);

/*
 * Makes step cgroup rel (CGROUP_ROOT_NAME/NAME/step-N) and clones a process into it (clone3
 * CLONE_INTO_CGROUP: born there, no migration) that joins the sandbox's namespaces and limits,
 * gives up its privileges, and waits for its call. Returns at once: the process says when it is in
 * place (exec_step_wait_ready). 0, -EEXIST (that step runs already), or -errno; on failure
 * nothing is left.
 */
int exec_step_prepare(const struct exec_sandbox *sb, const char *name, int64_t step,
		      struct exec_step *s);

/* Waits until s's process is in place: 0, or its -errno (then it is gone). */
int exec_step_wait_ready(struct exec_step *s);

/* A call for a step: what it executes, with what, and its stdin, stdout and stderr. */
struct exec_step_call {
	const char *program;
	char *const *argv;
	char *const *envp;
	const int *stdio; /* 3 fds */
};

/*
 * Hands s's process its call and waits until it executed the program (or said why it could not).
 * Returns 0 and *ret_exec_err (the child's -errno if it never ran the program, else 0), or -errno
 * (the process is gone or failed; the caller removes the step).
 */
int exec_step_start(struct exec_step *s, const struct exec_step_call *call, int *ret_exec_err);

/* Closes our ends of s (not its pidfd, which the wait owns). */
void exec_step_close(struct exec_step *s);

/* Kills s's process if it never got its call, reaps it and removes its cgroup. */
void exec_step_discard(struct exec_step *s);

/* The outcome of a call: how it ended, besides its exit status. */
enum {
	EXEC_WHY_EXITED = 0,
	EXEC_WHY_TIMEOUT = -2, /* ran over its tool's limit, killed */
	EXEC_WHY_FROZEN = -1,  /* the sandbox was frozen under it: held, not reaped */
	/* > 0: interrupted by that signal to its caller (SIGPIPE: the caller went away) */
};

#endif
