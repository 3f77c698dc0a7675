#include "seccomp-events.h"

#include <fcntl.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "monitor/daemon.h"
#include "macro.h"
#include "seccomp-audit.h"

/*
 * Which sandbox and step the refused process is in, from its cgroup ("0::/firebreak/NAME/step-N",
 * or an adopted cgroup or one below it, in /proc/PID/cgroup; audit's pid is the host's). The process is still there when its record
 * arrives unless the action killed it; then it cannot be attributed, and is counted.
 */
static int attribute(struct daemon *d, int32_t pid, const char **sandbox, int64_t *step)
{
	static const char prefix[] = CGROUP_ROOT_NAME "/";
	char rel[512], *name, *rest;
	struct store_sandbox *sb;

	if (cgroup_of_pid(pid, rel, sizeof(rel)) < 0)
		return 0;
	/* Outside firebreak/: an adopted cgroup's, with no steps, or no sandbox's. */
	if (strncmp(rel, prefix, sizeof(prefix) - 1) != 0) {
		if (!(sb = registry_adopted_holding(d->registry, rel)))
			return 0;
		*sandbox = sb->name;
		*step = EVENT_STEP_NONE;
		return 1;
	}
	name = rel + sizeof(prefix) - 1;
	rest = strchr(name, '/');
	if (rest)
		*rest++ = '\0';
	if (!(sb = registry_find(d->registry, name)))
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
	struct daemon *d = data;
	struct store_sandbox *sb;
	const char *sandbox, *tool;
	char *name;
	int64_t step;
	json_t *f;

	if (!attribute(d, s->pid, &sandbox, &step) || !(sb = registry_find(d->registry, sandbox))) {
		/* A host process's own filter, or a sandbox process already gone. */
		d->seccomp_unattributed++;
		return;
	}
	tool = step != EVENT_STEP_NONE ? registry_step_tool(d->registry, sandbox, step) : NULL;
	writer_event_init(&op, sb, s->ts, step, tool, EVENT_SOURCE_AUDIT, "seccomp.denied");
	op.ev.pid = s->pid;
	op.ev.uid = s->uid;
	strscpy(op.ev.comm, sizeof(op.ev.comm), s->comm);
	/* The arch tokens of libseccomp are the audit ones. */
	name = seccomp_syscall_resolve_num_arch(s->arch, (int)s->syscall);
	/* The record carries the action only, not the errno the filter returned with it. */
	f = json_pack("{s:I, s:s?, s:s, s:s, s:s, s:I}", "syscall", (json_int_t)s->syscall,
		      "name", name, "arch",
		      s->arch == SCMP_ARCH_X86_64 ? "x86_64" :
		      s->arch == SCMP_ARCH_X86	  ? "i386" :
						    "other",
		      "action", seccomp_action_name(s->code), "exe", s->exe, "serial",
		      (json_int_t)s->serial);
	free(name);
	if (writer_submit_event(d->writer, &op, f) == 0)
		d->seccomp_events++;
}

static void on_ready(struct loop *l, int fd, uint32_t events, void *data)
{
	struct daemon *d = data;
	struct seccomp_audit_counters c = { 0 };
	int r = seccomp_audit_read(fd, on_denial, d, &c);

	d->seccomp_unparsed += c.unparsed;
	d->seccomp_overruns += c.overruns;
	if (r < 0)
		log_warn_errno(r, "audit socket");
}

int seccomp_events_start(struct daemon *d)
{
	int fd = seccomp_audit_open(), r;

	if (fd < 0)
		return fd;
	if ((r = loop_add(d->loop, fd, EPOLLIN, on_ready, d)) < 0) {
		close(fd);
		return r;
	}
	d->audit_fd = fd;
	return 0;
}

void seccomp_events_stop(struct daemon *d)
{
	if (d->audit_fd < 0)
		return;
	loop_remove(d->loop, d->audit_fd);
	close(d->audit_fd);
	d->audit_fd = -1;
}
