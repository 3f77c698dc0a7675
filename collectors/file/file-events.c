/* The file collector's state: its watches, their marks, its timer and its losses (file-events.h).
 */
#include "file-events.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "config.h"
#include "counters.h"
#include "event.h"
#include "file-agg.h"
#include "file-events-internal.h"
#include "file-notify.h"
#include "hashmap.h"
#include "log.h"
#include "loop.h"
#include "macro.h"
#include "store/registry.h"
#include "store/sink.h"
#include "timeutil.h"

/* How often summaries are flushed and losses reported; how long an idle summary entry lives. */
#define TICK_NS (250 * NSEC_PER_MSEC)
#define AGG_IDLE_NS (2 * NSEC_PER_SEC)
/* Buffers read per wake-up and group before the loop runs the others. */
#define READS_PER_WAKE 16
/*
 * After a group is read, it is not watched again for this long: the events of that time are read
 * in one go. Reading each event as it comes (two per read, measured) cost a wake-up of firebreakd
 * per event, paid on the CPU the sandbox's work shares with it, and a read and its bookkeeping per
 * event. 16,384 queued events at 150,000 a second take 100 ms: 2 ms is far from an overflow, and
 * from the 250 ms the summaries wait anyway.
 */
#define BATCH_NS (2 * NSEC_PER_MSEC)
/* Buffers read when a step ends or a sandbox goes: the whole queue (16384 events) and more. */
#define DRAIN_MAX 1024

static const struct counter_def counters[] = {
	{ "stored", COUNTER_TOTAL, "file events queued for the store",
	  COUNTER_AT(struct file_events, stored) },
	{ "summaries", COUNTER_TOTAL, "file.summary events queued for the store",
	  COUNTER_AT(struct file_events, summaries) },
	{ "summarized", COUNTER_TOTAL, "file events counted in a summary instead of stored alone",
	  COUNTER_AT(struct file_events, summarized) },
	{ "by_group", COUNTER_TOTAL,
	  "file events of a process gone before it was read: its sandbox, no step",
	  COUNTER_AT(struct file_events, by_group) },
	{ "outside", COUNTER_TOTAL,
	  "file events of host processes reaching into a sandbox's mounts (not recorded)",
	  COUNTER_AT(struct file_events, outside) },
	{ "unresolved", COUNTER_TOTAL,
	  "file events whose directory was gone before they were read (no path; stored as a "
	  "count)",
	  COUNTER_FAMILY_LOST, "file_unresolved", COUNTER_AT(struct file_events, unresolved) },
	{ "link_count", COUNTER_TOTAL,
	  "link count changes not stored (each unlink or link is stored as that: file.unlink, "
	  "file.link)",
	  COUNTER_AT(struct file_events, link_count) },
	{ "agg_full", COUNTER_TOTAL, "times the summary table was full and flushed early",
	  COUNTER_AT(struct file_events, agg_full) },
	{ "watched", COUNTER_TOTAL, "sandboxes whose mounts were marked",
	  COUNTER_AT(struct file_events, watched) },
	{ "watch_failed", COUNTER_TOTAL,
	  "sandboxes whose mounts could not be marked (each stored a monitor.loss: not trusted)",
	  COUNTER_AT(struct file_events, watch_failed) },
	{ "shared", COUNTER_TOTAL,
	  "sandboxes whose marks went into a group another sandbox has (the collector's share of "
	  "the kernel's fanotify group limit was used)",
	  COUNTER_AT(struct file_events, shared) },
	{ "groups", COUNTER_GAUGE,
	  "fanotify group pairs open (one per sandbox until they are shared)",
	  COUNTER_AT(struct file_events, groups_open) },
	{ "departed", COUNTER_TOTAL,
	  "file events of a sandbox no longer watched (queued before its marks went; not stored)",
	  COUNTER_AT(struct file_events, departed) },
	{ "unattributed", COUNTER_TOTAL, "file events of no known sandbox", COUNTER_FAMILY_LOST,
	  "file_unattributed", COUNTER_AT(struct file_events, unattributed) },
	{ "overflows", COUNTER_TOTAL,
	  "fanotify queue overflows (each lost at least one file event)", COUNTER_FAMILY_LOST,
	  "fanotify_overflow", COUNTER_AT(struct file_events, overflows) },
	{ "read_errors", COUNTER_TOTAL,
	  "fanotify reads that failed (the kernel drops the event it could not report)",
	  COUNTER_FAMILY_LOST, "fanotify_read", COUNTER_AT(struct file_events, read_errors) },
	{ "proc_gone", COUNTER_TOTAL,
	  "closes of a /proc/N file whose process N had exited before the event was read (the "
	  "kernel drops them: it cannot open the file for us)",
	  COUNTER_FAMILY_LOST, "file_proc_gone", COUNTER_AT(struct file_events, proc_gone) },
	{ "store_waits", COUNTER_TOTAL,
	  "times a group was left unread for a while because the store's queue was full (its "
	  "events waited in the kernel's queue)",
	  COUNTER_AT(struct file_events, store_waits) },
	{ "store_full", COUNTER_TOTAL, "file events dropped: the store's queue was full",
	  COUNTER_FAMILY_LOST, "file_store_full", COUNTER_AT(struct file_events, store_full) },
};

static struct file_watch *find(struct file_events *fe, const char *name)
{
	for (size_t i = 0; i < fe->n_watches; i++)
		if (strcmp(fe->watches[i]->sandbox, name) == 0)
			return fe->watches[i];
	return NULL;
}

/*
 * Stores the /proc closes the kernel dropped because their process had exited (file-notify.h),
 * and the events whose directory was gone before they were read, as summaries of the sandbox:
 * they happened, but which file is not known. Not monitor.loss: every short-lived process
 * reading /proc/self, every temporary directory made and removed at once makes them.
 */
static void report_proc_gone(struct file_events *fe, struct file_watch *w)
{
	struct store_sandbox *sb = registry_find(fe->env.registry, w->sandbox);
	int64_t now = time_now_ns();
	struct writer_op op;

	if (sb && w->unresolved != w->unresolved_seen) {
		writer_event_init(&op, sb, now, EVENT_STEP_NONE, NULL, EVENT_SOURCE_FANOTIFY,
				  "file.summary");
		sink_submit_event(
			fe->env.sink, &op,
			json_pack("{s:s, s:s, s:I, s:b}", "of", "file.*", "dir", "?", "count",
				  (json_int_t)(w->unresolved - w->unresolved_seen), "dir_gone", 1));
		w->unresolved_seen = w->unresolved;
	}
	if (!sb || w->proc_gone == w->proc_gone_seen)
		return;
	writer_event_init(&op, sb, now, EVENT_STEP_NONE, NULL, EVENT_SOURCE_FANOTIFY,
			  "file.summary");
	sink_submit_event(fe->env.sink, &op,
			  json_pack("{s:s, s:s, s:I, s:b}", "of", "file.open", "dir", "/proc",
				    "count", (json_int_t)(w->proc_gone - w->proc_gone_seen),
				    "process_gone", 1));
	w->proc_gone_seen = w->proc_gone;
}

/* Stores what watch w lost since the last report as one monitor.loss event of its sandbox. */
static void report_loss(struct file_events *fe, struct file_watch *w)
{
	struct store_sandbox *sb = registry_find(fe->env.registry, w->sandbox);
	int64_t now = time_now_ns();
	struct writer_op op;

	if (!sb || (w->overflows == w->overflows_seen && w->store_full == w->store_full_seen &&
		    w->read_errors == w->read_errors_seen))
		return;
	writer_event_init(&op, sb, now, EVENT_STEP_NONE, NULL, EVENT_SOURCE_MONITOR,
			  "monitor.loss");
	sink_submit_event(fe->env.sink, &op,
			  json_pack("{s:s, s:I, s:I, s:I, s:I, s:I}", "stage", "file events",
				    "queue_overflows",
				    (json_int_t)(w->overflows - w->overflows_seen), "store_full",
				    (json_int_t)(w->store_full - w->store_full_seen), "read_errors",
				    (json_int_t)(w->read_errors - w->read_errors_seen), "since",
				    (json_int_t)w->loss_since, "until", (json_int_t)now));
	w->overflows_seen = w->overflows;
	w->store_full_seen = w->store_full;
	w->read_errors_seen = w->read_errors;
	w->loss_since = now;
}

/*
 * Reads one group until it is empty, or for at most max buffers (the loop calls again). A failed
 * read lost the event it could not report (the kernel drops it): counted against each sandbox
 * whose marks are in the group, since it may have been any of theirs (fail closed).
 */
static void read_group(struct file_events *fe, struct file_group *g, int which, int max)
{
	for (int i = 0; i < max; i++) {
		int r;

		if ((r = file_notify_read(g->notify, which, file_emit_note, g)) == 0)
			return;
		if (r > 0)
			continue;
		if (r == -ESRCH && which == FILE_GROUP_PROC)
			fe->proc_gone++;
		else
			fe->read_errors++;
		for (size_t k = 0; k < fe->n_watches; k++) {
			struct file_watch *w = fe->watches[k];

			if (w->group != g)
				continue;
			if (r == -ESRCH && which == FILE_GROUP_PROC)
				w->proc_gone += g->members == 1; /* not loss: whose is not known */
			else
				w->read_errors++;
		}
		if (!(r == -ESRCH && which == FILE_GROUP_PROC))
			log_debug("file events: read: %s", strerror(-r));
	}
}

void file_mtimes_clear(struct file_watch *w)
{
	size_t pos = 0;
	void *v;

	while ((v = hashmap_next(w->mtimes, &pos)))
		free(v);
	hashmap_free(w->mtimes);
	w->mtimes = NULL;
	hashmap_new(&w->mtimes);
}

/* Watches the groups paused since their last read again (level-triggered: what came fires). */
static void on_batch(struct loop *l, int fd, uint32_t events, void *data)
{
	struct file_events *fe = data;
	uint64_t n;

	(void)events;
	if (read(fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		log_debug("file events: batch timer: %s", strerror(errno));
	fe->batch_armed = 0;
	for (size_t i = 0; i < fe->n_groups; i++) {
		struct file_group *g = fe->groups[i];

		for (int k = 0; k < FILE_NOTIFY_GROUPS; k++) {
			if (!g->paused[k])
				continue;
			g->paused[k] = 0;
			loop_modify(l, file_notify_fd(g->notify, k), EPOLLIN);
		}
	}
}

static void on_ready(struct loop *l, int fd, uint32_t events, void *data)
{
	struct file_group *grp = data;
	struct file_events *fe = grp->fe;
	struct itimerspec its = { .it_value = { 0, BATCH_NS } };

	(void)events;
	for (int g = 0; g < FILE_NOTIFY_GROUPS; g++) {
		if (fd != file_notify_fd(grp->notify, g))
			continue;
		/*
		 * While the store's queue is full the events wait in the kernel's queue, the
		 * group's own (a pause, then the batch timer looks again): read now, they would be
		 * dropped, a loss of this sandbox for another's flood.
		 */
		if (g == FILE_GROUP_PROC || !sink_full(fe->env.sink))
			read_group(fe, grp, g, READS_PER_WAKE);
		else
			fe->store_waits++;
		/*
		 * /proc's group is a trickle, and read at once: a process reading its own /proc/N
		 * files and exiting within the pause would have no pidfd left to tell its own
		 * entries from another's (a false file.sensitive-read, test 78).
		 */
		if (g == FILE_GROUP_PROC || fe->batch_fd < 0 || loop_modify(l, fd, 0) < 0)
			continue; /* no timer: read at every wake-up */
		grp->paused[g] = 1;
		if (!fe->batch_armed && timerfd_settime(fe->batch_fd, 0, &its, NULL) == 0)
			fe->batch_armed = 1;
		else if (!fe->batch_armed)
			on_batch(l, fe->batch_fd, 0, fe);
	}
}

static void on_tick(struct loop *l, uint64_t n, void *data)
{
	struct file_events *fe = data;

	(void)l;
	(void)n;
	file_agg_flush(fe->agg, time_now_ns() - AGG_IDLE_NS, file_emit_summary, fe);
	for (size_t i = 0; i < fe->n_watches; i++) {
		report_loss(fe, fe->watches[i]);
		report_proc_gone(fe, fe->watches[i]);
	}
}

/*
 * How many group pairs to make before sandboxes share them: the kernel's per-user limit of
 * groups (root's, which every fanotify user of the host's root shares: the lure collector, a
 * host's own tools) halved, less a reserve left to them. A shared pair's queue is shared: a flood
 * in one of its sandboxes that overflows it is loss for all of them.
 */
#define GROUPS_RESERVED 16
static size_t groups_max(const struct config *cfg)
{
	FILE *f;
	long limit = 0;

	if (cfg->file_groups_max)
		return cfg->file_groups_max;
	if (!(f = fopen("/proc/sys/fs/fanotify/max_user_groups", "re")))
		return SIZE_MAX; /* an older kernel: until fanotify_init refuses */
	if (fscanf(f, "%ld", &limit) != 1)
		limit = 0;
	fclose(f);
	return limit > 2 * GROUPS_RESERVED + 2 ? (size_t)(limit - GROUPS_RESERVED) / 2 : 1;
}

int file_events_new(const struct collector_env *env, struct file_events **ret)
{
	struct file_events *fe = calloc(1, sizeof(*fe));
	struct store_sandbox *sb;
	size_t pos = 0;
	int r = -ENOMEM;

	if (!fe)
		return -ENOMEM;
	fe->env = *env;
	fe->self = getpid();
	fe->timer_fd = -1;
	fe->groups_max = groups_max(env->cfg);
	if ((fe->batch_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK)) < 0 ||
	    loop_add(env->loop, fe->batch_fd, EPOLLIN, on_batch, fe) < 0) {
		r = -errno;
		if (fe->batch_fd >= 0)
			close(fe->batch_fd);
		free(fe);
		return r;
	}
	if (file_agg_new(&fe->agg) < 0 ||
	    (r = fe->timer_fd = loop_add_timer(env->loop, TICK_NS, on_tick, fe)) < 0 ||
	    (r = counters_add(env->counters, "file", counters, ARRAY_SIZE(counters), fe)) < 0) {
		file_events_free(fe);
		return r;
	}
	/* What runs already (a restart): watched from now on. */
	while ((sb = registry_next(env->registry, &pos)))
		if (strcmp(sb->state, "running") == 0 && sb->cgroup[0] && !registry_adopted(sb))
			file_events_watch(fe, sb);
	*ret = fe;
	return 0;
}

static void group_free(struct file_events *fe, struct file_group *g)
{
	for (size_t i = 0; i < fe->n_groups; i++) {
		if (fe->groups[i] != g)
			continue;
		fe->groups[i] = fe->groups[--fe->n_groups];
		fe->groups_open--;
		break;
	}
	for (int k = 0; k < FILE_NOTIFY_GROUPS; k++)
		loop_remove(fe->env.loop, file_notify_fd(g->notify, k));
	file_notify_free(g->notify);
	free(g);
}

/* A new pair of groups, watched by the loop; 0 and *ret, or -errno (EMFILE: the kernel's limit). */
static int group_new(struct file_events *fe, struct file_group **ret)
{
	struct file_group *g = calloc(1, sizeof(*g));
	struct file_group **v;
	int r, k;

	if (!g || !(v = realloc(fe->groups, (fe->n_groups + 1) * sizeof(*v)))) {
		free(g);
		return -ENOMEM;
	}
	fe->groups = v;
	g->fe = fe;
	if ((r = file_notify_new(0, &g->notify)) < 0) {
		free(g);
		return r;
	}
	for (k = 0; k < FILE_NOTIFY_GROUPS; k++) {
		if ((r = loop_add(fe->env.loop, file_notify_fd(g->notify, k), EPOLLIN, on_ready,
				  g)) < 0) {
			while (k--)
				loop_remove(fe->env.loop, file_notify_fd(g->notify, k));
			file_notify_free(g->notify);
			free(g);
			return r;
		}
	}
	fe->groups[fe->n_groups++] = g;
	fe->groups_open++;
	*ret = g;
	return 0;
}

/*
 * The group a new watch's marks go into: a pair of its own while the collector's share of the
 * kernel's limit lasts (and the kernel gives one), else the pair the fewest sandboxes share.
 */
static int group_for(struct file_events *fe, struct file_group **ret)
{
	struct file_group *least = NULL;
	int r = -EMFILE;

	if (fe->n_groups < fe->groups_max && (r = group_new(fe, ret)) == 0)
		return 0;
	if (r != -EMFILE && r != -ENFILE && r != -ENOMEM)
		return r;
	for (size_t i = 0; i < fe->n_groups; i++)
		if (!least || fe->groups[i]->members < least->members)
			least = fe->groups[i];
	if (!least)
		return r;
	fe->shared++;
	*ret = least;
	return 0;
}

static void watch_free(struct file_events *fe, struct file_watch *w)
{
	size_t pos = 0;
	void *v;

	if (!w)
		return;
	while (w->mtimes && (v = hashmap_next(w->mtimes, &pos)))
		free(v);
	hashmap_free(w->mtimes);
	if (w->group) {
		file_notify_unmark(w->group->notify, w);
		if (--w->group->members == 0)
			group_free(fe, w->group);
	}
	free(w);
}

/*
 * Drains w's group, flushes every summary (its step may have ended), reports its loss, then frees
 * it: its marks go, and its group with it if no other sandbox shares it.
 */
static void watch_stop(struct file_events *fe, struct file_watch *w)
{
	for (int g = 0; g < FILE_NOTIFY_GROUPS; g++)
		read_group(fe, w->group, g, DRAIN_MAX);
	file_agg_flush(fe->agg, INT64_MAX, file_emit_summary, fe);
	report_loss(fe, w);
	report_proc_gone(fe, w);
	watch_free(fe, w);
}

void file_events_free(struct file_events *fe)
{
	if (!fe)
		return;
	while (fe->n_watches) {
		struct file_watch *w = fe->watches[--fe->n_watches];

		watch_stop(fe, w);
	}
	while (fe->n_groups) /* none: each went with its last watch */
		group_free(fe, fe->groups[0]);
	free(fe->groups);
	free(fe->watches);
	if (fe->timer_fd >= 0)
		loop_remove(fe->env.loop, fe->timer_fd);
	loop_remove(fe->env.loop, fe->batch_fd);
	close(fe->batch_fd);
	counters_remove(fe->env.counters, fe);
	file_agg_free(fe->agg);
	free(fe);
}

/*
 * A sandbox the collector cannot see into is not trusted: a monitor.loss of it, judged blind
 * (what its policy's on_lost_events says: freeze by default).
 */
static void report_unwatched(struct file_events *fe, const struct store_sandbox *sb, int err)
{
	struct store_sandbox *s = registry_find(fe->env.registry, sb->name);
	struct writer_op op;

	if (!s)
		return;
	writer_event_init(&op, s, time_now_ns(), EVENT_STEP_NONE, NULL, EVENT_SOURCE_MONITOR,
			  "monitor.loss");
	sink_submit_event(fe->env.sink, &op,
			  json_pack("{s:s, s:b, s:s}", "stage", "file events", "unwatched", 1,
				    "error", strerror(-err)));
}

int file_events_watch(struct file_events *fe, const struct store_sandbox *sb)
{
	struct file_watch *w, **v;
	pid_t init;
	int r;

	/* An adopted cgroup's processes share the host's mounts: nothing of its own to mark. */
	if (!fe || !fe->env.cfg->file_events || registry_adopted(sb) || find(fe, sb->name))
		return 0;
	if ((r = collector_sandbox_init(fe->env.cfg, sb, &init)) < 0 ||
	    !collector_sandbox_init_alive(sb, init)) {
		fe->watch_failed++;
		return log_errno(r < 0 ? r : -ESRCH, "file events of %s: no init", sb->name);
	}
	if (!(w = calloc(1, sizeof(*w))))
		return -ENOMEM;
	w->fe = fe;
	w->loss_since = time_now_ns();
	snprintf(w->sandbox, sizeof(w->sandbox), "%s", sb->name);
	if ((r = hashmap_new(&w->mtimes)) < 0 ||
	    !(v = realloc(fe->watches, (fe->n_watches + 1) * sizeof(*v))) ||
	    (r = group_for(fe, &w->group)) < 0) {
		r = r < 0 ? r : -ENOMEM;
		goto fail;
	}
	fe->watches = v;
	w->group->members++;
	if ((r = file_notify_mark_sandbox(w->group->notify, init, w)) < 0)
		goto fail;
	fe->watches[fe->n_watches++] = w;
	fe->watched++;
	return 0;
fail:
	fe->watch_failed++;
	watch_free(fe, w);
	log_errno(r, "file events of %s: not watched, so not trusted", sb->name);
	report_unwatched(fe, sb, r);
	return r;
}

void file_events_unwatch(struct file_events *fe, const struct store_sandbox *sb)
{
	for (size_t i = 0; fe && i < fe->n_watches; i++) {
		struct file_watch *w = fe->watches[i];

		if (strcmp(w->sandbox, sb->name) != 0)
			continue;
		fe->watches[i] = fe->watches[--fe->n_watches];
		watch_stop(fe, w);
		return;
	}
}

void file_events_step_end(struct file_events *fe, const char *sandbox)
{
	struct file_watch *w = fe ? find(fe, sandbox) : NULL;

	if (!w)
		return;
	for (int g = 0; g < FILE_NOTIFY_GROUPS; g++)
		read_group(fe, w->group, g, DRAIN_MAX);
	file_agg_flush(fe->agg, INT64_MIN, file_emit_summary, fe);
	file_pids_clear(fe);
}
