#include "child.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "loop.h"
#include "macro.h"
#include "timeutil.h"

#define BACKOFF_MIN_NS (100 * NSEC_PER_MSEC)
#define BACKOFF_MAX_NS (10 * NSEC_PER_SEC)
/* A child that ran this long before dying is started again at once. */
#define STABLE_NS (10 * NSEC_PER_SEC)

static void on_exit_fd(struct loop *l, int fd, uint32_t events, void *data)
{
	struct child *c = data;
	int64_t now = (int64_t)time_mono_ns();
	int status = 0;

	if (waitpid(c->pid, &status, WNOHANG) == 0)
		return;
	loop_remove(l, fd);
	close(fd);
	c->pidfd = -1;
	if (now - c->started_ns >= STABLE_NS)
		c->backoff_ns = 0;
	else
		c->backoff_ns = c->backoff_ns ? c->backoff_ns * 2 : BACKOFF_MIN_NS;
	if (c->backoff_ns > BACKOFF_MAX_NS)
		c->backoff_ns = BACKOFF_MAX_NS;
	c->restart_at_ns = now + c->backoff_ns;
	c->restarts++;
	if (WIFSIGNALED(status))
		log_warn("%s child %d killed by signal %d; starting it again in %lld ms", c->name,
			 (int)c->pid, WTERMSIG(status), (long long)(c->backoff_ns / NSEC_PER_MSEC));
	else
		log_warn("%s child %d exited %d; starting it again in %lld ms", c->name,
			 (int)c->pid, WEXITSTATUS(status),
			 (long long)(c->backoff_ns / NSEC_PER_MSEC));
	c->pid = 0;
}

int child_start(struct child *c, const int *fds, int nfds)
{
	char *args[64];
	int n = 0, pidfd;
	pid_t pid;

	args[n++] = (char *)"firebreakd";
	args[n++] = (char *)c->flag;
	for (char **a = c->argv + 1; *a && n < (int)ARRAY_SIZE(args) - 1; a++)
		args[n++] = *a;
	args[n] = NULL;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		/* Fresh state by exec: nothing of the core's threads, maps, store or memory
		 * crosses; only the fds given, at 3 and up. */
		sigset_t none;

		int high[8];

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* Out of the way first (one of them may already sit at 3 + i), then into place:
		 * dup2 clears close-on-exec, so exactly these survive the exec. */
		for (int i = 0; i < nfds && i < 8; i++)
			if ((high[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 3 + nfds)) < 0)
				_exit(127);
		for (int i = 0; i < nfds && i < 8; i++)
			if (dup2(high[i], 3 + i) < 0)
				_exit(127);
		execv("/proc/self/exe", args);
		_exit(127);
	}
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0 || loop_add(c->loop, pidfd, EPOLLIN, on_exit_fd, c) < 0) {
		log_error("%s child %d: cannot watch it", c->name, (int)pid);
		if (pidfd >= 0)
			close(pidfd);
		pidfd = -1;
	}
	c->pid = pid;
	c->pidfd = pidfd;
	c->started_ns = (int64_t)time_mono_ns();
	c->restart_at_ns = 0;
	return 0;
}

int child_due(struct child *c)
{
	return !c->pid && c->restart_at_ns && (int64_t)time_mono_ns() >= c->restart_at_ns;
}

void child_begin(const char *comm, const char *log_name, int last_fd, int foreground,
		 sigset_t *stop)
{
	prctl(PR_SET_NAME, comm, 0, 0, 0); /* not "exe" in ps and audit */
	syscall(SYS_close_range, (unsigned)last_fd + 1, ~0U, 0);
	if (foreground)
		log_set_stamp(log_name);
	else
		log_use_syslog(log_name);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(stop);
	sigaddset(stop, SIGTERM);
	sigaddset(stop, SIGINT);
	sigprocmask(SIG_BLOCK, stop, NULL);
}

void child_stop(struct child *c)
{
	if (c->pid > 0) {
		struct pollfd p = { .fd = c->pidfd, .events = POLLIN };

		kill(c->pid, SIGTERM);
		if (c->pidfd < 0 || poll(&p, 1, 1000) <= 0)
			kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
		c->pid = 0;
	}
	if (c->pidfd >= 0) {
		loop_remove(c->loop, c->pidfd);
		close(c->pidfd);
		c->pidfd = -1;
	}
	c->restart_at_ns = 0;
}
