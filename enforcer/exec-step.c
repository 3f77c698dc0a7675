/*
 * A tool call's process: born in the step's cgroup and the sandbox's pid namespace, it joins the
 * rest of the sandbox, gives up everything it may not keep, and executes the gate's program.
 */
#include "exec-step.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <linux/sched.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro.h"
#include "privs.h"
#include "step-landlock.h"
#include "timeutil.h"

/* The namespaces a tool call joins, in the order it joins them (mnt last: it moves the root). */
static const struct {
	const char *name;
	int type;
} namespaces[] = {
	{ "uts", CLONE_NEWUTS },
	{ "net", CLONE_NEWNET },
	{ "cgroup", CLONE_NEWCGROUP },
	{ "mnt", CLONE_NEWNS },
};
_Static_assert(ARRAY_SIZE(namespaces) == EXEC_STEP_NAMESPACES, "one fd per namespace");

/* The child: from here on any failure is fatal, reported as an errno on the error pipe. */
_Noreturn static void child_main(const struct exec_step *run)
{
	struct rlimit nofile = { run->st->open_files, run->st->open_files };
	struct rlimit nocore = { 0, 0 };
	int r = 0;

	/* The parent blocks a few signals to catch them on a signalfd; the tool gets a clean mask,
	 * and a session of its own: no controlling terminal of the harness's to write to. */
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (setsid() < 0)
		r = -errno;
	/* Born into the step's v2 cgroup; into the v1 hierarchies first thing, before anything of
	 * the tool's can run. */
	for (int i = 0; i < run->nprocs && r == 0; i++)
		if (write(run->procs_fds[i], "0", 1) != 1)
			r = -errno;
	for (size_t i = 0; i < ARRAY_SIZE(namespaces) && r == 0; i++)
		if (setns(run->ns_fds[i], namespaces[i].type) < 0)
			r = -errno;
	/* An IPC namespace of the step's own: System V shared memory, semaphores and message
	 * queues are a same-uid way into another step's memory (/proc/sysvipc lists them all). */
	if (r == 0 && unshare(CLONE_NEWIPC) < 0)
		r = -errno;
	if (r == 0 && chdir("/workspace") < 0)
		r = -errno;
	/* Set every limit that matters, not inherit the harness's: no locked memory, no real-time
	 * priority, no raised niceness, no core files. */
	struct rlimit memlock = { 64 << 10, 64 << 10 }, zero = { 0, 0 };
	if (r == 0 &&
	    (setrlimit(RLIMIT_NOFILE, &nofile) < 0 || setrlimit(RLIMIT_CORE, &nocore) < 0 ||
	     setrlimit(RLIMIT_MEMLOCK, &memlock) < 0 || setrlimit(RLIMIT_RTPRIO, &zero) < 0 ||
	     setrlimit(RLIMIT_NICE, &zero) < 0))
		r = -errno;
	/* A domain of the step's own before anything of the tool's runs (step-landlock.c): its
	 * processes can neither see nor reach another step's, nor write each other's memory. */
	if (r == 0 && (r = step_landlock_enter(run->landlock_fd, run->landlock_abi)) == 0)
		close(run->landlock_fd);
	if (r == 0)
		r = privs_become(run->st->uid, run->st->gid);
	if (r == 0)
		r = sandbox_seccomp_apply(&run->filter);
	if (r == 0)
		r = sandbox_seccomp_apply(&run->ids);
	if (r == 0) {
		/* Only 0, 1 and 2 cross into the tool; the error pipe closes on exec. */
		syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
		execve(run->program, run->argv, run->envp);
		r = -errno;
	}
	(void)!write(run->err_pipe[1], &r, sizeof(r));
	_exit(127);
}

/*
 * Forks the child straight into the step's v2 cgroup (clone3 CLONE_INTO_CGROUP: no migration,
 * which is the slow part of joining a cgroup), with a pidfd to wait on.
 */
pid_t exec_step_clone(const struct exec_step *s, int *ret_pidfd)
{
	struct clone_args args = {
		.flags = CLONE_INTO_CGROUP | CLONE_PIDFD,
		.pidfd = (uint64_t)(uintptr_t)ret_pidfd,
		.exit_signal = SIGCHLD,
		.cgroup = (uint64_t)s->cgroup_dirfd,
	};
	pid_t pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));

	if (pid == 0)
		child_main(s);
	return pid;
}

int exec_step_exec_error(struct exec_step *s)
{
	int err;

	close(s->err_pipe[1]);
	s->err_pipe[1] = -1;
	if (read(s->err_pipe[0], &err, sizeof(err)) != sizeof(err))
		err = 0;
	return err;
}

/*
 * Whether cgroup.events, open at efd, says "frozen 1". Reading it through efd is also what
 * rearms efd's POLLPRI: until then, poll reports the change again at once.
 */
static int events_say_frozen(int efd)
{
	char buf[256];
	ssize_t n = pread(efd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strstr(buf, "frozen 1\n") != NULL;
}

int exec_step_wait(pid_t pid, int pfd, int sfd, int efd, const char *rel, int64_t timeout_ns,
		   int *ret_status, int *ret_why)
{
	int64_t deadline = timeout_ns > 0 ? time_now_ns() + timeout_ns : 0;
	int status;

	*ret_why = 0;
	for (;;) {
		/* cgroup.events wakes pollers with POLLPRI when it changes */
		struct pollfd p[3] = { { .fd = pfd, .events = POLLIN },
				       { .fd = sfd, .events = POLLIN },
				       { .fd = efd, .events = POLLPRI } };
		int64_t left = deadline ? deadline - time_now_ns() : -1;
		int ms = left < 0			     ? -1
			 : left / NSEC_PER_MSEC > 0x7fffffff ? 0x7fffffff
							     : (int)(left / NSEC_PER_MSEC);
		int n = poll(p, efd >= 0 ? 3 : 2, deadline && left <= 0 ? 0 : ms);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n > 0 && (p[0].revents & POLLIN))
			break;
		if (n > 0 && (p[2].revents & (POLLPRI | POLLERR)) && events_say_frozen(efd)) {
			*ret_why = EXEC_WHY_FROZEN;
			return 0;
		}
		if (n > 0 && (p[1].revents & POLLIN)) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == sizeof(si))
				*ret_why = (int)si.ssi_signo;
		} else if (n == 0) {
			*ret_why = 1;
		} else {
			continue;
		}
		cgroup_kill(rel);
		break;
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	*ret_status = status;
	return 0;
}

static int open_namespaces(const struct sandbox_state *st, struct exec_step *run)
{
	char path[64];

	for (size_t i = 0; i < ARRAY_SIZE(namespaces); i++) {
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)st->init_pid,
			 namespaces[i].name);
		run->ns_fds[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (run->ns_fds[i] < 0)
			return -errno;
	}
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)st->init_pid);
	run->pid_ns = open(path, O_RDONLY | O_CLOEXEC);
	if (run->pid_ns < 0)
		return -errno;
	/* The fds are of the right process only if it is still the same init (pid reuse). */
	return state_init_alive(st) ? 0 : -ESRCH;
}

void exec_step_init(struct exec_step *s)
{
	for (size_t i = 0; i < ARRAY_SIZE(namespaces); i++)
		s->ns_fds[i] = -1;
	s->pid_ns = -1;
	s->cgroup_dirfd = -1;
	s->nprocs = 0;
	s->err_pipe[0] = s->err_pipe[1] = -1;
	s->landlock_fd = -1;
}

int exec_step_open(struct exec_step *s, const char *rel, const struct sandbox_state *st)
{
	int r;

	if ((s->nprocs = cgroup_open_join(rel, &s->cgroup_dirfd, s->procs_fds,
					  ARRAY_SIZE(s->procs_fds))) < 0) {
		r = s->nprocs;
		s->nprocs = 0;
		return r;
	}
	if ((r = open_namespaces(st, s)) < 0)
		return r;
	if (pipe2(s->err_pipe, O_CLOEXEC) < 0)
		return -errno;
	if ((s->landlock_abi = step_landlock_abi()) < 0)
		return s->landlock_abi;
	s->landlock_fd = step_landlock_ruleset(st->init_pid, s->landlock_abi);
	return s->landlock_fd < 0 ? s->landlock_fd : 0;
}

void exec_step_close(struct exec_step *run)
{
	for (size_t i = 0; i < ARRAY_SIZE(namespaces); i++)
		if (run->ns_fds[i] >= 0)
			close(run->ns_fds[i]);
	for (int i = 0; i < run->nprocs; i++)
		close(run->procs_fds[i]);
	if (run->cgroup_dirfd >= 0)
		close(run->cgroup_dirfd);
	if (run->pid_ns >= 0)
		close(run->pid_ns);
	if (run->landlock_fd >= 0)
		close(run->landlock_fd);
	for (int i = 0; i < 2; i++)
		if (run->err_pipe[i] >= 0)
			close(run->err_pipe[i]);
}
