#include "event.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>

#include "macro.h"

static const char *const source_names[_EVENT_SOURCE_MAX] = {
	[EVENT_SOURCE_TRACE] = "trace",	      [EVENT_SOURCE_ENFORCER] = "enforcer",
	[EVENT_SOURCE_EBPF] = "ebpf",	      [EVENT_SOURCE_CGROUP] = "cgroup",
	[EVENT_SOURCE_AUDIT] = "audit",	      [EVENT_SOURCE_NFLOG] = "nflog",
	[EVENT_SOURCE_FANOTIFY] = "fanotify", [EVENT_SOURCE_DETECTOR] = "detector",
	[EVENT_SOURCE_MONITOR] = "monitor",   [EVENT_SOURCE_PROXY] = "proxy",
};

const char *event_source_to_string(enum event_source s)
{
	return (unsigned)s < _EVENT_SOURCE_MAX ? source_names[s] : "unknown";
}

int event_source_from_string(const char *s)
{
	for (int i = 0; i < _EVENT_SOURCE_MAX; i++)
		if (strcmp(s, source_names[i]) == 0)
			return i;
	return -EINVAL;
}

static int name_valid(const char *s, size_t max, const char *extra)
{
	size_t n = 0;

	for (; s[n]; n++) {
		unsigned char c = (unsigned char)s[n];

		if (n >= max || !(isalnum(c) || strchr(extra, c)))
			return 0;
	}
	return n > 0;
}

int event_sandbox_name_valid(const char *s)
{
	return name_valid(s, FB_NAME_MAX, "_.-") && s[0] != '.' && s[0] != '-';
}

int event_tool_name_valid(const char *s)
{
	return name_valid(s, FB_TOOL_MAX, "_.:-");
}

int event_kind_valid(const char *s)
{
	size_t n = 0;

	for (; s[n]; n++)
		if (n >= FB_KIND_MAX ||
		    !(islower((unsigned char)s[n]) || isdigit((unsigned char)s[n]) || s[n] == '_' ||
		      s[n] == '.'))
			return 0;
	return n > 0;
}

void event_init(struct event *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->step = EVENT_STEP_NONE;
	ev->uid = EVENT_UID_NONE;
}

void event_clear(struct event *ev)
{
	free(ev->fields);
	event_init(ev);
}

void event_move(struct event *dst, struct event *src)
{
	*dst = *src;
	src->fields = NULL;
	src->fields_len = 0;
}

int event_copy(struct event *dst, const struct event *src)
{
	*dst = *src;
	if (src->fields) {
		dst->fields = malloc(src->fields_len + 1);
		if (!dst->fields) {
			dst->fields_len = 0; /* never left sharing src's buffer */
			return -ENOMEM;
		}
		memcpy(dst->fields, src->fields, src->fields_len + 1);
	}
	return 0;
}

int event_set_fields(struct event *ev, const json_t *obj)
{
	char *text;

	if (!json_is_object(obj))
		return -EINVAL;
	text = json_dumps(obj, JSON_COMPACT | JSON_ENSURE_ASCII);
	if (!text)
		return -ENOMEM;
	free(ev->fields);
	ev->fields = text;
	ev->fields_len = strlen(text);
	return 0;
}

int event_set_fields_text(struct event *ev, const char *text, size_t len)
{
	json_t *obj;

	if (len < 2 || text[0] != '{')
		return -EINVAL;
	/* The text is stored as given, so it is parsed once here: "{garbage" must not reach the
	 * store, where every later reader would find undecodable fields. */
	obj = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
	if (!obj)
		return -EINVAL;
	json_decref(obj);
	return event_take_fields(ev, text, len);
}

int event_take_fields(struct event *ev, const char *text, size_t len)
{
	char *copy = malloc(len + 1);

	if (!copy)
		return -ENOMEM;
	memcpy(copy, text, len);
	copy[len] = '\0';
	free(ev->fields);
	ev->fields = copy;
	ev->fields_len = len;
	return 0;
}

json_t *event_get_fields(const struct event *ev)
{
	json_t *obj;

	if (!ev->fields)
		return json_object();
	obj = json_loadb(ev->fields, ev->fields_len, JSON_REJECT_DUPLICATES, NULL);
	if (obj && !json_is_object(obj)) {
		json_decref(obj);
		return NULL;
	}
	return obj;
}

json_t *event_to_json(const struct event *ev)
{
	json_t *fields = event_get_fields(ev);
	json_t *obj;

	if (!fields)
		fields = json_pack("{s:s}", "undecodable_fields", ev->fields ? ev->fields : "");
	obj = json_pack("{s:I, s:s, s:o, s:s, s:s, s:s, s:i, s:i, s:o, s:s, s:o}", "ts",
			(json_int_t)ev->ts, "sandbox", ev->sandbox, "step",
			ev->step == EVENT_STEP_NONE ? json_null() : json_integer(ev->step), "tool",
			ev->tool, "source", event_source_to_string(ev->source), "kind", ev->kind,
			"pid", (int)ev->pid, "ppid", (int)ev->ppid, "uid",
			ev->uid == EVENT_UID_NONE ? json_null() : json_integer(ev->uid), "comm",
			ev->comm, "fields", fields);
	if (obj && ev->id > 0 && json_object_set_new(obj, "id", json_integer(ev->id)) < 0) {
		json_decref(obj);
		return NULL;
	}
	return obj;
}

int event_to_text(const struct event *ev, char **ret)
{
	json_t *obj = event_to_json(ev);
	char *text;

	if (!obj)
		return -ENOMEM;
	text = json_dumps(obj, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_PRESERVE_ORDER);
	json_decref(obj);
	if (!text)
		return -ENOMEM;
	*ret = text;
	return 0;
}

_printf_(3, 4) static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Copies the string member key into dst (size dstsize); a missing member leaves dst empty. */
static int get_string(const json_t *obj, const char *key, char *dst, size_t dstsize, char *err,
		      size_t errlen)
{
	const json_t *v = json_object_get(obj, key);

	if (!v)
		return 0;
	if (!json_is_string(v))
		return fail(err, errlen, "\"%s\" must be a string", key);
	if (json_string_length(v) >= dstsize ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return fail(err, errlen, "\"%s\" is too long or holds NUL", key);
	memcpy(dst, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

/* Reads integer member key into *dst; null or missing leaves *dst; bounds are inclusive. */
static int get_int(const json_t *obj, const char *key, int64_t min, int64_t max, int64_t *dst,
		   char *err, size_t errlen)
{
	const json_t *v = json_object_get(obj, key);

	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v))
		return fail(err, errlen, "\"%s\" must be an integer", key);
	if (json_integer_value(v) < min || json_integer_value(v) > max)
		return fail(err, errlen, "\"%s\" is out of range", key);
	*dst = json_integer_value(v);
	return 0;
}

int event_from_json(const json_t *obj, struct event *ret, char *err, size_t errlen)
{
	static const char *const known[] = { "id",   "ts",  "sandbox", "step", "tool", "source",
					     "kind", "pid", "ppid",    "uid",  "comm", "fields" };
	struct event ev;
	char source[16] = "";
	const char *key;
	json_t *value;
	int64_t v;
	int r;

	event_init(&ev);
	if (!json_is_object(obj))
		return fail(err, errlen, "an event must be a JSON object");
	json_object_foreach ((json_t *)obj, key, value) {
		size_t i;

		for (i = 0; i < ARRAY_SIZE(known); i++)
			if (strcmp(key, known[i]) == 0)
				break;
		if (i == ARRAY_SIZE(known))
			return fail(err, errlen, "unknown key \"%s\"", key);
	}
	if (!json_object_get(obj, "ts") || !json_object_get(obj, "kind") ||
	    !json_object_get(obj, "source"))
		return fail(err, errlen, "an event needs \"ts\", \"source\" and \"kind\"");
	if ((r = get_int(obj, "id", 0, INT64_MAX, &ev.id, err, errlen)) < 0 ||
	    (r = get_int(obj, "ts", 0, INT64_MAX, &ev.ts, err, errlen)) < 0 ||
	    (r = get_int(obj, "step", 0, FB_STEP_MAX, &ev.step, err, errlen)) < 0 ||
	    (r = get_int(obj, "uid", 0, UINT32_MAX, &ev.uid, err, errlen)) < 0 ||
	    (r = get_string(obj, "sandbox", ev.sandbox, sizeof(ev.sandbox), err, errlen)) < 0 ||
	    (r = get_string(obj, "tool", ev.tool, sizeof(ev.tool), err, errlen)) < 0 ||
	    (r = get_string(obj, "kind", ev.kind, sizeof(ev.kind), err, errlen)) < 0 ||
	    (r = get_string(obj, "comm", ev.comm, sizeof(ev.comm), err, errlen)) < 0 ||
	    (r = get_string(obj, "source", source, sizeof(source), err, errlen)) < 0)
		return r;
	v = 0;
	if ((r = get_int(obj, "pid", 0, INT32_MAX, &v, err, errlen)) < 0)
		return r;
	ev.pid = (int32_t)v;
	v = 0;
	if ((r = get_int(obj, "ppid", 0, INT32_MAX, &v, err, errlen)) < 0)
		return r;
	ev.ppid = (int32_t)v;
	r = event_source_from_string(source);
	if (r < 0)
		return fail(err, errlen, "unknown source \"%s\"", source);
	ev.source = r;
	if (!event_kind_valid(ev.kind))
		return fail(err, errlen, "invalid kind \"%s\"", ev.kind);
	if (ev.sandbox[0] && !event_sandbox_name_valid(ev.sandbox))
		return fail(err, errlen, "invalid sandbox name");
	value = json_object_get(obj, "fields");
	if (value && !json_is_null(value)) {
		if (!json_is_object(value))
			return fail(err, errlen, "\"fields\" must be an object");
		if (json_object_size(value) > 0 && event_set_fields(&ev, value) < 0)
			return -ENOMEM;
	}
	*ret = ev;
	return 0;
}
