/*
 * The HTTP API's query parameters (monitor/http/http-query.h), without a server: the timeline's
 * since/until/limit/cursor and the event stream's sandbox/kind/Last-Event-ID, each accepted in
 * the form docs/api.md gives and refused with its 400 message otherwise.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "event.h"
#include "monitor/http/http-query.h"
#include "store/store.h"

/* "key=value" strings, NULL-terminated; "@key=value" stands for a header. */
static const char *get(void *ctx, enum http_arg_kind kind, const char *key)
{
	for (const char *const *a = ctx; *a; a++) {
		const char *s = *a;
		size_t n = strlen(key);

		if ((s[0] == '@') != (kind == HTTP_ARG_HEADER))
			continue;
		s += s[0] == '@';
		if (strncmp(s, key, n) == 0 && s[n] == '=')
			return s + n + 1;
	}
	return NULL;
}

static const char *timeline(const char *const *args, struct store_timeline_query *q, int64_t *limit)
{
	struct http_args a = { .get = get, .ctx = (void *)args };

	memset(q, 0, sizeof(*q));
	*limit = -1;
	return http_timeline_args(&a, q, limit);
}

static const char *stream(const char *const *args, struct http_stream_filter *f)
{
	struct http_args a = { .get = get, .ctx = (void *)args };

	return http_stream_args(&a, f);
}

static void test_timeline_takes_its_documented_arguments(void **state)
{
	const char *args[] = { "since=10", "until=20", "limit=5", "cursor=15.7", NULL };
	const char *none[] = { NULL };
	struct store_timeline_query q;
	int64_t limit;

	assert_null(timeline(args, &q, &limit));
	assert_int_equal(q.since, 10);
	assert_int_equal(q.until, 20);
	assert_int_equal(limit, 5);
	assert_int_equal(q.after_ts, 15);
	assert_int_equal(q.after_id, 7);
	assert_null(timeline(none, &q, &limit));
	assert_int_equal(limit, TIMELINE_LIMIT_DEFAULT);
	assert_int_equal(q.after_id, 0);
}

static void test_timeline_refuses_bad_numbers_limits_and_cursors(void **state)
{
	static const struct {
		const char *arg, *want;
	} bad[] = {
		{ "since=-1", "since and until are ns since the epoch" },
		{ "until=1e9", "since and until are ns since the epoch" },
		{ "since=99999999999999999999", "since and until are ns since the epoch" },
		{ "limit=0", "limit is 1 to 10000" },
		{ "limit=10001", "limit is 1 to 10000" },
		{ "limit=", "limit is 1 to 10000" },
		{ "cursor=15", "cursor: not one this API gave" },
		{ "cursor=15.0", "cursor: not one this API gave" },
		{ "cursor=.7", "cursor: not one this API gave" },
		{ "cursor=1.2.3", "cursor: not one this API gave" },
		{ "cursor=123456789012345678901234.1", "cursor: not one this API gave" },
		{ "cursor=1.123456789012345678901234", "cursor: not one this API gave" },
	};
	struct store_timeline_query q;
	int64_t limit;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *args[] = { bad[i].arg, NULL };
		const char *got = timeline(args, &q, &limit);

		assert_non_null(got);
		assert_string_equal(got, bad[i].want);
		assert_int_equal(limit, -1); /* untouched on failure */
	}
}

static void test_stream_filter_resumes_from_the_header_before_the_argument(void **state)
{
	const char *args[] = { "sandbox=task-42", "kind=net.*,dns.query", "last_event_id=5",
			       "@Last-Event-ID=9", NULL };
	const char *arg_only[] = { "last_event_id=5", NULL };
	struct http_stream_filter f;

	assert_null(stream(args, &f));
	assert_string_equal(f.sandbox, "task-42");
	assert_int_equal(f.nkinds, 2);
	assert_string_equal(f.kinds[0], "net.*");
	assert_string_equal(f.kinds[1], "dns.query");
	assert_true(f.has_cursor);
	assert_int_equal(f.cursor, 9);
	assert_null(stream(arg_only, &f));
	assert_int_equal(f.cursor, 5);
}

static void test_stream_filter_refuses_bad_names_ids_and_kind_lists(void **state)
{
	const char *bad_name[] = { "sandbox=../x", NULL };
	const char *bad_id[] = { "@Last-Event-ID=-1", NULL };
	const char *empty_kind[] = { "kind=a,,b", NULL };
	const char *too_many[] = { "kind=a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q", NULL };
	const char *sixteen[] = { "kind=a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p", NULL };
	struct http_stream_filter f;

	assert_string_equal(stream(bad_name, &f), "sandbox: not a valid sandbox name");
	assert_string_equal(stream(bad_id, &f), "Last-Event-ID must be an event id");
	assert_string_equal(stream(empty_kind, &f), "kind: at most 16 kinds, comma-separated");
	assert_string_equal(stream(too_many, &f), "kind: at most 16 kinds, comma-separated");
	assert_null(stream(sixteen, &f));
	assert_int_equal(f.nkinds, SSE_KINDS_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timeline_takes_its_documented_arguments),
		cmocka_unit_test(test_timeline_refuses_bad_numbers_limits_and_cursors),
		cmocka_unit_test(test_stream_filter_resumes_from_the_header_before_the_argument),
		cmocka_unit_test(test_stream_filter_refuses_bad_names_ids_and_kind_lists),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
