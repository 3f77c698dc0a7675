/*
 * The control socket: requests from the CLI and the enforcer, one JSON object per line, each with
 * an "op" looked up in one dispatch table (docs/control.md). Writes are answered once durable.
 */
#include <stdio.h>

#include "adopt.h"
#include "cgroup.h"
#include "counters.h"
#include "control-internal.h"
#include "exec-scope.h"
#include "control.h"
#include "daemon.h"
#include "records.h"
#include "macro.h"
#include "collectors/dns/dns-events.h"
#include "collectors/http/http-events.h"
#include "collectors/nflog/nflog-events.h"
#include "collectors/file/file-events.h"
#include "collectors/proc/proc-events.h"
#include "collectors/syscall/syscall-events.h"
#include "timeutil.h"
#include "verdicts.h"

/* The control protocol's own: what it refused, and the limit on logging it. */
struct control_state {
	uint64_t refused;
	uint64_t refused_root_only; /* also in refused: a verb the firebreak group may not use */
	struct log_ratelimit rl;
};

static const struct counter_def counters[] = {
	{ "control_refused", COUNTER_TOTAL, "control requests refused",
	  COUNTER_AT(struct control_state, refused) },
	{ "control_refused_root_only", COUNTER_TOTAL,
	  "control requests refused because only root may send them (docs/control.md)",
	  COUNTER_AT(struct control_state, refused_root_only) },
};

int control_init(struct daemon *d)
{
	if (!(d->control_state = calloc(1, sizeof(*d->control_state))))
		return -ENOMEM;
	d->control_state->rl.interval_ns = 10ULL * NSEC_PER_SEC;
	d->control_state->rl.burst = 20;
	return counters_add(d->counters, "", counters, ARRAY_SIZE(counters), d->control_state);
}

void control_free(struct daemon *d)
{
	if (d->control_state)
		counters_remove(d->counters, d->control_state);
	free(d->control_state);
	d->control_state = NULL;
}

void control_reply_json(struct lineserver *ls, uint64_t token, json_t *obj)
{
	_cleanup_free_ char *text =
		obj ? json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;

	json_decref(obj);
	if (!text || lineserver_reply(ls, token, text) < 0)
		log_error("control: could not queue a reply");
}

void control_refuse(struct daemon *d, struct lineserver *ls, uint64_t token, uint64_t lineno,
		    const char *msg)
{
	_cleanup_free_ char *reply = daemon_error_reply(lineno, "request", msg);

	d->control_state->refused++;
	if (log_ratelimit_ok(&d->control_state->rl))
		log_warn("control: request %llu refused: %s", (unsigned long long)lineno, msg);
	if (!reply || lineserver_reply(ls, token, reply) < 0)
		log_error("control: could not queue a refusal");
}

int control_require_root(struct daemon *d, struct lineserver *ls, uint64_t token, uint64_t lineno,
			 const char *what)
{
	char msg[160];

	if (lineserver_peer_root(ls, token))
		return 1;
	d->control_state->refused_root_only++;
	snprintf(msg, sizeof(msg), "permission denied: only root may %s", what);
	control_refuse(d, ls, token, lineno, msg);
	return 0;
}

static void op_ping(struct daemon *d, struct lineserver *ls, uint64_t token, uint64_t lineno,
		    json_t *req)
{
	control_reply_json(ls, token,
			   json_pack("{s:b, s:i, s:I, s:i}", "ok", 1, "pid", (int)getpid(),
				     "started_ts", (json_int_t)d->self->started_ns, "schema",
				     store_latest_version()));
}

static void op_stats(struct daemon *d, struct lineserver *ls, uint64_t token, uint64_t lineno,
		     json_t *req)
{
	control_reply_json(ls, token,
			   json_pack("{s:b, s:o}", "ok", 1, "stats", daemon_stats_json(d)));
}

/* {"op":"register","sandbox":NAME[,"state":S][,"cgroup":PATH][,"policy_hash":H]} */
static void op_register(struct daemon *d, struct lineserver *ls, uint64_t token, uint64_t lineno,
			json_t *req)
{
	static const char *const states[] = { "registered", "running", "frozen", "killed",
					      "destroyed" };
	const char *name = NULL, *state = "registered", *cgroup = NULL, *hash = NULL, *op = NULL;
	char own[sizeof(CGROUP_ROOT_NAME) + FB_NAME_MAX + 1];
	struct store_sandbox *sb;
	json_error_t jerr;
	size_t i;
	int r;

	if (json_unpack_ex(req, &jerr, JSON_STRICT, "{s:s, s:s, s?:s, s?:s, s?:s}", "op", &op,
			   "sandbox", &name, "state", &state, "cgroup", &cgroup, "policy_hash",
			   &hash) < 0)
		return control_refuse(d, ls, token, lineno, jerr.text);
	if (!event_sandbox_name_valid(name))
		return control_refuse(d, ls, token, lineno, "invalid sandbox name");
	for (i = 0; i < ARRAY_SIZE(states); i++)
		if (strcmp(state, states[i]) == 0)
			break;
	if (i == ARRAY_SIZE(states))
		return control_refuse(d, ls, token, lineno, "unknown state");
	if (hash && strlen(hash) >= sizeof(sb->policy_hash))
		return control_refuse(d, ls, token, lineno, "policy_hash too long");
	/* The enforcer's sandboxes live at firebreak/NAME; anything else is adopted (op watch). */
	snprintf(own, sizeof(own), CGROUP_ROOT_NAME "/%s", name);
	if (cgroup && strcmp(cgroup, own) != 0)
		return control_refuse(
			d, ls, token, lineno,
			"a registered sandbox's cgroup is firebreak/NAME (adopt others "
			"with op watch)");

	sb = registry_find(d->registry, name);
	if (sb && registry_adopted(sb))
		return control_refuse(d, ls, token, lineno,
				      "the name belongs to an adopted cgroup (op unwatch)");
	/* The harness (the firebreak group) names a sandbox it sends trace lines for, and nothing
	 * more: a state, a cgroup or a policy is the enforcer's to report, and marking a running
	 * sandbox destroyed would stop watching it. */
	if ((strcmp(state, "registered") != 0 || cgroup || hash ||
	     (sb && (strcmp(sb->state, "registered") != 0 || sb->cgroup[0]))) &&
	    !control_require_root(d, ls, token, lineno,
				  "set a sandbox's state, cgroup or policy, or re-register one the "
				  "enforcer reported"))
		return;
	if (!sb) {
		r = registry_add(d->registry, name, time_now_ns(), &sb);
		if (r < 0)
			return control_refuse(d, ls, token, lineno, "cannot add the sandbox");
		log_info("sandbox %s registered as id %lld", name, (long long)sb->id);
	}
	strcpy(sb->state, state);
	sb->updated_ts = time_now_ns();
	if (cgroup)
		strcpy(sb->cgroup, cgroup);
	if (hash) /* before the watch: the proxy log's follower names tools by the policy */
		strcpy(sb->policy_hash, hash);
	/* A running sandbox's processes are traced from now on. */
	if (strcmp(state, "running") == 0 && cgroup) {
		adopt_collectors_watch(d, sb); /* logged by the tracer if it fails */
		nflog_events_follow(d->nflog); /* before create returns: the gate may be new */
	} else if (strcmp(state, "destroyed") == 0) {
		adopt_collectors_unwatch(d, sb);
		verdicts_forget(d, sb->name);
	}

	control_submit_sandbox(d, ls, token, lineno, sb);
}

void control_submit_sandbox(struct daemon *d, struct lineserver *ls, uint64_t token,
			    uint64_t lineno, const struct store_sandbox *sb)
{
	json_t *ok = json_pack("{s:b, s:s, s:I}", "ok", 1, "sandbox", sb->name, "id",
			       (json_int_t)sb->id);
	char *msg = ok ? json_dumps(ok, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;

	json_decref(ok);
	if (!msg || record_sandbox_answered(d, sb, token, msg) == -ENOMEM)
		return control_refuse(d, ls, token, lineno, "out of memory");
}

/* {"op":"event","event":{...}}: one event in the event model, from the enforcer. */
static void op_event(struct daemon *d, struct lineserver *ls, uint64_t token, uint64_t lineno,
		     json_t *req)
{
	struct writer_op wop = { .type = WRITER_OP_EVENT, .token = token };
	json_t *obj = json_object_get(req, "event");
	struct store_sandbox *sb;
	char err[160];

	/* The enforcer's records (firebreak exec runs as root): a step's end lifts its exec
	 * confinement, so nobody else may write one. The harness has the trace socket. */
	if (!control_require_root(d, ls, token, lineno, "send events (the enforcer's records)"))
		return;
	if (json_object_size(req) != 2 || !obj)
		return control_refuse(d, ls, token, lineno,
				      "event needs exactly {\"op\", \"event\"}");
	if (event_from_json(obj, &wop.ev, err, sizeof(err)) < 0)
		return control_refuse(d, ls, token, lineno, err);
	if (wop.ev.sandbox[0]) {
		sb = registry_find(d->registry, wop.ev.sandbox);
		if (!sb) {
			event_clear(&wop.ev);
			return control_refuse(d, ls, token, lineno, "unknown sandbox");
		}
		wop.ev.sandbox_id = sb->id;
	}
	wop.ev.id = 0;
	/* The enforcer's step records tell the collectors which tool a step cgroup belongs to. */
	if (wop.ev.sandbox[0] && wop.ev.step != EVENT_STEP_NONE) {
		if (strcmp(wop.ev.kind, "step.start") == 0) {
			json_t *f = event_get_fields(&wop.ev);
			json_t *cg = json_object_get(f, "cgroup_id");

			registry_step_start(d->registry, wop.ev.sandbox, wop.ev.step, wop.ev.tool,
					    json_is_integer(cg) ? (uint64_t)json_integer_value(cg)
								: 0);
			json_decref(f);
			http_events_step_start(d->http_log, wop.ev.sandbox, wop.ev.step,
					       wop.ev.tool, wop.ev.ts);
			proc_events_drain(d->proc); /* records that waited for this report */
		} else if (strcmp(wop.ev.kind, "step.end") == 0) {
			/* The step's last records are in the ring buffer already (it has ended):
			 * attribute them before its cgroup is forgotten. */
			proc_events_drain(d->proc);
			syscall_events_drain(d->syscalls);
			dns_events_drain(d->dns);
			http_events_step_end(d->http_log, wop.ev.sandbox, wop.ev.step, wop.ev.ts);
			file_events_step_end(d->files, wop.ev.sandbox);
			exec_scope_end(d, wop.ev.sandbox, wop.ev.step);
			registry_step_end(d->registry, wop.ev.sandbox, wop.ev.step);
		}
	}
	wop.msg = strdup("{\"ok\":true}");
	if (!wop.msg) {
		event_clear(&wop.ev);
		return control_refuse(d, ls, token, lineno, "out of memory");
	}
	sink_submit(d->sink, &wop);
}

/* {"op":"trace-syscalls","sandbox":NAME,"on":BOOL}: the flight recorder, an escalation. */
static void op_trace_syscalls(struct daemon *d, struct lineserver *ls, uint64_t token,
			      uint64_t lineno, json_t *req)
{
	struct store_sandbox *sb;
	const char *op, *name;
	json_error_t jerr;
	int on, r;

	if (json_unpack_ex(req, &jerr, JSON_STRICT, "{s:s, s:s, s:b}", "op", &op, "sandbox", &name,
			   "on", &on) < 0)
		return control_refuse(d, ls, token, lineno, jerr.text);
	/* Switching the recorder on sees more; off sees less, which is root's to decide. */
	if (!on && !control_require_root(d, ls, token, lineno, "switch the syscall recorder off"))
		return;
	if (!(sb = registry_find(d->registry, name)))
		return control_refuse(d, ls, token, lineno, "unknown sandbox");
	if (on && strcmp(sb->state, "running") != 0)
		return control_refuse(d, ls, token, lineno, "the sandbox is not running");
	if ((r = syscall_events_set(d->syscalls, sb, on)) < 0)
		return control_refuse(d, ls, token, lineno,
				      "the syscall recorder could not be started");
	control_reply_json(ls, token,
			   json_pack("{s:b, s:s, s:b}", "ok", 1, "sandbox", name, "on", on));
}

static const struct {
	const char *name;
	control_fn fn;
} dispatch[] = {
	{ "trace-syscalls", op_trace_syscalls },
	{ "ping", op_ping },
	{ "stats", op_stats },
	{ "register", op_register },
	{ "watch", control_op_watch },
	{ "exec-scope", control_op_exec_scope },
	{ "freeze", control_op_action },
	{ "thaw", control_op_action },
	{ "kill", control_op_action },
	{ "quarantine", control_op_action },
	{ "unwatch", control_op_unwatch },
	{ "event", op_event },
};

static void control_line(struct lineserver *ls, uint64_t token, uint64_t lineno, const char *line,
			 size_t len, void *data)
{
	struct daemon *d = data;
	json_error_t jerr;
	const char *op;
	json_t *req;

	if (!line)
		return control_refuse(d, ls, token, lineno, "request too long");
	req = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!req || !json_is_object(req)) {
		json_decref(req);
		return control_refuse(d, ls, token, lineno, "a request must be one JSON object");
	}
	op = json_string_value(json_object_get(req, "op"));
	for (size_t i = 0; op && i < ARRAY_SIZE(dispatch); i++) {
		if (strcmp(op, dispatch[i].name) == 0) {
			dispatch[i].fn(d, ls, token, lineno, req);
			json_decref(req);
			return;
		}
	}
	json_decref(req);
	control_refuse(d, ls, token, lineno, "unknown op");
}

static char *control_reply(const struct writer_completion *c, uint64_t lineno, void *data)
{
	if (c->result >= 0 && c->msg)
		return strdup(c->msg);
	return daemon_error_reply(lineno, "store", c->msg ? c->msg : "store error");
}

const struct lineserver_ops control_ops = {
	.line = control_line,
	.reply = control_reply,
};
