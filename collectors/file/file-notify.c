/* The file collector's fanotify groups and marks (file-notify.h). */
#include "file-notify.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "macro.h"

#ifndef FAN_REPORT_PIDFD
#define FAN_REPORT_PIDFD 0x00000080
#define FAN_EVENT_INFO_TYPE_PIDFD 4
struct fanotify_event_info_pidfd {
	struct fanotify_event_info_header hdr;
	int32_t pidfd;
};
#endif
#ifndef FAN_RENAME
#define FAN_RENAME 0x10000000
#define FAN_EVENT_INFO_TYPE_OLD_DFID_NAME 10
#define FAN_EVENT_INFO_TYPE_NEW_DFID_NAME 12
#endif

/* The closes and exec opens the first group asks for; the dirent events of the second. */
#define MASK_ACCESS (FAN_CLOSE_WRITE | FAN_CLOSE_NOWRITE | FAN_OPEN_EXEC)
#define MASK_DIRENT (FAN_CREATE | FAN_DELETE | FAN_ATTRIB | FAN_ONDIR)
#define FS_MAX 8 /* file systems marked per sandbox: /workspace, /tmp, /dev/shm, home */
#define READ_BUF 65536

struct fs_slot {
	int mount_fd; /* a directory of the file system, for open_by_handle_at */
	fsid_t fsid;
};

struct file_notify {
	int fd[FILE_NOTIFY_GROUPS]; /* access on own mounts, dirent (dfid+name), access on /proc */
	uint64_t rename_mask;	    /* FAN_RENAME, or FAN_MOVED_FROM|FAN_MOVED_TO where refused */
	struct fs_slot fs[FS_MAX];
	int n_fs;
	char buf[READ_BUF] __attribute__((aligned(8)));
};

int file_notify_new(size_t queue_hint, struct file_notify **ret)
{
	struct file_notify *n = calloc(1, sizeof(*n));
	unsigned base = FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK;

	(void)queue_hint; /* the kernel's default (16384 events per group) */
	if (!n)
		return -ENOMEM;
	/* A pidfd proves the process is the one that acted (its pid may be reused later). */
	n->fd[FILE_GROUP_ACCESS] =
		fanotify_init(base | FAN_REPORT_PIDFD, O_RDONLY | O_LARGEFILE | O_CLOEXEC);
	n->fd[FILE_GROUP_DIRENT] =
		fanotify_init(base | FAN_REPORT_DFID_NAME | FAN_REPORT_FID | FAN_REPORT_PIDFD,
			      O_RDONLY | O_CLOEXEC);
	n->fd[FILE_GROUP_PROC] =
		fanotify_init(base | FAN_REPORT_PIDFD, O_RDONLY | O_LARGEFILE | O_CLOEXEC);
	for (int i = 0; i < FILE_NOTIFY_GROUPS; i++) {
		if (n->fd[i] < 0) {
			int r = -errno;

			file_notify_free(n);
			return r;
		}
	}
	n->rename_mask = FAN_RENAME;
	*ret = n;
	return 0;
}

void file_notify_free(struct file_notify *n)
{
	if (!n)
		return;
	for (int i = 0; i < FILE_NOTIFY_GROUPS; i++)
		if (n->fd[i] > 0)
			close(n->fd[i]);
	for (int i = 0; i < n->n_fs; i++)
		close(n->fs[i].mount_fd);
	free(n);
}

int file_notify_fd(const struct file_notify *n, int which)
{
	return n->fd[which];
}

/* The dirent marks on the file system under path, and a descriptor to resolve its handles. */
static int mark_fs(struct file_notify *n, const char *path)
{
	struct statfs sfs;
	int fd;

	if (n->n_fs == FS_MAX)
		return -ENOSPC;
	if (fanotify_mark(n->fd[FILE_GROUP_DIRENT], FAN_MARK_ADD | FAN_MARK_FILESYSTEM,
			  MASK_DIRENT | n->rename_mask, AT_FDCWD, path) < 0) {
		if (errno != EINVAL || n->rename_mask != FAN_RENAME)
			return -errno;
		/* No FAN_RENAME here: the two halves, each reported as a rename of one side. */
		n->rename_mask = FAN_MOVED_FROM | FAN_MOVED_TO;
		if (fanotify_mark(n->fd[FILE_GROUP_DIRENT], FAN_MARK_ADD | FAN_MARK_FILESYSTEM,
				  MASK_DIRENT | n->rename_mask, AT_FDCWD, path) < 0)
			return -errno;
	}
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -errno;
	if (fstatfs(fd, &sfs) < 0) {
		close(fd);
		return -errno;
	}
	n->fs[n->n_fs].mount_fd = fd;
	n->fs[n->n_fs++].fsid = sfs.f_fsid;
	return 0;
}

int file_notify_mark(struct file_notify *n, const char *path, enum file_mark_scope scope)
{
	if (access(path, F_OK) < 0)
		return -errno;
	int g = scope == FILE_MARK_FULL ? FILE_GROUP_ACCESS : FILE_GROUP_PROC;

	if (fanotify_mark(n->fd[g], FAN_MARK_ADD | FAN_MARK_MOUNT, MASK_ACCESS, AT_FDCWD, path) < 0)
		return -errno;
	return scope == FILE_MARK_FULL ? mark_fs(n, path) : 0;
}

/* The path of fd as its mount's namespace sees it (the sandbox's root: "/workspace/x"). */
static int fd_path(int fd, char *buf, size_t size)
{
	char link[64];
	ssize_t k;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if ((k = readlink(link, buf, size - 1)) < 0)
		return -errno;
	buf[k] = '\0';
	return 0;
}

static void on_access(struct file_notify *n, const struct fanotify_event_metadata *m, int pidfd,
		      void (*fn)(const struct file_note *, void *), void *data)
{
	struct file_note note = { .pid = m->pid, .pidfd = pidfd, .fd = m->fd, .dirfd = -1 };

	(void)n;
	note.op = (m->mask & FAN_OPEN_EXEC)	? FILE_OP_EXEC
		  : (m->mask & FAN_CLOSE_WRITE) ? FILE_OP_WRITE
						: FILE_OP_READ;
	note.is_dir = !!(m->mask & FAN_ONDIR);
	if (m->fd >= 0 && fd_path(m->fd, note.path, sizeof(note.path)) == 0)
		fn(&note, data);
}

/* The file system slot of fsid, or NULL. */
static struct fs_slot *slot_of(struct file_notify *n, const __kernel_fsid_t *fsid)
{
	for (int i = 0; i < n->n_fs; i++)
		if (!memcmp(&n->fs[i].fsid, fsid, sizeof(*fsid)))
			return &n->fs[i];
	return NULL;
}

/* Opens the directory (or object) of a fid record; its path into buf, its name into *name. */
static int open_fid(struct file_notify *n, const struct fanotify_event_info_fid *fid, char *buf,
		    size_t size, const char **name)
{
	struct file_handle *fh = (struct file_handle *)fid->handle;
	struct fs_slot *s = slot_of(n, &fid->fsid);
	int fd;

	*name = NULL;
	if (fid->hdr.info_type != FAN_EVENT_INFO_TYPE_FID)
		*name = (const char *)fh->f_handle + fh->handle_bytes;
	if (!s || (fd = open_by_handle_at(s->mount_fd, fh, O_PATH | O_CLOEXEC)) < 0)
		return -ESTALE;
	if (fd_path(fd, buf, size) < 0) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/* path/name into out. */
static void join(char *out, size_t size, const char *dir, const char *name)
{
	if (!name || !*name || strcmp(name, ".") == 0)
		snprintf(out, size, "%s", dir);
	else
		snprintf(out, size, "%s%s%s", dir, strcmp(dir, "/") ? "/" : "", name);
}

struct dirent_recs {
	const struct fanotify_event_info_fid *dfid, *fid, *old, *new;
	int pidfd;
};

static void parse_records(const struct fanotify_event_metadata *m, struct dirent_recs *r)
{
	const char *p = (const char *)m + m->metadata_len, *end = (const char *)m + m->event_len;

	memset(r, 0, sizeof(*r));
	r->pidfd = -1;
	while (p + sizeof(struct fanotify_event_info_header) <= end) {
		const struct fanotify_event_info_header *h = (const void *)p;

		if (h->len == 0 || p + h->len > end)
			break;
		switch (h->info_type) {
		case FAN_EVENT_INFO_TYPE_PIDFD:
			r->pidfd = ((const struct fanotify_event_info_pidfd *)p)->pidfd;
			break;
		case FAN_EVENT_INFO_TYPE_DFID_NAME:
			r->dfid = (const void *)p;
			break;
		case FAN_EVENT_INFO_TYPE_FID:
			r->fid = (const void *)p;
			break;
		case FAN_EVENT_INFO_TYPE_OLD_DFID_NAME:
			r->old = (const void *)p;
			break;
		case FAN_EVENT_INFO_TYPE_NEW_DFID_NAME:
			r->new = (const void *)p;
			break;
		}
		p += h->len;
	}
}

static enum file_op dirent_op(uint64_t mask)
{
	if (mask & FAN_CREATE)
		return FILE_OP_CREATE;
	if (mask & FAN_DELETE)
		return FILE_OP_DELETE;
	if (mask & (FAN_RENAME | FAN_MOVED_FROM | FAN_MOVED_TO))
		return FILE_OP_RENAME;
	return FILE_OP_ATTRIB;
}

static void on_dirent(struct file_notify *n, const struct fanotify_event_metadata *m,
		      const struct dirent_recs *r, void (*fn)(const struct file_note *, void *),
		      void *data)
{
	struct file_note note = { .pid = m->pid, .pidfd = r->pidfd, .fd = -1, .dirfd = -1 };
	const struct fanotify_event_info_fid *first = r->old ? r->old : r->dfid ? r->dfid : r->fid;
	char dir[PATH_MAX];
	const char *name;
	int fd2 = -1;

	note.op = dirent_op(m->mask);
	note.is_dir = !!(m->mask & FAN_ONDIR);
	if (!first || (note.dirfd = open_fid(n, first, dir, sizeof(dir), &name)) < 0)
		return; /* gone before it was read (a short-lived name): nothing to resolve */
	note.name = name;
	join(note.path, sizeof(note.path), dir, name);
	if (r->new && (fd2 = open_fid(n, r->new, dir, sizeof(dir), &name)) >= 0)
		join(note.path2, sizeof(note.path2), dir, name);
	if (m->mask & FAN_MOVED_TO) { /* the fallback's second half: the new name only */
		snprintf(note.path2, sizeof(note.path2), "%s", note.path);
		note.path[0] = '\0';
	}
	fn(&note, data);
	close(note.dirfd);
	if (fd2 >= 0)
		close(fd2);
}

int file_notify_read(struct file_notify *n, int which,
		     void (*fn)(const struct file_note *note, void *data), void *data)
{
	const struct fanotify_event_metadata *m;
	ssize_t len = read(n->fd[which], n->buf, sizeof(n->buf));
	int count = 0;

	if (len < 0)
		return errno == EAGAIN ? 0 : -errno;
	for (m = (const void *)n->buf; FAN_EVENT_OK(m, len); m = FAN_EVENT_NEXT(m, len)) {
		struct dirent_recs r;

		count++;
		if (m->vers != FANOTIFY_METADATA_VERSION)
			continue;
		parse_records(m, &r);
		if (m->mask & FAN_Q_OVERFLOW) {
			struct file_note note = {
				.op = FILE_OP_OVERFLOW, .pidfd = -1, .fd = -1, .dirfd = -1
			};

			fn(&note, data);
		} else if (which != FILE_GROUP_DIRENT) {
			on_access(n, m, r.pidfd, fn, data);
		} else {
			on_dirent(n, m, &r, fn, data);
		}
		if (m->fd >= 0)
			close(m->fd);
		if (r.pidfd >= 0)
			close(r.pidfd);
	}
	return count;
}
