/*
 * What the loader's sections share: positions for messages, warnings, and typed members that fail
 * with FILE:LINE:COL at the offending key or value.
 */
#include <stdarg.h>
#include <stdio.h>

#include "macro.h"
#include "policy-internal.h"
#include "timeutil.h"

const char *policy_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "a boolean";
	default:
		return "null";
	}
}

static void format_at(char *buf, size_t size, const char *source, const struct json_pos_loc *loc,
		      int at_key, const char *prefix, const char *fmt, va_list ap) _printf_(7, 0);

static void format_at(char *buf, size_t size, const char *source, const struct json_pos_loc *loc,
		      int at_key, const char *prefix, const char *fmt, va_list ap)
{
	int n = snprintf(buf, size, "%s:%u:%u: %s", source, at_key ? loc->key_line : loc->line,
			 at_key ? loc->key_col : loc->col, prefix);

	if (n >= 0 && (size_t)n < size)
		vsnprintf(buf + n, size - (size_t)n, fmt, ap);
}

static void locate(struct policy_parse *ctx, const char *path, struct json_pos_loc *loc)
{
	if (!ctx->pos || json_pos_lookup_nearest(ctx->pos, path, loc) < 0)
		*loc = (struct json_pos_loc){ .line = 1, .col = 1, .key_line = 1, .key_col = 1 };
}

int policy_fail(struct policy_parse *ctx, const char *path, int at_key, const char *fmt, ...)
{
	struct json_pos_loc loc;
	va_list ap;

	locate(ctx, path, &loc);
	va_start(ap, fmt);
	format_at(ctx->err, ctx->errlen, ctx->source, &loc, at_key, "", fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int policy_warn(struct policy_parse *ctx, const char *path, const char *fmt, ...)
{
	struct policy *p = ctx->policy;
	struct json_pos_loc loc;
	char buf[1024], **v;
	va_list ap;

	if (p->n_warnings >= POLICY_WARNINGS_MAX) {
		p->n_warnings_dropped++;
		return 0;
	}
	locate(ctx, path, &loc);
	va_start(ap, fmt);
	format_at(buf, sizeof(buf), ctx->source, &loc, 1, "warning: ", fmt, ap);
	va_end(ap);
	v = realloc(p->warnings, (p->n_warnings + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	p->warnings = v;
	v[p->n_warnings] = strdup(buf);
	if (!v[p->n_warnings])
		return -ENOMEM;
	p->n_warnings++;
	return 0;
}

void policy_path(char *buf, const char *path, const char *key)
{
	/* Paths come from a text json_pos_scan() accepted, so they fit; a key that does not is
	 * left off and the lookup falls back to the enclosing object. */
	if (buf != path && strscpy(buf, JSON_POS_PATH_MAX + 1, path) < 0)
		buf[0] = '\0';
	json_pos_path_push_key(buf, JSON_POS_PATH_MAX + 1, key);
}

void policy_path_index(char *buf, const char *path, size_t index)
{
	if (buf != path && strscpy(buf, JSON_POS_PATH_MAX + 1, path) < 0)
		buf[0] = '\0';
	json_pos_path_push_index(buf, JSON_POS_PATH_MAX + 1, index);
}

int policy_check_keys(struct policy_parse *ctx, json_t *obj, const char *path,
		      const char *const *known, size_t n)
{
	char kpath[JSON_POS_PATH_MAX + 1], first_path[JSON_POS_PATH_MAX + 1] = "";
	struct json_pos_loc loc, first = { 0 };
	const char *key, *first_key = NULL;
	json_t *value;

	/* Every unknown key is an error; the one reported is the first in the text. */
	json_object_foreach (obj, key, value) {
		size_t i;

		for (i = 0; i < n; i++)
			if (strcmp(key, known[i]) == 0)
				break;
		if (i < n)
			continue;
		policy_path(kpath, path, key);
		locate(ctx, kpath, &loc);
		if (!first_key || loc.key_line < first.key_line ||
		    (loc.key_line == first.key_line && loc.key_col < first.key_col)) {
			first_key = key;
			first = loc;
			memcpy(first_path, kpath, sizeof(kpath));
		}
	}
	if (!first_key)
		return 0;
	{
		char list[512] = "";
		size_t len = 0;

		for (size_t i = 0; i < n && len < sizeof(list); i++)
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s",
						i ? ", " : "", known[i]);
		return policy_fail(ctx, first_path, 1, "unknown key \"%.64s\" (known here: %s)",
				   first_key, list);
	}
}

/* Fetches member key; if absent and required, fails at the object. */
static int member(struct policy_parse *ctx, json_t *obj, const char *path, const char *key,
		  int required, json_t **ret, char *vpath)
{
	*ret = json_object_get(obj, key);
	policy_path(vpath, path, key);
	if (!*ret && required)
		return policy_fail(ctx, path, 0, "missing \"%s\"", key);
	return 0;
}

int policy_get_string(struct policy_parse *ctx, json_t *obj, const char *path, const char *key,
		      int required, char **ret)
{
	char vpath[JSON_POS_PATH_MAX + 1];
	json_t *v;
	char *s;
	int r = member(ctx, obj, path, key, required, &v, vpath);

	if (r < 0 || !v)
		return r;
	if (!json_is_string(v))
		return policy_fail(ctx, vpath, 0, "\"%s\" must be a string, not %s", key,
				   policy_type_name(v));
	if (json_string_length(v) > POLICY_STRING_MAX)
		return policy_fail(ctx, vpath, 0, "\"%s\" is longer than %d bytes", key,
				   POLICY_STRING_MAX);
	s = strdup(json_string_value(v));
	if (!s)
		return -ENOMEM;
	free(*ret);
	*ret = s;
	return 0;
}

int policy_get_bool(struct policy_parse *ctx, json_t *obj, const char *path, const char *key,
		    int *ret)
{
	char vpath[JSON_POS_PATH_MAX + 1];
	json_t *v;
	int r = member(ctx, obj, path, key, 0, &v, vpath);

	if (r < 0 || !v)
		return r;
	if (!json_is_boolean(v))
		return policy_fail(ctx, vpath, 0, "\"%s\" must be true or false, not %s", key,
				   policy_type_name(v));
	*ret = json_is_true(v);
	return 0;
}

int policy_get_uint(struct policy_parse *ctx, json_t *obj, const char *path, const char *key,
		    uint64_t min, uint64_t max, uint64_t *ret)
{
	char vpath[JSON_POS_PATH_MAX + 1];
	json_t *v;
	int r = member(ctx, obj, path, key, 0, &v, vpath);

	if (r < 0 || !v)
		return r;
	if (!json_is_integer(v))
		return policy_fail(ctx, vpath, 0, "\"%s\" must be an integer, not %s", key,
				   policy_type_name(v));
	if (json_integer_value(v) < 0 || (uint64_t)json_integer_value(v) < min ||
	    (uint64_t)json_integer_value(v) > max)
		return policy_fail(ctx, vpath, 0, "\"%s\" must be from %llu to %llu", key,
				   (unsigned long long)min, (unsigned long long)max);
	*ret = (uint64_t)json_integer_value(v);
	return 0;
}

int policy_get_size(struct policy_parse *ctx, json_t *obj, const char *path, const char *key,
		    uint64_t min, uint64_t *ret)
{
	char vpath[JSON_POS_PATH_MAX + 1];
	uint64_t bytes;
	json_t *v;
	int r = member(ctx, obj, path, key, 0, &v, vpath);

	if (r < 0 || !v)
		return r;
	if (!json_is_string(v))
		return policy_fail(ctx, vpath, 0,
				   "\"%s\" must be a size string such as \"512M\", not %s", key,
				   policy_type_name(v));
	if (size_parse(json_string_value(v), &bytes) < 0 || bytes < min)
		return policy_fail(
			ctx, vpath, 0,
			"\"%s\" must be a size such as \"512M\" (suffix K, M, G or T; at "
			"least %llu%s)",
			key,
			(unsigned long long)(min % (1 << 20) == 0 ? min >> 20
					     : min % 1024 == 0	  ? min >> 10
								  : min),
			min % (1 << 20) == 0 ? "M"
			: min % 1024 == 0    ? "K"
					     : " bytes");
	*ret = bytes;
	return 0;
}

int policy_get_duration(struct policy_parse *ctx, json_t *obj, const char *path, const char *key,
			int64_t min_ns, int64_t *ret)
{
	char vpath[JSON_POS_PATH_MAX + 1];
	int64_t ns;
	json_t *v;
	int r = member(ctx, obj, path, key, 0, &v, vpath);

	if (r < 0 || !v)
		return r;
	if (!json_is_string(v))
		return policy_fail(ctx, vpath, 0,
				   "\"%s\" must be a duration string such as \"30s\", not %s", key,
				   policy_type_name(v));
	if (duration_parse(json_string_value(v), &ns) < 0 || ns < min_ns)
		return policy_fail(
			ctx, vpath, 0,
			"\"%s\" must be a duration such as \"30s\", \"5m\" or \"2h\" (at "
			"least %lldms)",
			key, (long long)(min_ns / NSEC_PER_MSEC));
	*ret = ns;
	return 0;
}

void policy_strv_free(char **v)
{
	if (!v)
		return;
	for (char **s = v; *s; s++)
		free(*s);
	free(v);
}

int policy_get_strings(struct policy_parse *ctx, json_t *obj, const char *path, const char *key,
		       size_t max, int (*valid)(const char *s), const char *what, char ***ret,
		       size_t *ret_n)
{
	char vpath[JSON_POS_PATH_MAX + 1], epath[JSON_POS_PATH_MAX + 1];
	char **v;
	json_t *arr, *e;
	size_t i;
	int r = member(ctx, obj, path, key, 0, &arr, vpath);

	if (r < 0 || !arr)
		return r;
	if (!json_is_array(arr))
		return policy_fail(ctx, vpath, 0, "\"%s\" must be an array of strings, not %s", key,
				   policy_type_name(arr));
	if (json_array_size(arr) > max)
		return policy_fail(ctx, vpath, 0, "\"%s\" has more than %zu entries", key, max);
	json_array_foreach (arr, i, e) {
		policy_path_index(epath, vpath, i);
		if (!json_is_string(e))
			return policy_fail(ctx, epath, 0, "\"%s\" entries must be strings, not %s",
					   key, policy_type_name(e));
		if (json_string_length(e) > POLICY_STRING_MAX)
			return policy_fail(ctx, epath, 0, "a \"%s\" entry is longer than %d bytes",
					   key, POLICY_STRING_MAX);
		if (valid && !valid(json_string_value(e)))
			return policy_fail(ctx, epath, 0, "\"%.200s\": %s", json_string_value(e),
					   what);
	}
	v = calloc(json_array_size(arr) + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	json_array_foreach (arr, i, e) {
		v[i] = strdup(json_string_value(e));
		if (!v[i]) {
			policy_strv_free(v);
			return -ENOMEM;
		}
	}
	policy_strv_free(*ret);
	*ret = v;
	if (ret_n)
		*ret_n = json_array_size(arr);
	return 0;
}
