#include "seccomp-events.h"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "collectors/collector.h"
#include "counters.h"
#include "log.h"
#include "loop.h"
#include "store/registry.h"
#include "store/sink.h"
#include "macro.h"
#include "seccomp-audit.h"

struct seccomp_events {
	struct collector_env env;
	int (*task_cgroup)(void *data, int32_t pid, uint64_t *ret_cgid);
	void *task_data;
	uint64_t by_proc;      /* refusals attributed by /proc (the tracer had not seen the pid) */
	int fd;		       /* the audit read-log socket */
	uint64_t stored;       /* refusals queued for the store */
	uint64_t unattributed; /* refusals of no sandbox's process (a host filter's, or gone) */
	uint64_t unparsed;     /* audit messages that did not parse */
	uint64_t overruns;     /* audit socket overflows: the kernel dropped records */
};

/*
 * Which sandbox and step the refused process is in. First as the kernel saw it: the process
 * tracer noted the pid's cgroup at its fork, exec or move, before it could make the call, and
 * keeps it after the process exits (audit's pid is the host's tgid). Else (a process the tracer
 * did not see: the tracer is missing, or the process is older than the watch) from its cgroup in
 * /proc/PID/cgroup ("0::/firebreak/NAME/step-N", or an adopted cgroup or one below it): a process
 * already gone then cannot be attributed, and is counted.
 */
static int attribute(struct seccomp_events *se, int32_t pid, const char **sandbox, int64_t *step)
{
	static const char prefix[] = CGROUP_ROOT_NAME "/";
	char rel[512], *name, *rest;
	struct store_sandbox *sb;
	const char *tool;
	uint64_t cgid;

	if (se->task_cgroup && se->task_cgroup(se->task_data, pid, &cgid) == 0 &&
	    collector_resolve(se->env.registry, cgid, sandbox, step, &tool))
		return 1;
	if (cgroup_of_pid(pid, rel, sizeof(rel)) < 0)
		return 0;
	se->by_proc++;
	/* Outside firebreak/: an adopted cgroup's, with no steps, or no sandbox's. */
	if (strncmp(rel, prefix, sizeof(prefix) - 1) != 0) {
		if (!(sb = registry_adopted_holding(se->env.registry, rel)))
			return 0;
		*sandbox = sb->name;
		*step = EVENT_STEP_NONE;
		return 1;
	}
	name = rel + sizeof(prefix) - 1;
	rest = strchr(name, '/');
	if (rest)
		*rest++ = '\0';
	if (!(sb = registry_find(se->env.registry, name)))
		return 0;
	*sandbox = sb->name;
	*step = EVENT_STEP_NONE;
	if (rest && strncmp(rest, "step-", 5) == 0)
		*step = strtoll(rest + 5, NULL, 10);
	return 1;
}

static void on_denial(const struct seccomp_denial *s, void *data)
{
	struct writer_op op;
	struct seccomp_events *se = data;
	struct store_sandbox *sb;
	const char *sandbox, *tool;
	char *name;
	int64_t step;
	json_t *f;

	if (!attribute(se, s->pid, &sandbox, &step) ||
	    !(sb = registry_find(se->env.registry, sandbox))) {
		/* A host process's own filter, or a sandbox process already gone. */
		se->unattributed++;
		return;
	}
	tool = step != EVENT_STEP_NONE ? registry_step_tool(se->env.registry, sandbox, step) : NULL;
	/* SECCOMP_RET_LOG: allowed, and recorded (enforcer/seccomp.c says which calls). */
	writer_event_init(&op, sb, s->ts, step, tool, EVENT_SOURCE_AUDIT,
			  (s->code & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_LOG
				  ? "seccomp.logged"
				  : "seccomp.denied");
	op.ev.pid = s->pid;
	op.ev.uid = s->uid;
	strscpy(op.ev.comm, sizeof(op.ev.comm), s->comm);
	/* The arch tokens of libseccomp are the audit ones. */
	name = seccomp_syscall_resolve_num_arch(s->arch, (int)s->syscall);
	/* The record carries the action only, not the errno the filter returned with it. */
	f = json_pack("{s:I, s:s?, s:s, s:s, s:s, s:I}", "syscall", (json_int_t)s->syscall, "name",
		      name, "arch",
		      s->arch == SCMP_ARCH_X86_64 ? "x86_64"
		      : s->arch == SCMP_ARCH_X86  ? "i386"
						  : "other",
		      "action", seccomp_action_name(s->code), "exe", s->exe, "serial",
		      (json_int_t)s->serial);
	free(name);
	if (sink_submit_event(se->env.sink, &op, f) == 0)
		se->stored++;
}

static void on_ready(struct loop *l, int fd, uint32_t events, void *data)
{
	struct seccomp_events *se = data;
	struct seccomp_audit_counters c = { 0 };
	int r = seccomp_audit_read(fd, on_denial, se, &c);

	se->unparsed += c.unparsed;
	se->overruns += c.overruns;
	/* The kernel dropped audit records: whose refusals they were is not known. */
	if (c.overruns)
		collector_loss_everywhere(&se->env, "audit stream", "overruns", c.overruns);
	if (r < 0)
		log_warn_errno(r, "audit socket");
}

static const struct counter_def counters[] = {
	{ "stored", COUNTER_TOTAL, "seccomp refusals queued for the store",
	  COUNTER_AT(struct seccomp_events, stored) },
	{ "by_proc", COUNTER_TOTAL, "refusals attributed by /proc, the tracer had not seen the pid",
	  COUNTER_AT(struct seccomp_events, by_proc) },
	{ "unattributed", COUNTER_TOTAL, "refusals of no sandbox's process", COUNTER_FAMILY_LOST,
	  "unattributed", COUNTER_AT(struct seccomp_events, unattributed) },
	{ "unparsed", COUNTER_TOTAL, "audit messages that did not parse", COUNTER_FAMILY_LOST,
	  "unparsed", COUNTER_AT(struct seccomp_events, unparsed) },
	{ "overruns", COUNTER_TOTAL, "records the kernel dropped: the audit socket overflowed",
	  COUNTER_FAMILY_LOST, "audit_overrun", COUNTER_AT(struct seccomp_events, overruns) },
};

int seccomp_events_new(const struct collector_env *env,
		       int (*task_cgroup)(void *data, int32_t pid, uint64_t *ret_cgid),
		       void *task_data, struct seccomp_events **ret)
{
	struct seccomp_events *se = calloc(1, sizeof(*se));
	int r;

	if (!se)
		return -ENOMEM;
	se->env = *env;
	se->task_cgroup = task_cgroup;
	se->task_data = task_data;
	if ((se->fd = seccomp_audit_open()) < 0) {
		r = se->fd;
		free(se);
		return r;
	}
	if ((r = loop_add(env->loop, se->fd, EPOLLIN, on_ready, se)) < 0 ||
	    (r = counters_add(env->counters, "seccomp", counters, ARRAY_SIZE(counters), se)) < 0) {
		loop_remove(env->loop, se->fd);
		close(se->fd);
		free(se);
		return r;
	}
	*ret = se;
	return 0;
}

void seccomp_events_free(struct seccomp_events *se)
{
	if (!se)
		return;
	counters_remove(se->env.counters, se);
	loop_remove(se->env.loop, se->fd);
	close(se->fd);
	free(se);
}
