#include "otlp.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "macro.h"
#include "sha256.h"

struct span {
	char key[32]; /* the step, in decimal: the map's key */
	char trace_id[33], span_id[17], parent[17];
	char name[FB_TOOL_MAX + 32];
	int64_t start, end;
	json_t *attrs, *events;
	size_t n_events, dropped;
	int error;
	char call_id[FB_CALL_ID_MAX + 1];
};

struct build {
	struct store *s;
	const struct otlp_window *w;
	struct hashmap *by_step;
	struct span **spans; /* steps' spans, then verdicts' */
	size_t n, cap;
	struct span root;
	char trace_id[33];
	char policy_hash[80], policy_name[128];
	int err;
};

/* Lower-case hex of the first n bytes of sha256(text): stable ids from what they name. */
static void hex_id(const char *text, size_t n, char *out)
{
	uint8_t d[SHA256_DIGEST_SIZE];

	sha256_digest(text, strlen(text), d);
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

/* A W3C traceparent "00-<32 hex>-<16 hex>-<2 hex>": its trace and span ids; 0 if not one. */
static int traceparent(const char *tp, char trace_id[33], char span_id[17])
{
	if (strlen(tp) != 55 || strncmp(tp, "00-", 3) != 0 || tp[35] != '-' || tp[52] != '-' ||
	    strspn(tp + 3, "0123456789abcdef") != 32 || strspn(tp + 36, "0123456789abcdef") != 16)
		return 0;
	memcpy(trace_id, tp + 3, 32);
	trace_id[32] = '\0';
	memcpy(span_id, tp + 36, 16);
	span_id[16] = '\0';
	return strspn(trace_id, "0") != 32 && strspn(span_id, "0") != 16;
}

static json_t *attr(const char *key, json_t *value)
{
	return json_pack("{s:s, s:o}", "key", key, "value", value);
}

static json_t *str_value(const char *v)
{
	return json_pack("{s:s}", "stringValue", v ? v : "");
}

static json_t *int_value(int64_t v)
{
	char n[24];

	/* int64 as a string: the protobuf JSON mapping. */
	snprintf(n, sizeof(n), "%" PRId64, v);
	return json_pack("{s:s}", "intValue", n);
}

static json_t *any_value(json_t *v)
{
	if (json_is_string(v))
		return str_value(json_string_value(v));
	if (json_is_integer(v))
		return int_value(json_integer_value(v));
	if (json_is_real(v))
		return json_pack("{s:f}", "doubleValue", json_real_value(v));
	if (json_is_boolean(v))
		return json_pack("{s:b}", "boolValue", json_is_true(v));
	char *text = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	json_t *r = str_value(text ? text : "");

	free(text);
	return r;
}

static const char *time_text(int64_t ns, char buf[24])
{
	snprintf(buf, 24, "%" PRId64, ns);
	return buf;
}

static struct span *add_span(struct build *b)
{
	struct span *sp;

	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		struct span **n = realloc(b->spans, cap * sizeof(*n));

		if (!n)
			return NULL;
		b->spans = n;
		b->cap = cap;
	}
	if (!(sp = calloc(1, sizeof(*sp))))
		return NULL;
	sp->attrs = json_array();
	sp->events = json_array();
	b->spans[b->n++] = sp;
	return sp;
}

static int step_cb(const struct store_step *st, void *data)
{
	struct build *b = data;
	struct span *sp = add_span(b);
	char text[FB_NAME_MAX + FB_CALL_ID_MAX + 32];

	if (!sp)
		return -ENOMEM;
	snprintf(sp->key, sizeof(sp->key), "%" PRId64, st->step);
	strscpy(sp->call_id, sizeof(sp->call_id), st->call_id);
	snprintf(sp->name, sizeof(sp->name), "execute_tool %s", st->tool);
	snprintf(text, sizeof(text), "firebreak step %s/%s", b->w->sb->name, st->call_id);
	hex_id(text, 8, sp->span_id);
	/* The harness's own trace, if it said which: the tool call joins it there. */
	if (!traceparent(st->traceparent, sp->trace_id, sp->parent)) {
		strcpy(sp->trace_id, b->trace_id);
		strcpy(sp->parent, b->root.span_id);
	}
	sp->start = st->start_ts ? st->start_ts : st->end_ts;
	sp->end = st->end_ts ? st->end_ts : sp->start;
	sp->error = (st->exit_code != INT64_MIN && st->exit_code != 0) || st->error_type[0];
	json_array_append_new(sp->attrs, attr("gen_ai.operation.name", str_value("execute_tool")));
	json_array_append_new(sp->attrs, attr("gen_ai.tool.name", str_value(st->tool)));
	json_array_append_new(sp->attrs, attr("gen_ai.tool.call.id", str_value(st->call_id)));
	json_array_append_new(sp->attrs, attr("firebreak.step", int_value(st->step)));
	if (st->coerced)
		json_array_append_new(
			sp->attrs, attr("firebreak.coerced", json_pack("{s:b}", "boolValue", 1)));
	if (st->exit_code != INT64_MIN)
		json_array_append_new(sp->attrs,
				      attr("firebreak.exit_code", int_value(st->exit_code)));
	if (st->error_type[0])
		json_array_append_new(sp->attrs, attr("error.type", str_value(st->error_type)));
	return hashmap_get(b->by_step, sp->key) ? 0 : hashmap_put(b->by_step, sp->key, sp);
}

static struct span *span_of(struct build *b, int64_t step)
{
	char key[32];
	struct span *sp;

	if (step == EVENT_STEP_NONE)
		return &b->root;
	snprintf(key, sizeof(key), "%" PRId64, step);
	sp = hashmap_get(b->by_step, key);
	return sp ? sp : &b->root;
}

static void widen(struct span *sp, int64_t ts)
{
	if (!sp->start || ts < sp->start)
		sp->start = ts;
	if (ts > sp->end)
		sp->end = ts;
}

/* The policy's name, from the store's copy of it (policy ids are names; versions are hashes). */
static const char *policy_name(struct build *b, const char *hash)
{
	char *text = NULL;
	json_t *p;

	if (strcmp(hash, b->policy_hash) == 0)
		return b->policy_name;
	strscpy(b->policy_hash, sizeof(b->policy_hash), hash);
	strcpy(b->policy_name, "firebreak");
	if (hash[0] && store_policy_get(b->s, hash, &text) == 0 &&
	    (p = json_loads(text, 0, NULL))) {
		if (json_is_string(json_object_get(p, "name")))
			strscpy(b->policy_name, sizeof(b->policy_name),
				json_string_value(json_object_get(p, "name")));
		json_decref(p);
	}
	free(text);
	return b->policy_name;
}

/* A verdict: a guardrail span under the tool call it judged (its severity, rule, reason...). */
static int verdict_span(struct build *b, const struct event *ev, json_t *f)
{
	struct span *parent = span_of(b, ev->step), *sp = add_span(b);
	const char *action = json_string_value(json_object_get(f, "action"));
	const char *rule = json_string_value(json_object_get(f, "rule"));
	const char *hash = json_string_value(json_object_get(f, "policy_hash"));
	json_int_t det = json_integer_value(json_object_get(f, "detection_id"));
	json_int_t trigger = json_integer_value(json_object_get(f, "trigger_ts"));
	char text[64];

	if (!sp)
		return -ENOMEM;
	action = action ? action : "record";
	rule = rule ? rule : "?";
	hash = hash ? hash : "";
	snprintf(sp->name, sizeof(sp->name), "apply_guardrail %s", rule);
	snprintf(text, sizeof(text), "firebreak verdict %" PRId64 "/%lld", ev->id, (long long)det);
	hex_id(text, 8, sp->span_id);
	strcpy(sp->trace_id, parent->trace_id[0] ? parent->trace_id : b->trace_id);
	strcpy(sp->parent, parent->span_id);
	sp->start = trigger > 0 && trigger <= ev->ts ? trigger : ev->ts;
	sp->end = ev->ts;
	sp->error = 0;
	json_array_append_new(sp->attrs,
			      attr("gen_ai.operation.name", str_value("apply_guardrail")));
	json_array_append_new(
		sp->attrs,
		attr("gen_ai.security.decision.type",
		     str_value(strcmp(action, "kill") == 0 || strcmp(action, "freeze") == 0 ||
					       strcmp(action, "quarantine") == 0
				       ? "deny"
			       : strcmp(action, "alert") == 0 ? "warn"
							      : "audit")));
	json_array_append_new(sp->attrs,
			      attr("gen_ai.security.decision.reason",
				   str_value(json_string_value(json_object_get(f, "reason")))));
	json_array_append_new(sp->attrs, attr("gen_ai.security.decision.code", str_value(rule)));
	json_array_append_new(sp->attrs,
			      attr("gen_ai.security.target.type",
				   str_value(parent != &b->root ? "tool_call" : "sandbox")));
	json_array_append_new(
		sp->attrs, attr("gen_ai.security.target.id",
				str_value(parent != &b->root ? parent->call_id : b->w->sb->name)));
	json_array_append_new(sp->attrs,
			      attr("gen_ai.security.policy.id", str_value(policy_name(b, hash))));
	json_array_append_new(sp->attrs, attr("gen_ai.security.policy.version", str_value(hash)));
	json_array_append_new(sp->attrs,
			      attr("firebreak.severity",
				   str_value(json_string_value(json_object_get(f, "severity")))));
	json_array_append_new(sp->attrs, attr("firebreak.action", str_value(action)));
	json_array_append_new(sp->attrs, attr("firebreak.detection.id", int_value(det)));
	json_array_append_new(
		sp->attrs, attr("firebreak.event_ids", any_value(json_object_get(f, "event_ids"))));
	widen(parent, ev->ts);
	return 0;
}

/* Any other event: a span event of its tool call (or of the sandbox's root span). */
static int event_cb(const struct event *ev, void *data)
{
	struct build *b = data;
	struct span *sp = span_of(b, ev->step);
	json_t *f = event_get_fields(ev), *attrs, *v;
	const char *k;
	char key[96], t[24];

	widen(&b->root, ev->ts);
	if (strcmp(ev->kind, "verdict") == 0) {
		int r = verdict_span(b, ev, f ? f : json_object());

		json_decref(f);
		return r;
	}
	/* The tool call's own start and end are the span. */
	if (strncmp(ev->kind, "tool_call.", 10) == 0) {
		json_decref(f);
		return 0;
	}
	widen(sp, ev->ts);
	if (strncmp(ev->kind, "action.", 7) == 0 && ev->step == EVENT_STEP_NONE)
		b->root.error |= strcmp(ev->kind, "action.kill") == 0;
	if (sp->n_events == OTLP_EVENTS_PER_SPAN) {
		sp->dropped++;
		json_decref(f);
		return 0;
	}
	attrs = json_array();
	json_array_append_new(attrs, attr("firebreak.event.id", int_value(ev->id)));
	json_array_append_new(attrs, attr("firebreak.event.source",
					  str_value(event_source_to_string(ev->source))));
	if (ev->pid)
		json_array_append_new(attrs, attr("process.pid", int_value(ev->pid)));
	if (ev->comm[0])
		json_array_append_new(attrs, attr("process.command", str_value(ev->comm)));
	json_object_foreach (f, k, v) {
		snprintf(key, sizeof(key), "firebreak.%s", k);
		json_array_append_new(attrs, attr(key, any_value(v)));
	}
	json_decref(f);
	json_array_append_new(sp->events,
			      json_pack("{s:s, s:s, s:o}", "timeUnixNano", time_text(ev->ts, t),
					"name", ev->kind, "attributes", attrs));
	sp->n_events++;
	return 0;
}

static json_t *span_json(const struct span *sp)
{
	char t0[24], t1[24];
	json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:i, s:s, s:s, s:O, s:O, s:I, s:{s:i}}",
			      "traceId", sp->trace_id, "spanId", sp->span_id, "parentSpanId",
			      sp->parent, "name", sp->name, "kind", 1 /* INTERNAL */,
			      "startTimeUnixNano", time_text(sp->start, t0), "endTimeUnixNano",
			      time_text(sp->end > sp->start ? sp->end : sp->start, t1),
			      "attributes", sp->attrs, "events", sp->events, "droppedEventsCount",
			      (json_int_t)sp->dropped, "status", "code", sp->error ? 2 : 0);

	return o;
}

static void free_build(struct build *b)
{
	for (size_t i = 0; i < b->n; i++) {
		json_decref(b->spans[i]->attrs);
		json_decref(b->spans[i]->events);
		free(b->spans[i]);
	}
	free(b->spans);
	json_decref(b->root.attrs);
	json_decref(b->root.events);
	hashmap_free(b->by_step);
}

/* The first traceparent the harness sent in the window: the whole trace joins it. */
static int first_traceparent(const struct store_step *st, void *data)
{
	struct build *b = data;
	char span[17];

	if (!traceparent(st->traceparent, b->trace_id, span))
		return 0;
	strcpy(b->root.parent, span);
	return 1;
}

int otlp_trace(struct store *s, const struct otlp_window *w, json_t **ret)
{
	struct store_timeline_query q = { .sandbox_id = w->sb->id,
					  .since = w->since,
					  .until = w->until,
					  .step_lo = EVENT_STEP_NONE,
					  .step_hi = EVENT_STEP_NONE };
	struct build b = { .s = s, .w = w };
	json_t *spans, *o;
	char text[FB_NAME_MAX + 64];
	int r;

	if (hashmap_new(&b.by_step) < 0)
		return -ENOMEM;
	b.root.attrs = json_array();
	b.root.events = json_array();
	if (w->incident_id)
		snprintf(text, sizeof(text), "firebreak incident %s/%" PRId64, w->sb->name,
			 w->incident_id);
	else
		snprintf(text, sizeof(text), "firebreak sandbox %s/%" PRId64, w->sb->name,
			 w->sb->id);
	hex_id(text, 8, b.root.span_id);
	if ((r = store_steps(s, w->sb->id, w->since, w->until, first_traceparent, &b)) < 0)
		goto out;
	if (r == 0)
		hex_id(text, 16, b.trace_id);
	strcpy(b.root.trace_id, b.trace_id);
	if (w->incident_id)
		snprintf(b.root.name, sizeof(b.root.name), "incident %" PRId64, w->incident_id);
	else
		snprintf(b.root.name, sizeof(b.root.name), "sandbox %.*s", FB_TOOL_MAX,
			 w->sb->name);
	b.root.start = w->since;
	json_array_append_new(b.root.attrs, attr("firebreak.sandbox", str_value(w->sb->name)));
	if (w->incident_id)
		json_array_append_new(b.root.attrs,
				      attr("firebreak.incident.id", int_value(w->incident_id)));
	if ((r = store_steps(s, w->sb->id, w->since, w->until, step_cb, &b)) < 0 ||
	    (r = store_timeline(s, &q, event_cb, &b)) < 0)
		goto out;
	for (size_t i = 0; i < b.n; i++)
		widen(&b.root, b.spans[i]->start), widen(&b.root, b.spans[i]->end);
	spans = json_array();
	json_array_append_new(spans, span_json(&b.root));
	for (size_t i = 0; i < b.n; i++)
		json_array_append_new(spans, span_json(b.spans[i]));
	o = json_pack("{s:[{s:{s:[o, o, o]}, s:[{s:{s:s}, s:o}]}]}", "resourceSpans", "resource",
		      "attributes", attr("service.name", str_value("firebreak")),
		      attr("firebreak.sandbox", str_value(w->sb->name)),
		      attr("firebreak.sandbox.id", int_value(w->sb->id)), "scopeSpans", "scope",
		      "name", "firebreak", "spans", spans);
	if (!o) {
		r = -ENOMEM;
		goto out;
	}
	*ret = o;
	r = 0;
out:
	free_build(&b);
	return r;
}
