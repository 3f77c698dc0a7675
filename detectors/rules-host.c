/*
 * Host rules: escape indicators (seccomp refusals of escape-class syscalls, sysctl writes, cgroup
 * changes and the monitor's own sockets or store asked for from inside), the sandbox's memory and
 * pids caps biting or near, and the monitor going blind in the sandbox (lost events).
 */
#include <stdio.h>
#include <string.h>

#include "detect-internal.h"
#include "macro.h"

/*
 * Syscalls a tool has no use for and an escape needs, the ones the sandbox's seccomp filter
 * (enforcer/seccomp.c) refuses for that reason: namespaces and mounts, the kernel (modules,
 * kexec, BPF, perf, io_uring), other processes, keyrings, handles that bypass paths, the host. A
 * seccomp refusal of one means something in the sandbox tried.
 */
static const char *const escape_syscalls[] = {
	/* mounts and namespaces */
	"mount",
	"umount2",
	"pivot_root",
	"chroot",
	"unshare",
	"setns",
	"fsopen",
	"fsmount",
	"fsconfig",
	"fspick",
	"move_mount",
	"open_tree",
	"mount_setattr",
	/* the kernel itself */
	"init_module",
	"finit_module",
	"delete_module",
	"kexec_load",
	"kexec_file_load",
	"bpf",
	"perf_event_open",
	"lookup_dcookie",
	"userfaultfd",
	"io_uring_setup",
	"io_uring_enter",
	"io_uring_register",
	/* other processes */
	"ptrace",
	"process_vm_readv",
	"process_vm_writev",
	"pidfd_getfd",
	/* keyrings, handles, the hardware, the host */
	"keyctl",
	"add_key",
	"request_key",
	"open_by_handle_at",
	"name_to_handle_at",
	"iopl",
	"ioperm",
	"vm86",
	"vm86old",
	"reboot",
	"swapon",
	"swapoff",
	"acct",
	"quotactl",
	"quotactl_fd",
	"settimeofday",
	"clock_settime",
	"clock_adjtime",
	"adjtimex",
	"syslog",
	"fanotify_init",
	/* device nodes: the filter refuses mknod of a block or character device only */
	"mknod",
	"mknodat",
	/* identities: the sandbox's second filter refuses any change away from the tool's
	 * own uid and gid (enforcer/seccomp-ids.c) */
	"setuid",
	"setgid",
	"setreuid",
	"setregid",
	"setresuid",
	"setresgid",
	"setfsuid",
	"setfsgid",
	"setgroups",
};

/* Whether name is one of escape_syscalls. */
static int escape_class(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(escape_syscalls); i++)
		if (strcmp(name, escape_syscalls[i]) == 0)
			return 1;
	return 0;
}

/* A cumulative counter of the sandbox's own cgroup that moved: 1 and the rise. */
static int rose(const struct event *ev, const char *key, int64_t *last, int64_t *ret_by)
{
	int64_t v;

	if (!event_field_int(ev, key, &v) || v <= *last)
		return 0;
	*ret_by = v - *last;
	*last = v;
	return 1;
}

/*
 * A use at 90% of its cap or more (fields use_key and cap_key), once, until it falls below 80%
 * again (*near remembers). 1 and the two values if it is to be reported.
 */
static int near_cap(const struct event *ev, const char *use_key, const char *cap_key, int *near,
		    int64_t *ret_use, int64_t *ret_cap)
{
	int64_t cur, cap;

	if (!event_field_int(ev, cap_key, &cap) || cap <= 0 || !event_field_int(ev, use_key, &cur))
		return 0;
	if (cur * 10 < cap * 8)
		*near = 0;
	if (*near || cur * 10 < cap * 9)
		return 0;
	*near = 1;
	*ret_use = cur;
	*ret_cap = cap;
	return 1;
}

/*
 * The sandbox held at its CPU cap: throttled for half a window (cpu_window) or more. Once, until
 * a window throttled less than a quarter of the time. Returns the throttled share in percent, or
 * -1 if nothing is to be reported.
 */
static int cpu_saturated(struct detect_state *st, const struct event *ev)
{
	int64_t throttled, span, pct;

	if (!event_field_int(ev, "cpu_throttled_us", &throttled))
		return -1;
	if (!st->cpu_ts || throttled < st->cpu_throttled) {
		st->cpu_ts = ev->ts;
		st->cpu_throttled = throttled;
		return -1;
	}
	span = ev->ts - st->cpu_ts;
	if (span < st->cfg.cpu_window_ns)
		return -1;
	pct = (throttled - st->cpu_throttled) * 1000 * 100 / span;
	st->cpu_ts = ev->ts;
	st->cpu_throttled = throttled;
	if (pct < 25)
		st->cpu_saturated = 0;
	if (st->cpu_saturated || pct < 50)
		return -1;
	st->cpu_saturated = 1;
	return (int)(pct > 100 ? 100 : pct);
}

/*
 * What the process tracer's escape hooks saw: a sysctl write (a sandbox holds no capability, so
 * one that reached the hook came from gained privilege; the kernel refused it), a v2 cgroup made,
 * removed or joined from inside, a unix socket path that is the monitor's. 1 and the verdict.
 */
static size_t escape_indicator(const struct event *ev, struct detect_verdict *out)
{
	char what[128], op[16];

	if (strcmp(ev->kind, "host.sysctl") == 0) {
		if (!event_field_str(ev, "name", what, sizeof(what)))
			strscpy(what, sizeof(what), "?");
		detect_verdict_init(out, ev, RULE_ESCAPE_SYSCTL_WRITE, DETECT_CRITICAL);
		snprintf(out->reason, sizeof(out->reason),
			 "a write to sysctl %s from inside (refused in the kernel)", what);
		return 1;
	}
	if (strcmp(ev->kind, "host.cgroup") == 0) {
		if (!event_field_str(ev, "path", what, sizeof(what)))
			strscpy(what, sizeof(what), "?");
		if (!event_field_str(ev, "op", op, sizeof(op)))
			strscpy(op, sizeof(op), "?");
		detect_verdict_init(out, ev, RULE_ESCAPE_CGROUP_WRITE, DETECT_CRITICAL);
		snprintf(out->reason, sizeof(out->reason), "cgroup %s of %s from inside", op, what);
		return 1;
	}
	/* The sandbox's /sys/fs/cgroup is a tmpfs of its own (enforcer/plant-lures.c): only a
	 * cgroup escape makes a directory or file there. */
	if ((strcmp(ev->kind, "file.create") == 0 || strcmp(ev->kind, "file.rename") == 0 ||
	     strcmp(ev->kind, "file.link") == 0 || strcmp(ev->kind, "file.symlink") == 0) &&
	    ((event_field_str(ev, "path", what, sizeof(what)) ||
	      event_field_str(ev, "to", what, sizeof(what))) &&
	     strncmp(what, "/sys/fs/cgroup/", 15) == 0)) {
		detect_verdict_init(out, ev, RULE_ESCAPE_CGROUP_WRITE, DETECT_CRITICAL);
		snprintf(out->reason, sizeof(out->reason), "%s of %s from inside", ev->kind + 5,
			 what);
		return 1;
	}
	if (strcmp(ev->kind, "net.unix") == 0 && event_field_true(ev, "monitor_path")) {
		if (!event_field_str(ev, "path", what, sizeof(what)))
			strscpy(what, sizeof(what), "?");
		detect_verdict_init(out, ev, RULE_ESCAPE_MONITOR_SOCKET, DETECT_CRITICAL);
		snprintf(out->reason, sizeof(out->reason),
			 "a unix socket of the monitor's asked for: %s", what);
		return 1;
	}
	return 0;
}

/*
 * Calls the filter refuses only for some arguments, each refusal of which is an escape attempt.
 * The audit record names the call, not its arguments, so the refusal says which rule it was:
 * clone only with a namespace flag (CLONE_NEW*), socket and socketpair only for a refused family
 * (AF_PACKET, AF_VSOCK, AF_ALG, AF_KEY...), a raw inet socket or a netlink protocol other than
 * NETLINK_ROUTE (sock_diag, audit, netfilter, uevents...). clone3 is refused whatever its flags
 * (ENOSYS: libc falls back to clone, whose flags the filter reads), so its refusal says nothing.
 */
static const struct {
	const char *name;
	const char *what;
} escape_by_argument[] = {
	{ "clone", "clone with a namespace flag" },
	{ "socket", "a socket family or protocol no tool may open (packet, vsock, alg, raw, "
		    "netlink beyond route...)" },
	{ "socketpair", "a socket pair of a family no tool may open" },
};

/* A seccomp refusal of an escape-class syscall: 1 and the verdict. */
static size_t escape_seccomp(const struct event *ev, struct detect_verdict *out)
{
	char name[64];

	if (!event_field_str(ev, "name", name, sizeof(name)))
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(escape_by_argument); i++)
		if (strcmp(name, escape_by_argument[i].name) == 0) {
			detect_verdict_init(out, ev, RULE_ESCAPE_SECCOMP, DETECT_CRITICAL);
			snprintf(out->reason, sizeof(out->reason), "seccomp refused %s: %s", name,
				 escape_by_argument[i].what);
			return 1;
		}
	if (!escape_class(name))
		return 0;
	detect_verdict_init(out, ev, RULE_ESCAPE_SECCOMP, DETECT_CRITICAL);
	snprintf(out->reason, sizeof(out->reason), "seccomp refused %s, an escape-class syscall",
		 name);
	return 1;
}

/*
 * What near_cap (fields use_key and cap_key, *near) says, as a verdict of rule at out if room:
 * "what at USE of CAP bytes (PCT%)". near_cap runs whether or not there is room, so that *near
 * follows every sample. 1 if a verdict was written.
 */
static int near_cap_verdict(const struct event *ev, const char *use_key, const char *cap_key,
			    int *near, enum policy_rule rule, const char *what,
			    struct detect_verdict *out, int room)
{
	int64_t use, cap;

	if (!near_cap(ev, use_key, cap_key, near, &use, &cap) || !room)
		return 0;
	detect_verdict_init(out, ev, rule, DETECT_MEDIUM);
	snprintf(out->reason, sizeof(out->reason), "%s at %lld of %lld bytes (%lld%%)", what,
		 (long long)use, (long long)cap, (long long)(use * 100 / cap));
	return 1;
}

/*
 * An OOM kill is seen twice where the sandbox's memory cgroup counts it (v2, where memory.events
 * is hierarchical): by the process tracer (proc.oom-kill, the victim named, within milliseconds)
 * and in the next cgroup.stats sample. Where the memory controller is v1 only the tracer sees it
 * (the count is kept in the victim's own memcg, the step's, removed with it). One verdict per
 * kill: each sighting first pays off what the other way saw in the last OOM_CREDIT_NS.
 */
#define OOM_CREDIT_NS (30LL * 1000 * 1000 * 1000)

/* What the other way saw is forgotten after OOM_CREDIT_NS. */
static void oom_expire(struct detect_state *st, const struct event *ev)
{
	if (ev->ts - st->oom_ts > OOM_CREDIT_NS)
		st->oom_balance = 0;
	st->oom_ts = ev->ts;
}

/* The kills of a counter rise of by not already reported from the tracer. */
static int64_t oom_counted(struct detect_state *st, const struct event *ev, int64_t by)
{
	int64_t paid;

	oom_expire(st, ev);
	paid = st->oom_balance <= 0 ? 0 : st->oom_balance < by ? st->oom_balance : by;
	st->oom_balance -= by; /* negative: counted ahead of the tracer */
	return by - paid;
}

static size_t oom_traced(struct detect_state *st, const struct event *ev,
			 struct detect_verdict *out)
{
	char trigger[32] = "?";
	int64_t tpid = 0;

	oom_expire(st, ev);
	if (st->oom_balance++ < 0) /* the counter reported it already */
		return 0;
	event_field_str(ev, "trigger_comm", trigger, sizeof(trigger));
	event_field_int(ev, "trigger_pid", &tpid);
	detect_verdict_init(out, ev, RULE_RESOURCE_OOM_KILL, DETECT_MEDIUM);
	snprintf(out->reason, sizeof(out->reason),
		 "%s (pid %d) killed at the memory cap (the allocation of %s, pid %lld)", ev->comm,
		 ev->pid, trigger, (long long)tpid);
	return 1;
}

/*
 * The sandbox's own cgroup's counters (cgroup.stats of no step: it counts what happened in every
 * step below it): kills and refusals at its caps, memory and workspace near theirs, CPU held at
 * its cap. Every rule sees every sample, room or not; at most max verdicts.
 */
static size_t resource_rules(struct detect_state *st, const struct event *ev,
			     struct detect_verdict *out, size_t max)
{
	size_t k = 0;
	int64_t by;
	int pct;

	if (rose(ev, "memory_oom_kill", &st->oom_kills, &by) && (by = oom_counted(st, ev, by)) &&
	    k < max) {
		detect_verdict_init(&out[k], ev, RULE_RESOURCE_OOM_KILL, DETECT_MEDIUM);
		snprintf(out[k].reason, sizeof(out[k].reason),
			 "%lld process(es) killed at the memory cap", (long long)by);
		k++;
	}
	if (near_cap_verdict(ev, "memory_current", "memory_max", &st->memory_near,
			     RULE_RESOURCE_MEMORY_NEAR_CAP, "memory", &out[k], k < max))
		k++;
	if (near_cap_verdict(ev, "workspace_used", "workspace_size", &st->workspace_near,
			     RULE_RESOURCE_WORKSPACE_FULL, "workspace", &out[k], k < max))
		k++;
	if ((pct = cpu_saturated(st, ev)) >= 0 && k < max) {
		detect_verdict_init(&out[k], ev, RULE_RESOURCE_CPU_SATURATED, DETECT_MEDIUM);
		snprintf(out[k].reason, sizeof(out[k].reason),
			 "held at its CPU cap: throttled %d%% of the last %lld s", pct,
			 (long long)(st->cfg.cpu_window_ns / 1000000000));
		k++;
	}
	if (rose(ev, "pids_max_hits", &st->pids_max_hits, &by) && k < max) {
		detect_verdict_init(&out[k], ev, RULE_RESOURCE_PIDS_CAP, DETECT_MEDIUM);
		snprintf(out[k].reason, sizeof(out[k].reason),
			 "%lld fork(s) refused at the pids cap", (long long)by);
		k++;
	}
	return k;
}

/*
 * Events of the sandbox were lost (a monitor.loss, with its stage): fail closed. The verdict does
 * what the policy's "on_lost_events" says (freeze by default, detect_verdict_action); its severity
 * says the same, so that an incident reads right.
 */
static size_t blind(const struct detect_state *st, const struct event *ev,
		    struct detect_verdict *out)
{
	char stage[64];

	if (!event_field_str(ev, "stage", stage, sizeof(stage)))
		strscpy(stage, sizeof(stage), "?");
	detect_verdict_init(out, ev, RULE_MONITOR_BLIND,
			    st->on_lost == POLICY_ACTION_KILL	  ? DETECT_CRITICAL
			    : st->on_lost == POLICY_ACTION_FREEZE ? DETECT_HIGH
								  : DETECT_MEDIUM);
	snprintf(out->reason, sizeof(out->reason),
		 "events of this sandbox were lost (%s): the monitor was blind here, %s", stage,
		 policy_action_name(st->on_lost));
	return 1;
}

size_t detect_rules_host(struct detect_state *st, const struct event *ev,
			 struct detect_verdict *out, size_t max)
{
	size_t k;

	if (max == 0)
		return 0;
	if (strcmp(ev->kind, "seccomp.denied") == 0)
		return escape_seccomp(ev, out);
	if ((k = escape_indicator(ev, out)) > 0)
		return k;
	if (strcmp(ev->kind, "cgroup.stats") == 0 && ev->step == EVENT_STEP_NONE)
		return resource_rules(st, ev, out, max);
	if (strcmp(ev->kind, "proc.oom-kill") == 0)
		return oom_traced(st, ev, out);
	if (strcmp(ev->kind, "monitor.loss") == 0)
		return blind(st, ev, out);
	return 0;
}
