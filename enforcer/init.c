/*
 * The sandbox's init. It builds the sandbox's file system, brings up loopback, gives up every
 * capability, says it is ready, and then only reaps orphans and keeps the namespaces alive. It
 * runs no untrusted code: tool calls are forked by `firebreak exec`, which joins these namespaces.
 * It stays uid 0 (with no capabilities) so that the sandbox's processes, which run as another
 * uid, can neither signal nor trace it.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fileio.h"
#include "init.h"
#include "macro.h"
#include "privs.h"
#include "sandbox.h"

static int loopback_up(void)
{
	struct ifreq ifr = { 0 };
	_cleanup_close_ int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	strcpy(ifr.ifr_name, "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		return -errno;
	ifr.ifr_flags |= IFF_UP;
	return ioctl(fd, SIOCSIFFLAGS, &ifr) < 0 ? -errno : 0;
}

_Noreturn static void fail(const struct sandbox_init_args *a, const char *what, int r)
{
	dprintf(a->report_fd, "%s: %s\n", what, strerror(-r));
	_exit(1);
}

/*
 * Where this process's command line and environment lie in its memory (/proc/self/stat's fields
 * 48 to 51), or -1.
 */
static int args_area(unsigned long v[4])
{
	char buf[1024], *p;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* The name in parentheses may hold anything; field 3 follows the last ')'. Each space
	 * passed is one more field: at the 46th, p is at field 48. */
	if (!(p = strrchr(buf, ')')))
		return -1;
	for (int field = 2; field < 48; field++)
		if (!(p = strchr(p + 1, ' ')))
			return -1;
	return sscanf(p, " %lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3]) == 4 ? 0 : -1;
}

/*
 * The init was forked by `firebreak create`, whose command line (the config, runtime dir, store
 * and policy paths) and environment are still in its memory, where /proc/1/cmdline and environ
 * would show them: they are overwritten with the init's name and nothing, once the init has read
 * its arguments (some point into that memory: the hostname is create's argv) and before it says
 * it is ready. v: args_area()'s, read before the sandbox's /proc replaced the host's. (The sandbox
 * sees a stand-in for pid 1 anyway, lures.h; this is for whatever else reads the init's.)
 */
static void forget_command_line(const unsigned long v[4])
{
	static const char name[] = "firebreak-init";
	size_t room;

	if (v[1] <= v[0] || v[3] < v[2])
		return;
	room = v[1] - v[0];
	memset((void *)v[0], 0, room);
	memcpy((void *)v[0], name, room > sizeof(name) ? sizeof(name) - 1 : room - 1);
	memset((void *)v[2], 0, v[3] - v[2]);
}

/* The sandbox's own cgroup namespace, tree, hostname and loopback; any failure ends us. */
static void init_build(const struct sandbox_init_args *a)
{
	char go, err[256];
	int r;

	/* Wait until the parent has put us into the sandbox's cgroups: nothing runs outside them.
	 */
	if (read(a->go_fd, &go, 1) != 1)
		_exit(1);
	close(a->go_fd);
	/* The cgroup namespace's root is the cgroup we are in now: the sandbox's. */
	if (unshare(CLONE_NEWCGROUP) < 0)
		fail(a, "unshare cgroup namespace", -errno);
	if ((r = sandbox_mounts_setup(&a->mounts, err, sizeof(err))) < 0) {
		dprintf(a->report_fd, "%s\n", err);
		_exit(1);
	}
	if (sethostname(a->hostname, strlen(a->hostname)) < 0)
		fail(a, "sethostname", -errno);
	if ((r = loopback_up()) < 0)
		fail(a, "bring up loopback", r);
}

/* What the loop waits on: children and the signals that end us on a signalfd, and the wall
 * clock on a timerfd (-1 without one). */
static void init_signals(const struct sandbox_init_args *a, int *ret_sfd, int *ret_tfd)
{
	sigset_t mask;
	int sfd, tfd = -1;

	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0)
		fail(a, "signalfd", -errno);
	if (a->wall_clock_ns > 0) {
		struct itimerspec its = { .it_value = { (time_t)(a->wall_clock_ns / 1000000000LL),
							(long)(a->wall_clock_ns % 1000000000LL) } };

		tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
		if (tfd < 0 || timerfd_settime(tfd, 0, &its, NULL) < 0)
			fail(a, "wall clock timer", -errno);
	}
	*ret_sfd = sfd;
	*ret_tfd = tfd;
}

/* Gives up every capability and the right to gain any, detaches from the parent's session and
 * stdio, and tells the parent the sandbox is ready. */
static void init_give_up(const struct sandbox_init_args *a, const unsigned long area[4])
{
	int r;

	if ((r = privs_drop_all_caps()) < 0)
		fail(a, "drop capabilities", r);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		fail(a, "no_new_privs", -errno);
	setsid();
	/* Keep only what the loop needs; stdio goes to /dev/null (inside the sandbox). */
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
	}
	forget_command_line(area);
	if (dprintf(a->report_fd, "ok\n") < 0)
		_exit(1);
	close(a->report_fd);
}

/* From here the init only reaps orphans, until the wall clock or destroy ends the sandbox. */
_Noreturn static void init_loop(const struct sandbox_init_args *a, int sfd, int tfd)
{
	for (;;) {
		struct pollfd p[2] = { { .fd = sfd, .events = POLLIN },
				       { .fd = tfd, .events = POLLIN } };
		struct signalfd_siginfo si;

		if (poll(p, tfd >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		if (tfd >= 0 && (p[1].revents & POLLIN)) {
			/* The sandbox's wall clock ran out: everything in its cgroup dies, us too.
			 */
			(void)!write(a->kill_fd, "1", 1);
			_exit(0);
		}
		if (!(p[0].revents & POLLIN) || read(sfd, &si, sizeof(si)) != sizeof(si))
			continue;
		if (si.ssi_signo == SIGCHLD) {
			while (waitpid(-1, NULL, WNOHANG) > 0)
				;
			continue;
		}
		/* SIGTERM from destroy: pid 1 leaving takes every process of the namespace along.
		 */
		_exit(0);
	}
}

_Noreturn void sandbox_init_main(const struct sandbox_init_args *a)
{
	int keep[] = { a->go_fd, a->report_fd, a->kill_fd };
	unsigned long area[4] = { 0 };
	int sfd, tfd;

	fd_close_all_except(keep, 3);
	prctl(PR_SET_NAME, "firebreak-init", 0, 0, 0);
	args_area(area);
	init_build(a);
	init_signals(a, &sfd, &tfd);
	init_give_up(a, area);
	init_loop(a, sfd, tfd);
}
