/*
 * The file collector's translation: one fanotify note becomes one event of its sandbox, step and
 * tool, or one count in its step's summary (file-agg.h). Sensitive paths (lib/filepath.h) are
 * always events of their own.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cgroup.h"
#include "counters.h"
#include "event.h"
#include "file-agg.h"
#include "file-events-internal.h"
#include "file-notify.h"
#include "filepath.h"
#include "hashmap.h"
#include "store/registry.h"
#include "store/sink.h"
#include "timeutil.h"

/* mtime this far before the change time is a rewritten timestamp, not a write. */
#define UTIMES_SLACK_NS (2 * NSEC_PER_SEC)

static int32_t read_nspid(int32_t pid)
{
	char path[64], line[256];
	int32_t ns = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (!(f = fopen(path, "re")))
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NSpid:", 6) == 0) {
			/* The last number is the pid in the innermost namespace: the sandbox's. */
			char *p = strrchr(line, '\t');

			ns = (int32_t)strtol(p ? p + 1 : line + 6, NULL, 10);
			break;
		}
	}
	fclose(f);
	return ns;
}

static void read_comm(int32_t pid, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

void file_pids_clear(struct file_events *fe)
{
	fe->n_pids = fe->next_pid = 0;
}

/*
 * The process of a note, looked up through /proc and cached (file-events-internal.h); NULL if it
 * is gone.
 */
static struct file_pid *lookup_pid(struct file_events *fe, const struct file_note *note,
				   int64_t now)
{
	struct file_pid *p = NULL;
	char rel[512];

	for (unsigned i = 0; i < fe->n_pids; i++) {
		if (fe->pids[i].pid != note->pid)
			continue;
		if (now - fe->pids[i].seen_ns < FILE_PID_TTL_NS)
			return fe->pids[i].gone ? NULL : &fe->pids[i];
		p = &fe->pids[i]; /* stale: looked up again in its place */
		break;
	}
	if (note->pidfd < 0 && note->pidfd != FILE_NO_PIDFD)
		return NULL; /* gone before the event was read */
	if (!p && fe->n_pids < FILE_PID_CACHE)
		p = &fe->pids[fe->n_pids++];
	else if (!p)
		p = &fe->pids[fe->next_pid++ % FILE_PID_CACHE]; /* the oldest made goes */
	p->pid = note->pid;
	p->seen_ns = now;
	p->nspid = -1;
	/*
	 * Gone (or its step's cgroup with it) is kept too: a process that exited before its events
	 * were read has many of them, and each failed open of /proc/PID/cgroup was a syscall.
	 */
	p->gone = 1;
	if (cgroup_of_pid(note->pid, rel, sizeof(rel)) < 0 || cgroup_id(rel, &p->cgid) < 0)
		return NULL;
	/*
	 * Read now, while the process is there: read later (a /proc event of a process that has
	 * exited since) it would be 0, and its own /proc/N/maps taken for another's.
	 */
	p->nspid = read_nspid(note->pid);
	/* Still there after the reads: the pid was not reused meanwhile. */
	if (note->pidfd >= 0 && syscall(SYS_pidfd_send_signal, note->pidfd, 0, NULL, 0) < 0)
		return NULL;
	p->gone = 0;
	return p;
}

struct attribution {
	struct store_sandbox *sb;
	int64_t step;
	const char *tool;
	struct file_pid *proc; /* NULL: attributed by its group (the process was gone) */
};

/* 1 and *a if the note is of the watched sandbox's, 0 to skip it (a host process's, counted). */
static int attribute(struct file_events *fe, struct file_watch *w, const struct file_note *note,
		     int64_t now, struct attribution *a)
{
	const char *sandbox = NULL;

	memset(a, 0, sizeof(*a));
	a->step = EVENT_STEP_NONE;
	if ((a->proc = lookup_pid(fe, note, now)) &&
	    (!collector_resolve(fe->env.registry, a->proc->cgid, &sandbox, &a->step, &a->tool) ||
	     strcmp(sandbox, w->sandbox) != 0)) {
		/* Alive and in no step of this sandbox: the host reaching in (/proc/PID/root). */
		fe->outside++;
		return 0;
	}
	if (!a->proc) {
		/* Gone: its sandbox is the group's; its step is the one running, if only one is. */
		fe->by_group++;
		if (!registry_sole_step(fe->env.registry, w->sandbox, &a->step, &a->tool)) {
			a->step = EVENT_STEP_NONE;
			a->tool = NULL;
		}
	}
	if (!(a->sb = registry_find(fe->env.registry, w->sandbox))) {
		fe->unattributed++;
		return 0;
	}
	return 1;
}

static int64_t ns_of(const struct statx_timestamp *t)
{
	return t->tv_sec * NSEC_PER_SEC + t->tv_nsec;
}

static void mtime_key(const struct statx *st, char *buf, size_t size)
{
	snprintf(buf, size, "%u:%u:%llu", st->stx_dev_major, st->stx_dev_minor,
		 (unsigned long long)st->stx_ino);
}

/* Remembers m as the mtime of the file of key; all are forgotten at once when the table is full. */
static void mtime_remember(struct file_watch *w, const char *key, int64_t m)
{
	struct file_mtime *e;

	if ((e = hashmap_get(w->mtimes, key))) {
		e->mtime = m;
		return;
	}
	if (hashmap_size(w->mtimes) >= FILE_MTIMES_MAX)
		file_mtimes_clear(w);
	if ((e = calloc(1, sizeof(*e)))) {
		snprintf(e->key, sizeof(e->key), "%s", key);
		e->mtime = m;
		if (hashmap_put(w->mtimes, e->key, e) < 0)
			free(e);
	}
}

/*
 * Remembers the mtime a create or a write left (one near the change time: a write's), by inode,
 * so that an attribute change can tell whether it was the mtime that changed.
 */
static void mtime_note(struct file_watch *w, const struct statx *st)
{
	int64_t m = ns_of(&st->stx_mtime), c = ns_of(&st->stx_ctime);
	char key[48];

	if (!S_ISREG(st->stx_mode) || m + UTIMES_SLACK_NS < c)
		return;
	mtime_key(st, key, sizeof(key));
	mtime_remember(w, key, m);
}

/*
 * Whether an attribute change set the mtime back: older than the change time, and not the mtime
 * the file had (a chmod of a file tar made with an old mtime is no rewrite). A file the watch
 * never saw written (one there before the watch began: the decoys the enforcer plants in the home,
 * a file of a restarted daemon's sandbox) is judged by its birth: no write can leave a file an
 * mtime from before it was made, only a utimes can (touch -d of ~/.netrc). Such a file is
 * remembered from then on, so that a chmod after it is a chmod.
 */
static int mtime_rewritten(struct file_watch *w, const struct statx *st)
{
	int64_t m = ns_of(&st->stx_mtime), c = ns_of(&st->stx_ctime);
	struct file_mtime *e;
	char key[48];

	if (m + UTIMES_SLACK_NS >= c)
		return 0;
	mtime_key(st, key, sizeof(key));
	if (!(e = hashmap_get(w->mtimes, key))) {
		if (!(st->stx_mask & STATX_BTIME) || m + UTIMES_SLACK_NS >= ns_of(&st->stx_btime))
			return 0;
		mtime_remember(w, key, m);
		return 1;
	}
	if (e->mtime == m)
		return 0;
	e->mtime = m;
	return 1;
}

static const char *op_kind(struct file_watch *w, const struct file_note *note,
			   const struct statx *st, int have_st)
{
	switch (note->op) {
	case FILE_OP_READ:
		return "file.open";
	case FILE_OP_WRITE:
		return "file.write";
	case FILE_OP_EXEC:
		return "file.exec";
	case FILE_OP_DELETE:
		return "file.unlink";
	case FILE_OP_RENAME:
		return "file.rename";
	case FILE_OP_CREATE:
		if (have_st && S_ISLNK(st->stx_mode))
			return "file.symlink";
		if (note->linked || (have_st && !S_ISDIR(st->stx_mode) && st->stx_nlink > 1))
			return "file.link";
		return "file.create";
	case FILE_OP_ATTRIB:
		return have_st && mtime_rewritten(w, st) ? "file.utimes" : "file.attrib";
	default:
		return NULL;
	}
}

/* What a create or attribute change made: the object's mode, owner, times. */
static void add_stat(json_t *f, const char *kind, const struct statx *st, int dirfd,
		     const char *name)
{
	char mode[16], target[PATH_MAX];
	ssize_t k;

	snprintf(mode, sizeof(mode), "%04o", (unsigned)(st->stx_mode & 07777));
	json_object_set_new(f, "mode", json_string(mode));
	if (strcmp(kind, "file.symlink") != 0) {
		json_object_set_new(f, "setuid", json_boolean(st->stx_mode & S_ISUID));
		json_object_set_new(f, "setgid", json_boolean(st->stx_mode & S_ISGID));
		json_object_set_new(f, "exec", json_boolean(st->stx_mode & 0111));
		json_object_set_new(f, "uid", json_integer(st->stx_uid));
		json_object_set_new(f, "gid", json_integer(st->stx_gid));
	}
	if (strcmp(kind, "file.utimes") == 0)
		json_object_set_new(f, "mtime", json_integer(ns_of(&st->stx_mtime)));
	if (st->stx_mask & STATX_BTIME)
		json_object_set_new(f, "born", json_integer(ns_of(&st->stx_btime)));
	if (strcmp(kind, "file.symlink") == 0 &&
	    (k = readlinkat(dirfd, name, target, sizeof(target) - 1)) >= 0)
		json_object_set_new(f, "target", json_stringn(target, (size_t)k));
}

static json_t *note_fields(const struct file_note *note, const char *kind, const struct statx *st,
			   int have_st, int32_t peeked)
{
	json_t *f = json_object();

	if (!f)
		return NULL;
	if (note->op == FILE_OP_RENAME) {
		json_object_set_new(f, "from", json_string(note->path));
		json_object_set_new(f, "to", json_string(note->path2));
	} else {
		json_object_set_new(f, "path", json_string(note->path));
	}
	if (note->is_dir)
		json_object_set_new(f, "dir", json_true());
	if (note->op == FILE_OP_READ || note->op == FILE_OP_WRITE)
		json_object_set_new(f, "write", json_boolean(note->op == FILE_OP_WRITE));
	if (note->op == FILE_OP_WRITE && have_st)
		json_object_set_new(f, "size", json_integer((json_int_t)st->stx_size));
	if (peeked)
		json_object_set_new(f, "target_pid", json_integer(peeked));
	if (have_st && (note->op == FILE_OP_CREATE || note->op == FILE_OP_ATTRIB))
		add_stat(f, kind, st, note->dirfd, note->name);
	return f;
}

/*
 * Whether process target (a pid in the sandbox's namespace) of sandbox sb is alive, looked up in
 * the sandbox's own /proc through its init's root. -1: not known.
 */
static int sandbox_pid_alive(struct file_events *fe, const struct store_sandbox *sb, int32_t target)
{
	char path[96];
	pid_t init;

	if (!sb || collector_sandbox_init(fe->env.cfg, sb, &init) < 0 ||
	    !collector_sandbox_init_alive(sb, init))
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/root/proc/%d", (int)init, target);
	return access(path, F_OK) == 0;
}

/* Whether the note is sensitive (never aggregated); *peeked: another process's /proc entry. */
static int sensitive(struct file_events *fe, const struct file_note *note,
		     const struct attribution *a, int32_t *peeked)
{
	unsigned c =
		filepath_class(note->path) | (note->path2[0] ? filepath_class(note->path2) : 0);
	int32_t target = filepath_proc_pid(note->path);

	*peeked = 0;
	if (c & FILEPATH_PROC_PEEK) {
		/*
		 * Its own /proc entries are every process's business; only the opener's are. An
		 * opener gone before its event was read has no pid left to compare: if the target
		 * still lives, it was another process; if both are gone, it was most likely itself
		 * (a short-lived program reading its own maps: glibc does, for a thread's stack),
		 * and the open stays an individual event without a target, except for mem, which
		 * honest programs do not read, their own or another's.
		 */
		const char *base = strrchr(note->path, '/');

		if (a->proc && a->proc->nspid == target)
			c &= ~(unsigned)FILEPATH_PROC_PEEK;
		else if (a->proc || (base && strcmp(base, "/mem") == 0) ||
			 sandbox_pid_alive(fe, a->sb, target) != 0)
			*peeked = target;
	}
	return (c & FILEPATH_SENSITIVE) != 0;
}

static int stat_note(const struct file_note *note, struct statx *st)
{
	unsigned mask = STATX_BASIC_STATS | STATX_BTIME;

	if (note->op != FILE_OP_CREATE && note->op != FILE_OP_ATTRIB && note->op != FILE_OP_WRITE)
		return 0; /* nothing of a read, an exec, a delete or a rename needs it */
	if (note->fd >= 0)
		return statx(note->fd, "", AT_EMPTY_PATH, mask, st) == 0;
	if (note->dirfd >= 0 && note->name && note->op != FILE_OP_DELETE)
		return statx(note->dirfd, note->name, AT_SYMLINK_NOFOLLOW, mask, st) == 0;
	if (note->dirfd >= 0 && !note->name) /* the object itself (a link count change) */
		return statx(note->dirfd, "", AT_EMPTY_PATH, mask, st) == 0;
	return 0;
}

/* 1: store it on its own; 0: counted in its step's summary. */
static int aggregate(struct file_events *fe, const struct attribution *a, const char *kind,
		     const char *path, int64_t now)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int r;

	snprintf(dir, sizeof(dir), "%.*s", slash && slash != path ? (int)(slash - path) : 1, path);
	for (int depth = 0, i = 0; dir[i]; i++) /* deep trees count under their ancestor */
		if (dir[i] == '/' && ++depth > FILE_AGG_DEPTH) {
			dir[i] = '\0';
			break;
		}
	r = file_agg_add(fe->agg, a->sb->name, a->step, a->tool, kind, dir, now);
	if (r == -ENOSPC) {
		fe->agg_full++;
		file_agg_flush(fe->agg, INT64_MAX, file_emit_summary, fe);
		r = file_agg_add(fe->agg, a->sb->name, a->step, a->tool, kind, dir, now);
	}
	if (r == 0)
		fe->summarized++;
	return r != 0;
}

/* An overflow of group g: any of its sandboxes' events may be the lost ones. */
static void overflowed(struct file_events *fe, const struct file_group *g)
{
	fe->overflows++;
	for (size_t i = 0; i < fe->n_watches; i++)
		if (fe->watches[i]->group == g)
			fe->watches[i]->overflows++;
}

void file_emit_note(const struct file_note *note, void *data)
{
	struct file_group *g = data;
	struct file_events *fe = g->fe;
	struct file_watch *w = note->owner;
	struct attribution a;
	struct writer_op op;
	struct statx st;
	const char *kind;
	int have_st;
	int32_t peeked;
	int64_t now = time_now_ns();

	if (note->op == FILE_OP_OVERFLOW) {
		overflowed(fe, g);
		return;
	}
	if (note->op == FILE_OP_LINK_COUNT) {
		fe->link_count++;
		return;
	}
	if (!w) { /* through marks whose sandbox is no longer watched */
		fe->departed++;
		return;
	}
	if (note->op == FILE_OP_UNRESOLVED) {
		w->unresolved++;
		fe->unresolved++;
		return;
	}
	if (note->pid == fe->self || !attribute(fe, w, note, now, &a))
		return;
	have_st = stat_note(note, &st);
	if (!(kind = op_kind(w, note, &st, have_st)))
		return;
	if (have_st && (note->op == FILE_OP_CREATE || note->op == FILE_OP_WRITE))
		mtime_note(w, &st);
	if (!sensitive(fe, note, &a, &peeked) && note->op != FILE_OP_EXEC &&
	    !(have_st && (st.stx_mode & (S_ISUID | S_ISGID)) && note->op == FILE_OP_ATTRIB) &&
	    !aggregate(fe, &a, kind, note->path[0] ? note->path : note->path2, now))
		return;
	if (sink_full(fe->env.sink)) {
		w->store_full++;
		fe->store_full++;
		return;
	}
	writer_event_init(&op, a.sb, now, a.step, a.tool, EVENT_SOURCE_FANOTIFY, kind);
	op.ev.pid = note->pid;
	if (a.proc)
		read_comm(note->pid, op.ev.comm, sizeof(op.ev.comm));
	if (sink_submit_event(fe->env.sink, &op, note_fields(note, kind, &st, have_st, peeked)) ==
	    0)
		fe->stored++;
}

void file_emit_summary(const struct file_agg_summary *s, void *data)
{
	struct file_events *fe = data;
	struct store_sandbox *sb = registry_find(fe->env.registry, s->sandbox);
	struct writer_op op;

	if (!sb) {
		fe->unattributed += s->count;
		return;
	}
	writer_event_init(&op, sb, s->last_ts, s->step, s->tool[0] ? s->tool : NULL,
			  EVENT_SOURCE_FANOTIFY, "file.summary");
	if (sink_submit_event(fe->env.sink, &op,
			      json_pack("{s:s, s:s, s:I, s:I, s:I}", "of", s->kind, "dir", s->dir,
					"count", (json_int_t)s->count, "first_ts",
					(json_int_t)s->first_ts, "last_ts",
					(json_int_t)s->last_ts)) == 0)
		fe->summaries++;
}
