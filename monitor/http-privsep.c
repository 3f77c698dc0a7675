/*
 * The core's end of the HTTP child's channel: one request per line, "TYPE PAYLOAD", looked up in
 * the dispatch table below, each type with its own payload cap. It is the whole of what the
 * network-facing process can make the privileged one do; anything else is refused, counted
 * (http_refused) and logged. Replies go back in order, one line per request (docs/api.md).
 */
#include <stdio.h>
#include <string.h>

#include "bounds.h"
#include "control.h"
#include "daemon.h"
#include "http.h"
#include "macro.h"
#include "metrics.h"

typedef void (*privsep_fn)(struct daemon *d, struct lineserver *ls, uint64_t token, uint64_t lineno,
			   const char *type, const char *payload, size_t len);

static void refuse(struct daemon *d, struct lineserver *ls, uint64_t token, uint64_t lineno,
		   const char *msg)
{
	_cleanup_free_ char *reply = daemon_error_reply(lineno, "request", msg);

	if (http_count_refused(d))
		log_warn("http channel: request %llu refused: %s", (unsigned long long)lineno, msg);
	if (!reply || lineserver_reply(ls, token, reply) < 0)
		log_error("http channel: could not queue a refusal");
}

static void op_ping(struct daemon *d, struct lineserver *ls, uint64_t token, uint64_t lineno,
		    const char *type, const char *payload, size_t len)
{
	control_reply_json(ls, token, json_pack("{s:b}", "ok", 1));
}

static void op_metrics(struct daemon *d, struct lineserver *ls, uint64_t token, uint64_t lineno,
		       const char *type, const char *payload, size_t len)
{
	json_t *m = metrics_snapshot(d);

	if (!m)
		return refuse(d, ls, token, lineno, "out of memory");
	control_reply_json(ls, token, json_pack("{s:b, s:o}", "ok", 1, "metrics", m));
}

/* freeze, thaw, kill: {"sandbox":NAME[,"reason":TEXT]}, done as the control op is, by "http". */
static void op_action(struct daemon *d, struct lineserver *ls, uint64_t token, uint64_t lineno,
		      const char *type, const char *payload, size_t len)
{
	json_t *req = json_loadb(payload, len, JSON_REJECT_DUPLICATES, NULL);

	if (!json_is_object(req) || json_object_get(req, "op")) {
		json_decref(req);
		return refuse(d, ls, token, lineno, "an action needs {\"sandbox\":...}");
	}
	json_object_set_new(req, "op", json_string(type));
	control_action(d, ls, token, lineno, req, "http");
	json_decref(req);
}

/* One trace line, exactly as on the trace socket (trace-ingest.c judges it). */
static void op_trace(struct daemon *d, struct lineserver *ls, uint64_t token, uint64_t lineno,
		     const char *type, const char *payload, size_t len)
{
	trace_ingest_ops.line(ls, token, lineno, payload, len, d);
}

static const struct {
	const char *type;
	size_t payload_max;
	privsep_fn fn;
} dispatch[] = {
	{ "ping", 0, op_ping },
	{ "metrics", 0, op_metrics },
	/* {"sandbox": 63 bytes, "reason": 255 bytes, each of which may escape to 6}. */
	{ "freeze", 2048, op_action },
	{ "thaw", 2048, op_action },
	{ "kill", 2048, op_action },
	{ "trace", FB_TRACE_LINE_MAX, op_trace },
};

static void privsep_line(struct lineserver *ls, uint64_t token, uint64_t lineno, const char *line,
			 size_t len, void *data)
{
	struct daemon *d = data;
	const char *sp;
	size_t tlen;

	if (!line)
		return refuse(d, ls, token, lineno, "request too long");
	sp = memchr(line, ' ', len);
	tlen = sp ? (size_t)(sp - line) : len;
	for (size_t i = 0; i < ARRAY_SIZE(dispatch); i++) {
		size_t plen = sp ? len - tlen - 1 : 0;

		if (strlen(dispatch[i].type) != tlen || memcmp(line, dispatch[i].type, tlen) != 0)
			continue;
		if (plen > dispatch[i].payload_max || (dispatch[i].payload_max > 0 && !sp))
			return refuse(d, ls, token, lineno, "payload over its type's cap, or none");
		return dispatch[i].fn(d, ls, token, lineno, dispatch[i].type, sp ? sp + 1 : "",
				      plen);
	}
	refuse(d, ls, token, lineno, "unknown request type");
}

/* Replies of every kind: ready-made ones, actions' records, and trace lines' results. */
static char *privsep_reply(const struct writer_completion *c, uint64_t lineno, void *data)
{
	return trace_ingest_ops.reply(c, lineno, data);
}

const struct lineserver_ops http_privsep_ops = {
	.line = privsep_line,
	.reply = privsep_reply,
};
