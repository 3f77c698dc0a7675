/*
 * The HTTP API's handlers (docs/api.md), in the unprivileged child: reads go to the store, opened
 * read-only; the three actions and trace ingest go to the core over the channel. http-routes.c
 * routes each request to one of them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>
#include <strings.h>

#include "http-api.h"
#include "http-child.h"
#include "store/incident.h"
#include "log.h"
#include "store/otlp.h"
#include "policy/policy.h"
#include "detectors/replay.h"
#include "store/store-bundle.h"
#include "macro.h"
#include "store/store.h"
#include "strbuf.h"
#include "timeutil.h"

#define TRACE_LINES_MAX 10000

static enum MHD_Result respond(struct http_child *hc, struct MHD_Connection *conn, unsigned status,
			       const char *type, char *body, size_t len)
{
	struct MHD_Response *resp =
		MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	const char *origin;
	enum MHD_Result r;

	if (!resp) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", type);
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	if (status == 401)
		MHD_add_response_header(resp, "WWW-Authenticate", "Bearer realm=\"firebreak\"");
	if (status == 405)
		MHD_add_response_header(resp, "Allow", "GET, POST");
	/* CORS only for the one origin configured, and only when that origin asks. */
	origin = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin");
	if (hc->cfg->http_cors_origin[0] && origin &&
	    strcmp(origin, hc->cfg->http_cors_origin) == 0) {
		MHD_add_response_header(resp, "Access-Control-Allow-Origin", origin);
		MHD_add_response_header(resp, "Vary", "Origin");
	}
	if (status / 100 <= 5)
		atomic_fetch_add(&hc->by_code[status / 100], 1);
	r = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return r;
}

static enum MHD_Result respond_json(struct http_child *hc, struct MHD_Connection *conn,
				    unsigned status, json_t *obj)
{
	char *text = obj ? json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;

	json_decref(obj);
	if (!text)
		return MHD_NO;
	return respond(hc, conn, status, "application/json", text, strlen(text));
}

enum MHD_Result http_fail(struct http_child *hc, struct MHD_Connection *conn, unsigned status,
			  const char *msg)
{
	return respond_json(hc, conn, status, json_pack("{s:b, s:s}", "ok", 0, "error", msg));
}

enum auth http_authorize(struct http_child *hc, struct MHD_Connection *conn)
{
	const char *h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Authorization");
	size_t n;

	if (!h || strncasecmp(h, "Bearer ", 7) != 0)
		return AUTH_NONE;
	h += 7;
	n = strlen(h);
	if (http_token_equal(hc->action_token, h, n))
		return AUTH_ACTION;
	if (http_token_equal(hc->read_token, h, n))
		return AUTH_READ;
	return AUTH_NONE;
}

static const char *conn_arg(void *ctx, enum http_arg_kind kind, const char *key)
{
	return MHD_lookup_connection_value(
		ctx, kind == HTTP_ARG_HEADER ? MHD_HEADER_KIND : MHD_GET_ARGUMENT_KIND, key);
}

struct http_args http_conn_args(struct MHD_Connection *conn)
{
	return (struct http_args){ .get = conn_arg, .ctx = conn };
}

static int sandbox_json_cb(const struct store_sandbox *sb, void *data)
{
	json_array_append_new(data, json_pack("{s:s, s:I, s:s, s:I, s:I, s:s, s:s, s:I, s:I}",
					      "name", sb->name, "id", (json_int_t)sb->id, "state",
					      sb->state, "created_ts", (json_int_t)sb->created_ts,
					      "updated_ts", (json_int_t)sb->updated_ts, "cgroup",
					      sb->cgroup, "policy_hash", sb->policy_hash, "steps",
					      (json_int_t)sb->steps, "last_event_ts",
					      (json_int_t)sb->last_ts));
	return 0;
}

static json_t *incident_json(const struct store_incident *inc)
{
	return json_pack("{s:I, s:s, s:I, s:I, s:I, s:s, s:s, s:s, s:I}", "id", (json_int_t)inc->id,
			 "sandbox", inc->sandbox, "opened_ts", (json_int_t)inc->opened_ts,
			 "start_ts", (json_int_t)inc->start_ts, "end_ts", (json_int_t)inc->end_ts,
			 "severity", inc->severity, "state", inc->state, "summary", inc->summary,
			 "detections", (json_int_t)inc->detections);
}

struct incidents_of {
	json_t *arr;
	const char *sandbox; /* NULL: all */
};

static int incident_cb(const struct store_incident *inc, void *data)
{
	struct incidents_of *io = data;

	if (!io->sandbox || strcmp(io->sandbox, inc->sandbox) == 0)
		json_array_append_new(io->arr, incident_json(inc));
	return 0;
}

static int latest_cb(const struct event *ev, void *data)
{
	json_t **ret = data;

	*ret = event_to_json(ev);
	return 1;
}

static enum MHD_Result get_sandboxes(struct http_child *hc, struct MHD_Connection *conn)
{
	struct store *s = store_pool_get(&hc->pool);
	json_t *arr = json_array();
	int r = store_sandbox_list(s, sandbox_json_cb, arr);

	store_pool_put(&hc->pool, s);
	if (r < 0) {
		json_decref(arr);
		return http_fail(hc, conn, 500, "the store could not be read");
	}
	return respond_json(hc, conn, 200, json_pack("{s:o}", "sandboxes", arr));
}

static enum MHD_Result get_sandbox(struct http_child *hc, struct MHD_Connection *conn,
				   const char *name)
{
	struct store *s = store_pool_get(&hc->pool);
	struct incidents_of io = { .arr = json_array(), .sandbox = name };
	struct store_sandbox sb;
	json_t *latest = NULL, *o;
	int r = store_sandbox_find(s, name, &sb);

	if (r == 0) {
		store_event_latest(s, sb.id, "cgroup.stats", latest_cb, &latest);
		store_incident_list(s, 0, incident_cb, &io);
	}
	store_pool_put(&hc->pool, s);
	if (r < 0) {
		json_decref(io.arr);
		return r == -ENOENT ? http_fail(hc, conn, 404, "no such sandbox")
				    : http_fail(hc, conn, 500, "the store could not be read");
	}
	json_t *one = json_array();

	sandbox_json_cb(&sb, one);
	o = json_incref(json_array_get(one, 0));
	json_decref(one);
	return respond_json(hc, conn, 200,
			    json_pack("{s:o, s:o, s:o}", "sandbox", o, "resources",
				      latest ? latest : json_null(), "incidents", io.arr));
}

/* A timeline page, written straight from the events' JSON text. */
struct page {
	struct strbuf b;
	int64_t n, limit;
	int64_t last_ts, last_id;
	int more;
};

static int page_cb(const struct event *ev, void *data)
{
	struct page *p = data;
	char *text;

	if (p->n == p->limit) {
		p->more = 1;
		return 1;
	}
	if (event_to_text(ev, &text) < 0)
		return -ENOMEM;
	if (p->n)
		strbuf_add(&p->b, ",", 1);
	strbuf_str(&p->b, text);
	free(text);
	p->n++;
	p->last_ts = ev->ts;
	p->last_id = ev->id;
	return 0;
}

/* ?since=NS&until=NS&limit=N&cursor=TS.ID: events in (ts, id) order, a page at a time. */
static enum MHD_Result get_timeline(struct http_child *hc, struct MHD_Connection *conn,
				    const char *name)
{
	struct store_timeline_query q = { .step_lo = EVENT_STEP_NONE, .step_hi = EVENT_STEP_NONE };
	struct http_args args = http_conn_args(conn);
	struct page p = { 0 };
	struct store_sandbox sb;
	struct store *s;
	const char *bad;
	char tail[160];
	int r;

	if ((bad = http_timeline_args(&args, &q, &p.limit)))
		return http_fail(hc, conn, 400, bad);
	q.limit = p.limit + 1; /* one more, to know whether there is a next page */
	s = store_pool_get(&hc->pool);
	r = store_sandbox_find(s, name, &sb);
	if (r == 0) {
		q.sandbox_id = sb.id;
		/* A valid name needs no escaping ([A-Za-z0-9_.-]). */
		strbuf_str(&p.b, "{\"sandbox\":\"");
		strbuf_str(&p.b, name);
		strbuf_str(&p.b, "\",\"events\":[");
		r = store_timeline(s, &q, page_cb, &p);
	}
	store_pool_put(&hc->pool, s);
	if (r == -ENOENT) {
		free(p.b.p);
		return http_fail(hc, conn, 404, "no such sandbox");
	}
	if (r < 0 || p.b.oom) {
		free(p.b.p);
		return http_fail(hc, conn, 500, "the store could not be read");
	}
	if (p.more)
		snprintf(tail, sizeof(tail),
			 "],\"count\":%" PRId64 ",\"next_cursor\":\"%" PRId64 ".%" PRId64 "\"}",
			 p.n, p.last_ts, p.last_id);
	else
		snprintf(tail, sizeof(tail), "],\"count\":%" PRId64 ",\"next_cursor\":null}", p.n);
	strbuf_str(&p.b, tail);
	if (p.b.oom) {
		free(p.b.p);
		return http_fail(hc, conn, 500, "out of memory");
	}
	return respond(hc, conn, 200, "application/json", p.b.p, p.b.len);
}

static enum MHD_Result get_incidents(struct http_child *hc, struct MHD_Connection *conn)
{
	struct store *s = store_pool_get(&hc->pool);
	struct incidents_of io = { .arr = json_array() };
	int r = store_incident_list(s, 0, incident_cb, &io);

	store_pool_put(&hc->pool, s);
	if (r < 0) {
		json_decref(io.arr);
		return http_fail(hc, conn, 500, "the store could not be read");
	}
	return respond_json(hc, conn, 200, json_pack("{s:o}", "incidents", io.arr));
}

static int one_incident_cb(const struct store_incident *inc, void *data)
{
	*(struct store_incident *)data = *inc;
	return 1;
}

static int detection_cb(const struct store_detection_row *det, void *data)
{
	json_t *ids = det->event_ids ? json_loads(det->event_ids, 0, NULL) : NULL;

	json_array_append_new(
		data,
		json_pack("{s:I, s:I, s:o, s:s, s:s, s:s, s:o, s:s}", "id", (json_int_t)det->id,
			  "ts", (json_int_t)det->ts, "step",
			  det->step == EVENT_STEP_NONE ? json_null() : json_integer(det->step),
			  "rule", det->rule, "severity", det->severity, "policy_hash",
			  det->policy_hash, "event_ids", ids ? ids : json_array(), "reason",
			  det->reason ? det->reason : ""));
	return 0;
}

static json_t *step_or_null(int64_t step)
{
	return step == EVENT_STEP_NONE ? json_null() : json_integer(step);
}

static enum MHD_Result get_incident(struct http_child *hc, struct MHD_Connection *conn, int64_t id)
{
	struct store *s = store_pool_get(&hc->pool);
	struct store_incident inc = { 0 };
	struct incident_story story;
	json_t *dets = json_array();
	int r = store_incident_list(s, id, one_incident_cb, &inc);

	if (r >= 0 && inc.id == id) {
		r = incident_story(s, &inc, &story);
		if (r >= 0)
			r = store_incident_detections(s, id, detection_cb, dets);
	}
	store_pool_put(&hc->pool, s);
	if (r >= 0 && inc.id != id) {
		json_decref(dets);
		return http_fail(hc, conn, 404, "no such incident");
	}
	if (r < 0) {
		json_decref(dets);
		return http_fail(hc, conn, 500, "the store could not be read");
	}
	return respond_json(
		hc, conn, 200,
		json_pack("{s:o, s:{s:s, s:o, s:o, s:o, s:o, s:o, s:s, s:I}, s:o, s:{s:I, s:o}}",
			  "incident", incident_json(&inc), "story", "summary", story.text,
			  "coerced_step", step_or_null(story.coerced_step), "cmd_step",
			  step_or_null(story.cmd_step), "denied_step",
			  step_or_null(story.denied_step), "flagged_step",
			  step_or_null(story.flagged_step), "action_step",
			  step_or_null(story.action_step), "action", story.action, "since",
			  (json_int_t)story.since, "detections", dets, "timeline", "since",
			  (json_int_t)story.since, "until",
			  inc.end_ts ? json_integer(inc.end_ts + 1) : json_null()));
}

/* The incident (id) or the sandbox's whole history (name) as one OTLP/HTTP JSON trace. */
static enum MHD_Result get_otlp(struct http_child *hc, struct MHD_Connection *conn,
				const char *name, int64_t id)
{
	struct store *s = store_pool_get(&hc->pool);
	struct otlp_window w = { .incident_id = id };
	struct store_incident inc = { 0 };
	struct incident_story story;
	struct store_sandbox sb;
	json_t *trace = NULL;
	int r = 0;

	if (id) {
		r = store_incident_list(s, id, one_incident_cb, &inc);
		if (r >= 0 && inc.id != id)
			r = -ENOENT;
		if (r >= 0 && (r = incident_story(s, &inc, &story)) >= 0) {
			w.since = story.since;
			w.until = inc.end_ts ? inc.end_ts + 1 : 0;
		}
		name = inc.sandbox;
	}
	if (r >= 0)
		r = store_sandbox_find(s, name, &sb);
	if (r >= 0) {
		w.sb = &sb;
		r = otlp_trace(s, &w, &trace);
	}
	store_pool_put(&hc->pool, s);
	if (r == -ENOENT)
		return http_fail(hc, conn, 404, id ? "no such incident" : "no such sandbox");
	if (r < 0)
		return http_fail(hc, conn, 500, "the store could not be read");
	return respond_json(hc, conn, 200, trace);
}

/* The incident (its sandbox's history to its end) as a bundle: a SQLite file to download. */
static enum MHD_Result get_bundle(struct http_child *hc, struct MHD_Connection *conn, int64_t id)
{
	struct store *s = store_pool_get(&hc->pool);
	struct store_incident inc = { 0 };
	struct store_bundle_spec spec = { .incident_id = id, .made_ts = time_now_ns() };
	struct store_sandbox sb;
	unsigned char *bytes = NULL;
	struct MHD_Response *resp;
	char *copy, disp[96];
	size_t len = 0;
	int r = store_incident_list(s, id, one_incident_cb, &inc);

	if (r >= 0 && inc.id != id)
		r = -ENOENT;
	if (r >= 0 && (r = store_sandbox_find(s, inc.sandbox, &sb)) >= 0) {
		spec.sandbox_id = sb.id;
		spec.until = inc.end_ts;
		r = store_bundle_make(s, &spec, &bytes, &len);
	}
	store_pool_put(&hc->pool, s);
	if (r == -ENOENT)
		return http_fail(hc, conn, 404, "no such incident");
	if (r < 0 || !(copy = malloc(len))) {
		sqlite3_free(bytes);
		return http_fail(hc, conn, 500, "the bundle could not be made");
	}
	memcpy(copy, bytes, len);
	sqlite3_free(bytes);
	if (!(resp = MHD_create_response_from_buffer(len, copy, MHD_RESPMEM_MUST_FREE))) {
		free(copy);
		return MHD_NO;
	}
	snprintf(disp, sizeof(disp), "attachment; filename=\"firebreak-incident-%lld.db\"",
		 (long long)id);
	MHD_add_response_header(resp, "Content-Type", "application/vnd.sqlite3");
	MHD_add_response_header(resp, "Content-Disposition", disp);
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	atomic_fetch_add(&hc->by_code[2], 1);
	enum MHD_Result mr = MHD_queue_response(conn, 200, resp);

	MHD_destroy_response(resp);
	return mr;
}

/* POST .../incidents/{id}/replay: the incident's sandbox replayed, with the recorded policy (an
 * empty body) or the policy in the body; the comparison (detectors/replay.c). Reads only. */
static enum MHD_Result post_replay(struct http_child *hc, struct MHD_Connection *conn, int64_t id,
				   const struct request *rq)
{
	struct store *s;
	struct store_incident inc = { 0 };
	struct store_sandbox sb;
	struct replay_opts o = { 0 };
	struct replay_result res;
	struct policy *p = NULL;
	char err[256];
	json_t *out;
	int r;

	if (rq->len &&
	    policy_load_text("the policy sent", rq->body, rq->len, &p, err, sizeof(err)) < 0)
		return http_fail(hc, conn, 400, err);
	s = store_pool_get(&hc->pool);
	r = store_incident_list(s, id, one_incident_cb, &inc);
	if (r >= 0 && inc.id != id)
		r = -ENOENT;
	if (r >= 0 && (r = store_sandbox_find(s, inc.sandbox, &sb)) >= 0) {
		o.policy = p;
		r = replay_sandbox(s, &sb, &o, &res);
	}
	store_pool_put(&hc->pool, s);
	if (r < 0) {
		policy_free(p);
		return r == -ENOENT ? http_fail(hc, conn, 404, "no such incident")
				    : http_fail(hc, conn, 500, "the replay failed");
	}
	out = replay_json(&res, p != NULL);
	if (out) {
		json_object_set_new(out, "policy", json_string(p ? policy_hash(p) : "recorded"));
		json_object_set_new(out, "missing_policy", json_boolean(res.missing_policy));
	}
	replay_result_free(&res);
	policy_free(p);
	return respond_json(hc, conn, 200, out);
}

/* The core's reply to an action, with its status: 404 for no such sandbox, 409 for a state the
 * action does not apply to. */
static enum MHD_Result post_action(struct http_child *hc, struct MHD_Connection *conn,
				   const char *name, const char *action, const struct request *rq)
{
	json_t *body = NULL, *payload, *reply;
	const char *reason = NULL, *err;
	char *text, *answer;
	size_t len;
	int r;

	if (rq->len) {
		body = json_loadb(rq->body, rq->len, JSON_REJECT_DUPLICATES, NULL);
		if (!json_is_object(body) || json_unpack(body, "{s?:s !}", "reason", &reason) < 0) {
			json_decref(body);
			return http_fail(hc, conn, 400,
					 "the body is {\"reason\": TEXT} or nothing");
		}
		/* The store keeps 255 bytes of a reason; the channel's cap fits that, escaped. */
		if (reason && strlen(reason) > 255) {
			json_decref(body);
			return http_fail(hc, conn, 400, "reason: 255 bytes at most");
		}
	}
	payload = json_pack("{s:s}", "sandbox", name);
	if (payload && reason)
		json_object_set_new(payload, "reason", json_string(reason));
	json_decref(body);
	text = payload ? json_dumps(payload, JSON_COMPACT) : NULL;
	json_decref(payload);
	if (!text)
		return http_fail(hc, conn, 500, "out of memory");
	len = strlen(text);
	r = channel_call(hc->chan, action, (const char *const *)&text, &len, 1, &answer);
	free(text);
	if (r < 0 || !answer) {
		free(answer);
		return r == -ETIMEDOUT
			       ? http_fail(hc, conn, 504, "the monitor did not answer in time")
			       : http_fail(hc, conn, 503, "the monitor is not reachable");
	}
	reply = json_loads(answer, 0, NULL);
	free(answer);
	if (!json_is_object(reply))
		return json_decref(reply),
		       http_fail(hc, conn, 502, "the monitor's reply did not parse");
	if (json_is_true(json_object_get(reply, "ok")))
		return respond_json(hc, conn, 200, reply);
	err = json_string_value(json_object_get(reply, "error"));
	json_object_del(reply, "line");
	json_object_del(reply, "class");
	return respond_json(hc, conn,
			    err && strcmp(err, "unknown sandbox") == 0 ? 404
			    : err && strncmp(err, "reason", 6) == 0    ? 400
								       : 409,
			    reply);
}

/* A trace body split into its lines for the core (at most TRACE_LINES_MAX), and the replies. */
struct trace_lines {
	const char **lines;
	size_t *lens;
	size_t *linenos; /* each line's number in the body, blank ones counted */
	char **replies;
	size_t n;
};

static int trace_lines_alloc(struct trace_lines *t)
{
	t->lines = calloc(TRACE_LINES_MAX, sizeof(*t->lines));
	t->lens = calloc(TRACE_LINES_MAX, sizeof(*t->lens));
	t->linenos = calloc(TRACE_LINES_MAX, sizeof(*t->linenos));
	t->replies = calloc(TRACE_LINES_MAX, sizeof(*t->replies));
	return t->lines && t->lens && t->linenos && t->replies ? 0 : -ENOMEM;
}

static void trace_lines_free(struct trace_lines *t)
{
	for (size_t i = 0; t->replies && i < t->n; i++)
		free(t->replies[i]);
	free(t->lines);
	free(t->lens);
	free(t->linenos);
	free(t->replies);
}

/* Splits body at newlines (CRLF too), leaving out blank lines; the HTTP status for it. */
static unsigned trace_lines_split(struct trace_lines *t, const char *body, size_t len)
{
	size_t lineno = 0;

	for (size_t off = 0; off < len;) {
		const char *p = body + off, *nl = memchr(p, '\n', len - off);
		size_t l = nl ? (size_t)(nl - p) : len - off;

		off += l + (nl ? 1 : 0);
		lineno++;
		if (l && p[l - 1] == '\r')
			l--;
		if (l == 0)
			continue;
		if (t->n == TRACE_LINES_MAX)
			return 413;
		t->lines[t->n] = p;
		t->lens[t->n] = l;
		t->linenos[t->n++] = lineno;
	}
	return t->n == 0 ? 400 : 200;
}

/*
 * Appends line i's reply to out, numbered as the client's body numbers it; a line the core did
 * not answer (r: the channel's error) gets an "unavailable" reply of its own.
 */
static void trace_reply(const struct trace_lines *t, size_t i, int r, struct strbuf *out)
{
	json_t *rep = t->replies[i] ? json_loads(t->replies[i], 0, NULL) : NULL;
	char *text;

	/* The core numbers lines on its channel; the client knows its body's. */
	if (json_is_object(rep))
		json_object_set_new(rep, "line", json_integer((json_int_t)t->linenos[i]));
	else {
		json_decref(rep);
		rep = json_pack("{s:b, s:I, s:s, s:s}", "ok", 0, "line", (json_int_t)t->linenos[i],
				"error",
				r == -ETIMEDOUT ? "the monitor did not answer in time"
						: "the monitor is not reachable",
				"class", "unavailable");
	}
	text = rep ? json_dumps(rep, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	json_decref(rep);
	strbuf_str(out, text ? text : "{\"ok\":false}");
	strbuf_add(out, "\n", 1);
	free(text);
}

/* The answer to a trace request: status (from splitting it), then r (the channel's result). */
static enum MHD_Result trace_answer(struct http_child *hc, struct MHD_Connection *conn,
				    unsigned status, int r, struct strbuf *out)
{
	if (status != 200) {
		free(out->p);
		return http_fail(hc, conn, status,
				 status == 413	 ? "at most 10000 trace lines per request"
				 : status == 400 ? "no trace lines in the body"
						 : "out of memory");
	}
	if (out->oom) {
		free(out->p);
		return http_fail(hc, conn, 500, "out of memory");
	}
	if (r < 0 && r != -ETIMEDOUT && r != -EPIPE) {
		free(out->p);
		return http_fail(hc, conn, 503, "the monitor is not reachable");
	}
	return respond(hc, conn, 200, "application/x-ndjson", out->p, out->len);
}

/* Trace lines in the body, one per line, judged by the core as on the trace socket; the reply has
 * one line per trace line, numbered by its line in the body. */
static enum MHD_Result post_trace(struct http_child *hc, struct MHD_Connection *conn,
				  const struct request *rq)
{
	struct trace_lines t = { 0 };
	struct strbuf out = { 0 };
	unsigned status = 500;
	int r = 0;

	if (trace_lines_alloc(&t) == 0)
		status = trace_lines_split(&t, rq->body, rq->len);
	if (status == 200) {
		r = channel_call(hc->chan, "trace", t.lines, t.lens, t.n, t.replies);
		for (size_t i = 0; i < t.n; i++)
			trace_reply(&t, i, r, &out);
	}
	trace_lines_free(&t);
	return trace_answer(hc, conn, status, r, &out);
}

static enum MHD_Result get_healthz(struct http_child *hc, struct MHD_Connection *conn)
{
	const char *none = "";
	size_t zero = 0;
	char *reply = NULL;
	int r = channel_call(hc->chan, "ping", &none, &zero, 1, &reply);

	free(reply);
	if (r < 0)
		return http_fail(hc, conn, 503, "the monitor is not reachable");
	return respond_json(hc, conn, 200, json_pack("{s:b}", "ok", 1));
}

static enum MHD_Result get_metrics(struct http_child *hc, struct MHD_Connection *conn)
{
	unsigned status = 500;
	char *text = http_metrics_text(hc, &status);

	if (!text)
		return http_fail(hc, conn, status, "the monitor is not reachable");
	return respond(hc, conn, 200, "text/plain; version=0.0.4; charset=utf-8", text,
		       strlen(text));
}

/* A file of the web page: no token (it holds no data), a strict content security policy. */
enum MHD_Result http_get_web(struct http_child *hc, struct MHD_Connection *conn,
			     const struct web_file *f)
{
	struct MHD_Response *resp =
		MHD_create_response_from_buffer(f->len, f->data, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result r;

	if (!resp)
		return MHD_NO;
	MHD_add_response_header(resp, "Content-Type", f->type);
	MHD_add_response_header(resp, "Cache-Control", "no-cache");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "Content-Security-Policy",
				"default-src 'none'; script-src 'self'; style-src 'self'; "
				"connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'");
	atomic_fetch_add(&hc->by_code[2], 1);
	r = MHD_queue_response(conn, 200, resp);
	MHD_destroy_response(resp);
	return r;
}

/* The routes' handlers (http-api.h): what http-routes.c dispatches to. */
enum MHD_Result http_route_healthz(struct http_child *hc, struct MHD_Connection *conn,
				   const struct match *m, const struct request *rq)
{
	return get_healthz(hc, conn);
}

enum MHD_Result http_route_metrics(struct http_child *hc, struct MHD_Connection *conn,
				   const struct match *m, const struct request *rq)
{
	return get_metrics(hc, conn);
}

enum MHD_Result http_route_sandboxes(struct http_child *hc, struct MHD_Connection *conn,
				     const struct match *m, const struct request *rq)
{
	return get_sandboxes(hc, conn);
}

enum MHD_Result http_route_sandbox(struct http_child *hc, struct MHD_Connection *conn,
				   const struct match *m, const struct request *rq)
{
	return get_sandbox(hc, conn, m->name);
}

enum MHD_Result http_route_timeline(struct http_child *hc, struct MHD_Connection *conn,
				    const struct match *m, const struct request *rq)
{
	return get_timeline(hc, conn, m->name);
}

enum MHD_Result http_route_sandbox_otlp(struct http_child *hc, struct MHD_Connection *conn,
					const struct match *m, const struct request *rq)
{
	return get_otlp(hc, conn, m->name, 0);
}

enum MHD_Result http_route_action(struct http_child *hc, struct MHD_Connection *conn,
				  const struct match *m, const struct request *rq)
{
	return post_action(hc, conn, m->name, m->action, rq);
}

enum MHD_Result http_route_incidents(struct http_child *hc, struct MHD_Connection *conn,
				     const struct match *m, const struct request *rq)
{
	return get_incidents(hc, conn);
}

enum MHD_Result http_route_incident(struct http_child *hc, struct MHD_Connection *conn,
				    const struct match *m, const struct request *rq)
{
	return get_incident(hc, conn, m->id);
}

enum MHD_Result http_route_incident_otlp(struct http_child *hc, struct MHD_Connection *conn,
					 const struct match *m, const struct request *rq)
{
	return get_otlp(hc, conn, NULL, m->id);
}

enum MHD_Result http_route_bundle(struct http_child *hc, struct MHD_Connection *conn,
				  const struct match *m, const struct request *rq)
{
	return get_bundle(hc, conn, m->id);
}

enum MHD_Result http_route_replay(struct http_child *hc, struct MHD_Connection *conn,
				  const struct match *m, const struct request *rq)
{
	return post_replay(hc, conn, m->id, rq);
}

enum MHD_Result http_route_trace(struct http_child *hc, struct MHD_Connection *conn,
				 const struct match *m, const struct request *rq)
{
	return post_trace(hc, conn, rq);
}

enum MHD_Result http_route_stream(struct http_child *hc, struct MHD_Connection *conn,
				  const struct match *m, const struct request *rq)
{
	const char *err;
	struct MHD_Response *resp = sse_response(hc, conn, &err);
	enum MHD_Result r;

	if (!resp)
		return http_fail(hc, conn, err ? 400 : 500, err ? err : "out of memory");
	atomic_fetch_add(&hc->by_code[2], 1);
	r = MHD_queue_response(conn, 200, resp);
	MHD_destroy_response(resp);
	return r;
}
