/*
 * The HTTP API's query parameters (http-query.h): each route's arguments checked and converted
 * in one place, with no libmicrohttpd call, so that what a client can put in a URL is fuzzed
 * (fuzz/fuzz-http-query.c) by the very code that serves it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "http-query.h"
#include "event.h"
#include "macro.h"
#include "store/store.h"

/* A non-negative decimal int64 (digits only: no sign, no spaces); 0 or -EINVAL. */
int http_parse_i64(const char *s, int64_t *ret)
{
	int64_t v = 0;
	size_t n = strlen(s);

	if (n == 0 || n > 19 || strspn(s, "0123456789") != n)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (v > (INT64_MAX - (s[i] - '0')) / 10)
			return -EINVAL;
		v = v * 10 + (s[i] - '0');
	}
	*ret = v;
	return 0;
}

/* An optional integer argument; 0 (absent or good) or -EINVAL. */
static int arg_i64(const struct http_args *a, const char *key, int64_t *ret)
{
	const char *v = a->get(a->ctx, HTTP_ARG_QUERY, key);

	return v ? http_parse_i64(v, ret) : 0;
}

const char *http_timeline_args(const struct http_args *a, struct store_timeline_query *q,
			       int64_t *ret_limit)
{
	const char *cursor = a->get(a->ctx, HTTP_ARG_QUERY, "cursor");
	int64_t limit = TIMELINE_LIMIT_DEFAULT;

	if (arg_i64(a, "since", &q->since) < 0 || arg_i64(a, "until", &q->until) < 0)
		return "since and until are ns since the epoch";
	if (arg_i64(a, "limit", &limit) < 0 || limit < 1 || limit > TIMELINE_LIMIT_MAX)
		return "limit is 1 to 10000";
	if (cursor) {
		char ts[24], id[24];
		const char *dot = strchr(cursor, '.');

		if (!dot || (size_t)(dot - cursor) >= sizeof(ts) || strlen(dot + 1) >= sizeof(id))
			return "cursor: not one this API gave";
		memcpy(ts, cursor, (size_t)(dot - cursor));
		ts[dot - cursor] = '\0';
		strcpy(id, dot + 1);
		if (http_parse_i64(ts, &q->after_ts) < 0 || http_parse_i64(id, &q->after_id) < 0 ||
		    q->after_id == 0)
			return "cursor: not one this API gave";
	}
	*ret_limit = limit;
	return NULL;
}

/* Resumes after event id last (Last-Event-ID); NULL, or what is wrong with it. */
static const char *set_resume(struct http_stream_filter *f, const char *last)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(last, &end, 10);
	if (errno || end == last || *end || v < 0)
		return "Last-Event-ID must be an event id";
	f->cursor = v;
	f->has_cursor = 1;
	return NULL;
}

/* Sets the filter's kinds, "K1,K2,prefix.*"; NULL, or what is wrong with them. */
static const char *set_kinds(struct http_stream_filter *f, const char *kinds)
{
	for (const char *k = kinds; *k;) {
		size_t n = strcspn(k, ",");

		if (f->nkinds == SSE_KINDS_MAX || n == 0 || n > FB_KIND_MAX)
			return "kind: at most 16 kinds, comma-separated";
		memcpy(f->kinds[f->nkinds], k, n);
		f->kinds[f->nkinds++][n] = '\0';
		k += n + (k[n] == ',');
	}
	return NULL;
}

const char *http_stream_args(const struct http_args *a, struct http_stream_filter *ret)
{
	const char *sandbox = a->get(a->ctx, HTTP_ARG_QUERY, "sandbox");
	const char *kind = a->get(a->ctx, HTTP_ARG_QUERY, "kind");
	const char *last = a->get(a->ctx, HTTP_ARG_HEADER, "Last-Event-ID");
	const char *error;

	memset(ret, 0, sizeof(*ret));
	if (!last)
		last = a->get(a->ctx, HTTP_ARG_QUERY, "last_event_id");
	if (last && (error = set_resume(ret, last)))
		return error;
	if (sandbox) {
		if (!event_sandbox_name_valid(sandbox))
			return "sandbox: not a valid sandbox name";
		strscpy(ret->sandbox, sizeof(ret->sandbox), sandbox);
	}
	return kind ? set_kinds(ret, kind) : NULL;
}
