/*
 * The HTTP API's query parameters (docs/api.md), read apart from libmicrohttpd: a request's
 * arguments come through a lookup function, so that the parsing is one pure function per route
 * that a unit test or a fuzzer (fuzz/fuzz-http-query.c) can call without a server.
 */
#ifndef FB_HTTP_QUERY_H
#define FB_HTTP_QUERY_H

#include <stddef.h>
#include <stdint.h>

#include "bounds.h"

struct store_timeline_query;

#define TIMELINE_LIMIT_DEFAULT 1000
#define TIMELINE_LIMIT_MAX 10000
#define SSE_KINDS_MAX 16 /* kinds in one stream's filter */

/* A non-negative decimal int64 (digits only: no sign, no spaces); 0 and *ret, or -EINVAL. */
int http_parse_i64(const char *s, int64_t *ret);

enum http_arg_kind { HTTP_ARG_QUERY, HTTP_ARG_HEADER };

/* Where a request's arguments are: get returns the (decoded) value of key, or NULL if absent. */
struct http_args {
	const char *(*get)(void *ctx, enum http_arg_kind kind, const char *key);
	void *ctx;
};

/*
 * ?since=NS&until=NS&limit=N&cursor=TS.ID of a timeline into *q (since, until, after_ts,
 * after_id; the rest untouched) and *ret_limit (TIMELINE_LIMIT_DEFAULT if absent). NULL, or
 * what is wrong with them (the 400's message).
 */
const char *http_timeline_args(const struct http_args *a, struct store_timeline_query *q,
			       int64_t *ret_limit);

/* What one event stream shows, and where it resumes. */
struct http_stream_filter {
	int has_cursor; /* 1: resume after cursor */
	int64_t cursor;
	char sandbox[FB_NAME_MAX + 1]; /* "" = all */
	char kinds[SSE_KINDS_MAX][FB_KIND_MAX + 1];
	int nkinds; /* 0 = all kinds */
};

/*
 * ?sandbox=NAME&kind=K1,K2,prefix.* and Last-Event-ID (the header, or ?last_event_id=) of a
 * stream into *ret (cleared first). NULL, or what is wrong with them.
 */
const char *http_stream_args(const struct http_args *a, struct http_stream_filter *ret);

#endif
