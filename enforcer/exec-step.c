/*
 * A tool call's process: cloned into the step's cgroup and the sandbox's pid namespace before its
 * call arrives, it joins the rest of the sandbox, gives up everything it may not keep, and waits;
 * given its call (its program, argv, environment and stdio), it executes the gate's program.
 */
#include "exec-step.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/sched.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "privs.h"
#include "step-landlock.h"

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

/* The largest call a step takes (program, argv and environment, NUL-separated): ARG_MAX's
 * default with room to spare. */
#define STEP_CALL_MAX (3 << 20)

/* What the child holds while it waits: its end of the socket and the error pipe. */
struct step_child {
	int ctl, err;
};

/* In the sandbox, before its call: any failure is told on ctl, and the process ends. */
static int child_enter(const struct exec_sandbox *sb)
{
	struct rlimit nofile = { sb->st->open_files, sb->st->open_files };
	/* Every limit that matters set, not inherited: no locked memory, no real-time priority, no
	 * raised niceness, no core files. */
	struct rlimit memlock = { 64 << 10, 64 << 10 }, zero = { 0, 0 };
	sigset_t none;
	int r;

	/* The launcher blocks the signals it takes on a signalfd; the tool gets a clean mask, and a
	 * session of its own: no controlling terminal of anyone's to write to. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (int s = 1; s < _NSIG; s++)
		signal(s, SIG_DFL);
	if (setsid() < 0)
		return -errno;
	/* The launcher is kept from the OOM killer; the tool is not. */
	if ((r = file_write_text("/proc/self/oom_score_adj", "0")) < 0)
		return r;
	for (size_t i = 0; i < ARRAY_SIZE(namespaces); i++)
		if (setns(sb->ns_fds[i], namespaces[i].type) < 0)
			return -errno;
	/* An IPC namespace of the step's own: System V shared memory, semaphores and message
	 * queues are a same-uid way into another step's memory (/proc/sysvipc lists them all). */
	if (unshare(CLONE_NEWIPC) < 0 || chdir("/workspace") < 0)
		return -errno;
	if (setrlimit(RLIMIT_NOFILE, &nofile) < 0 || setrlimit(RLIMIT_CORE, &zero) < 0 ||
	    setrlimit(RLIMIT_MEMLOCK, &memlock) < 0 || setrlimit(RLIMIT_RTPRIO, &zero) < 0 ||
	    setrlimit(RLIMIT_NICE, &zero) < 0)
		return -errno;
	return 0;
}

/*
 * Splits a call's payload (program, argc, then argv and envp strings, each NUL-terminated, the
 * two lists ended by an empty string) into vectors, in place. 0 or -EINVAL.
 */
static int child_parse(char *p, size_t len, char **ret_program, char ***ret_argv, char ***ret_envp)
{
	char *end = p + len, **v[2];
	size_t n[2] = { 0, 0 }, list = 0;

	if (len == 0 || end[-1] != '\0')
		return -EINVAL;
	*ret_program = p;
	p += strlen(p) + 1;
	/* Count, then fill: each list ends at an empty string. */
	for (char *q = p; q < end && list < 2; q += strlen(q) + 1) {
		if (*q == '\0')
			list++;
		else
			n[list]++;
	}
	if (list != 2 || n[0] == 0)
		return -EINVAL;
	for (int l = 0; l < 2; l++)
		if (!(v[l] = calloc(n[l] + 1, sizeof(char *))))
			return -ENOMEM;
	list = 0;
	for (size_t i = 0; p < end && list < 2; p += strlen(p) + 1) {
		if (*p == '\0') {
			list++;
			i = 0;
		} else {
			v[list][i++] = p;
		}
	}
	*ret_argv = v[0];
	*ret_envp = v[1];
	return 0;
}

/* Waits for the call (its payload and three fds) and makes the fds 0, 1 and 2. */
static int child_receive(int ctl, char **ret_program, char ***ret_argv, char ***ret_envp)
{
	char *buf = malloc(STEP_CALL_MAX);
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(3 * sizeof(int))];
	} cm;
	struct iovec iov = { .iov_base = buf, .iov_len = STEP_CALL_MAX };
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = cm.buf,
			      .msg_controllen = sizeof(cm.buf) };
	struct cmsghdr *c;
	int fds[3];
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	while ((n = recvmsg(ctl, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
		;
	if (n <= 0)
		return n < 0 ? -errno : -ECONNRESET; /* the launcher gave this step up */
	c = CMSG_FIRSTHDR(&msg);
	if ((msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || !c || c->cmsg_type != SCM_RIGHTS ||
	    c->cmsg_len != CMSG_LEN(sizeof(fds)))
		return -EPROTO;
	memcpy(fds, CMSG_DATA(c), sizeof(fds));
	for (int i = 0; i < 3; i++)
		if (dup2(fds[i], i) < 0)
			return -errno;
	return child_parse(buf, (size_t)n, ret_program, ret_argv, ret_envp);
}

/*
 * Everything a step gives up, before its call: a Landlock domain of its own (step-landlock.c: its
 * processes can neither see nor reach another step's, nor write each other's memory), the
 * sandbox's uid with no capabilities, and the seccomp filters. What is left for the call is to
 * take its fds and execute: the cost of all this is paid while no one waits.
 */
static int child_give_up(const struct exec_sandbox *sb)
{
	int r;

	if ((r = step_landlock_enter(sb->landlock_fd, sb->landlock_abi)) < 0 ||
	    (r = privs_become(sb->st->uid, sb->st->gid)) < 0 ||
	    (r = sandbox_seccomp_apply(&sb->filter)) < 0 ||
	    (r = sandbox_seccomp_apply(&sb->ids)) < 0)
		return r;
	return 0;
}

static int null_stdio(void)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC), r = 0;

	if (null < 0)
		return -errno;
	for (int fd = 0; fd < 3 && r == 0; fd++)
		if (dup2(null, fd) < 0)
			r = -errno;
	close(null);
	return r;
}

/* The child: in place, then its call, then the program. */
_Noreturn static void child_main(const struct exec_sandbox *sb, struct step_child *k)
{
	int keep[3 + EXEC_STEP_NAMESPACES], nkeep = 0, r;
	char *program = NULL, **argv = NULL, **envp = NULL;

	/* Nothing of the launcher's: not its socket, not another call's stdout (whose reader would
	 * wait for its end until this step ran), not the monitor's connection. */
	keep[nkeep++] = k->ctl;
	keep[nkeep++] = k->err;
	keep[nkeep++] = sb->landlock_fd;
	for (int i = 0; i < EXEC_STEP_NAMESPACES; i++)
		keep[nkeep++] = sb->ns_fds[i];
	fd_close_all_except(keep, nkeep);
	/* Not even the launcher's log: stdio is /dev/null until the call brings its own. */
	r = null_stdio();
	if (r == 0)
		r = child_enter(sb);
	for (int i = 0; i < EXEC_STEP_NAMESPACES; i++)
		close(sb->ns_fds[i]);
	if (r == 0)
		r = child_give_up(sb);
	close(sb->landlock_fd);
	if (write(k->ctl, &r, sizeof(r)) != sizeof(r) || r < 0)
		_exit(127);
	r = child_receive(k->ctl, &program, &argv, &envp);
	close(k->ctl);
	if (r == 0) {
		/* Only 0, 1 and 2 cross into the tool; the error pipe closes on exec. */
		syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
		execve(program, argv, envp);
		r = -errno;
	}
	(void)!write(k->err, &r, sizeof(r));
	_exit(127);
}

void exec_sandbox_init(struct exec_sandbox *sb)
{
	for (size_t i = 0; i < ARRAY_SIZE(namespaces); i++)
		sb->ns_fds[i] = -1;
	sb->landlock_fd = -1;
}

int exec_sandbox_open(struct exec_sandbox *sb, const struct sandbox_state *st)
{
	_cleanup_close_ int pid_ns = -1;
	char path[64];

	sb->st = st;
	for (size_t i = 0; i < ARRAY_SIZE(namespaces); i++) {
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)st->init_pid,
			 namespaces[i].name);
		sb->ns_fds[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (sb->ns_fds[i] < 0)
			return -errno;
	}
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)st->init_pid);
	pid_ns = open(path, O_RDONLY | O_CLOEXEC);
	if (pid_ns < 0)
		return -errno;
	/* The fds are of the right process only if it is still the same init (pid reuse). */
	if (!state_init_alive(st))
		return -ESRCH;
	/* Our own pid namespace stays; every step is born into the sandbox's. */
	if (setns(pid_ns, CLONE_NEWPID) < 0)
		return -errno;
	if ((sb->landlock_abi = step_landlock_abi()) < 0)
		return sb->landlock_abi;
	sb->landlock_fd = step_landlock_ruleset(st->init_pid, sb->landlock_abi);
	return sb->landlock_fd < 0 ? sb->landlock_fd : 0;
}

void exec_sandbox_close(struct exec_sandbox *sb)
{
	for (size_t i = 0; i < ARRAY_SIZE(namespaces); i++)
		if (sb->ns_fds[i] >= 0)
			close(sb->ns_fds[i]);
	if (sb->landlock_fd >= 0)
		close(sb->landlock_fd);
	exec_sandbox_init(sb);
}

void exec_step_init(struct exec_step *s)
{
	memset(s, 0, sizeof(*s));
	s->step = -1;
	s->pidfd = s->ctl = s->err_pipe = -1;
}

int exec_step_prepare(const struct exec_sandbox *sb, const char *name, int64_t step,
		      struct exec_step *s)
{
	struct step_child k = { .ctl = -1, .err = -1 };
	int ctl[2] = { -1, -1 }, err[2] = { -1, -1 }, dirfd = -1, r;
	struct clone_args args = {
		.flags = CLONE_INTO_CGROUP | CLONE_PIDFD,
		.pidfd = (uint64_t)(uintptr_t)&s->pidfd,
		.exit_signal = SIGCHLD,
	};
	pid_t pid;

	exec_step_init(s);
	s->step = step;
	snprintf(s->rel, sizeof(s->rel), CGROUP_ROOT_NAME "/%s/step-%lld", name, (long long)step);
	if ((r = cgroup_create_step(s->rel)) < 0)
		return r;
	if ((r = cgroup_id(s->rel, &s->cgid)) < 0 || (r = dirfd = cgroup_open_step(s->rel)) < 0)
		goto fail;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) < 0 ||
	    pipe2(err, O_CLOEXEC) < 0) {
		r = -errno;
		goto fail;
	}
	k.ctl = ctl[1];
	k.err = err[1];
	args.cgroup = (uint64_t)dirfd;
	pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
	if (pid == 0)
		child_main(sb, &k);
	r = pid < 0 ? -errno : 0;
	if (pid > 0) {
		s->pid = pid;
		s->ctl = TAKE_FD(ctl[0]);
		s->err_pipe = TAKE_FD(err[0]);
	}
fail:
	for (int i = 0; i < 2; i++) {
		if (ctl[i] >= 0)
			close(ctl[i]);
		if (err[i] >= 0)
			close(err[i]);
	}
	if (dirfd >= 0)
		close(dirfd);
	if (r < 0) {
		cgroup_remove(s->rel, 1000);
		exec_step_init(s);
	}
	return r;
}

int exec_step_wait_ready(struct exec_step *s)
{
	int r;
	ssize_t n;

	if (s->ready)
		return s->ready < 0 ? s->ready : 0;
	while ((n = read(s->ctl, &r, sizeof(r))) < 0 && errno == EINTR)
		;
	s->ready = n == sizeof(r) ? (r < 0 ? r : 1) : -ECHILD;
	return s->ready < 0 ? s->ready : 0;
}

int exec_step_start(struct exec_step *s, const struct exec_step_call *call, int *ret_exec_err)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(3 * sizeof(int))];
	} cm;
	struct iovec iov;
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = cm.buf,
			      .msg_controllen = sizeof(cm.buf) };
	struct cmsghdr *c;
	size_t len = strlen(call->program) + 1;
	char *buf, *p;
	int err, r;
	ssize_t n;

	if ((r = exec_step_wait_ready(s)) < 0)
		return r;
	for (int l = 0; l < 2; l++) {
		for (char *const *v = l ? call->envp : call->argv; *v; v++)
			len += strlen(*v) + 1;
		len++;
	}
	if (len > STEP_CALL_MAX)
		return -E2BIG;
	if (!(p = buf = malloc(len)))
		return -ENOMEM;
	p = stpcpy(p, call->program) + 1;
	for (int l = 0; l < 2; l++) {
		for (char *const *v = l ? call->envp : call->argv; *v; v++)
			p = stpcpy(p, *v) + 1;
		*p++ = '\0';
	}
	iov = (struct iovec){ .iov_base = buf, .iov_len = len };
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(3 * sizeof(int));
	memcpy(CMSG_DATA(c), call->stdio, 3 * sizeof(int));
	/* A large call needs a buffer that takes it whole (we are root: past wmem_max). */
	if (len > 64 << 10)
		setsockopt(s->ctl, SOL_SOCKET, SO_SNDBUFFORCE, &(int){ (int)len + (64 << 10) },
			   sizeof(int));
	n = sendmsg(s->ctl, &msg, MSG_NOSIGNAL);
	free(buf);
	if (n != (ssize_t)len)
		return n < 0 ? -errno : -EIO;
	close(s->ctl);
	s->ctl = -1;
	while ((n = read(s->err_pipe, &err, sizeof(err))) < 0 && errno == EINTR)
		;
	*ret_exec_err = n == sizeof(err) ? err : 0;
	return 0;
}

void exec_step_close(struct exec_step *s)
{
	if (s->ctl >= 0)
		close(s->ctl);
	if (s->err_pipe >= 0)
		close(s->err_pipe);
	s->ctl = s->err_pipe = -1;
}

void exec_step_discard(struct exec_step *s)
{
	if (s->pid <= 0)
		return;
	exec_step_close(s); /* a step that never got its call ends when its socket does */
	if (s->pidfd >= 0) {
		syscall(SYS_pidfd_send_signal, s->pidfd, SIGKILL, NULL, 0);
		close(s->pidfd);
	}
	while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR)
		;
	cgroup_remove(s->rel, 1000);
	exec_step_init(s);
}
