/*
 * The trace line parser (lib/trace.h): every refusal lands in its exact error class, because the
 * daemon counts each class separately and the harness is told which one; good lines fill every
 * field; and random bytes never crash it nor slip through as TRACE_OK.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "fixtures.h"
#include "macro.h"
#include "timeutil.h"
#include "trace.h"

#define START                                                                                      \
	"{\"gen_ai.operation.name\":\"execute_tool\",\"gen_ai.tool.name\":\"run_tests\","          \
	"\"gen_ai.tool.call.id\":\"call-1\",\"firebreak.sandbox\":\"sb1\",\"firebreak.step\":3,"   \
	"\"phase\":\"start\"}"
#define END_HEAD                                                                                   \
	"{\"gen_ai.operation.name\":\"execute_tool\",\"gen_ai.tool.name\":\"run_tests\","          \
	"\"gen_ai.tool.call.id\":\"call-1\",\"firebreak.sandbox\":\"sb1\",\"firebreak.step\":3,"   \
	"\"phase\":\"end\""

#define TRACEPARENT "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

/* 2026-11-29T21:17:56Z in seconds since the epoch. */
#define T0_SEC 1795987076LL

/* Parses len bytes of line; on TRACE_OK the caller clears rec. Any refusal must say why. */
static enum trace_error parse_n(const char *line, size_t len, struct trace_record *rec)
{
	char err[256] = "";
	enum trace_error e = trace_parse_line(line, len, rec, err, sizeof(err));

	if (e != TRACE_OK && err[0] == '\0')
		fail_msg("refused with class %s but no reason", trace_error_to_string(e));
	return e;
}

/* Expects line to be refused with exactly class want. */
static void expect_n(const char *line, size_t len, enum trace_error want)
{
	struct trace_record rec = { 0 };
	enum trace_error e = parse_n(line, len, &rec);

	if (e == TRACE_OK)
		trace_record_clear(&rec);
	if (e != want)
		fail_msg("%.200s: got %s, want %s", line, trace_error_to_string(e),
			 trace_error_to_string(want));
}

static void expect(const char *line, enum trace_error want)
{
	expect_n(line, strlen(line), want);
}

/* The good start line as an object, to change one attribute of. */
static json_t *start_obj(void)
{
	json_t *obj = json_loads(START, 0, NULL);

	assert_non_null(obj);
	return obj;
}

static json_t *end_obj(void)
{
	json_t *obj = start_obj();

	json_object_set_new(obj, "phase", json_string("end"));
	return obj;
}

/* Sets key to value (stolen; NULL deletes key) in obj (stolen), encodes it, expects want. */
static void expect_obj(json_t *obj, const char *key, json_t *value, enum trace_error want)
{
	char *line;

	if (value)
		json_object_set_new(obj, key, value);
	else
		assert_int_equal(json_object_del(obj, key), 0);
	line = json_dumps(obj, JSON_COMPACT);
	assert_non_null(line);
	expect(line, want);
	free(line);
	json_decref(obj);
}

static void test_malformed_json_is_json_error(void **state)
{
	expect("", TRACE_ERR_JSON);
	expect("{", TRACE_ERR_JSON);
	expect("{\"phase\":\"start\"", TRACE_ERR_JSON);
	expect("{not json}", TRACE_ERR_JSON);
	expect(START " x", TRACE_ERR_JSON);
	expect(START START, TRACE_ERR_JSON);
	expect(START " " START, TRACE_ERR_JSON);
	expect(START ",", TRACE_ERR_JSON);
}

static void test_valid_json_that_is_not_an_object_is_not_object(void **state)
{
	expect("[]", TRACE_ERR_NOT_OBJECT);
	expect("[" START "]", TRACE_ERR_NOT_OBJECT);
	expect("\"a string\"", TRACE_ERR_NOT_OBJECT);
	expect("42", TRACE_ERR_NOT_OBJECT);
	expect("-1.5e3", TRACE_ERR_NOT_OBJECT);
	expect("null", TRACE_ERR_NOT_OBJECT);
	expect("true", TRACE_ERR_NOT_OBJECT);
}

static void test_binary_garbage_is_json_error(void **state)
{
	static const char random_bytes[] = "\x9c\x01\xfe\x7f{\x80\"\xc3\x28\xff\x00\x11";
	static const char nul_between[] = "{\"gen_ai.operation.name\":\"execute_tool\",\0\"x\":1}";
	static const char nul_in_string[] = "{\"gen_ai.tool.name\":\"run\0tests\"}";
	static const char nul_at_end[] = START "\0";
	char line[sizeof(START) + 16];

	expect_n(random_bytes, sizeof(random_bytes) - 1, TRACE_ERR_JSON);
	expect_n(nul_between, sizeof(nul_between) - 1, TRACE_ERR_JSON);
	expect_n(nul_in_string, sizeof(nul_in_string) - 1, TRACE_ERR_JSON);
	expect_n(nul_at_end, sizeof(nul_at_end) - 1, TRACE_ERR_JSON);

	/* A NUL byte replacing one character of the call id of an otherwise good line. */
	strcpy(line, START);
	*strstr(line, "call-1") = '\0';
	expect_n(line, strlen(START), TRACE_ERR_JSON);

	/* Invalid UTF-8 inside a string value: a lone continuation byte, an overlong '/'. */
	strcpy(line, START);
	strstr(line, "run_tests")[3] = (char)0x80;
	expect(line, TRACE_ERR_JSON);
	strcpy(line, START);
	memcpy(strstr(line, "call-1"), "\xc0\xaf", 2);
	expect(line, TRACE_ERR_JSON);

	/* An escaped NUL would cut the C string the record keeps. */
	expect("{\"gen_ai.operation.name\":\"execute_tool\",\"gen_ai.tool.name\":\"run_tests\","
	       "\"gen_ai.tool.call.id\":\"call\\u0000-1\",\"firebreak.sandbox\":\"sb1\","
	       "\"firebreak.step\":3,\"phase\":\"start\"}",
	       TRACE_ERR_JSON);
}

static void test_duplicate_keys_are_json_error(void **state)
{
	expect(END_HEAD ",\"phase\":\"start\"}", TRACE_ERR_JSON);
	expect(END_HEAD ",\"firebreak.step\":3}", TRACE_ERR_JSON);
	/* A duplicate inside annotations is as ambiguous as one at the top. */
	expect(END_HEAD ",\"annotations\":{\"a\":1,\"a\":2}}", TRACE_ERR_JSON);
}

static void test_each_missing_required_attribute_is_missing(void **state)
{
	static const char *const required[] = {
		"gen_ai.operation.name", "gen_ai.tool.name", "gen_ai.tool.call.id",
		"firebreak.sandbox",	 "firebreak.step",   "phase",
	};

	for (size_t i = 0; i < ARRAY_SIZE(required); i++)
		expect_obj(start_obj(), required[i], NULL, TRACE_ERR_MISSING);
	expect("{}", TRACE_ERR_MISSING);
}

static void test_each_wrong_type_is_type_error(void **state)
{
	expect_obj(start_obj(), "firebreak.step", json_string("1"), TRACE_ERR_TYPE);
	expect_obj(start_obj(), "firebreak.step", json_real(1.5), TRACE_ERR_TYPE);
	expect_obj(start_obj(), "firebreak.step", json_real(1.0), TRACE_ERR_TYPE);
	expect_obj(start_obj(), "firebreak.step", json_null(), TRACE_ERR_TYPE);
	expect_obj(start_obj(), "gen_ai.tool.name", json_integer(5), TRACE_ERR_TYPE);
	expect_obj(start_obj(), "gen_ai.operation.name", json_true(), TRACE_ERR_TYPE);
	expect_obj(start_obj(), "gen_ai.tool.call.id", json_integer(1), TRACE_ERR_TYPE);
	expect_obj(start_obj(), "firebreak.sandbox", json_array(), TRACE_ERR_TYPE);
	expect_obj(start_obj(), "phase", json_object(), TRACE_ERR_TYPE);
	expect_obj(start_obj(), "annotations", json_pack("[i]", 1), TRACE_ERR_TYPE);
	expect_obj(start_obj(), "annotations", json_string("{}"), TRACE_ERR_TYPE);
	expect_obj(end_obj(), "exit_code", json_string("3"), TRACE_ERR_TYPE);
	expect_obj(end_obj(), "exit_code", json_real(3.0), TRACE_ERR_TYPE);
	expect_obj(end_obj(), "error.type", json_integer(2), TRACE_ERR_TYPE);
	expect_obj(start_obj(), "traceparent", json_integer(0), TRACE_ERR_TYPE);
	expect_obj(start_obj(), "ts", json_true(), TRACE_ERR_TYPE);
	expect_obj(start_obj(), "ts", json_real(1.5e18), TRACE_ERR_TYPE);
	expect_obj(start_obj(), "ts", json_null(), TRACE_ERR_TYPE);
}

static void test_bad_values_are_value_errors(void **state)
{
	char *id128 = fixture_repeat('c', FB_CALL_ID_MAX),
	     *id129 = fixture_repeat('c', FB_CALL_ID_MAX + 1);
	char *tool64 = fixture_repeat('t', FB_TOOL_MAX + 1),
	     *sb64 = fixture_repeat('s', FB_NAME_MAX + 1);
	char *etype257 = fixture_repeat('e', FB_ERROR_TYPE_MAX + 1);

	expect_obj(start_obj(), "gen_ai.operation.name", json_string("chat"), TRACE_ERR_VALUE);
	expect_obj(start_obj(), "gen_ai.operation.name", json_string(""), TRACE_ERR_VALUE);
	expect_obj(start_obj(), "phase", json_string("middle"), TRACE_ERR_VALUE);
	expect_obj(start_obj(), "phase", json_string("START"), TRACE_ERR_VALUE);
	expect_obj(start_obj(), "firebreak.step", json_integer(-1), TRACE_ERR_VALUE);
	expect_obj(start_obj(), "firebreak.step", json_integer(2147483648LL), TRACE_ERR_VALUE);
	expect_obj(start_obj(), "gen_ai.tool.name", json_string("my tool"), TRACE_ERR_VALUE);
	expect_obj(start_obj(), "gen_ai.tool.name", json_string(""), TRACE_ERR_VALUE);
	expect_obj(start_obj(), "gen_ai.tool.name", json_string(tool64), TRACE_ERR_VALUE);
	expect_obj(start_obj(), "gen_ai.tool.call.id", json_string("call 1"), TRACE_ERR_VALUE);
	expect_obj(start_obj(), "gen_ai.tool.call.id", json_string(""), TRACE_ERR_VALUE);
	expect_obj(start_obj(), "gen_ai.tool.call.id", json_string("caf\xc3\xa9"), TRACE_ERR_VALUE);
	expect_obj(start_obj(), "gen_ai.tool.call.id", json_string("a\tb"), TRACE_ERR_VALUE);
	expect_obj(start_obj(), "gen_ai.tool.call.id", json_string(id129), TRACE_ERR_VALUE);
	expect_obj(start_obj(), "firebreak.sandbox", json_string("../x"), TRACE_ERR_VALUE);
	expect_obj(start_obj(), "firebreak.sandbox", json_string(".x"), TRACE_ERR_VALUE);
	expect_obj(start_obj(), "firebreak.sandbox", json_string(sb64), TRACE_ERR_VALUE);
	expect_obj(start_obj(), "error.type", json_string("timeout"), TRACE_ERR_VALUE);
	expect_obj(end_obj(), "error.type", json_string(etype257), TRACE_ERR_VALUE);
	expect_obj(start_obj(), "exit_code", json_integer(0), TRACE_ERR_VALUE);
	expect_obj(end_obj(), "exit_code", json_integer(2147483648LL), TRACE_ERR_VALUE);
	expect_obj(end_obj(), "exit_code", json_integer(-2147483649LL), TRACE_ERR_VALUE);
	expect_obj(start_obj(), "ts", json_string("yesterday"), TRACE_ERR_VALUE);
	expect_obj(start_obj(), "ts", json_string("15m"), TRACE_ERR_VALUE);
	expect_obj(start_obj(), "ts", json_string("1795987076000000000"), TRACE_ERR_VALUE);
	expect_obj(start_obj(), "ts", json_string("2026-11-29T21:17:56+01:00"), TRACE_ERR_VALUE);
	expect_obj(start_obj(), "ts", json_string("2026-11-29T21:17:56"), TRACE_ERR_VALUE);
	expect_obj(start_obj(), "ts", json_string("1969-12-31T23:59:59Z"), TRACE_ERR_VALUE);
	expect_obj(start_obj(), "ts", json_integer(0), TRACE_ERR_VALUE);
	expect_obj(start_obj(), "ts", json_integer(-1), TRACE_ERR_VALUE);

	/* The limits themselves are fine. */
	expect_obj(start_obj(), "gen_ai.tool.call.id", json_string(id128), TRACE_OK);
	expect_obj(start_obj(), "firebreak.step", json_integer(FB_STEP_MAX), TRACE_OK);
	expect_obj(start_obj(), "firebreak.step", json_integer(0), TRACE_OK);
	expect_obj(end_obj(), "exit_code", json_integer(INT32_MIN), TRACE_OK);
	free(id128);
	free(id129);
	free(tool64);
	free(sb64);
	free(etype257);
}

static void test_bad_traceparent_is_value_error(void **state)
{
	static const char *const bad[] = {
		"",
		"garbage",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-",
		"00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e47366-00f067aa0ba902b7-01",
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"0-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		/* The empty string reads as "no traceparent", which is allowed. */
		enum trace_error want = bad[i][0] ? TRACE_ERR_VALUE : TRACE_OK;

		expect_obj(start_obj(), "traceparent", json_string(bad[i]), want);
	}
}

static void test_annotations_are_capped_by_their_compact_size(void **state)
{
	/* {"k":"…"} is the string plus 8 bytes of compact JSON. */
	char *fits = fixture_repeat('a', FB_ANNOTATIONS_MAX - 8);
	char *over = fixture_repeat('a', FB_ANNOTATIONS_MAX - 7);

	expect_obj(start_obj(), "annotations", json_pack("{s:s}", "k", fits), TRACE_OK);
	expect_obj(start_obj(), "annotations", json_pack("{s:s}", "k", over), TRACE_ERR_VALUE);
	/* Measured as compact ASCII: a non-ASCII character counts as its 6-byte escape. */
	fits[FB_ANNOTATIONS_MAX - 8 - 2] = '\0';
	strcat(fits, "\xc3\xa9");
	expect_obj(start_obj(), "annotations", json_pack("{s:s}", "k", fits), TRACE_ERR_VALUE);
	free(fits);
	free(over);
}

static void test_unknown_attribute_is_unknown_key(void **state)
{
	expect_obj(start_obj(), "gen_ai.tool.description", json_string("x"), TRACE_ERR_UNKNOWN_KEY);
	expect_obj(start_obj(), "Phase", json_string("start"), TRACE_ERR_UNKNOWN_KEY);
	expect_obj(start_obj(), "", json_null(), TRACE_ERR_UNKNOWN_KEY);
	/* The unknown key is reported even when another attribute is also bad. */
	expect("{\"firebreak.step\":\"x\",\"extra\":1}", TRACE_ERR_UNKNOWN_KEY);
}

/* A good start line padded with spaces inside the object to exactly len bytes. */
static char *padded_line(size_t len)
{
	char *line = malloc(len + 2);
	size_t head = strlen(START) - 1;

	assert_non_null(line);
	assert_true(len > head + 1);
	memcpy(line, START, head);
	memset(line + head, ' ', len - head - 1);
	line[len - 1] = '}';
	line[len] = '\r';
	line[len + 1] = '\0';
	return line;
}

static void test_line_over_the_cap_is_too_long(void **state)
{
	char *at_cap = padded_line(FB_TRACE_LINE_MAX);
	char *over = padded_line(FB_TRACE_LINE_MAX + 1);
	char *huge = padded_line(4 * FB_TRACE_LINE_MAX);

	expect_n(at_cap, FB_TRACE_LINE_MAX, TRACE_OK);
	/* The '\r' does not count towards the cap. */
	expect_n(at_cap, FB_TRACE_LINE_MAX + 1, TRACE_OK);
	expect_n(over, FB_TRACE_LINE_MAX + 1, TRACE_ERR_TOO_LONG);
	expect_n(over, FB_TRACE_LINE_MAX + 2, TRACE_ERR_TOO_LONG);
	expect_n(huge, 4 * FB_TRACE_LINE_MAX, TRACE_ERR_TOO_LONG);
	/* Too long is decided before parsing: an over-long line of garbage is still too long. */
	memset(huge, 0xff, 4 * FB_TRACE_LINE_MAX);
	expect_n(huge, 4 * FB_TRACE_LINE_MAX, TRACE_ERR_TOO_LONG);
	free(at_cap);
	free(over);
	free(huge);
}

static void test_minimal_start_fills_the_record(void **state)
{
	struct trace_record rec;

	memset(&rec, 0x5a, sizeof(rec));
	assert_int_equal(parse_n(START, strlen(START), &rec), TRACE_OK);
	assert_string_equal(rec.sandbox, "sb1");
	assert_int_equal(rec.step, 3);
	assert_string_equal(rec.tool, "run_tests");
	assert_string_equal(rec.call_id, "call-1");
	assert_int_equal(rec.phase, TRACE_PHASE_START);
	assert_int_equal(rec.ts, 0);
	assert_int_equal(rec.has_exit_code, 0);
	assert_string_equal(rec.error_type, "");
	assert_string_equal(rec.traceparent, "");
	assert_null(rec.annotations);
	trace_record_clear(&rec);
	/* Clearing twice, or a record never filled, is harmless. */
	trace_record_clear(&rec);
}

static void test_full_end_fills_the_record(void **state)
{
	static const char line[] = END_HEAD ",\"exit_code\":-3,\"error.type\":\"timeout\","
					    "\"annotations\":{\"coerced\":true,\"reason\":\"r\"},"
					    "\"traceparent\":\"" TRACEPARENT "\","
					    "\"ts\":1795987076000000001}";
	struct trace_record rec;

	assert_int_equal(parse_n(line, strlen(line), &rec), TRACE_OK);
	assert_int_equal(rec.phase, TRACE_PHASE_END);
	assert_int_equal(rec.has_exit_code, 1);
	assert_int_equal(rec.exit_code, -3);
	assert_string_equal(rec.error_type, "timeout");
	assert_string_equal(rec.traceparent, TRACEPARENT);
	assert_int_equal(rec.ts, 1795987076000000001LL);
	assert_non_null(rec.annotations);
	assert_true(json_is_true(json_object_get(rec.annotations, "coerced")));
	assert_string_equal(json_string_value(json_object_get(rec.annotations, "reason")), "r");
	assert_int_equal(json_object_size(rec.annotations), 2);
	trace_record_clear(&rec);
	assert_null(rec.annotations);
}

static void test_exit_code_zero_is_recorded_as_present(void **state)
{
	static const char line[] = END_HEAD ",\"exit_code\":0}";
	struct trace_record rec;

	assert_int_equal(parse_n(line, strlen(line), &rec), TRACE_OK);
	assert_int_equal(rec.has_exit_code, 1);
	assert_int_equal(rec.exit_code, 0);
	trace_record_clear(&rec);
}

static int64_t parsed_ts(const char *ts_json)
{
	char line[512];
	struct trace_record rec;
	int64_t ts;

	snprintf(line, sizeof(line), END_HEAD ",\"ts\":%s}", ts_json);
	assert_int_equal(parse_n(line, strlen(line), &rec), TRACE_OK);
	ts = rec.ts;
	trace_record_clear(&rec);
	return ts;
}

static void test_ts_as_integer_and_rfc3339_is_exact(void **state)
{
	assert_int_equal(parsed_ts("1"), 1);
	assert_int_equal(parsed_ts("1795987076000000000"), T0_SEC * NSEC_PER_SEC);
	assert_int_equal(parsed_ts("\"2026-11-29T21:17:56Z\""), T0_SEC * NSEC_PER_SEC);
	assert_int_equal(parsed_ts("\"2026-11-29T21:17:56.5Z\""),
			 T0_SEC * NSEC_PER_SEC + 500000000);
	assert_int_equal(parsed_ts("\"2026-11-29T21:17:56.000000001Z\""),
			 T0_SEC * NSEC_PER_SEC + 1);
	assert_int_equal(parsed_ts("\"2026-11-29T21:17:56.123456789Z\""),
			 T0_SEC * NSEC_PER_SEC + 123456789);
}

static void test_trailing_carriage_return_is_ignored(void **state)
{
	static const char line[] = START "\r";
	struct trace_record rec;

	assert_int_equal(parse_n(line, strlen(line), &rec), TRACE_OK);
	assert_string_equal(rec.call_id, "call-1");
	trace_record_clear(&rec);
	/* Only len bytes are read: what follows in the buffer is not part of the line. */
	assert_int_equal(parse_n(START "garbage", strlen(START), &rec), TRACE_OK);
	trace_record_clear(&rec);
}

static void test_error_classes_have_stable_names(void **state)
{
	assert_string_equal(trace_error_to_string(TRACE_OK), "ok");
	assert_string_equal(trace_error_to_string(TRACE_ERR_JSON), "json");
	assert_string_equal(trace_error_to_string(TRACE_ERR_NOT_OBJECT), "not_object");
	assert_string_equal(trace_error_to_string(TRACE_ERR_TOO_LONG), "too_long");
	assert_string_equal(trace_error_to_string(TRACE_ERR_MISSING), "missing_field");
	assert_string_equal(trace_error_to_string(TRACE_ERR_TYPE), "wrong_type");
	assert_string_equal(trace_error_to_string(TRACE_ERR_VALUE), "bad_value");
	assert_string_equal(trace_error_to_string(TRACE_ERR_UNKNOWN_KEY), "unknown_key");
	assert_string_equal(trace_error_to_string(_TRACE_ERR_MAX), "unknown");
	for (int e = 0; e < _TRACE_ERR_MAX; e++)
		assert_non_null(trace_error_to_string(e));
}

/* Parses line (which must be good) into an event received at recv_ns. */
static void to_event(const char *line, int64_t recv_ns, struct event *ev, json_t **fields)
{
	struct trace_record rec;

	assert_int_equal(parse_n(line, strlen(line), &rec), TRACE_OK);
	assert_int_equal(trace_record_to_event(&rec, recv_ns, ev), 0);
	trace_record_clear(&rec);
	*fields = event_get_fields(ev);
	assert_non_null(*fields);
}

static void test_start_event_is_stamped_with_receive_time_when_line_has_none(void **state)
{
	struct event ev;
	json_t *f;

	to_event(START, 777, &ev, &f);
	assert_int_equal(ev.ts, 777);
	assert_int_equal(ev.source, EVENT_SOURCE_TRACE);
	assert_string_equal(ev.kind, "tool_call.start");
	assert_int_equal(ev.step, 3);
	assert_string_equal(ev.tool, "run_tests");
	assert_string_equal(ev.sandbox, "sb1");
	assert_int_equal(ev.pid, 0);
	assert_int_equal(ev.uid, EVENT_UID_NONE);
	assert_int_equal(ev.id, 0);
	assert_int_equal(json_object_size(f), 1);
	assert_string_equal(json_string_value(json_object_get(f, "call_id")), "call-1");
	assert_null(json_object_get(f, "recv_ts"));
	json_decref(f);
	event_clear(&ev);
}

static void test_end_event_carries_given_ts_and_every_field(void **state)
{
	static const char line[] = END_HEAD ",\"exit_code\":3,\"error.type\":\"timeout\","
					    "\"annotations\":{\"coerced\":true,\"reason\":\"r\"},"
					    "\"traceparent\":\"" TRACEPARENT "\","
					    "\"ts\":\"2026-11-29T21:17:56.5Z\"}";
	json_t *f, *want_ann = json_pack("{s:b, s:s}", "coerced", 1, "reason", "r");
	struct event ev;

	to_event(line, 999, &ev, &f);
	assert_int_equal(ev.ts, T0_SEC * NSEC_PER_SEC + 500000000);
	assert_string_equal(ev.kind, "tool_call.end");
	assert_string_equal(json_string_value(json_object_get(f, "call_id")), "call-1");
	assert_int_equal(json_integer_value(json_object_get(f, "exit_code")), 3);
	assert_string_equal(json_string_value(json_object_get(f, "error_type")), "timeout");
	assert_string_equal(json_string_value(json_object_get(f, "traceparent")), TRACEPARENT);
	assert_true(json_equal(json_object_get(f, "annotations"), want_ann));
	/* The line's own time is kept as ts; when it arrived goes into recv_ts. */
	assert_int_equal(json_integer_value(json_object_get(f, "recv_ts")), 999);
	assert_int_equal(json_object_size(f), 6);
	json_decref(want_ann);
	json_decref(f);
	event_clear(&ev);
}

static void test_end_event_without_exit_code_has_none_in_fields(void **state)
{
	struct event ev;
	json_t *f;

	to_event(END_HEAD "}", 5, &ev, &f);
	assert_null(json_object_get(f, "exit_code"));
	assert_null(json_object_get(f, "error_type"));
	assert_null(json_object_get(f, "annotations"));
	json_decref(f);
	event_clear(&ev);
}

/* xorshift64*: a fixed seed makes every run try the same inputs, so a failure reproduces. */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

/*
 * Checks one input against an independent reading with jansson: whatever is not JSON must be
 * TRACE_ERR_JSON, JSON that is not an object TRACE_ERR_NOT_OBJECT, and TRACE_OK only for an object
 * whose attributes the record then matches.
 */
static void check_against_oracle(const char *buf, size_t len)
{
	size_t jlen = len > 0 && buf[len - 1] == '\r' ? len - 1 : len;
	json_t *obj = json_loadb(buf, jlen, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, NULL);
	struct trace_record rec;
	enum trace_error e = parse_n(buf, len, &rec);

	assert_in_range(e, TRACE_OK, TRACE_ERR_UNKNOWN_KEY);
	assert_int_not_equal(e, TRACE_ERR_TOO_LONG);
	if (!obj) {
		assert_int_equal(e, TRACE_ERR_JSON);
	} else if (!json_is_object(obj)) {
		assert_int_equal(e, TRACE_ERR_NOT_OBJECT);
	} else if (e == TRACE_OK) {
		assert_string_equal(rec.call_id,
				    json_string_value(json_object_get(obj, "gen_ai.tool.call.id")));
		assert_string_equal(rec.tool,
				    json_string_value(json_object_get(obj, "gen_ai.tool.name")));
		assert_int_equal(rec.step,
				 json_integer_value(json_object_get(obj, "firebreak.step")));
		assert_true(event_sandbox_name_valid(rec.sandbox));
		trace_record_clear(&rec);
	} else {
		assert_int_not_equal(e, TRACE_ERR_JSON);
		assert_int_not_equal(e, TRACE_ERR_NOT_OBJECT);
	}
	json_decref(obj);
}

static void test_random_bytes_never_crash_nor_pass_unparsed(void **state)
{
	static const char alphabet[] = "{}[]\":,0123456789.-eEtrufalsn \\u\r\n\t\x00\x80\xc3\xff";
	uint64_t seed = 0x5eed5eed12345678ULL;
	char buf[512];
	int ok = 0;

	for (int i = 0; i < 10000; i++) {
		size_t len = rng_next(&seed) % sizeof(buf);

		/* Half plain random bytes, half drawn from JSON's own punctuation (more likely to
		 * get past the first byte). */
		for (size_t j = 0; j < len; j++) {
			uint64_t r = rng_next(&seed);

			buf[j] = i % 2 ? (char)(r >> 24)
				       : alphabet[(r >> 24) % (sizeof(alphabet) - 1)];
		}
		check_against_oracle(buf, len);
	}
	/* Mutations of a good line: flipped bytes, cut ends, and some of them still good. */
	for (int i = 0; i < 10000; i++) {
		size_t len = strlen(START);
		int flips = 1 + (int)(rng_next(&seed) % 3);
		struct trace_record rec;

		memcpy(buf, START, len);
		for (int k = 0; k < flips; k++) {
			uint64_t r = rng_next(&seed);

			buf[r % len] = (r >> 40) % 4 ? (char)(r >> 32) : buf[(r >> 48) % len];
		}
		if (rng_next(&seed) % 4 == 0)
			len = rng_next(&seed) % len;
		check_against_oracle(buf, len);
		if (parse_n(buf, len, &rec) == TRACE_OK) {
			ok++;
			trace_record_clear(&rec);
		}
	}
	/* A mutation test that never produced a good line would not be testing the OK path. */
	assert_true(ok > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_malformed_json_is_json_error),
		cmocka_unit_test(test_valid_json_that_is_not_an_object_is_not_object),
		cmocka_unit_test(test_binary_garbage_is_json_error),
		cmocka_unit_test(test_duplicate_keys_are_json_error),
		cmocka_unit_test(test_each_missing_required_attribute_is_missing),
		cmocka_unit_test(test_each_wrong_type_is_type_error),
		cmocka_unit_test(test_bad_values_are_value_errors),
		cmocka_unit_test(test_bad_traceparent_is_value_error),
		cmocka_unit_test(test_annotations_are_capped_by_their_compact_size),
		cmocka_unit_test(test_unknown_attribute_is_unknown_key),
		cmocka_unit_test(test_line_over_the_cap_is_too_long),
		cmocka_unit_test(test_minimal_start_fills_the_record),
		cmocka_unit_test(test_full_end_fills_the_record),
		cmocka_unit_test(test_exit_code_zero_is_recorded_as_present),
		cmocka_unit_test(test_ts_as_integer_and_rfc3339_is_exact),
		cmocka_unit_test(test_trailing_carriage_return_is_ignored),
		cmocka_unit_test(test_error_classes_have_stable_names),
		cmocka_unit_test(test_start_event_is_stamped_with_receive_time_when_line_has_none),
		cmocka_unit_test(test_end_event_carries_given_ts_and_every_field),
		cmocka_unit_test(test_end_event_without_exit_code_has_none_in_fields),
		cmocka_unit_test(test_random_bytes_never_crash_nor_pass_unparsed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
