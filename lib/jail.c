/*
 * The helpers' jail (jail.h), entered once everything it needs is open (the listening socket, the
 * store read-only, the channel): a chroot to an empty directory, no capabilities in any set, an
 * unprivileged uid and gid with no groups, no_new_privs, no core dumps or ptrace by that uid, and
 * a seccomp allowlist that kills the process on anything else (the kernel audits the kill and
 * the syscall). What is left is serving sockets, reading the store through fds already open, and
 * threads.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <seccomp.h>
#include <signal.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jail.h"

#include "config.h"
#include "log.h"
#include "macro.h"

/* Everything the child does once jailed: libmicrohttpd (a thread per connection), SQLite
 * reading through its open fds (locks by fcntl, the WAL index by mmap), jansson, glibc. */
static const char *const allowed[] = {
	"read",
	"write",
	"readv",
	"writev",
	"pread64",
	"pwrite64",
	"close",
	"fstat",
	"newfstatat",
	"lseek",
	"fcntl",
	"mmap",
	"munmap",
	"mremap",
	"mprotect",
	"madvise",
	"brk",
	"futex",
	"rt_sigaction",
	"rt_sigprocmask",
	"rt_sigreturn",
	"rt_sigtimedwait",
	"sigaltstack",
	"set_robust_list",
	"rseq",
	"exit",
	"exit_group",
	"restart_syscall",
	"accept",
	"accept4",
	"recvfrom",
	"sendto",
	"recvmsg",
	"sendmsg",
	"shutdown",
	"setsockopt",
	"getsockopt",
	"getsockname",
	"getpeername",
	"poll",
	"ppoll",
	"select",
	"pselect6",
	"epoll_create1",
	"epoll_ctl",
	"epoll_wait",
	"epoll_pwait",
	"eventfd2",
	"pipe2",
	"clock_gettime",
	"clock_nanosleep",
	"nanosleep",
	"gettimeofday",
	"getpid",
	"gettid",
	"getuid",
	"geteuid",
	"getgid",
	"getegid",
	"getppid",
	"getrandom",
	"sched_yield",
	"sched_getaffinity",
	"getrlimit",
	"membarrier",
};

int jail_allow_names(void *ctx, const char *const *names, size_t n)
{
	int r = 0;

	for (size_t i = 0; i < n && r == 0; i++) {
		int nr = seccomp_syscall_resolve_name(names[i]);

		if (nr != __NR_SCMP_ERROR)
			r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
	}
	return r;
}

/* The calls allowed only with some arguments, or answered with an errno instead of a kill. */
static int allow_narrowed(scmp_filter_ctx ctx, pid_t self)
{
	static const char *const lookups[] = { "access", "faccessat", "faccessat2" };
	int r = 0;

	/* Threads only: a clone that does not share the address space would be a new process. */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
				     SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD | CLONE_VM,
					     CLONE_THREAD | CLONE_VM));
	/* Naming a thread (libmicrohttpd's), nothing else of prctl. */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1,
				     SCMP_A0(SCMP_CMP_EQ, PR_SET_NAME));
	/* clone3 hides its flags from the filter: ENOSYS, and glibc falls back to clone. */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	/* Nothing is to be opened: a file there (there are none in the chroot) is refused, not
	 * fatal, so SQLite reports it rather than the child dying mid-request. */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(openat), 0);
	/* Nor is anything there to look for: the policy loader asks whether a tool's program
	 * exists (a what-if replay loads a policy), and is told no. */
	for (size_t i = 0; i < ARRAY_SIZE(lookups) && r == 0; i++) {
		int nr = seccomp_syscall_resolve_name(lookups[i]);

		if (nr != __NR_SCMP_ERROR)
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOENT), nr, 0);
	}
	/* Signals to its own threads only (glibc's pthread_kill, abort), and its own limits read,
	 * never set: the HTTP child and the exporter share a uid and must not reach each other. */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(tgkill), 1,
				     SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)self));
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prlimit64), 2,
				     SCMP_A0(SCMP_CMP_EQ, 0), SCMP_A2(SCMP_CMP_EQ, 0));
	/* syslog reconnecting after its daemon restarted: told no, so it drops the line quietly. */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socket), 1,
				     SCMP_A0(SCMP_CMP_EQ, AF_UNIX));
	return r;
}

/* The exporter: TCP out, over IPv4 or IPv6, nothing else. */
static int allow_outbound(scmp_filter_ctx ctx)
{
	int r = 0;

	for (int i = 0; i < 2 && r == 0; i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 2,
				     SCMP_A0(SCMP_CMP_EQ, i == 0 ? AF_INET : AF_INET6),
				     SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, SOCK_STREAM));
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(connect), 0);
	return r;
}

static int seccomp_allowlist(int outbound)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
	int r = ctx ? 0 : -ENOMEM;

	/* No log flag: the kernel audits a kill anyway, and the errno answers come with every
	 * new thread (glibc tries clone3, then names the thread through /proc). */
	if (r == 0)
		r = jail_allow_names(ctx, allowed, ARRAY_SIZE(allowed));
	if (r == 0)
		r = allow_narrowed(ctx, getpid());
	if (r == 0 && outbound)
		r = allow_outbound(ctx);
	if (r == 0)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	return r;
}

/* An empty directory of root's, made once: the child's root. */
static int empty_root(const struct config *cfg, char *path, size_t size)
{
	struct stat st;

	snprintf(path, size, "%s/http-root", cfg->runtime_dir);
	if (mkdir(path, 0555) < 0 && errno != EEXIST)
		return -errno;
	if (lstat(path, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 0222) || st.st_nlink != 2)
		return -ENOTEMPTY; /* not ours, writable, or with something in it */
	return 0;
}

int jail_drop(uid_t uid, const char *who)
{
	pid_t parent = getppid();

	/* Every capability out of the bounding set first (that needs CAP_SETPCAP, so while root):
	 * the process then has none in any set, which /proc/PID/status shows. */
	for (int cap = 0; cap <= 63; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			return log_errno(-errno, "%s: drop capability %d", who, cap);
	if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
		return log_errno(-errno, "%s: become uid %u", who, (unsigned)uid);
	if (getuid() != uid || geteuid() != uid || getgid() != uid || setuid(0) == 0)
		return log_errno(-EPERM, "%s: the uid did not stick", who);
	/* The uid changed: the death signal was cleared; dying with the parent matters. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 ||
	    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		return log_errno(-errno, "%s: prctl", who);
	if (getppid() != parent)
		return log_errno(-ESRCH, "%s: the parent is gone", who);
	return 0;
}

int jail_enter(const struct config *cfg, int outbound)
{
	char root[4200];
	int r;

	if ((r = empty_root(cfg, root, sizeof(root))) < 0)
		return log_errno(r, "HTTP child: %s must be an empty directory of root's", root);
	if (chroot(root) < 0 || chdir("/") < 0)
		return log_errno(-errno, "HTTP child: chroot %s", root);
	if ((r = jail_drop(cfg->http_uid, "HTTP child")) < 0)
		return r;
	if ((r = seccomp_allowlist(outbound)) < 0)
		return log_errno(r, "HTTP child: seccomp");
	return 0;
}
