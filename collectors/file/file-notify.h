/*
 * The file collector's mechanism: fanotify, a pair of groups (below) that one watched sandbox has
 * to itself, or several share once the kernel's group limit is near (file-events.c). Filesystem
 * marks on the sandbox's own tmpfs instances (root, /workspace, /tmp, /dev/shm, home) report
 * closes after reads and writes, exec opens, creates, deletes, attribute changes and renames;
 * mount marks on its /proc and the masks over /proc files report closes. Nothing is marked
 * that a process outside the sandbox uses, so it pays nothing. Where BPF LSM loads (production
 * kernels), file_open and the path hooks would be the alternative; not built (KERNEL-NOTES.md).
 */
#ifndef FB_FILE_NOTIFY_H
#define FB_FILE_NOTIFY_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

enum file_op {
	FILE_OP_READ,	    /* closed, opened without write (FAN_CLOSE_NOWRITE) */
	FILE_OP_WRITE,	    /* closed, opened for writing (FAN_CLOSE_WRITE) */
	FILE_OP_EXEC,	    /* opened to be executed (FAN_OPEN_EXEC) */
	FILE_OP_CREATE,	    /* a name made (file, directory, link, symlink, node) */
	FILE_OP_DELETE,	    /* a name removed */
	FILE_OP_ATTRIB,	    /* mode, owner, times, link count changed */
	FILE_OP_RENAME,	    /* path -> path2 */
	FILE_OP_OVERFLOW,   /* the kernel's queue overflowed: events of this sandbox were lost */
	FILE_OP_UNRESOLVED, /* an event whose directory was gone before it was read */
	FILE_OP_LINK_COUNT, /* a file's link count changed (its unlink or link is its own event) */
};

/* The group reports no pidfds (the file system group: see file-notify.c). */
#define FILE_NO_PIDFD (-100)

/* One event, decoded. */
struct file_note {
	void *owner; /* whose marks it came through (file_notify_mark); NULL: no one's now, or an
			overflow (whose events were lost is not known) */
	enum file_op op;
	int32_t pid; /* the host's pid of the process that did it */
	int pidfd;   /* its pidfd (valid during the callback); FILE_NO_PIDFD: not reported, else
			gone already */
	int is_dir;  /* on a directory */
	int linked;  /* a create that was a hard link (its link count event came just before) */
	int fd;	     /* the file (closes, exec), else -1: valid during the callback */
	int dirfd;   /* the parent directory (dirent events), else -1: valid during the callback */
	const char *name;     /* in dirfd: the entry the event is about */
	char path[PATH_MAX];  /* as the sandbox sees it */
	char path2[PATH_MAX]; /* a rename's new path */
};

/* Which of the sandbox's mounts get which marks. */
enum file_mark_scope {
	FILE_MARK_FULL,	     /* a writable mount of the sandbox's own: every event */
	FILE_MARK_SENSITIVE, /* /proc and its masks: closes and exec only, filtered in user space */
};

struct file_notify;

/*
 * The groups: every event on the sandbox's own file systems (handles and names, no descriptors),
 * and access events on its /proc apart: /proc reports no handles that resolve, and there a read
 * fails (ESRCH, and the kernel drops that one event) when the event's file is a /proc/N file of
 * a process N that has exited: the kernel cannot open it for us any more. Every short-lived
 * process reading /proc/self does that; the proc group's failures are counted as exactly that.
 */
enum { FILE_GROUP_FS, FILE_GROUP_PROC, FILE_NOTIFY_GROUPS };

/*
 * Makes a pair of groups; 0 and *ret, or -errno (no fanotify; EMFILE: the kernel's per-user
 * limit of groups, /proc/sys/fs/fanotify/max_user_groups, is reached).
 */
int file_notify_new(size_t queue_hint, struct file_notify **ret);

/* Frees it, its groups and its marks; accepts NULL. */
void file_notify_free(struct file_notify *n);

/* A group's fd (FILE_GROUP_*), for the loop. */
int file_notify_fd(const struct file_notify *n, int which);

/*
 * Marks the mount at path (seen through the sandbox's init: /proc/PID/root/workspace) with scope
 * for owner; FULL marks its file system (the sandbox's own tmpfs: its events are owner's by their
 * fsid) and keeps a descriptor of it to resolve names; SENSITIVE marks the mount (its events are
 * owner's by their descriptor's mount id). 0, -ENOENT (no such mount in this sandbox) or -errno.
 */
int file_notify_mark(struct file_notify *n, const char *path, enum file_mark_scope scope,
		     void *owner);

/*
 * Marks sandbox init's mounts for owner, seen through its root: FULL on its own writable tmpfs
 * (root, /workspace, /tmp, /dev/shm, /home/agent where each is a mount of its own), SENSITIVE on
 * its /proc and the masks over /proc files. 0, or -errno (logged; none of owner's marks stay).
 */
int file_notify_mark_sandbox(struct file_notify *n, pid_t init, void *owner);

/*
 * Forgets owner's marks: its file systems' are removed, its /proc mounts' stay until the mounts
 * go (their events then have no owner).
 */
void file_notify_unmark(struct file_notify *n, const void *owner);

/*
 * Reads what group which has (at most one buffer) and calls fn for each event; returns how many
 * events were read (0: none waiting) or -errno. The loop's thread only, and fn must not read a
 * group itself: every group is read into one buffer.
 */
int file_notify_read(struct file_notify *n, int which,
		     void (*fn)(const struct file_note *note, void *data), void *data);

#endif
