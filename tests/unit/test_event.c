/*
 * The event model (lib/event.h) and its one-line description (lib/event-describe.h): encodings
 * round-trip field by field, ownership of `fields` moves and copies as documented, and the decoder
 * refuses every malformed event the control socket could hand it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "event-describe.h"
#include "fixtures.h"
#include "event.h"
#include "macro.h"

/* Non-ASCII as an escape: the decoder re-encodes with JSON_ENSURE_ASCII and must get these back. */
static const char full_fields[] = "{\"argv\":[\"ls\",\"-l\"],\"n\":3,\"s\":\"\\u00E9\"}";

/* An event with every field set, so that a round trip that drops one is noticed. */
static void make_full_event(struct event *ev)
{
	event_init(ev);
	ev->id = 42;
	ev->ts = 1795987076123456789LL;
	ev->sandbox_id = 7;
	strcpy(ev->sandbox, "agent-1");
	ev->step = 12;
	strcpy(ev->tool, "shell.exec");
	ev->source = EVENT_SOURCE_EBPF;
	strcpy(ev->kind, "proc.exec");
	ev->pid = 4242;
	ev->ppid = 4241;
	ev->uid = 1000;
	strcpy(ev->comm, "pytest");
	assert_int_equal(event_set_fields_text(ev, full_fields, strlen(full_fields)), 0);
}

/* A bare event: no id, no step, no uid, no fields. */
static void make_bare_event(struct event *ev)
{
	event_init(ev);
	ev->ts = 5;
	ev->source = EVENT_SOURCE_MONITOR;
	strcpy(ev->kind, "monitor.gap");
}

/* Compares what an encoding carries: everything but sandbox_id, which is the store's business. */
static void assert_events_equal(const struct event *a, const struct event *b)
{
	assert_int_equal(a->id, b->id);
	assert_int_equal(a->ts, b->ts);
	assert_string_equal(a->sandbox, b->sandbox);
	assert_int_equal(a->step, b->step);
	assert_string_equal(a->tool, b->tool);
	assert_int_equal(a->source, b->source);
	assert_string_equal(a->kind, b->kind);
	assert_int_equal(a->pid, b->pid);
	assert_int_equal(a->ppid, b->ppid);
	assert_int_equal(a->uid, b->uid);
	assert_string_equal(a->comm, b->comm);
	if (!a->fields || !b->fields) {
		/* NULL and "{}" both mean no fields; the decoder stores an empty object as NULL. */
		json_t *fa = event_get_fields(a), *fb = event_get_fields(b);

		assert_non_null(fa);
		assert_non_null(fb);
		assert_true(json_equal(fa, fb));
		json_decref(fa);
		json_decref(fb);
	} else {
		assert_int_equal(a->fields_len, b->fields_len);
		assert_string_equal(a->fields, b->fields);
	}
}

static void round_trip_json(const struct event *ev)
{
	json_t *obj = event_to_json(ev);
	struct event back;
	char err[128] = "";

	assert_non_null(obj);
	assert_int_equal(event_from_json(obj, &back, err, sizeof(err)), 0);
	assert_string_equal(err, "");
	assert_events_equal(ev, &back);
	assert_int_equal(back.sandbox_id, 0);
	event_clear(&back);
	json_decref(obj);
}

static void round_trip_text(const struct event *ev)
{
	struct event back;
	char *text = NULL, err[128];
	json_t *obj;

	assert_int_equal(event_to_text(ev, &text), 0);
	assert_non_null(text);
	assert_null(strchr(text, '\n'));
	obj = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
	assert_non_null(obj);
	assert_int_equal(event_from_json(obj, &back, err, sizeof(err)), 0);
	assert_events_equal(ev, &back);
	event_clear(&back);
	json_decref(obj);
	free(text);
}

static void test_full_event_round_trips_through_json_and_text(void **state)
{
	struct event ev;

	make_full_event(&ev);
	round_trip_json(&ev);
	round_trip_text(&ev);
	event_clear(&ev);
}

static void test_bare_event_round_trips_with_no_step_uid_fields_or_id(void **state)
{
	struct event ev;
	json_t *obj;

	make_bare_event(&ev);
	obj = event_to_json(&ev);
	assert_non_null(obj);
	/* "No step" and "no uid" are encoded as null, an unstored event carries no id. */
	assert_true(json_is_null(json_object_get(obj, "step")));
	assert_true(json_is_null(json_object_get(obj, "uid")));
	assert_null(json_object_get(obj, "id"));
	assert_int_equal(json_object_size(json_object_get(obj, "fields")), 0);
	json_decref(obj);

	round_trip_json(&ev);
	round_trip_text(&ev);
	event_clear(&ev);
}

static void test_step_zero_and_uid_zero_are_not_confused_with_none(void **state)
{
	struct event ev;

	make_bare_event(&ev);
	ev.step = 0;
	ev.uid = 0;
	round_trip_json(&ev);
	ev.step = FB_STEP_MAX;
	ev.uid = UINT32_MAX;
	round_trip_json(&ev);
	event_clear(&ev);
}

static void test_text_encoding_is_one_compact_line_in_field_order(void **state)
{
	struct event ev;
	char *text = NULL;

	make_bare_event(&ev);
	assert_int_equal(event_to_text(&ev, &text), 0);
	assert_string_equal(text, "{\"ts\":5,\"sandbox\":\"\",\"step\":null,\"tool\":\"\","
				  "\"source\":\"monitor\",\"kind\":\"monitor.gap\",\"pid\":0,"
				  "\"ppid\":0,\"uid\":null,\"comm\":\"\",\"fields\":{}}");
	free(text);
	event_clear(&ev);
}

static void test_copy_duplicates_fields_and_survives_clearing_the_source(void **state)
{
	struct event src, dst;

	make_full_event(&src);
	assert_int_equal(event_copy(&dst, &src), 0);
	assert_non_null(dst.fields);
	assert_ptr_not_equal(dst.fields, src.fields);
	assert_events_equal(&src, &dst);
	assert_int_equal(dst.sandbox_id, src.sandbox_id);

	/* The copy owns its own fields: clearing the source must leave it readable (valgrind). */
	event_clear(&src);
	assert_string_equal(dst.fields, full_fields);
	event_clear(&dst);
}

static void test_copy_of_event_without_fields_has_none(void **state)
{
	struct event src, dst;

	make_bare_event(&src);
	memset(&dst, 0xa5, sizeof(dst));
	assert_int_equal(event_copy(&dst, &src), 0);
	assert_null(dst.fields);
	assert_int_equal(dst.fields_len, 0);
	assert_events_equal(&src, &dst);
	event_clear(&dst);
}

static void test_move_hands_fields_over_and_empties_source(void **state)
{
	struct event src, dst;
	char *fields;

	make_full_event(&src);
	fields = src.fields;
	event_move(&dst, &src);
	assert_ptr_equal(dst.fields, fields);
	assert_null(src.fields);
	assert_int_equal(src.fields_len, 0);
	assert_int_equal(dst.ts, 1795987076123456789LL);
	/* Clearing the emptied source must not free what dst now owns (valgrind would see it). */
	event_clear(&src);
	assert_string_equal(dst.fields, full_fields);
	event_clear(&dst);
}

static void test_clear_resets_to_an_empty_event(void **state)
{
	struct event ev;

	make_full_event(&ev);
	event_clear(&ev);
	assert_null(ev.fields);
	assert_int_equal(ev.fields_len, 0);
	assert_int_equal(ev.id, 0);
	assert_int_equal(ev.ts, 0);
	assert_int_equal(ev.step, EVENT_STEP_NONE);
	assert_int_equal(ev.uid, EVENT_UID_NONE);
	assert_string_equal(ev.sandbox, "");
	assert_string_equal(ev.kind, "");
	/* Clearing twice is harmless. */
	event_clear(&ev);
	assert_null(ev.fields);
}

static void test_set_fields_replaces_and_encodes_compactly(void **state)
{
	struct event ev;
	json_t *obj = json_pack("{s:i, s:[s]}", "a", 1, "b", "x y");

	event_init(&ev);
	assert_int_equal(event_set_fields_text(&ev, "{\"old\":true}", 12), 0);
	assert_int_equal(event_set_fields(&ev, obj), 0);
	assert_string_equal(ev.fields, "{\"a\":1,\"b\":[\"x y\"]}");
	assert_int_equal(ev.fields_len, strlen(ev.fields));
	json_decref(obj);

	obj = json_array();
	assert_int_equal(event_set_fields(&ev, obj), -EINVAL);
	assert_string_equal(ev.fields, "{\"a\":1,\"b\":[\"x y\"]}");
	json_decref(obj);
	event_clear(&ev);
}

static void test_set_fields_text_rejects_non_objects_and_keeps_old_fields(void **state)
{
	static const char *const bad[] = {
		"",	"{",	"[]",	   "[1,2]",	 "42",	  "\"str\"",
		"null", "true", "{\"a\":", "{not json}", "{} []", "{\"a\":1}x",
	};
	struct event ev;

	event_init(&ev);
	assert_int_equal(event_set_fields_text(&ev, "{\"k\":1}", 7), 0);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(event_set_fields_text(&ev, bad[i], strlen(bad[i])), -EINVAL);
		assert_string_equal(ev.fields, "{\"k\":1}");
		assert_int_equal(ev.fields_len, 7);
	}
	/* Only len bytes are taken: the rest of the buffer is not part of the object. */
	assert_int_equal(event_set_fields_text(&ev, "{}garbage", 2), 0);
	assert_string_equal(ev.fields, "{}");
	event_clear(&ev);
}

static void test_get_fields_of_no_fields_is_empty_object(void **state)
{
	struct event ev;
	json_t *obj;

	event_init(&ev);
	obj = event_get_fields(&ev);
	assert_true(json_is_object(obj));
	assert_int_equal(json_object_size(obj), 0);
	json_decref(obj);
}

/* Decodes text (which must be valid JSON) and expects event_from_json to refuse it, naming what. */
static void expect_refused(const char *text, const char *err_mentions)
{
	json_t *obj = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	struct event ev;
	char err[160] = "";

	if (!obj)
		fail_msg("test input is not JSON: %s", text);
	memset(&ev, 0x5a, sizeof(ev));
	if (event_from_json(obj, &ev, err, sizeof(err)) != -EINVAL)
		fail_msg("accepted: %s", text);
	if (!strstr(err, err_mentions))
		fail_msg("refusing %s, the message \"%s\" does not mention \"%s\"", text, err,
			 err_mentions);
	json_decref(obj);
}

#define EV_HEAD "\"ts\":1,\"source\":\"trace\",\"kind\":\"tool_call.start\""

static void test_from_json_refuses_non_objects(void **state)
{
	expect_refused("[]", "object");
	expect_refused("\"event\"", "object");
	expect_refused("7", "object");
	expect_refused("null", "object");
}

static void test_from_json_refuses_unknown_keys(void **state)
{
	expect_refused("{" EV_HEAD ",\"bogus\":1}", "bogus");
	expect_refused("{" EV_HEAD ",\"Ts\":1}", "Ts");
	expect_refused("{" EV_HEAD ",\"sandbox_id\":3}", "sandbox_id");
}

static void test_from_json_refuses_missing_ts_source_or_kind(void **state)
{
	expect_refused("{\"source\":\"trace\",\"kind\":\"a\"}", "ts");
	expect_refused("{\"ts\":1,\"kind\":\"a\"}", "source");
	expect_refused("{\"ts\":1,\"source\":\"trace\"}", "kind");
	expect_refused("{}", "ts");
}

static void test_from_json_refuses_wrong_types(void **state)
{
	expect_refused("{\"ts\":\"1\",\"source\":\"trace\",\"kind\":\"a\"}", "ts");
	expect_refused("{\"ts\":1.5,\"source\":\"trace\",\"kind\":\"a\"}", "ts");
	expect_refused("{\"ts\":1,\"source\":3,\"kind\":\"a\"}", "source");
	expect_refused("{\"ts\":1,\"source\":\"trace\",\"kind\":null}", "kind");
	expect_refused("{" EV_HEAD ",\"id\":\"9\"}", "id");
	expect_refused("{" EV_HEAD ",\"sandbox\":5}", "sandbox");
	expect_refused("{" EV_HEAD ",\"step\":\"3\"}", "step");
	expect_refused("{" EV_HEAD ",\"step\":3.0}", "step");
	expect_refused("{" EV_HEAD ",\"tool\":true}", "tool");
	expect_refused("{" EV_HEAD ",\"pid\":1.5}", "pid");
	expect_refused("{" EV_HEAD ",\"ppid\":\"1\"}", "ppid");
	expect_refused("{" EV_HEAD ",\"uid\":[0]}", "uid");
	expect_refused("{" EV_HEAD ",\"comm\":{}}", "comm");
}

static void test_from_json_refuses_out_of_range_numbers(void **state)
{
	expect_refused("{" EV_HEAD ",\"pid\":-1}", "pid");
	expect_refused("{" EV_HEAD ",\"pid\":2147483648}", "pid");
	expect_refused("{" EV_HEAD ",\"ppid\":-5}", "ppid");
	expect_refused("{" EV_HEAD ",\"step\":-1}", "step");
	expect_refused("{" EV_HEAD ",\"step\":2147483648}", "step");
	expect_refused("{" EV_HEAD ",\"uid\":-1}", "uid");
	expect_refused("{" EV_HEAD ",\"uid\":4294967296}", "uid");
	expect_refused("{" EV_HEAD ",\"id\":-1}", "id");
	expect_refused("{\"ts\":-1,\"source\":\"trace\",\"kind\":\"a\"}", "ts");
}

static void test_from_json_accepts_the_range_limits(void **state)
{
	json_t *obj = json_loads("{" EV_HEAD ",\"pid\":2147483647,\"ppid\":0,\"step\":2147483647,"
				 "\"uid\":4294967295}",
				 0, NULL);
	struct event ev;
	char err[128];

	assert_non_null(obj);
	assert_int_equal(event_from_json(obj, &ev, err, sizeof(err)), 0);
	assert_int_equal(ev.pid, INT32_MAX);
	assert_int_equal(ev.step, FB_STEP_MAX);
	assert_int_equal(ev.uid, UINT32_MAX);
	assert_int_equal(ev.source, EVENT_SOURCE_TRACE);
	assert_string_equal(ev.kind, "tool_call.start");
	event_clear(&ev);
	json_decref(obj);
}

static void test_from_json_refuses_unknown_source(void **state)
{
	expect_refused("{\"ts\":1,\"source\":\"kernel\",\"kind\":\"a\"}", "kernel");
	expect_refused("{\"ts\":1,\"source\":\"\",\"kind\":\"a\"}", "source");
	expect_refused("{\"ts\":1,\"source\":\"Trace\",\"kind\":\"a\"}", "Trace");
	/* Longer than any source name: must be refused, not truncated into a known one. */
	expect_refused("{\"ts\":1,\"source\":\"tracetracetracetrace\",\"kind\":\"a\"}", "source");
}

static void test_from_json_refuses_invalid_kind(void **state)
{
	expect_refused("{\"ts\":1,\"source\":\"trace\",\"kind\":\"\"}", "kind");
	expect_refused("{\"ts\":1,\"source\":\"trace\",\"kind\":\"Tool_Call\"}", "kind");
	expect_refused("{\"ts\":1,\"source\":\"trace\",\"kind\":\"a b\"}", "kind");
	expect_refused("{\"ts\":1,\"source\":\"trace\",\"kind\":\"a-b\"}", "kind");
	/* One character over FB_KIND_MAX. */
	expect_refused("{\"ts\":1,\"source\":\"trace\","
		       "\"kind\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}",
		       "kind");
}

static void test_from_json_refuses_invalid_sandbox_name(void **state)
{
	expect_refused("{" EV_HEAD ",\"sandbox\":\"../x\"}", "sandbox");
	expect_refused("{" EV_HEAD ",\"sandbox\":\".hidden\"}", "sandbox");
	expect_refused("{" EV_HEAD ",\"sandbox\":\"-x\"}", "sandbox");
	expect_refused("{" EV_HEAD ",\"sandbox\":\"a b\"}", "sandbox");
	expect_refused("{" EV_HEAD ",\"sandbox\":\"a\\u0000b\"}", "sandbox");
}

static void test_from_json_refuses_fields_that_are_not_an_object(void **state)
{
	expect_refused("{" EV_HEAD ",\"fields\":[1]}", "fields");
	expect_refused("{" EV_HEAD ",\"fields\":\"{}\"}", "fields");
	expect_refused("{" EV_HEAD ",\"fields\":3}", "fields");
	expect_refused("{" EV_HEAD ",\"fields\":false}", "fields");
}

static void test_from_json_treats_null_and_empty_fields_as_none(void **state)
{
	static const char *const texts[] = {
		"{" EV_HEAD ",\"fields\":null}",
		"{" EV_HEAD ",\"fields\":{}}",
		"{" EV_HEAD ",\"step\":null,\"uid\":null}",
	};

	for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
		json_t *obj = json_loads(texts[i], 0, NULL);
		struct event ev;
		char err[128];

		assert_non_null(obj);
		assert_int_equal(event_from_json(obj, &ev, err, sizeof(err)), 0);
		assert_null(ev.fields);
		assert_int_equal(ev.step, EVENT_STEP_NONE);
		assert_int_equal(ev.uid, EVENT_UID_NONE);
		event_clear(&ev);
		json_decref(obj);
	}
}

static void test_sandbox_name_validator(void **state)
{
	char *s63 = fixture_repeat('a', FB_NAME_MAX), *s64 = fixture_repeat('a', FB_NAME_MAX + 1);

	assert_true(event_sandbox_name_valid("a"));
	assert_true(event_sandbox_name_valid("agent_1.run-2"));
	assert_true(event_sandbox_name_valid("9lives"));
	assert_true(event_sandbox_name_valid(s63));
	assert_false(event_sandbox_name_valid(s64));
	assert_false(event_sandbox_name_valid(""));
	assert_false(event_sandbox_name_valid(".x"));
	assert_false(event_sandbox_name_valid("-x"));
	assert_false(event_sandbox_name_valid(".."));
	assert_false(event_sandbox_name_valid("a/b"));
	assert_false(event_sandbox_name_valid("a b"));
	assert_false(event_sandbox_name_valid(" a"));
	assert_false(event_sandbox_name_valid("a:b"));
	assert_false(event_sandbox_name_valid("caf\xc3\xa9"));
	assert_false(event_sandbox_name_valid("a\n"));
	free(s63);
	free(s64);
}

static void test_tool_name_validator(void **state)
{
	char *s63 = fixture_repeat('t', FB_TOOL_MAX), *s64 = fixture_repeat('t', FB_TOOL_MAX + 1);

	assert_true(event_tool_name_valid("run_tests"));
	assert_true(event_tool_name_valid("mcp:github.create-issue"));
	assert_true(event_tool_name_valid(".leading-dot-ok"));
	assert_true(event_tool_name_valid(s63));
	assert_false(event_tool_name_valid(s64));
	assert_false(event_tool_name_valid(""));
	assert_false(event_tool_name_valid("my tool"));
	assert_false(event_tool_name_valid("a/b"));
	assert_false(event_tool_name_valid("a\"b"));
	assert_false(event_tool_name_valid("\xff"));
	free(s63);
	free(s64);
}

static void test_kind_validator(void **state)
{
	char *s31 = fixture_repeat('k', FB_KIND_MAX), *s32 = fixture_repeat('k', FB_KIND_MAX + 1);

	assert_true(event_kind_valid("tool_call.start"));
	assert_true(event_kind_valid("net.connect4"));
	assert_true(event_kind_valid(s31));
	assert_false(event_kind_valid(s32));
	assert_false(event_kind_valid(""));
	assert_false(event_kind_valid("Tool_call"));
	assert_false(event_kind_valid("tool-call"));
	assert_false(event_kind_valid("tool call"));
	assert_false(event_kind_valid("tool:call"));
	free(s31);
	free(s32);
}

static void test_source_names_round_trip(void **state)
{
	for (int i = 0; i < _EVENT_SOURCE_MAX; i++)
		assert_int_equal(event_source_from_string(event_source_to_string(i)), i);
	assert_string_equal(event_source_to_string(EVENT_SOURCE_NFLOG), "nflog");
	assert_string_equal(event_source_to_string(_EVENT_SOURCE_MAX), "unknown");
	assert_int_equal(event_source_from_string("unknown"), -EINVAL);
}

static void make_coerced_end(struct event *ev)
{
	static const char fields[] = "{\"call_id\":\"c-14\",\"exit_code\":3,"
				     "\"annotations\":{\"coerced\":true,\"reason\":\"r\"}}";

	event_init(ev);
	ev->ts = 1;
	ev->source = EVENT_SOURCE_TRACE;
	ev->step = 14;
	strcpy(ev->tool, "run_tests");
	strcpy(ev->kind, "tool_call.end");
	assert_int_equal(event_set_fields_text(ev, fields, strlen(fields)), 0);
}

static void test_describe_coerced_end_names_reason_and_exit_code(void **state)
{
	struct event ev;
	char buf[256];

	make_coerced_end(&ev);
	assert_ptr_equal(event_describe(&ev, buf, sizeof(buf)), buf);
	assert_string_equal(buf, "tool call ended, exit 3 (call c-14) COERCED: r");
	event_clear(&ev);
}

static void test_describe_truncates_to_the_buffer(void **state)
{
	struct event ev;
	char buf[32];

	/* Only the first 16 bytes are offered; the rest must stay as they were. */
	memset(buf, 'Z', sizeof(buf));
	make_coerced_end(&ev);
	event_describe(&ev, buf, 16);
	assert_string_equal(buf, "tool call ended");
	for (size_t i = 16; i < sizeof(buf); i++)
		assert_int_equal(buf[i], 'Z');
	event_clear(&ev);
}

static void test_describe_other_event_names_source_kind_pid_and_fields(void **state)
{
	struct event ev;
	char buf[256];

	event_init(&ev);
	ev.source = EVENT_SOURCE_EBPF;
	strcpy(ev.kind, "proc.exec");
	ev.pid = 77;
	strcpy(ev.comm, "sh");
	assert_int_equal(event_set_fields_text(&ev, "{\"z\":1,\"a\":2}", 13), 0);
	event_describe(&ev, buf, sizeof(buf));
	assert_string_equal(buf, "ebpf proc.exec pid 77 (sh) {\"a\":2,\"z\":1}");
	event_clear(&ev);
}

static void test_describe_senses_in_words(void **state)
{
	static const char sig[] = "{\"signal_name\":\"SIGTERM\",\"target_comm\":\"sleep\","
				  "\"target_pid\":9,\"where\":\"other-step\",\"result\":"
				  "\"delivered\"}";
	static const char acc[] = "{\"address\":\"127.0.0.1\",\"port\":80,\"peer_address\":"
				  "\"10.0.0.2\",\"peer_port\":4000}";
	static const char oom[] = "{\"trigger_pid\":13,\"trigger_comm\":\"cc1\"}";
	struct event ev;
	char buf[256];

	event_init(&ev);
	ev.source = EVENT_SOURCE_EBPF;
	strcpy(ev.kind, "signal.sent");
	ev.pid = 5;
	strcpy(ev.comm, "bash");
	assert_int_equal(event_set_fields_text(&ev, sig, strlen(sig)), 0);
	event_describe(&ev, buf, sizeof(buf));
	assert_string_equal(buf, "signal SIGTERM to sleep (pid 9), other-step: delivered by pid 5 "
				 "(bash)");
	event_clear(&ev);
	event_init(&ev);
	strcpy(ev.kind, "net.accept");
	assert_int_equal(event_set_fields_text(&ev, acc, strlen(acc)), 0);
	event_describe(&ev, buf, sizeof(buf));
	assert_string_equal(buf, "accept on 127.0.0.1:80 from 10.0.0.2:4000");
	event_clear(&ev);
	/* An OOM kill: the event's process is the victim, not the one that ran out. */
	event_init(&ev);
	strcpy(ev.kind, "proc.oom-kill");
	ev.pid = 12;
	strcpy(ev.comm, "python3");
	assert_int_equal(event_set_fields_text(&ev, oom, strlen(oom)), 0);
	event_describe(&ev, buf, sizeof(buf));
	assert_string_equal(buf, "OOM kill of python3 (pid 12): the allocation of cc1 (pid 13)");
	event_clear(&ev);
}

/* An event whose fields are text (as a collector or the store gives them). */
static struct event with_fields(const char *text)
{
	struct event ev;

	event_init(&ev);
	ev.fields = (char *)text;
	ev.fields_len = strlen(text);
	return ev;
}

static void test_field_readers_are_typed_and_top_level(void **state)
{
	struct event ev = with_fields("{\"a\":\"x\",\"dst\":\"1.2.3.4\",\"port\":443,\"x\":-2,"
				      "\"ok\":true,\"no\":false}");
	char buf[32];
	int64_t n;

	assert_true(event_field_str(&ev, "dst", buf, sizeof(buf)));
	assert_string_equal(buf, "1.2.3.4");
	assert_true(event_field_int(&ev, "x", &n));
	assert_int_equal(n, -2);
	assert_true(event_field_true(&ev, "ok"));
	assert_false(event_field_true(&ev, "no"));
	/* The wrong type is not the value: a number is no string, a string no number. */
	assert_false(event_field_str(&ev, "port", buf, sizeof(buf)));
	assert_false(event_field_int(&ev, "dst", &n));
	assert_false(event_field_str(&ev, "missing", buf, sizeof(buf)));
	ev = with_fields("{\"xdst\":\"1\"}");
	assert_false(event_field_str(&ev, "dst", buf, sizeof(buf)));
	ev.fields = NULL;
	ev.fields_len = 0;
	assert_false(event_field_str(&ev, "dst", buf, sizeof(buf)));
}

/*
 * A key's name inside another value is not the key: an argv element, a nested object, a string
 * that holds `"dst":` (escaped) all come before the real one, which is the one read.
 */
static void test_field_readers_skip_what_only_looks_like_the_key(void **state)
{
	struct event ev =
		with_fields("{\"argv\":[\"dst\",\"x\"],\"inner\":{\"dst\":\"9.9.9.9\","
			    "\"l\":[1,{\"dst\":2}]},\"note\":\"\\\"dst\\\":\\\"6.6.6.6\\\"\","
			    "\"dst\":\"1.2.3.4\"}");
	char buf[64];

	assert_true(event_field_str(&ev, "dst", buf, sizeof(buf)));
	assert_string_equal(buf, "1.2.3.4");
	assert_true(event_field_str(&ev, "note", buf, sizeof(buf)));
	assert_string_equal(buf, "\"dst\":\"6.6.6.6\"");
}

/* Strings come back decoded (escapes, \u to UTF-8) and cut to the buffer. */
static void test_field_strings_are_decoded_and_cut(void **state)
{
	struct event ev =
		with_fields("{\"p\":\"/tmp/a\\\\b\\n\\u00e9\\ud800\",\"long\":\"abcdefgh\"}");
	char buf[32], small[4];

	assert_true(event_field_str(&ev, "p", buf, sizeof(buf)));
	assert_string_equal(buf, "/tmp/a\\b\n\xc3\xa9\xef\xbf\xbd");
	assert_true(event_field_str(&ev, "long", small, sizeof(small)));
	assert_string_equal(small, "abc");
	/* Cut short: an unterminated string or object is not read. */
	ev = with_fields("{\"p\":\"abc");
	assert_false(event_field_str(&ev, "p", buf, sizeof(buf)));
	ev = with_fields("{\"q\":[1,2");
	assert_false(event_field_int(&ev, "p", &(int64_t){ 0 }));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_event_round_trips_through_json_and_text),
		cmocka_unit_test(test_bare_event_round_trips_with_no_step_uid_fields_or_id),
		cmocka_unit_test(test_step_zero_and_uid_zero_are_not_confused_with_none),
		cmocka_unit_test(test_text_encoding_is_one_compact_line_in_field_order),
		cmocka_unit_test(test_copy_duplicates_fields_and_survives_clearing_the_source),
		cmocka_unit_test(test_copy_of_event_without_fields_has_none),
		cmocka_unit_test(test_move_hands_fields_over_and_empties_source),
		cmocka_unit_test(test_clear_resets_to_an_empty_event),
		cmocka_unit_test(test_set_fields_replaces_and_encodes_compactly),
		cmocka_unit_test(test_set_fields_text_rejects_non_objects_and_keeps_old_fields),
		cmocka_unit_test(test_get_fields_of_no_fields_is_empty_object),
		cmocka_unit_test(test_from_json_refuses_non_objects),
		cmocka_unit_test(test_from_json_refuses_unknown_keys),
		cmocka_unit_test(test_from_json_refuses_missing_ts_source_or_kind),
		cmocka_unit_test(test_from_json_refuses_wrong_types),
		cmocka_unit_test(test_from_json_refuses_out_of_range_numbers),
		cmocka_unit_test(test_from_json_accepts_the_range_limits),
		cmocka_unit_test(test_from_json_refuses_unknown_source),
		cmocka_unit_test(test_from_json_refuses_invalid_kind),
		cmocka_unit_test(test_from_json_refuses_invalid_sandbox_name),
		cmocka_unit_test(test_from_json_refuses_fields_that_are_not_an_object),
		cmocka_unit_test(test_from_json_treats_null_and_empty_fields_as_none),
		cmocka_unit_test(test_sandbox_name_validator),
		cmocka_unit_test(test_tool_name_validator),
		cmocka_unit_test(test_kind_validator),
		cmocka_unit_test(test_source_names_round_trip),
		cmocka_unit_test(test_describe_coerced_end_names_reason_and_exit_code),
		cmocka_unit_test(test_describe_truncates_to_the_buffer),
		cmocka_unit_test(test_describe_other_event_names_source_kind_pid_and_fields),
		cmocka_unit_test(test_describe_senses_in_words),
		cmocka_unit_test(test_field_readers_are_typed_and_top_level),
		cmocka_unit_test(test_field_readers_skip_what_only_looks_like_the_key),
		cmocka_unit_test(test_field_strings_are_decoded_and_cut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
