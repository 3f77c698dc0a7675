/*
 * The DNS gate's jail (egress-dns-jail.h). The seccomp allowlist is libseccomp's, as lib/jail.c's
 * is: its tables resolve names per architecture, and argument checks (which socket families,
 * which clone flags) stay one readable line each.
 */
#include "egress-dns-jail.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "egress-dns-wire.h"
#include "jail.h"
#include "log.h"
#include "macro.h"

/* Where the new root is built, in the jail's own mount namespace (the host's /tmp is untouched:
 * the tmpfs is mounted over it there only). */
#define JAIL_BUILD "/tmp"

/* What dnsmasq does once it runs: answer on UDP and TCP (a child process per TCP client), read
 * its interfaces over rtnetlink, write its log, and glibc's startup. */
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
	"statx",
	"lseek",
	"fcntl",
	"dup",
	"dup2",
	"dup3",
	"pipe2",
	"openat",
	"access",
	"faccessat",
	"faccessat2",
	"readlink",
	"getdents64",
	"getcwd",
	"chdir",
	"umask",
	"mmap",
	"munmap",
	"mremap",
	"mprotect",
	"madvise",
	"brk",
	"futex",
	"set_tid_address",
	"set_robust_list",
	"rseq",
	"arch_prctl",
	"uname",
	"sysinfo",
	"getrandom",
	"prlimit64",
	"getrlimit",
	"rt_sigaction",
	"rt_sigprocmask",
	"rt_sigreturn",
	"rt_sigtimedwait",
	"sigaltstack",
	"restart_syscall",
	"exit",
	"exit_group",
	"wait4",
	"waitid",
	"getpid",
	"gettid",
	"getppid",
	"getuid",
	"geteuid",
	"getgid",
	"getegid",
	"getgroups",
	"capget",
	"clock_gettime",
	"clock_nanosleep",
	"nanosleep",
	"gettimeofday",
	"time",
	"poll",
	"ppoll",
	"select",
	"pselect6",
	"epoll_create1",
	"epoll_ctl",
	"epoll_wait",
	"epoll_pwait",
	"bind",
	"listen",
	"accept",
	"accept4",
	"connect",
	"shutdown",
	"getsockname",
	"getpeername",
	"setsockopt",
	"getsockopt",
	"sendto",
	"recvfrom",
	"sendmsg",
	"recvmsg",
	"sendmmsg",
	"recvmmsg",
	"ioctl",
	"sched_yield",
	"sched_getaffinity",
	/* Signals: dnsmasq ends its TCP children; its pid namespace holds nothing else. */
	"kill",
	"tgkill",
	/* execve: the one exec into dnsmasq itself; the shim's constructor closes it behind. */
	"execve",
};

static int allow_narrowed(scmp_filter_ctx ctx)
{
	static const int families[] = { AF_INET, AF_INET6, AF_UNIX };
	int r = 0;

	/* Sockets of the families DNS needs; netlink for the routing family only (dnsmasq's
	 * interface list). Never NETLINK_NETFILTER: nft is the keeper's. */
	for (size_t i = 0; i < ARRAY_SIZE(families) && r == 0; i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
				     SCMP_A0(SCMP_CMP_EQ, families[i]));
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 2,
				     SCMP_A0(SCMP_CMP_EQ, AF_NETLINK),
				     SCMP_A2(SCMP_CMP_EQ, NETLINK_ROUTE));
	/* A process per TCP client (fork, no namespace flags) and threads; clone3 hides its
	 * flags: ENOSYS, and glibc falls back to clone. */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
				     SCMP_A0(SCMP_CMP_MASKED_EQ,
					     CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWPID |
						     CLONE_NEWNET | CLONE_NEWUTS | CLONE_NEWIPC |
						     CLONE_NEWCGROUP,
					     0));
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	/* Naming itself and asking about its own state; no capability or securebits changes. */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1,
				     SCMP_A0(SCMP_CMP_EQ, PR_SET_NAME));
	/* The shim's own filter on top (no more execve); a filter only ever narrows. */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(seccomp), 1,
				     SCMP_A0(SCMP_CMP_EQ, SECCOMP_SET_MODE_FILTER));
	return r;
}

/* Default deny with EPERM rather than a kill: one dnsmasq serves a sandbox's every lookup, and a
 * rare path's refused call is an error it logs and survives. */
static int dns_seccomp(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	int r = ctx ? 0 : -ENOMEM;

	if (r == 0)
		r = jail_allow_names(ctx, allowed, ARRAY_SIZE(allowed));
	if (r == 0)
		r = allow_narrowed(ctx);
	if (r == 0)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	return r;
}

/* Binds host path from onto the jail's file (or directory) to; ro, no devices, no setuid. */
static int bind_into(const char *from, const char *to, int dir, unsigned long extra)
{
	unsigned long flags = MS_BIND | MS_REMOUNT | MS_NOSUID | extra;
	int fd;

	if (dir) {
		if (mkdir(to, 0755) < 0 && errno != EEXIST)
			return log_errno(-errno, "DNS jail: mkdir %s", to);
	} else {
		fd = open(to, O_CREAT | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd < 0)
			return log_errno(-errno, "DNS jail: create %s", to);
		close(fd);
	}
	if (mount(from, to, NULL, MS_BIND | MS_REC, NULL) < 0 ||
	    mount(NULL, to, NULL, flags, NULL) < 0)
		return log_errno(-errno, "DNS jail: bind %s", from);
	return 0;
}

/* The host's /lib* and /bin: a symlink is copied (merged /usr), a directory bound read-only. */
static int link_or_bind(const char *name)
{
	char host[64], jail[64], target[256];
	struct stat st;
	ssize_t n;

	snprintf(host, sizeof(host), "/%s", name);
	snprintf(jail, sizeof(jail), JAIL_BUILD "/%s", name);
	if (lstat(host, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (S_ISDIR(st.st_mode))
		return bind_into(host, jail, 1, MS_RDONLY | MS_NODEV);
	if (!S_ISLNK(st.st_mode))
		return 0;
	n = readlink(host, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	if (symlink(target, jail) < 0)
		return log_errno(-errno, "DNS jail: link %s", jail);
	return 0;
}

/* The jail's files, held open: the tmpfs may cover where they are (a test's /tmp). */
struct jail_files {
	int fd[3];
	char path[3][32]; /* /proc/self/fd/N */
};

static int hold_files(const struct dns_jail *j, struct jail_files *f)
{
	const char *const paths[] = { j->log, j->sock, j->shim };

	for (size_t i = 0; i < ARRAY_SIZE(paths); i++) {
		f->fd[i] = open(paths[i], O_PATH | O_CLOEXEC | O_NOFOLLOW);
		if (f->fd[i] < 0)
			return log_errno(-errno, "DNS jail: %s", paths[i]);
		snprintf(f->path[i], sizeof(f->path[i]), "/proc/self/fd/%d", f->fd[i]);
	}
	return 0;
}

/* The new root: a read-only tmpfs with the few things named in the header; nothing else. */
static int build_root(const struct dns_jail *j)
{
	static const char *const links[] = { "lib", "lib64", "lib32", "libx32", "bin", "sbin" };
	struct jail_files f;
	int r = 0;

	if ((r = hold_files(j, &f)) < 0)
		return r;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return log_errno(-errno, "DNS jail: make the mounts private");
	if (mount("firebreak-dns", JAIL_BUILD, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "mode=0755,size=64k") < 0)
		return log_errno(-errno, "DNS jail: tmpfs");
	if ((r = bind_into("/usr", JAIL_BUILD "/usr", 1, MS_RDONLY | MS_NODEV)) < 0)
		return r;
	for (size_t i = 0; i < ARRAY_SIZE(links) && r == 0; i++)
		r = link_or_bind(links[i]);
	if (r < 0)
		return log_errno(r, "DNS jail: the /lib links");
	if (mkdir(JAIL_BUILD "/dev", 0755) < 0 ||
	    (r = bind_into("/dev/null", JAIL_BUILD "/dev/null", 0, MS_NOEXEC)) < 0 ||
	    (r = bind_into("/dev/urandom", JAIL_BUILD "/dev/urandom", 0, MS_NOEXEC | MS_RDONLY)) <
		    0 || /* dnsmasq seeds its query ids and ports there */
	    (r = bind_into(f.path[0], JAIL_BUILD DNS_JAIL_LOG, 0, MS_NODEV | MS_NOEXEC)) < 0 ||
	    (r = bind_into(f.path[1], JAIL_BUILD DNS_WIRE_SOCK_JAIL_PATH, 0,
			   MS_NODEV | MS_NOEXEC)) < 0 ||
	    (r = bind_into(f.path[2], JAIL_BUILD DNS_WIRE_SHIM_JAIL_PATH, 0,
			   MS_RDONLY | MS_NODEV)) < 0)
		return r < 0 ? r : log_errno(-errno, "DNS jail: /dev");
	if (mkdir(JAIL_BUILD "/.old", 0700) < 0 ||
	    syscall(SYS_pivot_root, JAIL_BUILD, JAIL_BUILD "/.old") < 0 || chdir("/") < 0 ||
	    umount2("/.old", MNT_DETACH) < 0 || rmdir("/.old") < 0)
		return log_errno(-errno, "DNS jail: pivot_root");
	if (mount(NULL, "/", NULL,
		  MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return log_errno(-errno, "DNS jail: make the root read-only");
	return 0;
}

/* In the child, pid 1 of its namespace: never returns. */
_Noreturn static void jail_child(const struct dns_jail *j, char *const *argv)
{
	char preload[64];
	char *envp[] = { "PATH=/usr/sbin:/usr/bin", preload, NULL };
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s", DNS_WIRE_SHIM_JAIL_PATH);
	if (build_root(j) < 0 || jail_drop(j->uid, "DNS jail") < 0)
		_exit(126);
	/* Nothing of the caller's but stdin, stdout and stderr (the log's path is bound). */
	syscall(SYS_close_range, 3U, ~0U, 0);
	if (dns_seccomp() < 0)
		_exit(126);
	execve(argv[0], argv, envp);
	_exit(126);
}

pid_t egress_dns_jail_spawn(const struct dns_jail *j, char *const *argv)
{
	/* A raw clone, as fork() with namespaces: the caller's own pid namespace for its later
	 * children (nft) stays what it was, which unshare(CLONE_NEWPID) would not. */
	pid_t pid = (pid_t)syscall(SYS_clone, CLONE_NEWPID | CLONE_NEWNS | SIGCHLD, NULL, NULL,
				   NULL, NULL);

	if (pid < 0)
		return log_errno(-errno, "DNS jail: clone");
	if (pid == 0)
		jail_child(j, argv);
	return pid;
}
