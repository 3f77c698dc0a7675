/*
 * The fields of the socket and signal senses (issue 16, items 4 and 5) and of renames: bind and
 * listen (where), accept (local and remote), signal.sent (sender, target, signal, result, where
 * the target is), proc.rename (old and new comm, the executable's name).
 */
#include <arpa/inet.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>

#include "collectors/collector.h"
#include "event.h"
#include "proc-events-internal.h"
#include "store/registry.h"

static void put_addr(json_t *f, const char *key, unsigned family, const __u8 *addr)
{
	char s[INET6_ADDRSTRLEN] = "";

	inet_ntop(family == AF_INET6 ? AF_INET6 : AF_INET, addr, s, sizeof(s));
	json_object_set_new(f, key, json_string(s));
}

/* Where a signal's target is, seen from a sender in step. */
static const char *signal_where(struct registry *reg, const struct proc_trace_event *e,
				int64_t step)
{
	const char *sandbox, *tool;
	int64_t tstep;

	if (!e->more.target_in)
		return "outside";
	if (e->more.target_cgid == e->cgroup_id)
		return step == EVENT_STEP_NONE ? "sandbox" : "same-step";
	if (!registry_cgroup_get(reg, e->more.target_cgid, &sandbox, &tstep, &tool) &&
	    !collector_resolve(reg, e->more.target_cgid, &sandbox, &tstep, &tool))
		return "sandbox";
	if (tstep == EVENT_STEP_NONE)
		return "sandbox";
	return tstep == step ? "same-step" : "other-step";
}

static const char *signal_result(int r)
{
	static const char *const names[] = { "delivered", "ignored", "already_pending",
					     "overflow_fail", "lose_info" };

	return r >= 0 && r < 5 ? names[r] : "?";
}

static json_t *signal_fields(struct registry *reg, const struct proc_trace_event *e, int64_t step)
{
	const char *name = sigabbrev_np(e->more.sig);
	char signame[16];

	snprintf(signame, sizeof(signame), "SIG%s", name ? name : "?");
	return json_pack("{s:i, s:s, s:i, s:s%, s:s, s:s, s:s, s:b, s:I, s:I}", "signal",
			 (int)e->more.sig, "signal_name", name ? signame : "?", "target_pid",
			 (int)e->more.target_pid, "target_comm", e->more.target_comm,
			 strnlen(e->more.target_comm, sizeof(e->more.target_comm)), "where",
			 signal_where(reg, e, step), "result", signal_result(e->more.result), "via",
			 e->more.si_code == -6	 ? "tkill"
			 : e->more.si_code == -1 ? "sigqueue"
						 : "kill",
			 "group", e->more.group != 0, "target_cgroup_id",
			 (json_int_t)e->more.target_cgid, "cgroup_id", (json_int_t)e->cgroup_id);
}

json_t *proc_senses_fields(struct registry *reg, const struct proc_trace_event *e, int64_t step)
{
	json_t *f;

	switch (e->kind) {
	case PROC_TRACE_BIND:
	case PROC_TRACE_LISTEN:
	case PROC_TRACE_ACCEPT:
		f = json_pack(
			"{s:s, s:i, s:s, s:I}", "family", e->family == AF_INET6 ? "inet6" : "inet",
			"port", (int)e->port, "proto",
			e->protocol == 6 || (e->protocol == 0 && (e->sock_type & 0xff) == 1) ? "tcp"
			: e->protocol == 17 || (e->sock_type & 0xff) == 2		     ? "udp"
									  : "other",
			"cgroup_id", (json_int_t)e->cgroup_id);
		if (!f)
			return NULL;
		put_addr(f, "address", e->family, e->addr);
		if (e->kind == PROC_TRACE_ACCEPT) {
			put_addr(f, "peer_address", e->family, e->more.peer_addr);
			json_object_set_new(f, "peer_port", json_integer(e->more.peer_port));
		}
		return f;
	case PROC_TRACE_SIGNAL:
		return signal_fields(reg, e, step);
	case PROC_TRACE_RENAME:
		return json_pack("{s:s%, s:s%, s:s%, s:i, s:I}", "old_comm", e->comm,
				 strnlen(e->comm, sizeof(e->comm)), "new_comm", e->argv,
				 strnlen(e->argv, e->argv_len < 16 ? e->argv_len : 16), "exe",
				 e->path, strnlen(e->path, sizeof(e->path)), "tid", (int)e->ppid,
				 "cgroup_id", (json_int_t)e->cgroup_id);
	case PROC_TRACE_OOM:
		/* The victim is the event's pid and comm; who ran out of memory, a field. */
		return json_pack("{s:i, s:s%, s:I}", "trigger_pid", (int)e->more.target_pid,
				 "trigger_comm", e->more.target_comm,
				 strnlen(e->more.target_comm, sizeof(e->more.target_comm)),
				 "cgroup_id", (json_int_t)e->cgroup_id);
	default:
		return NULL;
	}
}
