/*
 * The gate servers' jail (gate-jail.h). The seccomp allowlists are libseccomp's, as lib/jail.c's
 * is: its tables resolve names per architecture, and argument checks (which socket families,
 * which clone flags) stay one readable line each.
 */
#include "gate-jail.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fileio.h"
#include "jail.h"
#include "log.h"
#include "macro.h"
#include "names.h"
#include "netns.h"

/* Where the new root is built, in the jail's own mount namespace (the host's /tmp is untouched:
 * the tmpfs is mounted over it there only). */
#define JAIL_BUILD "/tmp"
#define JAIL_FILES_MAX 8

/* What a server does once it runs: serve sockets, read its interfaces, write its log, fork its
 * children, and glibc's startup. */
static const char *const common[] = {
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
	/* Signals: a server ends its own children; its pid namespace holds nothing else. */
	"kill",
	"tgkill",
	/* execve: the one exec into the server itself (and, for squid, its helpers). */
	"execve",
};

int gate_jail_allow_common(void *ctx)
{
	return jail_allow_names(ctx, common, ARRAY_SIZE(common));
}

int gate_jail_allow_inet_fork(void *ctx)
{
	static const int families[] = { AF_INET, AF_INET6, AF_UNIX };
	int r = 0;

	for (size_t i = 0; i < ARRAY_SIZE(families) && r == 0; i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
				     SCMP_A0(SCMP_CMP_EQ, families[i]));
	/* A process per client or helper (fork, no namespace flags) and threads; clone3 hides
	 * its flags: ENOSYS, and glibc falls back to clone. */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
				     SCMP_A0(SCMP_CMP_MASKED_EQ,
					     CLONE_NEWNS | CLONE_NEWUSER | CLONE_NEWPID |
						     CLONE_NEWNET | CLONE_NEWUTS | CLONE_NEWIPC |
						     CLONE_NEWCGROUP,
					     0));
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
	return r;
}

int gate_jail_beside_exe(const char *file, char *buf, size_t size)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n < 0)
		return -errno;
	exe[n] = '\0';
	if (!(slash = strrchr(exe, '/')))
		return -ENOENT;
	*slash = '\0';
	if ((size_t)snprintf(buf, size, "%s/%s", exe, file) >= size)
		return -ENAMETOOLONG;
	return access(buf, R_OK) < 0 ? -errno : 0;
}

/* Binds host path from onto the jail's file (or directory) to; no devices, no setuid. */
static int bind_into(const char *who, const char *from, const char *to, int dir,
		     unsigned long extra)
{
	unsigned long flags = MS_BIND | MS_REMOUNT | MS_NOSUID | extra;
	int fd;

	if (dir) {
		if (mkdir(to, 0755) < 0 && errno != EEXIST)
			return log_errno(-errno, "%s: mkdir %s", who, to);
	} else {
		fd = open(to, O_CREAT | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0644);
		if (fd < 0)
			return log_errno(-errno, "%s: create %s", who, to);
		close(fd);
	}
	if (mount(from, to, NULL, MS_BIND | MS_REC, NULL) < 0 ||
	    mount(NULL, to, NULL, flags, NULL) < 0)
		return log_errno(-errno, "%s: bind %s", who, from);
	return 0;
}

/* The host's /lib* and /bin: a symlink is copied (merged /usr), a directory bound read-only. */
static int link_or_bind(const char *who, const char *name)
{
	char host[64], jail[64], target[256];
	struct stat st;
	ssize_t n;

	snprintf(host, sizeof(host), "/%s", name);
	snprintf(jail, sizeof(jail), JAIL_BUILD "/%s", name);
	if (lstat(host, &st) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (S_ISDIR(st.st_mode))
		return bind_into(who, host, jail, 1, MS_RDONLY | MS_NODEV);
	if (!S_ISLNK(st.st_mode))
		return 0;
	n = readlink(host, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	if (symlink(target, jail) < 0)
		return log_errno(-errno, "%s: link %s", who, jail);
	return 0;
}

/* The jail's files, held open: the tmpfs may cover where they are (a test's /tmp). */
struct held_files {
	int fd[JAIL_FILES_MAX];
	char path[JAIL_FILES_MAX][32]; /* /proc/self/fd/N */
};

static int hold_files(const struct gate_jail *j, struct held_files *f)
{
	if (j->n_files > JAIL_FILES_MAX)
		return -E2BIG;
	for (size_t i = 0; i < j->n_files; i++) {
		f->fd[i] = open(j->files[i].host, O_PATH | O_CLOEXEC | O_NOFOLLOW);
		if (f->fd[i] < 0)
			return log_errno(-errno, "%s: %s", j->who, j->files[i].host);
		snprintf(f->path[i], sizeof(f->path[i]), "/proc/self/fd/%d", f->fd[i]);
	}
	return 0;
}

static int bind_files(const struct gate_jail *j, const struct held_files *f)
{
	char to[256];
	int r = 0;

	for (size_t i = 0; i < j->n_files && r == 0; i++) {
		const struct gate_jail_file *g = &j->files[i];

		snprintf(to, sizeof(to), JAIL_BUILD "%s", g->jail);
		r = bind_into(j->who, f->path[i], to, g->dir,
			      MS_NODEV | (g->exec ? 0 : MS_NOEXEC) | (g->writable ? 0 : MS_RDONLY));
	}
	return r;
}

/* A /dev/shm of the jail's own (squid keeps its shared tables there), the server's. */
static int private_shm(const struct gate_jail *j)
{
	char opts[64];

	snprintf(opts, sizeof(opts), "mode=0700,uid=%u,gid=%u,size=%s", (unsigned)j->uid,
		 (unsigned)j->uid, j->shm_size);
	if (mkdir(JAIL_BUILD "/dev/shm", 0755) < 0 ||
	    mount("firebreak-jail-shm", JAIL_BUILD "/dev/shm", "tmpfs",
		  MS_NOSUID | MS_NODEV | MS_NOEXEC, opts) < 0)
		return log_errno(-errno, "%s: /dev/shm", j->who);
	return 0;
}

/* The new root: a read-only tmpfs with the few things named in the header; nothing else. */
static int build_root(const struct gate_jail *j)
{
	static const char *const links[] = { "lib", "lib64", "lib32", "libx32", "bin", "sbin" };
	struct held_files f;
	int r = 0;

	if ((r = hold_files(j, &f)) < 0)
		return r;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return log_errno(-errno, "%s: make the mounts private", j->who);
	if (mount("firebreak-jail", JAIL_BUILD, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "mode=0755,size=64k") < 0)
		return log_errno(-errno, "%s: tmpfs", j->who);
	if ((r = bind_into(j->who, "/usr", JAIL_BUILD "/usr", 1, MS_RDONLY | MS_NODEV)) < 0)
		return r;
	for (size_t i = 0; i < ARRAY_SIZE(links) && r == 0; i++)
		r = link_or_bind(j->who, links[i]);
	if (r < 0)
		return log_errno(r, "%s: the /lib links", j->who);
	if (mkdir(JAIL_BUILD "/dev", 0755) < 0 ||
	    (r = bind_into(j->who, "/dev/null", JAIL_BUILD "/dev/null", 0, MS_NOEXEC)) < 0 ||
	    (r = bind_into(j->who, "/dev/urandom", JAIL_BUILD "/dev/urandom", 0,
			   MS_NOEXEC | MS_RDONLY)) < 0 || /* seeds: query ids, ports, TLS */
	    (r = bind_files(j, &f)) < 0)
		return r < 0 ? r : log_errno(-errno, "%s: /dev", j->who);
	if (j->shm_size && (r = private_shm(j)) < 0)
		return r;
	if (mkdir(JAIL_BUILD "/.old", 0700) < 0 ||
	    syscall(SYS_pivot_root, JAIL_BUILD, JAIL_BUILD "/.old") < 0 || chdir("/") < 0 ||
	    umount2("/.old", MNT_DETACH) < 0 || rmdir("/.old") < 0)
		return log_errno(-errno, "%s: pivot_root", j->who);
	if (mount(NULL, "/", NULL,
		  MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return log_errno(-errno, "%s: make the root read-only", j->who);
	return 0;
}

/* In the child, pid 1 of its namespace: never returns. */
_Noreturn static void jail_child(const struct gate_jail *j, char *const *argv)
{
	if (build_root(j) < 0 || jail_drop(j->uid, j->who) < 0)
		_exit(126);
	/* Nothing of the caller's but stdin, stdout and stderr (the files are bound). */
	syscall(SYS_close_range, 3U, ~0U, 0);
	if (j->seccomp() < 0)
		_exit(126);
	execve(argv[0], argv, j->envp);
	_exit(126);
}

pid_t gate_jail_spawn(const struct gate_jail *j, char *const *argv)
{
	/* A raw clone, as fork() with namespaces: the caller's own pid namespace for its later
	 * children (nft) stays what it was, which unshare(CLONE_NEWPID) would not. */
	pid_t pid = (pid_t)syscall(SYS_clone, CLONE_NEWPID | CLONE_NEWNS | SIGCHLD, NULL, NULL,
				   NULL, NULL);

	if (pid < 0)
		return log_errno(-errno, "%s: clone", j->who);
	if (pid == 0)
		jail_child(j, argv);
	return pid;
}

_Noreturn static void keeper_child(const char *log, int (*start)(void *), void (*serve)(void *),
				   void *arg, int ready, int gate)
{
	unsigned char answer;
	int fd, r;

	setsid(); /* the caller's terminal is not the keeper's */
	fd_close_all_except((int[]){ ready, gate }, 2);
	fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || dup2(fd, 2) < 0 || (fd = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0 ||
	    dup2(fd, 0) < 0 || dup2(fd, 1) < 0)
		_exit(126);
	r = setns(gate, CLONE_NEWNET) < 0 ? -errno : 0;
	close(gate);
	if (r == 0)
		r = start(arg);
	answer = (unsigned char)-r;
	if (write(ready, &answer, 1) != 1 || r < 0)
		_exit(1);
	close(ready);
	serve(arg);
	_exit(1);
}

int gate_keeper_start(const char *log, int (*start)(void *arg), void (*serve)(void *arg), void *arg,
		      struct gate_keeper *k)
{
	int gate, ready[2];

	k->pid = -1;
	k->ready_fd = -1;
	if ((gate = netns_open(EGRESS_GATE_NETNS)) < 0)
		return gate;
	if (pipe2(ready, O_CLOEXEC) < 0) {
		close(gate);
		return -errno;
	}
	k->pid = fork();
	if (k->pid == 0) {
		close(ready[0]);
		keeper_child(log, start, serve, arg, ready[1], gate);
	}
	close(ready[1]);
	close(gate);
	if (k->pid < 0) {
		close(ready[0]);
		return -errno;
	}
	k->ready_fd = ready[0];
	return 0;
}

int gate_keeper_wait(struct gate_keeper *k)
{
	unsigned char answer;
	int status;
	ssize_t n;

	if (k->ready_fd < 0)
		return 0; /* none started */
	while ((n = read(k->ready_fd, &answer, 1)) < 0 && errno == EINTR)
		;
	close(k->ready_fd);
	k->ready_fd = -1;
	if (n == 1 && answer == 0)
		return 0;
	while (waitpid(k->pid, &status, 0) < 0 && errno == EINTR)
		;
	return n == 1 ? -(int)answer : -EIO;
}
