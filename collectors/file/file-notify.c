/* The file collector's fanotify groups and marks (file-notify.h). */
#include "file-notify.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "hashmap.h"
#include "log.h"
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

/* Closes and exec opens; what the file system group also asks for: the directory entries. */
#define MASK_ACCESS (FAN_CLOSE_WRITE | FAN_CLOSE_NOWRITE | FAN_OPEN_EXEC)
#define MASK_DIRENT (MASK_ACCESS | FAN_CREATE | FAN_DELETE | FAN_ATTRIB | FAN_ONDIR)
#define DIRS_MAX 64 /* directories whose path and descriptor are kept, per group */
#define READ_BUF 65536
#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x00004000U /* 6.8: a mount's id that is never reused */
#endif

/* A file system marked in the file system group, and whose it is. */
struct fs_slot {
	int mount_fd; /* a directory of the file system, for open_by_handle_at and the unmark */
	fsid_t fsid;  /* what its events carry: each tmpfs instance has its own */
	void *owner;
};

/* A mount marked in the /proc group, and whose it is. */
struct mount_slot {
	uint64_t mnt_id; /* what the event's descriptor's statx says */
	void *owner;
};

struct file_notify {
	int fd[FILE_NOTIFY_GROUPS];
	uint64_t rename_mask; /* FAN_RENAME, or FAN_MOVED_FROM|FAN_MOVED_TO where refused */
	struct fs_slot *fs;
	size_t n_fs, fs_cap;
	struct mount_slot *mounts;
	size_t n_mounts, mounts_cap;
	size_t last_fs;	      /* the slot the last event was of: events come in runs */
	struct hashmap *dirs; /* handle (hex) -> struct dir_entry: resolved once, not per event */
	int32_t count_pid;    /* the pid of the link count event just read, or 0 */
};

/*
 * One read buffer for every group: they are read by the loop's thread alone, one at a time, and
 * 64 KiB per pair of groups was a tenth of firebreakd's memory with 56 pairs.
 */
static char read_buf[READ_BUF] __attribute__((aligned(8)));

static void dirs_clear(struct file_notify *n);

int file_notify_new(size_t queue_hint, struct file_notify **ret)
{
	struct file_notify *n = calloc(1, sizeof(*n));
	unsigned base = FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK;

	(void)queue_hint; /* the kernel's default (16384 events per group) */
	if (!n)
		return -ENOMEM;
	/*
	 * The file system group reports handles, not descriptors: the kernel opens no file per
	 * event, and a directory's path is resolved once (the cache below). No pidfd there either:
	 * making one per event costs as much as the event (a pid reused between the event and its
	 * read would be misattributed; pids are not reused that fast). /proc cannot report handles
	 * that resolve, so its group gets descriptors, and pidfds (it is a trickle).
	 */
	n->fd[FILE_GROUP_FS] =
		fanotify_init(base | FAN_REPORT_DFID_NAME | FAN_REPORT_FID, O_RDONLY | O_CLOEXEC);
	n->fd[FILE_GROUP_PROC] =
		fanotify_init(base | FAN_REPORT_PIDFD, O_RDONLY | O_LARGEFILE | O_CLOEXEC);
	if (hashmap_new(&n->dirs) < 0) {
		file_notify_free(n);
		return -ENOMEM;
	}
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
	for (size_t i = 0; i < n->n_fs; i++)
		close(n->fs[i].mount_fd);
	free(n->fs);
	free(n->mounts);
	dirs_clear(n);
	hashmap_free(n->dirs);
	free(n);
}

int file_notify_fd(const struct file_notify *n, int which)
{
	return n->fd[which];
}

/* Room for one more element in *v (of *cap, each size bytes); 0 or -ENOMEM. */
static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	size_t want = *cap ? 2 * *cap : 8;
	void *p;

	if (n < *cap)
		return 0;
	if (!(p = realloc(*v, want * size)))
		return -ENOMEM;
	*v = p;
	*cap = want;
	return 0;
}

/* The dirent marks on the file system under path, and a descriptor to resolve its handles. */
static int mark_fs(struct file_notify *n, const char *path, void *owner)
{
	struct statfs sfs;
	int fd;

	if (grow((void **)&n->fs, &n->fs_cap, n->n_fs, sizeof(*n->fs)) < 0)
		return -ENOMEM;
	if (fanotify_mark(n->fd[FILE_GROUP_FS], FAN_MARK_ADD | FAN_MARK_FILESYSTEM,
			  MASK_DIRENT | n->rename_mask, AT_FDCWD, path) < 0) {
		if (errno != EINVAL || n->rename_mask != FAN_RENAME)
			return -errno;
		/* No FAN_RENAME here: the two halves, each reported as a rename of one side. */
		n->rename_mask = FAN_MOVED_FROM | FAN_MOVED_TO;
		if (fanotify_mark(n->fd[FILE_GROUP_FS], FAN_MARK_ADD | FAN_MARK_FILESYSTEM,
				  MASK_DIRENT | n->rename_mask, AT_FDCWD, path) < 0)
			return -errno;
	}
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -errno;
	if (fstatfs(fd, &sfs) < 0) {
		close(fd);
		return -errno;
	}
	n->fs[n->n_fs++] = (struct fs_slot){ .mount_fd = fd, .fsid = sfs.f_fsid, .owner = owner };
	return 0;
}

/*
 * The id of the mount fd is on (the never reused one where the kernel has it: a departed
 * sandbox's /proc mount id given to a new one's must not match a slot), or 0.
 */
static int mount_id(int dirfd, const char *path, uint64_t *ret)
{
	struct statx st;

	if (statx(dirfd, path, path[0] ? 0 : AT_EMPTY_PATH, STATX_MNT_ID | STATX_MNT_ID_UNIQUE,
		  &st) < 0)
		return -errno;
	if (!(st.stx_mask & (STATX_MNT_ID | STATX_MNT_ID_UNIQUE)))
		return -EOPNOTSUPP;
	*ret = st.stx_mnt_id;
	return 0;
}

int file_notify_mark(struct file_notify *n, const char *path, enum file_mark_scope scope,
		     void *owner)
{
	uint64_t id;
	int r;

	if (access(path, F_OK) < 0)
		return -errno;
	if (scope == FILE_MARK_FULL)
		return mark_fs(n, path, owner);
	if ((r = mount_id(AT_FDCWD, path, &id)) < 0)
		return r;
	if (grow((void **)&n->mounts, &n->mounts_cap, n->n_mounts, sizeof(*n->mounts)) < 0)
		return -ENOMEM;
	if (fanotify_mark(n->fd[FILE_GROUP_PROC], FAN_MARK_ADD | FAN_MARK_MOUNT, MASK_ACCESS,
			  AT_FDCWD, path) < 0)
		return -errno;
	n->mounts[n->n_mounts++] = (struct mount_slot){ .mnt_id = id, .owner = owner };
	return 0;
}

void file_notify_unmark(struct file_notify *n, const void *owner)
{
	size_t k = 0;

	for (size_t i = 0; i < n->n_fs; i++) {
		if (n->fs[i].owner != owner) {
			n->fs[k++] = n->fs[i];
			continue;
		}
		/* Its file system is the sandbox's: no other owner has a mark on it to keep. */
		if (fanotify_mark(n->fd[FILE_GROUP_FS], FAN_MARK_REMOVE | FAN_MARK_FILESYSTEM,
				  MASK_DIRENT | n->rename_mask, n->fs[i].mount_fd, NULL) < 0 &&
		    errno != ENOENT)
			log_debug("file events: unmark: %s", strerror(errno));
		close(n->fs[i].mount_fd);
	}
	n->n_fs = k;
	n->last_fs = 0;
	/*
	 * Its /proc mounts keep their marks until they go with its mount namespace (no descriptor
	 * of them is kept, which would keep them); their events until then match no slot.
	 */
	k = 0;
	for (size_t i = 0; i < n->n_mounts; i++)
		if (n->mounts[i].owner != owner)
			n->mounts[k++] = n->mounts[i];
	n->n_mounts = k;
	dirs_clear(n); /* its directories' descriptors would keep its file systems */
}

/* The sandbox's own writable mounts (its root too: a tmpfs of its own) get every mark. */
static const char *const full_mounts[] = { "",	       "/workspace",  "/tmp",
					   "/dev/shm", "/home/agent", "/sys/fs/cgroup" };
/* Its /proc and the masks over /proc files: closes only, for the sensitive list. */
static const char *const proc_mounts[] = {
	"/proc",	 "/proc/kcore", "/proc/keys", "/proc/timer_list", "/proc/sched_debug",
	"/proc/kallsyms"
};

/* Whether path is a mount of its own (not a directory of its parent's file system). */
static int is_mount(const char *path)
{
	char parent[PATH_MAX];
	struct stat a, b;
	char *slash;

	snprintf(parent, sizeof(parent), "%s", path);
	if (!(slash = strrchr(parent, '/')) || stat(path, &a) < 0)
		return 0;
	*slash = '\0'; /* its directory: a mount's root differs from it in its device */
	return stat(parent, &b) == 0 && a.st_dev != b.st_dev;
}

static int mark_all(struct file_notify *n, pid_t init, const char *const *list, size_t len,
		    enum file_mark_scope scope, void *owner)
{
	char path[PATH_MAX];
	int r;

	for (size_t i = 0; i < len; i++) {
		snprintf(path, sizeof(path), "/proc/%d/root%s", (int)init, list[i]);
		if (list[i][0] && !is_mount(path))
			continue; /* absent (no home in this sandbox), or part of a mount marked */
		if ((r = file_notify_mark(n, path, scope, owner)) < 0 && r != -ENOENT)
			return log_errno(r, "mark %s", path);
	}
	return 0;
}

int file_notify_mark_sandbox(struct file_notify *n, pid_t init, void *owner)
{
	int r = mark_all(n, init, full_mounts, ARRAY_SIZE(full_mounts), FILE_MARK_FULL, owner);

	if (r >= 0)
		r = mark_all(n, init, proc_mounts, ARRAY_SIZE(proc_mounts), FILE_MARK_SENSITIVE,
			     owner);
	if (r < 0)
		file_notify_unmark(n, owner);
	return r;
}

/*
 * A note with no paths yet. Not an initializer: that would zero both PATH_MAX buffers for every
 * event, and the memset showed in the collector's profile.
 */
static void note_init(struct file_note *note, int32_t pid, int pidfd, int fd)
{
	note->owner = NULL;
	note->op = FILE_OP_READ;
	note->pid = pid;
	note->pidfd = pidfd;
	note->is_dir = 0;
	note->linked = 0;
	note->fd = fd;
	note->dirfd = -1;
	note->name = NULL;
	note->path[0] = note->path2[0] = '\0';
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
	struct file_note note;
	uint64_t id;

	note_init(&note, m->pid, pidfd, m->fd);
	if (m->fd >= 0 && mount_id(m->fd, "", &id) == 0)
		for (size_t i = 0; i < n->n_mounts && !note.owner; i++)
			if (n->mounts[i].mnt_id == id)
				note.owner = n->mounts[i].owner;
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
	if (n->last_fs < n->n_fs && !memcmp(&n->fs[n->last_fs].fsid, fsid, sizeof(*fsid)))
		return &n->fs[n->last_fs];
	for (size_t i = 0; i < n->n_fs; i++)
		if (!memcmp(&n->fs[i].fsid, fsid, sizeof(*fsid)))
			return &n->fs[n->last_fs = i];
	return NULL;
}

/* A resolved handle: its path as the sandbox sees it and a descriptor (O_PATH) to stat under. */
struct dir_entry {
	char key[2 * (sizeof(__kernel_fsid_t) + MAX_HANDLE_SZ) + 16];
	char *path;
	int fd;
};

static void dirs_clear(struct file_notify *n)
{
	size_t pos = 0;
	struct dir_entry *e;

	while (n->dirs && (e = hashmap_next(n->dirs, &pos))) {
		if (e->fd >= 0)
			close(e->fd);
		free(e->path);
		free(e);
	}
	hashmap_free(n->dirs);
	n->dirs = NULL;
	hashmap_new(&n->dirs);
}

/*
 * The cache's key of a handle: its file system and handle bytes in hex. Made for every event, so
 * by table, not by printf (which was a tenth of the collector's time).
 */
static void handle_key(const struct fanotify_event_info_fid *fid, char *key, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	const struct file_handle *fh = (const struct file_handle *)fid->handle;
	const unsigned char *b = (const unsigned char *)&fid->fsid;
	unsigned type = (unsigned)fh->handle_type & 0xff;
	size_t k = 0;

	for (size_t i = 0; i < sizeof(fid->fsid) && k + 3 < size; i++) {
		key[k++] = hex[b[i] >> 4];
		key[k++] = hex[b[i] & 15];
	}
	if (k + 4 < size) {
		key[k++] = ':';
		key[k++] = hex[type >> 4];
		key[k++] = hex[type & 15];
		key[k++] = ':';
	}
	for (unsigned i = 0; i < fh->handle_bytes && i < MAX_HANDLE_SZ && k + 3 < size; i++) {
		key[k++] = hex[fh->f_handle[i] >> 4];
		key[k++] = hex[fh->f_handle[i] & 15];
	}
	key[k] = '\0';
}

/* Keeps e under key; the table is emptied first when full. 0, or -ENOMEM (e is freed). */
static int dirs_put(struct file_notify *n, const char *key, struct dir_entry *e)
{
	if (hashmap_size(n->dirs) >= DIRS_MAX)
		dirs_clear(n);
	snprintf(e->key, sizeof(e->key), "%s", key);
	if (hashmap_put(n->dirs, e->key, e) < 0) {
		if (e->fd >= 0)
			close(e->fd);
		free(e->path);
		free(e);
		return -ENOMEM;
	}
	return 0;
}

/*
 * The directory (or object) of a fid record, resolved once and kept (a directory renamed clears
 * the cache: every path below it changed); its name into *name. The entry, or NULL if the handle
 * does not resolve (the directory is gone). That answer is kept too: rm -rf of a tree queues
 * hundreds of events on each directory it removes, and each failed open_by_handle_at was a
 * syscall per event (a third of the collector's time in tar and pip-like work, measured).
 */
static struct dir_entry *open_fid(struct file_notify *n, const struct fanotify_event_info_fid *fid,
				  const char **name)
{
	struct file_handle *fh = (struct file_handle *)fid->handle;
	char key[sizeof(((struct dir_entry *)0)->key)], path[PATH_MAX];
	struct fs_slot *s = slot_of(n, &fid->fsid);
	struct dir_entry *e;
	int fd = -1;

	*name = NULL;
	if (fid->hdr.info_type != FAN_EVENT_INFO_TYPE_FID)
		*name = (const char *)fh->f_handle + fh->handle_bytes;
	handle_key(fid, key, sizeof(key));
	if ((e = hashmap_get(n->dirs, key)))
		return e->path ? e : NULL;
	if (!(e = calloc(1, sizeof(*e))))
		return NULL;
	e->fd = -1;
	if (s && (fd = open_by_handle_at(s->mount_fd, fh, O_PATH | O_CLOEXEC)) >= 0 &&
	    fd_path(fd, path, sizeof(path)) == 0 && (e->path = strdup(path)))
		e->fd = TAKE_FD(fd);
	if (fd >= 0)
		close(fd);
	if (dirs_put(n, key, e) < 0)
		return NULL;
	return e->path ? e : NULL;
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
	r->pidfd = FILE_NO_PIDFD;
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

/*
 * The operations of an event, in the order they happened as far as one can tell: the kernel
 * merges a process's queued events on one file into one, its mask the union (touch -d: an
 * attribute change and a close after writing).
 */
static const struct {
	uint64_t mask;
	enum file_op op;
} dirent_ops[] = {
	{ FAN_CREATE, FILE_OP_CREATE },	    { FAN_RENAME, FILE_OP_RENAME },
	{ FAN_MOVED_FROM, FILE_OP_RENAME }, { FAN_MOVED_TO, FILE_OP_RENAME },
	{ FAN_OPEN_EXEC, FILE_OP_EXEC },    { FAN_ATTRIB, FILE_OP_ATTRIB },
	{ FAN_CLOSE_WRITE, FILE_OP_WRITE }, { FAN_CLOSE_NOWRITE, FILE_OP_READ },
	{ FAN_DELETE, FILE_OP_DELETE },
};

static void on_dirent(struct file_notify *n, const struct fanotify_event_metadata *m,
		      const struct dirent_recs *r, void (*fn)(const struct file_note *, void *),
		      void *data)
{
	const struct fanotify_event_info_fid *first = r->old ? r->old : r->dfid ? r->dfid : r->fid;
	struct dir_entry *d, *d2;
	struct file_note note;
	struct fs_slot *s;
	const char *name;

	note_init(&note, m->pid, r->pidfd, -1);
	if (first && (s = slot_of(n, &first->fsid)))
		note.owner = s->owner;
	note.is_dir = !!(m->mask & FAN_ONDIR);
	if (first == r->fid && first && !note.is_dir && (m->mask & ~FAN_ATTRIB) == 0) {
		/*
		 * An attribute change of a file reported by its handle alone is its link count's:
		 * every unlink and link makes one besides its own event, and by the time it is read
		 * the unlinked file is gone (a failed open_by_handle_at per unlink). Counted only.
		 */
		note.op = FILE_OP_LINK_COUNT;
		fn(&note, data);
		n->count_pid = m->pid;
		return;
	}
	/*
	 * link(2) reports the link count change first, then the create: a create right after one,
	 * by the same process, is a link even when the new name is gone before it can be stat'ed
	 * (ln a b && rm b, read in one batch).
	 */
	note.linked = n->count_pid == m->pid && m->pid && (m->mask & FAN_CREATE) && !note.is_dir;
	n->count_pid = 0;
	if (!first || !(d = open_fid(n, first, &name))) {
		/* Gone before it was read (a short-lived directory): no path to give. */
		note.op = FILE_OP_UNRESOLVED;
		fn(&note, data);
		return;
	}
	note.dirfd = d->fd;
	note.name = name;
	join(note.path, sizeof(note.path), d->path, name);
	if (r->new && (d2 = open_fid(n, r->new, &name)))
		join(note.path2, sizeof(note.path2), d2->path, name);
	if (m->mask & FAN_MOVED_TO) { /* the fallback's second half: the new name only */
		snprintf(note.path2, sizeof(note.path2), "%s", note.path);
		note.path[0] = '\0';
	}
	for (size_t i = 0; i < ARRAY_SIZE(dirent_ops); i++) {
		if (!(m->mask & dirent_ops[i].mask))
			continue;
		note.op = dirent_ops[i].op;
		fn(&note, data);
		if (note.op == FILE_OP_RENAME)
			break; /* the fallback's halves are one rename each */
	}
	/*
	 * A directory renamed: the paths kept below it are wrong now. One removed was empty: what
	 * is kept of it stays right for the events queued before (rm -rf's unlinks in it).
	 */
	if (note.is_dir && note.op == FILE_OP_RENAME)
		dirs_clear(n);
}

int file_notify_read(struct file_notify *n, int which,
		     void (*fn)(const struct file_note *note, void *data), void *data)
{
	const struct fanotify_event_metadata *m;
	ssize_t len = read(n->fd[which], read_buf, sizeof(read_buf));
	int count = 0;

	if (len < 0)
		return errno == EAGAIN ? 0 : -errno;
	for (m = (const void *)read_buf; FAN_EVENT_OK(m, len); m = FAN_EVENT_NEXT(m, len)) {
		struct dirent_recs r;

		count++;
		if (m->vers != FANOTIFY_METADATA_VERSION)
			continue;
		parse_records(m, &r);
		if (m->mask & FAN_Q_OVERFLOW) {
			struct file_note note;

			note_init(&note, 0, -1, -1);
			note.op = FILE_OP_OVERFLOW;
			fn(&note, data);
		} else if (which == FILE_GROUP_PROC) {
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
