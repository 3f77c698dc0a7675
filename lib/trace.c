#include "trace.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>

#include "macro.h"
#include "timeutil.h"

#define K_OPERATION "gen_ai.operation.name"
#define K_TOOL "gen_ai.tool.name"
#define K_CALL_ID "gen_ai.tool.call.id"
#define K_SANDBOX "firebreak.sandbox"
#define K_STEP "firebreak.step"
#define K_PHASE "phase"
#define K_TS "ts"
#define K_EXIT_CODE "exit_code"
#define K_ERROR_TYPE "error.type"
#define K_ANNOTATIONS "annotations"
#define K_TRACEPARENT "traceparent"

static const char *const error_names[_TRACE_ERR_MAX] = {
	[TRACE_OK] = "ok",
	[TRACE_ERR_TOO_LONG] = "too_long",
	[TRACE_ERR_JSON] = "json",
	[TRACE_ERR_NOT_OBJECT] = "not_object",
	[TRACE_ERR_MISSING] = "missing_field",
	[TRACE_ERR_TYPE] = "wrong_type",
	[TRACE_ERR_VALUE] = "bad_value",
	[TRACE_ERR_UNKNOWN_KEY] = "unknown_key",
	[TRACE_ERR_UNKNOWN_SANDBOX] = "unknown_sandbox",
	[TRACE_ERR_CONFLICT] = "conflict",
};

const char *trace_error_to_string(enum trace_error e)
{
	return (unsigned)e < _TRACE_ERR_MAX ? error_names[e] : "unknown";
}

_printf_(4, 5) static enum trace_error
	fail(enum trace_error e, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return e;
}

void trace_record_clear(struct trace_record *rec)
{
	json_decref(rec->annotations);
	memset(rec, 0, sizeof(*rec));
}

/* Fetches a required (or optional) string member, checking its type and its length cap. */
static enum trace_error get_string(json_t *obj, const char *key, int required, char *dst,
				   size_t dstsize, char *err, size_t errlen)
{
	json_t *v = json_object_get(obj, key);

	if (!v) {
		if (required)
			return fail(TRACE_ERR_MISSING, err, errlen, "missing \"%s\"", key);
		return TRACE_OK;
	}
	if (!json_is_string(v))
		return fail(TRACE_ERR_TYPE, err, errlen, "\"%s\" must be a string", key);
	if (json_string_length(v) >= dstsize)
		return fail(TRACE_ERR_VALUE, err, errlen, "\"%s\" is longer than %zu bytes", key,
			    dstsize - 1);
	memcpy(dst, json_string_value(v), json_string_length(v) + 1);
	return TRACE_OK;
}

static int printable_ascii(const char *s)
{
	for (; *s; s++)
		if (*s < 0x21 || *s > 0x7e)
			return 0;
	return 1;
}

/* W3C trace-context: version-traceid-parentid-flags, lower-case hex, ids not all zero. */
static int traceparent_valid(const char *s)
{
	static const int lens[] = { 2, 32, 16, 2 };
	const char *p = s;

	for (size_t part = 0; part < ARRAY_SIZE(lens); part++) {
		int nonzero = 0;

		for (int i = 0; i < lens[part]; i++, p++) {
			if (!isxdigit((unsigned char)*p) || isupper((unsigned char)*p))
				return 0;
			nonzero |= *p != '0';
		}
		if ((part == 1 || part == 2) && !nonzero)
			return 0;
		if (part < 3 && *p++ != '-')
			return 0;
	}
	return *p == '\0' && strncmp(s, "ff", 2) != 0;
}

static enum trace_error check_keys(json_t *obj, char *err, size_t errlen)
{
	static const char *const known[] = { K_OPERATION,  K_TOOL,	  K_CALL_ID,	K_SANDBOX,
					     K_STEP,	   K_PHASE,	  K_TS,		K_EXIT_CODE,
					     K_ERROR_TYPE, K_ANNOTATIONS, K_TRACEPARENT };
	const char *key;
	json_t *value;

	json_object_foreach (obj, key, value) {
		size_t i;

		for (i = 0; i < ARRAY_SIZE(known); i++)
			if (strcmp(key, known[i]) == 0)
				break;
		if (i == ARRAY_SIZE(known))
			return fail(TRACE_ERR_UNKNOWN_KEY, err, errlen,
				    "unknown attribute \"%.64s\"", key);
	}
	return TRACE_OK;
}

static enum trace_error parse_ts(json_t *v, int64_t *ret, char *err, size_t errlen)
{
	if (json_is_integer(v)) {
		if (json_integer_value(v) <= 0)
			return fail(TRACE_ERR_VALUE, err, errlen, "\"ts\" must be positive");
		*ret = json_integer_value(v);
		return TRACE_OK;
	}
	if (json_is_string(v)) {
		if (!strchr(json_string_value(v), 'T') ||
		    time_parse(json_string_value(v), 0, ret) < 0 || *ret <= 0)
			return fail(TRACE_ERR_VALUE, err, errlen,
				    "\"ts\" must be RFC 3339 in UTC (…Z) or ns since the epoch");
		return TRACE_OK;
	}
	return fail(TRACE_ERR_TYPE, err, errlen, "\"ts\" must be an integer or a string");
}

/* The two string attributes read into words before they become fields of the record. */
struct words {
	char operation[32];
	char phase[8];
};

/* Every string attribute, each of the right type and within its cap. */
static enum trace_error get_strings(json_t *obj, struct trace_record *rec, struct words *w,
				    char *err, size_t errlen)
{
	enum trace_error e;

	if ((e = get_string(obj, K_OPERATION, 1, w->operation, sizeof(w->operation), err,
			    errlen)) ||
	    (e = get_string(obj, K_TOOL, 1, rec->tool, sizeof(rec->tool), err, errlen)) ||
	    (e = get_string(obj, K_CALL_ID, 1, rec->call_id, sizeof(rec->call_id), err, errlen)) ||
	    (e = get_string(obj, K_SANDBOX, 1, rec->sandbox, sizeof(rec->sandbox), err, errlen)) ||
	    (e = get_string(obj, K_PHASE, 1, w->phase, sizeof(w->phase), err, errlen)) ||
	    (e = get_string(obj, K_ERROR_TYPE, 0, rec->error_type, sizeof(rec->error_type), err,
			    errlen)) ||
	    (e = get_string(obj, K_TRACEPARENT, 0, rec->traceparent, sizeof(rec->traceparent), err,
			    errlen)))
		return e;
	return TRACE_OK;
}

/* What the strings say: the operation, valid names, the phase, and what belongs on which. */
static enum trace_error check_strings(struct trace_record *rec, const struct words *w, char *err,
				      size_t errlen)
{
	if (strcmp(w->operation, "execute_tool") != 0)
		return fail(TRACE_ERR_VALUE, err, errlen,
			    "\"" K_OPERATION "\" must be \"execute_tool\"");
	if (!event_tool_name_valid(rec->tool))
		return fail(TRACE_ERR_VALUE, err, errlen,
			    "\"" K_TOOL "\" must be 1-%d of [A-Za-z0-9_.:-]", FB_TOOL_MAX);
	if (!rec->call_id[0] || !printable_ascii(rec->call_id))
		return fail(TRACE_ERR_VALUE, err, errlen,
			    "\"" K_CALL_ID "\" must be 1-%d printable ASCII characters",
			    FB_CALL_ID_MAX);
	if (!event_sandbox_name_valid(rec->sandbox))
		return fail(TRACE_ERR_VALUE, err, errlen, "\"" K_SANDBOX "\" is not a valid name");
	if (strcmp(w->phase, "start") == 0)
		rec->phase = TRACE_PHASE_START;
	else if (strcmp(w->phase, "end") == 0)
		rec->phase = TRACE_PHASE_END;
	else
		return fail(TRACE_ERR_VALUE, err, errlen, "\"phase\" must be \"start\" or \"end\"");
	if (rec->traceparent[0] && !traceparent_valid(rec->traceparent))
		return fail(TRACE_ERR_VALUE, err, errlen,
			    "\"traceparent\" is not W3C trace-context");
	if (rec->error_type[0] && rec->phase != TRACE_PHASE_END)
		return fail(TRACE_ERR_VALUE, err, errlen,
			    "\"error.type\" belongs on phase \"end\"");
	return TRACE_OK;
}

static enum trace_error parse_step(json_t *obj, struct trace_record *rec, char *err, size_t errlen)
{
	json_t *v = json_object_get(obj, K_STEP);

	if (!v)
		return fail(TRACE_ERR_MISSING, err, errlen, "missing \"" K_STEP "\"");
	if (!json_is_integer(v))
		return fail(TRACE_ERR_TYPE, err, errlen, "\"" K_STEP "\" must be an integer");
	if (json_integer_value(v) < 0 || json_integer_value(v) > FB_STEP_MAX)
		return fail(TRACE_ERR_VALUE, err, errlen, "\"" K_STEP "\" must be 0-%lld",
			    FB_STEP_MAX);
	rec->step = json_integer_value(v);
	return TRACE_OK;
}

static enum trace_error parse_exit_code(json_t *obj, struct trace_record *rec, char *err,
					size_t errlen)
{
	json_t *v = json_object_get(obj, K_EXIT_CODE);

	if (!v)
		return TRACE_OK;
	if (!json_is_integer(v))
		return fail(TRACE_ERR_TYPE, err, errlen, "\"exit_code\" must be an integer");
	if (rec->phase != TRACE_PHASE_END)
		return fail(TRACE_ERR_VALUE, err, errlen, "\"exit_code\" belongs on phase \"end\"");
	if (json_integer_value(v) < INT32_MIN || json_integer_value(v) > INT32_MAX)
		return fail(TRACE_ERR_VALUE, err, errlen, "\"exit_code\" is out of range");
	rec->has_exit_code = 1;
	rec->exit_code = json_integer_value(v);
	return TRACE_OK;
}

/* Any object, kept as it came, up to FB_ANNOTATIONS_MAX bytes as compact JSON. */
static enum trace_error parse_annotations(json_t *obj, struct trace_record *rec, char *err,
					  size_t errlen)
{
	json_t *v = json_object_get(obj, K_ANNOTATIONS);
	char *text;
	size_t n;

	if (!v)
		return TRACE_OK;
	if (!json_is_object(v))
		return fail(TRACE_ERR_TYPE, err, errlen, "\"annotations\" must be an object");
	text = json_dumps(v, JSON_COMPACT | JSON_ENSURE_ASCII);
	n = text ? strlen(text) : 0;
	free(text);
	if (n > FB_ANNOTATIONS_MAX)
		return fail(TRACE_ERR_VALUE, err, errlen, "\"annotations\" is over %d bytes",
			    FB_ANNOTATIONS_MAX);
	rec->annotations = json_incref(v);
	return TRACE_OK;
}

static enum trace_error parse_object(json_t *obj, struct trace_record *rec, char *err,
				     size_t errlen)
{
	struct words w = { "", "" };
	enum trace_error e;
	json_t *v;

	if ((e = check_keys(obj, err, errlen)) != TRACE_OK ||
	    (e = get_strings(obj, rec, &w, err, errlen)) ||
	    (e = check_strings(rec, &w, err, errlen)) || (e = parse_step(obj, rec, err, errlen)))
		return e;
	v = json_object_get(obj, K_TS);
	if (v && (e = parse_ts(v, &rec->ts, err, errlen)) != TRACE_OK)
		return e;
	if ((e = parse_exit_code(obj, rec, err, errlen)) ||
	    (e = parse_annotations(obj, rec, err, errlen)))
		return e;
	return TRACE_OK;
}

enum trace_error trace_parse_line(const char *line, size_t len, struct trace_record *ret, char *err,
				  size_t errlen)
{
	struct trace_record rec = { 0 };
	json_error_t jerr;
	enum trace_error e;
	json_t *obj;

	if (len > 0 && line[len - 1] == '\r')
		len--;
	if (len > FB_TRACE_LINE_MAX)
		return fail(TRACE_ERR_TOO_LONG, err, errlen, "line is over %d bytes",
			    FB_TRACE_LINE_MAX);
	/* Rejects invalid UTF-8, NUL bytes, duplicate keys and anything after the object. Any JSON
	 * value is decoded, so that a string or a number is refused as not an object, like an
	 * array, rather than as not JSON. */
	obj = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (!obj)
		return fail(TRACE_ERR_JSON, err, errlen, "invalid JSON at column %d: %.80s",
			    jerr.column, jerr.text);
	if (!json_is_object(obj)) {
		json_decref(obj);
		return fail(TRACE_ERR_NOT_OBJECT, err, errlen,
			    "a trace line must be a JSON object");
	}
	e = parse_object(obj, &rec, err, errlen);
	json_decref(obj);
	if (e != TRACE_OK) {
		trace_record_clear(&rec);
		return e;
	}
	*ret = rec;
	return TRACE_OK;
}

int trace_record_to_event(const struct trace_record *rec, int64_t recv_ns, struct event *ret)
{
	struct event ev;
	json_t *fields;
	int r;

	event_init(&ev);
	ev.ts = rec->ts > 0 ? rec->ts : recv_ns;
	memcpy(ev.sandbox, rec->sandbox, sizeof(ev.sandbox));
	memcpy(ev.tool, rec->tool, sizeof(ev.tool));
	ev.step = rec->step;
	ev.source = EVENT_SOURCE_TRACE;
	strcpy(ev.kind, rec->phase == TRACE_PHASE_START ? "tool_call.start" : "tool_call.end");

	fields = json_pack("{s:s}", "call_id", rec->call_id);
	if (!fields)
		return -ENOMEM;
	r = 0;
	if (rec->has_exit_code)
		r |= json_object_set_new(fields, "exit_code", json_integer(rec->exit_code));
	if (rec->error_type[0])
		r |= json_object_set_new(fields, "error_type", json_string(rec->error_type));
	if (rec->traceparent[0])
		r |= json_object_set_new(fields, "traceparent", json_string(rec->traceparent));
	if (rec->annotations)
		r |= json_object_set(fields, "annotations", rec->annotations);
	if (rec->ts > 0)
		r |= json_object_set_new(fields, "recv_ts", json_integer(recv_ns));
	if (r == 0)
		r = event_set_fields(&ev, fields);
	json_decref(fields);
	if (r != 0) {
		event_clear(&ev);
		return -ENOMEM;
	}
	*ret = ev;
	return 0;
}
