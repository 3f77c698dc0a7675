/*
 * A step's Landlock domain.
 *
 * Every step of a sandbox runs as the sandbox's one uid: the workspace's files must stay that
 * uid's, or a later step could not edit what an earlier one wrote (and git would call the tree
 * another user's). So the uid cannot be the wall between steps; a Landlock domain of the step's
 * own is. The kernel lets a process in a domain ptrace-access another (read /proc/PID/environ,
 * maps, cmdline's neighbours, open /proc/PID/mem, ptrace, pidfd_getfd) only if that one is in the
 * same domain or one nested in it; with /proc mounted hidepid=invisible (mounts.c) it does not even
 * list the others. The signal and abstract-socket scopes (ABI 6) keep a step's kill() and
 * connect() to abstract unix sockets inside the step.
 *
 * Within a step, processes share the domain; what keeps one from writing a sibling's memory is the
 * one file right the domain handles, writing: granted everywhere in the sandbox's tree except
 * under /proc, whose writable files are processes' own (mem, attr, oom_score_adj, ...). /proc/sys,
 * with its tripwires, and the pid 1 stand-in, a tripwire directory, keep the right, so a write
 * there is still refused where it always was, and seen.
 */
#include "step-landlock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "macro.h"

/*
 * The ABI's ruleset attributes and flags beyond what this system's headers (Linux 6.1's) know. The
 * kernel takes the struct's size: an older kernel is given only the fields it has.
 */
struct step_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI 4 */
	uint64_t scoped;	     /* ABI 6 */
};
#define STEP_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define STEP_SCOPE_SIGNAL (1ULL << 1)
#define STEP_RESTRICT_LOG_SAME_EXEC_OFF (1U << 0) /* ABI 7 */
#define STEP_RESTRICT_LOG_NEW_EXEC_ON (1U << 1)	  /* ABI 7 */

/*
 * The rights the domain handles, granted wherever writing is: writing, and (beneath a directory)
 * moving or linking a file to another directory, which a domain refuses everywhere unless it
 * handles and grants it (ABI 2).
 */
#define STEP_ACCESS (LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REFER)

int step_landlock_abi(void)
{
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	if (v < 0)
		return errno == ENOSYS ? -EOPNOTSUPP : -errno;
	return (int)v;
}

/* Grants writing beneath (or on) what fd names; a descriptor no rule can name (a pipe, a socket:
 * Landlock never checks those) needs none. */
static int grant_fd(int ruleset, int fd)
{
	struct landlock_path_beneath_attr pb = { .parent_fd = fd };
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISLNK(st.st_mode))
		return 0; /* what a link names is an entry of its own */
	pb.allowed_access = S_ISDIR(st.st_mode) ? STEP_ACCESS : LANDLOCK_ACCESS_FS_WRITE_FILE;
	if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0)
		return errno == EBADFD ? 0 : -errno;
	return 0;
}

/* Grants writing beneath dirfd's entry name, unless it is gone since it was listed. */
static int grant_entry(int ruleset, int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC), r;

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	r = grant_fd(ruleset, fd);
	close(fd);
	return r;
}

/* Grants writing beneath every entry of the sandbox's root but /proc. */
static int grant_root(int ruleset, pid_t init)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int r = 0;

	snprintf(path, sizeof(path), "/proc/%d/root/", (int)init);
	if (!(d = opendir(path)))
		return -errno;
	while (r == 0 && (errno = 0, de = readdir(d)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 &&
		    strcmp(de->d_name, "proc") != 0)
			r = grant_entry(ruleset, dirfd(d), de->d_name);
	if (r == 0 && errno)
		r = -errno;
	closedir(d);
	return r;
}

/*
 * In /proc, only where a write is refused by something else and seen: sys (read-only, its
 * tripwires bound over it) and pid 1's directory, which is no process's but the tripwires'
 * stand-in (lures.h). Every other entry is a process's own or root's.
 */
static int grant_proc(int ruleset, pid_t init)
{
	static const char *const granted[] = { "sys", "1" };
	char path[64];
	int dirfd, r = 0;

	snprintf(path, sizeof(path), "/proc/%d/root/proc", (int)init);
	if ((dirfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -errno;
	for (size_t i = 0; i < ARRAY_SIZE(granted) && r == 0; i++)
		r = grant_entry(ruleset, dirfd, granted[i]);
	close(dirfd);
	return r;
}

int step_landlock_ruleset(pid_t init, int abi)
{
	int ruleset, r;
	struct step_ruleset_attr attr = { .handled_access_fs = STEP_ACCESS };
	size_t size = offsetof(struct step_ruleset_attr, handled_access_net);

	if (abi < 2)
		return -EOPNOTSUPP; /* ABI 1 refuses every rename across directories */
	if (abi >= 6) {
		attr.scoped = STEP_SCOPE_ABSTRACT_UNIX_SOCKET | STEP_SCOPE_SIGNAL;
		size = sizeof(attr);
	}
	ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
	if (ruleset < 0)
		return -errno;
	if ((r = grant_root(ruleset, init)) == 0)
		r = grant_proc(ruleset, init);
	if (r < 0) {
		close(ruleset);
		return r;
	}
	return ruleset;
}

int step_landlock_enter(int ruleset_fd, int abi)
{
	unsigned flags = 0;

	/* The tool's refusals reach the audit log (a denial after the execve that follows);
	 * this process's own would be the enforcer's bug, and there are none to log. */
	if (abi >= 7)
		flags = STEP_RESTRICT_LOG_NEW_EXEC_ON | STEP_RESTRICT_LOG_SAME_EXEC_OFF;
	if (syscall(SYS_landlock_restrict_self, ruleset_fd, flags) < 0)
		return -errno;
	return 0;
}
