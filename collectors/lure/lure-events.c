/* The lure collector (lure-events.h). */
#include "lure-events.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "cgroup.h"
#include "collectors/collector.h"
#include "counters.h"
#include "event.h"
#include "log.h"
#include "loop.h"
#include "lure-intent.h"
#include "lures.h"
#include "macro.h"
#include "store/registry.h"
#include "store/sink.h"
#include "timeutil.h"

/* One marked inode: which sandbox's lure it is. */
struct lure_mark {
	dev_t dev;
	ino_t ino;
	char sandbox[FB_NAME_MAX + 1];
	const struct lure *lure;
};

struct lure_events {
	struct collector_env env;
	/*
	 * Two groups. held: the tripwires' opens, each waiting for an answer. Its queue is
	 * unlimited: an overflowing group lets a permission event through unanswered, and each
	 * pending one holds its thread, so the sandbox's pids cap bounds it. seen: the decoys' open
	 * notifications, whose queue keeps the kernel's limit; an overflow there is a loss,
	 * counted and stored for every watched sandbox.
	 */
	int held, seen;
	struct lure_mark *marks;
	size_t n_marks, cap;
	uint64_t marked;	/* lures marked, over all sandboxes */
	uint64_t mark_failed;	/* lures that could not be marked */
	uint64_t stored;	/* events queued for the store */
	uint64_t refused;	/* opens of a tripwire answered with EPERM */
	uint64_t unknown;	/* events on an inode no sandbox's lure (any more) */
	uint64_t no_step;	/* events whose process was gone or in no step */
	uint64_t overflows;	/* the group's queue overflowed: events lost */
	uint64_t read_errors;	/* reads of the group that failed */
	uint64_t answer_errors; /* answers the kernel did not take */
};

static const struct lure_mark *find_mark(const struct lure_events *le, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < le->n_marks; i++)
		if (le->marks[i].dev == dev && le->marks[i].ino == ino)
			return &le->marks[i];
	return NULL;
}

/* Decoys are watched for opens; tripwires hold every open for an answer. */
static int mark_lure(struct lure_events *le, const struct lure *l, const char *path)
{
	if (l->kind == LURE_DECOY)
		return fanotify_mark(le->seen, FAN_MARK_ADD, FAN_OPEN, AT_FDCWD, path);
	return fanotify_mark(le->held, FAN_MARK_ADD, FAN_OPEN_PERM, AT_FDCWD, path);
}

/*
 * A (device, inode) pair names one live file only: once a sandbox's mounts are gone (a kill ends
 * its init, and its mount namespace with it) the kernel gives both numbers out again, to the next
 * sandbox's lures. So an entry with the pair of a new mark is stale, and goes.
 */
static void forget_pair(struct lure_events *le, dev_t dev, ino_t ino)
{
	size_t k = 0;

	for (size_t i = 0; i < le->n_marks; i++)
		if (le->marks[i].dev != dev || le->marks[i].ino != ino)
			le->marks[k++] = le->marks[i];
	le->n_marks = k;
}

static int remember(struct lure_events *le, const struct stat *st, const char *sandbox,
		    const struct lure *l)
{
	forget_pair(le, st->st_dev, st->st_ino);
	if (le->n_marks == le->cap) {
		size_t cap = le->cap ? 2 * le->cap : 64;
		struct lure_mark *m = reallocarray(le->marks, cap, sizeof(*m));

		if (!m)
			return -ENOMEM;
		le->marks = m;
		le->cap = cap;
	}
	le->marks[le->n_marks] =
		(struct lure_mark){ .dev = st->st_dev, .ino = st->st_ino, .lure = l };
	strscpy(le->marks[le->n_marks].sandbox, sizeof(le->marks[0].sandbox), sandbox);
	le->n_marks++;
	return 0;
}

/*
 * Marks one lure through the init's root, by the inode an O_PATH open found (what is marked is
 * what was checked; fanotify_mark takes no O_PATH descriptor, so it names it by /proc/self/fd). A
 * lure is a regular file on one of the sandbox's tmpfs; anything else there (a tunable this kernel
 * lacks is left unplanted: the real procfs file shows) is not ours.
 */
/* The descriptor in init's table that is lure l (lure_held_by_init), as a path into buf; -ENOENT
 * if it holds none. */
static int held_by_init(pid_t init, const struct lure *l, char *buf, size_t size)
{
	char dir[64], target[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int r = -ENOENT;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)init);
	if (!(d = opendir(dir)))
		return -errno;
	while (r < 0 && (de = readdir(d))) {
		ssize_t n;

		snprintf(buf, size, "%s/%s", dir, de->d_name);
		if (de->d_name[0] == '.' || (n = readlink(buf, target, sizeof(target) - 1)) < 0)
			continue;
		target[n] = '\0';
		if (strcmp(target, l->path) == 0)
			r = 0;
	}
	closedir(d);
	return r;
}

static void mark_one(struct lure_events *le, const char *sandbox, pid_t init, const struct lure *l)
{
	char path[PATH_MAX];
	struct statfs sf;
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/root%s", (int)init, l->path);
	if (lure_held_by_init(l) && held_by_init(init, l, path, sizeof(path)) < 0)
		return; /* a tunable this kernel lacks: init holds nothing for it */
	/* O_NOFOLLOW does not stop the last step through /proc/INIT/fd/N: that is a magic link,
	 * which only it jumps. */
	if ((fd = open(path, O_PATH | O_CLOEXEC | (lure_held_by_init(l) ? 0 : O_NOFOLLOW))) < 0) {
		if (errno == ENOENT && lure_where_present(l))
			return; /* a tunable this kernel does not have, a file this host's /etc
				   lacks: nothing to plant, nothing to reach */
		goto failed;
	}
	if (fstat(fd, &st) < 0 || fstatfs(fd, &sf) < 0)
		goto failed;
	if (sf.f_type != TMPFS_MAGIC && lure_where_present(l)) {
		close(fd); /* the real file shows: left unplanted (the enforcer says why) */
		return;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (sf.f_type != TMPFS_MAGIC || !S_ISREG(st.st_mode) || mark_lure(le, l, path) < 0 ||
	    remember(le, &st, sandbox, l) < 0)
		goto failed;
	close(fd);
	le->marked++;
	return;
failed:
	log_warn("sandbox %s: cannot watch its lure %s: %s", sandbox, l->path,
		 errno ? strerror(errno) : "not a lure");
	if (fd >= 0)
		close(fd);
	le->mark_failed++;
}

void lure_events_unwatch(struct lure_events *le, const struct store_sandbox *sb)
{
	size_t k = 0;

	if (!le)
		return;
	/* The marks go with the inodes, when the sandbox's mounts do. */
	for (size_t i = 0; i < le->n_marks; i++)
		if (strcmp(le->marks[i].sandbox, sb->name) != 0)
			le->marks[k++] = le->marks[i];
	le->n_marks = k;
}

int lure_events_watch(struct lure_events *le, const struct store_sandbox *sb)
{
	pid_t init;

	if (!le || collector_sandbox_init(le->env.cfg, sb, &init) < 0 ||
	    !collector_sandbox_init_alive(sb, init))
		return 0;	     /* an adopted cgroup, or an enforcer's sandbox already gone */
	lure_events_unwatch(le, sb); /* a re-registration marks afresh */
	for (size_t i = 0; i < n_lures; i++)
		mark_one(le, sb->name, init, &lures[i]);
	return 0;
}

/* The step of thread tid, if it is one of sandbox's; else the sandbox itself with no step. */
static void attribute(struct lure_events *le, pid_t tid, const char *sandbox, int64_t *ret_step,
		      const char **ret_tool)
{
	const char *name, *tool;
	char rel[512];
	uint64_t cgid;
	int64_t step;

	*ret_step = EVENT_STEP_NONE;
	*ret_tool = NULL;
	if (cgroup_of_pid(tid, rel, sizeof(rel)) == 0 && cgroup_id(rel, &cgid) == 0 &&
	    collector_resolve(le->env.registry, cgid, &name, &step, &tool) &&
	    strcmp(name, sandbox) == 0 && step != EVENT_STEP_NONE) {
		*ret_step = step;
		*ret_tool = tool;
		return;
	}
	le->no_step++;
}

static void read_comm(pid_t tid, char *buf, size_t size)
{
	char path[64];
	ssize_t n = -1;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)tid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		n = read(fd, buf, size - 1);
		close(fd);
	}
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/* What one event was: op "open" (a decoy, or a held open whose flags were unreadable), "read",
 * "write"; and who did it, read while the opener is still held in its open (once answered, a
 * refused process may be gone at once, and with it its cgroup and comm). */
struct lure_touch {
	const struct lure_mark *mark;
	pid_t tid;
	const char *op;
	int refused;
	int64_t flags; /* the open's flags; -1: not known */
	int64_t step;
	const char *tool;
	char comm[16];
};

static void identify(struct lure_events *le, struct lure_touch *t)
{
	attribute(le, t->tid, t->mark->sandbox, &t->step, &t->tool);
	read_comm(t->tid, t->comm, sizeof(t->comm));
}

static void record(struct lure_events *le, const struct lure_touch *t)
{
	struct store_sandbox *sb = registry_find(le->env.registry, t->mark->sandbox);
	const int decoy = t->mark->lure->kind == LURE_DECOY;
	struct writer_op op;
	json_t *f;

	if (!sb)
		return;
	if (!t->refused && !decoy && !lure_records_reads(t->mark->lure->kind))
		return; /* an account file read: what every `ls -l` does */
	writer_event_init(&op, sb, time_now_ns(), t->step, t->tool, EVENT_SOURCE_FANOTIFY,
			  decoy ? "lure.decoy" : "lure.tripwire");
	op.ev.pid = t->tid;
	strscpy(op.ev.comm, sizeof(op.ev.comm), t->comm);
	f = json_pack("{s:s, s:s, s:s, s:b}", "path", t->mark->lure->path, "lure",
		      lure_kind_name(t->mark->lure->kind), "op", t->op, "refused", t->refused);
	if (f && t->flags >= 0)
		json_object_set_new(f, "flags", json_integer(t->flags));
	if (sink_submit_event(le->env.sink, &op, f) == 0)
		le->stored++;
}

/* A held open: a device's is always refused, a tripwire's when it would change the file. */
static void answer(struct lure_events *le, const struct fanotify_event_metadata *m,
		   struct lure_touch *t)
{
	struct fanotify_response resp = { .fd = m->fd };
	uint64_t flags = 0;
	int known = lure_open_flags(m->pid, &flags) == 0;

	t->flags = known ? (int64_t)flags : -1;
	/* An open whose flags cannot be read is refused: fail closed. */
	t->refused = !t->mark || lure_refuses_reads(t->mark->lure->kind) || !known ||
		     lure_flags_write(flags);
	t->op = !known ? "open" : lure_flags_write(flags) ? "write" : "read";
	resp.response = t->refused ? FAN_DENY : FAN_ALLOW;
	if (write(le->held, &resp, sizeof(resp)) != (ssize_t)sizeof(resp))
		le->answer_errors++;
	if (t->refused)
		le->refused++;
}

/* Notifications were lost, of which sandbox is not known: each watched one was partly unseen. */
static void report_overflow(struct lure_events *le)
{
	const int64_t now = time_now_ns();

	for (size_t i = 0; i < le->n_marks; i++) {
		struct store_sandbox *sb = registry_find(le->env.registry, le->marks[i].sandbox);
		struct writer_op op;
		size_t j;

		for (j = 0; j < i && strcmp(le->marks[j].sandbox, le->marks[i].sandbox) != 0; j++)
			;
		if (j < i || !sb || !registry_live(sb))
			continue; /* once per sandbox */
		writer_event_init(&op, sb, now, EVENT_STEP_NONE, NULL, EVENT_SOURCE_MONITOR,
				  "monitor.loss");
		sink_submit_event(
			le->env.sink, &op,
			json_pack("{s:s}", "stage", "fanotify queue (lure notifications)"));
	}
}

static void on_event(struct lure_events *le, const struct fanotify_event_metadata *m)
{
	struct lure_touch t = { .tid = m->pid, .op = "open", .flags = -1 };
	struct stat st;

	if (m->mask & FAN_Q_OVERFLOW) {
		le->overflows++;
		report_overflow(le);
		return;
	}
	if (m->fd >= 0 && fstat(m->fd, &st) == 0)
		t.mark = find_mark(le, st.st_dev, st.st_ino);
	if (t.mark)
		identify(le, &t);
	if (m->mask & FAN_OPEN_PERM)
		answer(le, m, &t);
	if (t.mark)
		record(le, &t);
	else
		le->unknown++;
	if (m->fd >= 0)
		close(m->fd);
}

static void on_ready(struct loop *l, int fd, uint32_t events, void *data)
{
	struct lure_events *le = data;
	char buf[8192] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));

	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		const struct fanotify_event_metadata *m = (const void *)buf;

		if (n < 0) {
			if (errno != EAGAIN && errno != EINTR)
				le->read_errors++;
			return;
		}
		for (; FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n))
			if (m->vers == FANOTIFY_METADATA_VERSION)
				on_event(le, m);
	}
}

static const struct counter_def counters[] = {
	{ "marked", COUNTER_TOTAL, "lures marked in sandboxes",
	  COUNTER_AT(struct lure_events, marked) },
	{ "mark_failed", COUNTER_TOTAL,
	  "lures that could not be marked (the sandbox is partly unwatched)",
	  COUNTER_AT(struct lure_events, mark_failed) },
	{ "stored", COUNTER_TOTAL, "lure events queued for the store",
	  COUNTER_AT(struct lure_events, stored) },
	{ "refused", COUNTER_TOTAL, "opens of a tripwire refused (EPERM)",
	  COUNTER_AT(struct lure_events, refused) },
	{ "no_step", COUNTER_TOTAL, "lure events whose process was gone or in no step",
	  COUNTER_AT(struct lure_events, no_step) },
	{ "unknown", COUNTER_TOTAL, "events on an inode that is no live sandbox's lure",
	  COUNTER_FAMILY_LOST, "lure_unknown", COUNTER_AT(struct lure_events, unknown) },
	{ "overflows", COUNTER_TOTAL, "the fanotify queue overflowed: lure events lost",
	  COUNTER_FAMILY_LOST, "fanotify_overflow", COUNTER_AT(struct lure_events, overflows) },
	{ "read_errors", COUNTER_TOTAL, "reads of the fanotify group that failed",
	  COUNTER_AT(struct lure_events, read_errors) },
	{ "answer_errors", COUNTER_TOTAL, "answers to held opens the kernel did not take",
	  COUNTER_AT(struct lure_events, answer_errors) },
};

static void close_group(struct lure_events *le, int *fd)
{
	if (*fd < 0)
		return;
	loop_remove(le->env.loop, *fd);
	close(*fd);
	*fd = -1;
}

static void close_groups(struct lure_events *le)
{
	close_group(le, &le->held);
	close_group(le, &le->seen);
}

/* FAN_REPORT_TID: the opener's thread, whose /proc/TID/syscall shows its open call. */
static int open_groups(struct lure_events *le)
{
	const unsigned common = FAN_CLOEXEC | FAN_NONBLOCK | FAN_REPORT_TID;
	const unsigned fflags = O_RDONLY | O_CLOEXEC | O_LARGEFILE;
	int r;

	le->held = fanotify_init(FAN_CLASS_CONTENT | FAN_UNLIMITED_QUEUE | common, fflags);
	if (le->held < 0)
		return log_errno(-errno, "fanotify_init (the lures' held opens)");
	le->seen = fanotify_init(FAN_CLASS_NOTIF | common, fflags);
	if (le->seen < 0)
		return log_errno(-errno, "fanotify_init (the lures' notifications)");
	if ((r = loop_add(le->env.loop, le->held, EPOLLIN, on_ready, le)) < 0 ||
	    (r = loop_add(le->env.loop, le->seen, EPOLLIN, on_ready, le)) < 0)
		return r;
	return 0;
}

int lure_events_new(const struct collector_env *env, struct lure_events **ret)
{
	struct lure_events *le = calloc(1, sizeof(*le));
	struct store_sandbox *sb;
	size_t pos = 0;
	int r;

	if (!le)
		return -ENOMEM;
	le->env = *env;
	le->held = le->seen = -1;
	if ((r = open_groups(le)) < 0 ||
	    (r = counters_add(env->counters, "lure", counters, ARRAY_SIZE(counters), le)) < 0) {
		close_groups(le);
		free(le);
		return r;
	}
	while ((sb = registry_next(env->registry, &pos)))
		if (registry_live(sb))
			lure_events_watch(le, sb);
	*ret = le;
	return 0;
}

void lure_events_free(struct lure_events *le)
{
	if (!le)
		return;
	counters_remove(le->env.counters, le);
	close_groups(le); /* held opens are let through: the tripwires are plain files */
	free(le->marks);
	free(le);
}
