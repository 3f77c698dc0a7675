/*
 * HTTP query parameters (monitor/http/http-query.c): a query string ("since=1&cursor=5.7..."),
 * split at '&' and '=' and each part decoded by libmicrohttpd's own MHD_http_unescape, as the
 * server hands arguments to the API; a part whose key starts with '@' stands for a header
 * (@Last-Event-ID=...). Then the timeline's and the event stream's parsers, as they serve it.
 */
#include <microhttpd.h>

#include "fuzz.h"
#include "monitor/http/http-query.h"
#include "store/store.h"

#define ARGS_MAX 64

struct fuzz_args {
	char *key[ARGS_MAX], *value[ARGS_MAX];
	int header[ARGS_MAX];
	size_t n;
};

/* The first value of key, as MHD_lookup_connection_value gives it. */
static const char *get(void *ctx, enum http_arg_kind kind, const char *key)
{
	const struct fuzz_args *a = ctx;

	for (size_t i = 0; i < a->n; i++)
		if (a->header[i] == (kind == HTTP_ARG_HEADER) && strcmp(a->key[i], key) == 0)
			return a->value[i];
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_strndup(data, size), *save = NULL;
	struct fuzz_args a = { .n = 0 };
	struct http_args args = { .get = get, .ctx = &a };
	struct store_timeline_query q = { 0 };
	struct http_stream_filter f;
	int64_t limit;
	const char *bad;

	for (char *part = strtok_r(text, "&", &save); part && a.n < ARGS_MAX;
	     part = strtok_r(NULL, "&", &save)) {
		char *eq = strchr(part, '=');

		if (eq)
			*eq = '\0';
		a.header[a.n] = part[0] == '@';
		a.key[a.n] = part + a.header[a.n];
		a.value[a.n] = eq ? eq + 1 : NULL; /* "?key": there, with no value */
		MHD_http_unescape(a.key[a.n]);
		if (a.value[a.n])
			MHD_http_unescape(a.value[a.n]);
		a.n++;
	}
	bad = http_timeline_args(&args, &q, &limit);
	if (!bad && (limit < 1 || limit > TIMELINE_LIMIT_MAX))
		fuzz_die("limit %lld taken", (long long)limit);
	bad = http_stream_args(&args, &f);
	if (!bad && (f.nkinds > SSE_KINDS_MAX || strlen(f.sandbox) > FB_NAME_MAX))
		fuzz_die("a filter past its bounds taken");
	free(text);
	return 0;
}
