#include "syscall-events.h"

#include <seccomp.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "collectors/collector.h"
#include "counters.h"
#include "log.h"
#include "loop.h"
#include "store/registry.h"
#include "store/sink.h"
#include "macro.h"
#include "syscall-tracer.h"
#include "timeutil.h"

struct syscall_recorder {
	char sandbox[64];
	struct syscall_tracer *tracer;
	uint64_t lost_seen;
	int64_t since;
	int adopted; /* a cgroup `firebreak watch` adopted: no steps to look up */
};

struct syscall_events {
	struct collector_env env;
	struct syscall_recorder *recorders; /* the flight recorders switched on */
	size_t n_recorders;
	uint64_t stored, unattributed, lost;
};

static struct syscall_recorder *find(struct syscall_events *d, const char *sandbox)
{
	for (size_t i = 0; i < d->n_recorders; i++)
		if (strcmp(d->recorders[i].sandbox, sandbox) == 0)
			return &d->recorders[i];
	return NULL;
}

struct drain_ctx {
	struct syscall_events *d;
	const char *sandbox; /* the recorder's: its filter lets no other sandbox's task through */
	int adopted;
};

static void on_record(const struct syscall_trace_event *e, void *data)
{
	struct writer_op op;
	struct drain_ctx *c = data;
	struct syscall_events *d = c->d;
	const char *sandbox, *tool = NULL;
	struct store_sandbox *sb;
	json_t *f, *args;
	int64_t step = EVENT_STEP_NONE;
	char *name;

	/* The step, where the registry knows it and its tool: a record can beat its step's
	 * report, and the step cgroup found before it has no tool yet. An adopted cgroup has no
	 * steps. */
	if (c->adopted ||
	    !collector_resolve(d->env.registry, e->cgroup_id, &sandbox, &step, &tool) ||
	    strcmp(sandbox, c->sandbox) != 0 || !tool) {
		sandbox = c->sandbox;
		step = EVENT_STEP_NONE;
		tool = NULL;
	}
	if (!(sb = registry_find(d->env.registry, sandbox))) {
		d->unattributed++;
		return;
	}
	writer_event_init(&op, sb, time_boot_to_wall_ns(e->ts), step, tool, EVENT_SOURCE_EBPF,
			  "sys.enter");
	op.ev.pid = (int32_t)e->pid;
	op.ev.uid = e->uid;
	memcpy(op.ev.comm, e->comm, sizeof(op.ev.comm) - 1);
	args = json_array();
	for (int i = 0; i < 6; i++)
		json_array_append_new(args, json_integer((json_int_t)e->args[i]));
	name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, (int)e->nr);
	f = json_pack("{s:I, s:s?, s:o, s:i}", "nr", (json_int_t)e->nr, "name", name, "args", args,
		      "tid", (int)e->tid);
	free(name);
	if (sink_submit_event(d->env.sink, &op, f) == 0)
		d->stored++;
}

/* Stores the recorder's new losses as a monitor.loss event of its sandbox. */
static void report_loss(struct syscall_events *d, struct syscall_recorder *r)
{
	struct writer_op op;
	uint64_t lost = syscall_tracer_lost(r->tracer);
	struct store_sandbox *sb = registry_find(d->env.registry, r->sandbox);
	int64_t now = time_now_ns();
	json_t *f;

	if (lost == r->lost_seen || !sb)
		return;
	writer_event_init(&op, sb, now, EVENT_STEP_NONE, NULL, EVENT_SOURCE_MONITOR,
			  "monitor.loss");
	f = json_pack("{s:s, s:I, s:I, s:I}", "stage", "syscall recorder ring buffer", "syscalls",
		      (json_int_t)(lost - r->lost_seen), "since", (json_int_t)r->since, "until",
		      (json_int_t)now);
	sink_submit_event(d->env.sink, &op, f);
	d->lost += lost - r->lost_seen;
	r->lost_seen = lost;
	r->since = now;
}

void syscall_events_drain(struct syscall_events *d)
{
	for (size_t i = 0; d && i < d->n_recorders; i++) {
		struct drain_ctx c = { d, d->recorders[i].sandbox, d->recorders[i].adopted };

		syscall_tracer_drain(d->recorders[i].tracer, on_record, &c);
		report_loss(d, &d->recorders[i]);
	}
}

static void on_ready(struct loop *l, int fd, uint32_t events, void *data)
{
	syscall_events_drain(data);
}

static void stop_one(struct syscall_events *d, struct syscall_recorder *r)
{
	struct drain_ctx c = { d, r->sandbox, r->adopted };

	syscall_tracer_drain(r->tracer, on_record, &c);
	report_loss(d, r);
	loop_remove(d->env.loop, syscall_tracer_fd(r->tracer));
	syscall_tracer_free(r->tracer);
	log_info("syscall recorder off for sandbox %s", r->sandbox);
	*r = d->recorders[--d->n_recorders];
}

int syscall_events_set(struct syscall_events *d, const struct store_sandbox *sb, int on)
{
	struct syscall_recorder *r = find(d, sb->name), *n;
	uint64_t cgid;
	int rc;

	if (!on) {
		if (r)
			stop_one(d, r);
		return 0;
	}
	if (r)
		return 0;
	if (!sb->cgroup[0])
		return -EINVAL;
	if ((rc = cgroup_id(sb->cgroup, &cgid)) < 0)
		return rc;
	if (!(n = realloc(d->recorders, (d->n_recorders + 1) * sizeof(*n))))
		return -ENOMEM;
	d->recorders = n;
	r = &d->recorders[d->n_recorders];
	memset(r, 0, sizeof(*r));
	strscpy(r->sandbox, sizeof(r->sandbox), sb->name);
	r->since = time_now_ns();
	r->adopted = registry_adopted(sb);
	if ((rc = syscall_tracer_new(cgid, cgroup_level(sb->cgroup), &r->tracer)) < 0)
		return rc;
	if ((rc = loop_add(d->env.loop, syscall_tracer_fd(r->tracer), EPOLLIN, on_ready, d)) < 0) {
		syscall_tracer_free(r->tracer);
		return rc;
	}
	d->n_recorders++;
	/* It taxes every process on the host while it runs: say so where an operator looks. */
	log_warn("syscall recorder ON for sandbox %s: every syscall on this host is on the slow "
		 "path until it is switched off",
		 sb->name);
	return 0;
}

static uint64_t recorders_on(const void *state)
{
	return ((const struct syscall_events *)state)->n_recorders;
}

static const struct counter_def counters[] = {
	{ "sandboxes", COUNTER_GAUGE, "sandboxes whose syscalls are recorded now",
	  .read = recorders_on },
	{ "stored", COUNTER_TOTAL, "syscall records queued for the store",
	  COUNTER_AT(struct syscall_events, stored) },
	{ "unattributed", COUNTER_TOTAL, "records of a sandbox forgotten since",
	  COUNTER_FAMILY_LOST, "unattributed", COUNTER_AT(struct syscall_events, unattributed) },
	{ "lost", COUNTER_TOTAL, "records the kernel had no ring room for", COUNTER_FAMILY_LOST,
	  "syscall_recorder", COUNTER_AT(struct syscall_events, lost) },
};

int syscall_events_new(const struct collector_env *env, struct syscall_events **ret)
{
	struct syscall_events *d = calloc(1, sizeof(*d));
	int r;

	if (!d)
		return -ENOMEM;
	d->env = *env;
	if ((r = counters_add(env->counters, "syscall_recorder", counters, ARRAY_SIZE(counters),
			      d)) < 0) {
		free(d);
		return r;
	}
	*ret = d;
	return 0;
}

void syscall_events_free(struct syscall_events *d)
{
	if (!d)
		return;
	while (d->n_recorders)
		stop_one(d, &d->recorders[0]);
	counters_remove(d->env.counters, d);
	free(d->recorders);
	free(d);
}
