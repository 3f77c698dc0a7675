/*
 * The control ops whose work is done by a domain module (actions, adopt, exec-scope): each
 * parses its request, calls the module, and formats the answer. The modules return results and
 * -errno; only the control socket's files write replies (docs/control.md).
 */
#include <errno.h>
#include <string.h>

#include "actions.h"
#include "adopt.h"
#include "control-internal.h"
#include "control.h"
#include "daemon.h"
#include "exec-scope.h"

/* A durable action's answer: its record, with ok (and error), and the sandbox. */
static void reply_action(struct lineserver *ls, uint64_t token, const struct store_sandbox *sb,
			 json_t *record)
{
	const char *result = json_string_value(json_object_get(record, "result"));
	int failed = result && strncmp(result, "failed", 6) == 0;

	if (!record) {
		log_error("control: an action's record could not be made: no answer");
		return;
	}
	json_object_set_new(record, "ok", json_boolean(!failed));
	if (failed)
		json_object_set_new(record, "error", json_string(result));
	json_object_set_new(record, "sandbox", json_string(sb->name));
	/* Queued after the action's record: the answer leaves once the record is durable. */
	control_reply_json(ls, token, record);
}

void control_action(struct daemon *d, struct lineserver *ls, uint64_t token, uint64_t lineno,
		    json_t *req, const char *requested_by)
{
	struct action_request rq = { .requested_by = requested_by };
	const char *op, *name, *reason = NULL;
	struct store_sandbox *sb;
	json_t *record = NULL;
	json_error_t jerr;
	int k;

	if (json_unpack_ex(req, &jerr, JSON_STRICT, "{s:s, s:s, s?:s}", "op", &op, "sandbox", &name,
			   "reason", &reason) < 0)
		return control_refuse(d, ls, token, lineno, jerr.text);
	if ((k = action_kind_from_name(op)) < 0)
		return control_refuse(d, ls, token, lineno, "unknown action");
	if (reason && strlen(reason) >= sizeof(((struct store_action *)0)->reason))
		return control_refuse(d, ls, token, lineno, "reason too long (255 bytes at most)");
	if (!(sb = registry_find(d->registry, name)))
		return control_refuse(d, ls, token, lineno, "unknown sandbox");
	if (!sb->cgroup[0] || !registry_live(sb))
		return control_refuse(d, ls, token, lineno, "the sandbox is not running or frozen");
	if (k == ACTION_THAW && strcmp(sb->state, "frozen") != 0)
		return control_refuse(d, ls, token, lineno, "the sandbox is not frozen");
	rq.kind = (enum action_kind)k;
	rq.reason = reason;
	action_apply(d, sb, &rq, &record);
	reply_action(ls, token, sb, record);
}

/* {"op":"freeze"|"thaw"|"kill"|"quarantine","sandbox":NAME[,"reason":TEXT]}: the kill switch. */
void control_op_action(struct daemon *d, struct lineserver *ls, uint64_t token, uint64_t lineno,
		       json_t *req)
{
	const char *op = json_string_value(json_object_get(req, "op"));

	/* Freeze, kill and quarantine only raise enforcement: the firebreak group may. A thaw
	 * lowers it: root here, or the HTTP API's action token (which reaches control_action). */
	if (op && strcmp(op, "thaw") == 0 &&
	    !control_require_root(d, ls, token, lineno, "thaw a sandbox"))
		return;
	control_action(d, ls, token, lineno, req, "cli");
}

/* {"op":"watch","sandbox":NAME,"cgroup":REL[,"policy_hash":H][,"policy":TEXT]} (root only). */
void control_op_watch(struct daemon *d, struct lineserver *ls, uint64_t token, uint64_t lineno,
		      json_t *req)
{
	struct adopt_watch w = { 0 };
	struct store_sandbox *sb;
	const char *op, *why;
	json_error_t jerr;
	char err[256];

	if (json_unpack_ex(req, &jerr, JSON_STRICT, "{s:s, s:s, s:s, s?:s, s?:s}", "op", &op,
			   "sandbox", &w.name, "cgroup", &w.cgroup, "policy_hash", &w.policy_hash,
			   "policy", &w.policy) < 0)
		return control_refuse(d, ls, token, lineno, jerr.text);
	/* It reaches outside firebreak/: only root may point the monitor (and its kill switch) at
	 * another cgroup, not every member of the firebreak group. */
	if (!control_require_root(d, ls, token, lineno, "adopt a cgroup"))
		return;
	if (adopt_watch(d, &w, &sb, &why, err, sizeof(err)) < 0)
		return control_refuse(d, ls, token, lineno, why);
	control_submit_sandbox(d, ls, token, lineno, sb);
}

/* {"op":"unwatch","sandbox":NAME} (root only): stops watching an adopted cgroup. */
void control_op_unwatch(struct daemon *d, struct lineserver *ls, uint64_t token, uint64_t lineno,
			json_t *req)
{
	struct store_sandbox *sb;
	const char *op, *name, *why;
	json_error_t jerr;

	if (json_unpack_ex(req, &jerr, JSON_STRICT, "{s:s, s:s}", "op", &op, "sandbox", &name) < 0)
		return control_refuse(d, ls, token, lineno, jerr.text);
	if (!control_require_root(d, ls, token, lineno, "release a cgroup"))
		return;
	if (adopt_unwatch(d, name, &sb, &why) < 0)
		return control_refuse(d, ls, token, lineno, why);
	control_submit_sandbox(d, ls, token, lineno, sb);
}

/* {"op":"exec-scope","sandbox":S,"step":N,"tool":T,"cgroup_id":C,"program":P} */
void control_op_exec_scope(struct daemon *d, struct lineserver *ls, uint64_t token, uint64_t lineno,
			   json_t *req)
{
	const char *op, *name, *tool, *program;
	struct store_sandbox *sb;
	json_int_t step, cgid;
	json_error_t jerr;
	size_t files = 0;
	int r;

	if (json_unpack_ex(req, &jerr, JSON_STRICT, "{s:s, s:s, s:I, s:s, s:I, s:s}", "op", &op,
			   "sandbox", &name, "step", &step, "tool", &tool, "cgroup_id", &cgid,
			   "program", &program) < 0)
		return control_refuse(d, ls, token, lineno, jerr.text);
	/* The enforcer's (root): a new scope for a step replaces, so lifts, the one it had. */
	if (!control_require_root(d, ls, token, lineno, "set a step's exec scope"))
		return;
	if (!(sb = registry_find(d->registry, name)) || !registry_live(sb))
		return control_refuse(d, ls, token, lineno, "unknown or stopped sandbox");
	r = exec_scope_confine(d, sb, step, tool, (uint64_t)cgid, program, &files);
	if (r == -ENOTCONN)
		return control_refuse(d, ls, token, lineno, "the process tracer is not running");
	if (r < 0)
		return control_refuse(d, ls, token, lineno, "the exec scope could not be set");
	if (r == 0)
		return control_reply_json(ls, token,
					  json_pack("{s:b, s:b}", "ok", 1, "confined", 0));
	control_reply_json(
		ls, token,
		json_pack("{s:b, s:b, s:I}", "ok", 1, "confined", 1, "files", (json_int_t)files));
}
