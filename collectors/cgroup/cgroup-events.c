#include "cgroup-events.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "cgroup.h"
#include "config.h"
#include "event.h"
#include "hashmap.h"
#include "log.h"
#include "macro.h"
#include "collectors/collector.h"
#include "counters.h"
#include "loop.h"
#include "store/registry.h"
#include "timeutil.h"
#include "store/sink.h"

/*
 * A sandbox whose cgroup used no CPU since its last sample has nothing new to say (no process of
 * it ran: no memory, pids or fork of its own changed); it is read in full again only every
 * IDLE_FULL_ROUNDS rounds (16 s at 250 ms), for what changes without it (io written back for it,
 * pressure decaying). At rest that is one pread of cpu.stat per sandbox and round. A full read
 * is some 40 syscalls (a file opened per value, each controller's directory listed for steps):
 * every 4 s, it was most of firebreakd's work with 100 idle sandboxes.
 */
#define IDLE_FULL_ROUNDS 64
/* A sample not refreshed for this many rounds is of a cgroup that is gone. */
#define FORGET_ROUNDS (IDLE_FULL_ROUNDS + 2)

/* The last sample of one cgroup, and the round it was last seen in. */
struct sample {
	char rel[sizeof(((struct store_sandbox *)0)->cgroup) + 64];
	struct cgroup_stats st;
	uint64_t round;
	uint64_t full_round; /* a sandbox's own cgroup: when it was last read in full */
	int cpu_fd;	     /* and its v2 cpu.stat, open (-1: not yet, or it failed) */
	pid_t init_pid;	     /* and its init (0: not looked up, -1: none) */
};

struct cgroup_collector {
	struct collector_env env;
	struct hashmap *last; /* rel -> struct sample (key inside) */
	uint64_t round;
	uint64_t rounds_skipped; /* samples not taken: the store's queue was full */
	uint64_t idle_skipped;	 /* sandboxes not read in full: no CPU used since their last */
	int timer_fd;
};

static const struct counter_def counters[] = {
	{ "stats_rounds_skipped", COUNTER_TOTAL,
	  "cgroup samples not taken because the store's queue was full",
	  COUNTER_AT(struct cgroup_collector, rounds_skipped) },
	{ "stats_idle_skipped", COUNTER_TOTAL,
	  "sandbox samples not read in full: its cgroup used no CPU since its last one",
	  COUNTER_AT(struct cgroup_collector, idle_skipped) },
};

static void sample_free(struct sample *s)
{
	if (s->cpu_fd >= 0)
		close(s->cpu_fd);
	free(s);
}

static int cgroup_collector_sample(struct cgroup_collector *c, struct registry *reg, struct sink *w,
				   int64_t now_ns);

/* Samples are dropped, not queued up, while the store cannot keep up (counted). */
static void on_tick(struct loop *l, uint64_t n, void *data)
{
	struct cgroup_collector *c = data;
	int r;

	if (sink_full(c->env.sink)) {
		c->rounds_skipped++;
		return;
	}
	r = cgroup_collector_sample(c, c->env.registry, c->env.sink, time_now_ns());
	if (r < 0)
		log_warn_errno(r, "cgroup stats");
}

int cgroup_collector_new(const struct collector_env *env, struct cgroup_collector **ret)
{
	struct cgroup_collector *c = calloc(1, sizeof(*c));
	int r = -ENOMEM;

	if (!c)
		return -ENOMEM;
	c->env = *env;
	c->timer_fd = -1;
	if (hashmap_new(&c->last) < 0 ||
	    (env->cfg->stats_period_ns > 0 &&
	     (r = c->timer_fd = loop_add_timer(env->loop, (uint64_t)env->cfg->stats_period_ns,
					       on_tick, c)) < 0) ||
	    (r = counters_add(env->counters, "", counters, ARRAY_SIZE(counters), c)) < 0) {
		cgroup_collector_free(c);
		return r;
	}
	*ret = c;
	return 0;
}

/* The sandbox's init, looked up once (collector_sandbox_init) and again only to see it is alive. */
static pid_t sandbox_init(struct cgroup_collector *c, struct sample *s,
			  const struct store_sandbox *sb)
{
	if (s->init_pid == 0 && collector_sandbox_init(c->env.cfg, sb, &s->init_pid) < 0)
		s->init_pid = -1;
	if (s->init_pid < 0)
		return -1;
	if (!collector_sandbox_init_alive(sb, s->init_pid))
		s->init_pid = -1; /* gone: not looked up again */
	return s->init_pid;
}

/* Adds the workspace's size and use (statvfs through the init's root) to f. */
static void add_workspace(struct cgroup_collector *c, struct sample *s,
			  const struct store_sandbox *sb, json_t *f)
{
	char path[64];
	struct statvfs v;
	pid_t pid = sandbox_init(c, s, sb);

	if (pid <= 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/root/workspace", (int)pid);
	if (statvfs(path, &v) < 0 || v.f_blocks == 0)
		return;
	json_object_set_new(f, "workspace_size",
			    json_integer((json_int_t)((uint64_t)v.f_blocks * v.f_frsize)));
	json_object_set_new(
		f, "workspace_used",
		json_integer((json_int_t)((uint64_t)(v.f_blocks - v.f_bfree) * v.f_frsize)));
}

void cgroup_collector_free(struct cgroup_collector *c)
{
	size_t pos = 0;
	void *v;

	if (!c)
		return;
	if (c->timer_fd >= 0)
		loop_remove(c->env.loop, c->timer_fd);
	counters_remove(c->env.counters, c);
	while (c->last && (v = hashmap_next(c->last, &pos)))
		sample_free(v);
	hashmap_free(c->last);
	free(c);
}

static json_t *stats_json(const char *rel, const struct cgroup_stats *st)
{
	json_t *f = json_pack("{s:s}", "cgroup", rel);

	if (!f)
		return NULL;
#define PUT(bit, key, field)                                                                       \
	if (st->have & (bit))                                                                      \
	json_object_set_new(f, key, json_integer((json_int_t)st->field))
	PUT(CGROUP_HAVE_CPU, "cpu_usage_us", cpu_usage_us);
	PUT(CGROUP_HAVE_THROTTLE, "cpu_nr_throttled", cpu_nr_throttled);
	PUT(CGROUP_HAVE_THROTTLE, "cpu_throttled_us", cpu_throttled_us);
	PUT(CGROUP_HAVE_MEMORY, "memory_current", memory_current);
	PUT(CGROUP_HAVE_MEMORY, "memory_peak", memory_peak);
	PUT(CGROUP_HAVE_MEMORY, "memory_max_hits", memory_max_hits);
	PUT(CGROUP_HAVE_MEMORY, "memory_oom_kill", memory_oom_kill);
	PUT(CGROUP_HAVE_PIDS, "pids_current", pids_current);
	PUT(CGROUP_HAVE_PIDS, "pids_max_hits", pids_max_hits);
	PUT(CGROUP_HAVE_IO, "io_read_bytes", io_read_bytes);
	PUT(CGROUP_HAVE_IO, "io_write_bytes", io_write_bytes);
	PUT(CGROUP_HAVE_PSI, "psi_cpu_some", psi_cpu_some);
	PUT(CGROUP_HAVE_PSI, "psi_memory_some", psi_memory_some);
	PUT(CGROUP_HAVE_PSI, "psi_memory_full", psi_memory_full);
	PUT(CGROUP_HAVE_PSI, "psi_io_some", psi_io_some);
	PUT(CGROUP_HAVE_PSI, "psi_io_full", psi_io_full);
#undef PUT
	/* The limits, where there are: what "near the cap" is measured against. */
	if (st->memory_max)
		json_object_set_new(f, "memory_max", json_integer((json_int_t)st->memory_max));
	if (st->pids_max)
		json_object_set_new(f, "pids_max", json_integer((json_int_t)st->pids_max));
	return f;
}

/* Samples one cgroup; queues an event if it changed. Returns 1 if queued, 0, or -errno. */
static int sample_one(struct cgroup_collector *c, struct sink *w, const struct store_sandbox *sb,
		      const char *rel, int64_t step, const char *tool, int64_t now)
{
	struct sample *s = hashmap_get(c->last, rel);
	struct writer_op op;
	struct cgroup_stats st;
	json_t *f;
	int r;

	if ((r = cgroup_read_stats(rel, &st)) < 0)
		return r == -ENOENT ? 0 : r; /* a step that ended between listing and reading */
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (s)
			s->cpu_fd = -1;
		if (!s || strscpy(s->rel, sizeof(s->rel), rel) < 0 ||
		    hashmap_put(c->last, s->rel, s) < 0) {
			free(s);
			return -ENOMEM;
		}
	} else if (memcmp(&s->st, &st, sizeof(st)) == 0) {
		s->round = c->round;
		return 0; /* stored on change only */
	}
	s->st = st;
	s->round = c->round;
	writer_event_init(&op, sb, now, step, tool, EVENT_SOURCE_CGROUP, "cgroup.stats");
	if (!(f = stats_json(rel, &st))) {
		writer_op_clear(&op);
		return -ENOMEM;
	}
	if (step == EVENT_STEP_NONE && !registry_adopted(sb))
		add_workspace(c, s, sb, f);
	r = sink_submit_event(w, &op, f);
	return r < 0 ? r : 1;
}

/*
 * Whether the sandbox at rel may be skipped this round: read in full lately, and its cgroup's CPU
 * time (v2 cpu.stat, kept open) the same as at that read. Its own sample and its steps' stay.
 */
static int sandbox_idle(struct cgroup_collector *c, const char *rel)
{
	struct sample *s = hashmap_get(c->last, rel);
	uint64_t usage;

	if (!s || !(s->st.have & CGROUP_HAVE_CPU) || c->round - s->full_round >= IDLE_FULL_ROUNDS)
		return 0;
	if (s->cpu_fd < 0 && (s->cpu_fd = cgroup_v2_open(rel, "cpu.stat")) < 0)
		return 0;
	if (cgroup_keyed_u64(s->cpu_fd, "usage_usec", &usage) < 0 || usage != s->st.cpu_usage_us)
		return 0;
	return 1;
}

struct steps_ctx {
	struct cgroup_collector *c;
	struct registry *reg;
	struct sink *w;
	const struct store_sandbox *sb;
	int64_t now;
	int queued;
};

static int sample_step(const char *name, void *data)
{
	struct steps_ctx *x = data;
	char rel[sizeof(x->sb->cgroup) + 64], *end;
	const char *tool;
	long long step;
	int r;

	if (strncmp(name, "step-", 5) != 0)
		return 0;
	step = strtoll(name + 5, &end, 10);
	if (*end || step < 0)
		return 0;
	/* The enforcer makes the step's cgroup a moment before its step.start reaches the
	 * monitor: until then the step has no tool to name, and its first sample waits a period
	 * (a sample without its tool was stored now and then, test 54). */
	if (!(tool = registry_step_tool(x->reg, x->sb->name, step)))
		return 0;
	snprintf(rel, sizeof(rel), "%s/%s", x->sb->cgroup, name);
	r = sample_one(x->c, x->w, x->sb, rel, step, tool, x->now);
	if (r > 0)
		x->queued++;
	return 0;
}

static int cgroup_collector_sample(struct cgroup_collector *c, struct registry *reg, struct sink *w,
				   int64_t now_ns)
{
	struct store_sandbox *sb;
	struct sample *s;
	size_t pos = 0;
	int queued = 0, r;

	c->round++;
	while ((sb = registry_next(reg, &pos))) {
		struct steps_ctx x = { c, reg, w, sb, now_ns, 0 };

		if (strcmp(sb->state, "running") != 0 || !sb->cgroup[0])
			continue;
		if (sandbox_idle(c, sb->cgroup)) {
			c->idle_skipped++;
			continue;
		}
		/* firebreakd checked the path when the sandbox registered or was adopted. */
		r = sample_one(c, w, sb, sb->cgroup, EVENT_STEP_NONE, NULL, now_ns);
		if (r > 0)
			queued++;
		if (r >= 0 && (s = hashmap_get(c->last, sb->cgroup)))
			s->full_round = c->round;
		/* An adopted cgroup's children are its owner's business, not tool-call steps. */
		if (registry_adopted(sb))
			continue;
		cgroup_list_children(sb->cgroup, sample_step, &x);
		queued += x.queued;
	}
	/* Forget cgroups that are gone (steps ended, sandboxes destroyed): an idle sandbox's
	 * samples are refreshed at its next full read, at most IDLE_FULL_ROUNDS away. */
	pos = 0;
	while ((s = hashmap_next(c->last, &pos))) {
		if (s->round + FORGET_ROUNDS <= c->round) {
			hashmap_remove(c->last, s->rel);
			sample_free(s);
			pos = 0; /* removal reorders the table: start over */
		}
	}
	return queued;
}
