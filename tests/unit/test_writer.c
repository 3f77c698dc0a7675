/*
 * The batched writer thread (store/writer.h) over a real store: every submitted operation gets
 * exactly one completion, in submission order, carrying the store's result; replies ride along in
 * order; a stopped writer refuses new work; writer_full() pushes back; counters add up.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <poll.h>
#include <sqlite3.h>
#include <stdio.h>

#include "fixtures.h"
#include "log.h"
#include "macro.h"
#include "store/sink.h"
#include "store/writer.h"

static int group_setup(void **state)
{
	return fixture_dir_up("writer");
}

/* The sink in front of the writer last started: it gives events their ids, as in the daemon. */
static struct sink *sink;

/* A fresh store with sandbox 1 "wsb", handed to a new writer (and a sink in front of it). */
static struct writer *start_writer_cfg(const char *name, const struct writer_config *cfg)
{
	struct store_sandbox sb = { .id = 1, .name = "wsb", .state = "running" };
	struct store *s = NULL;
	struct writer *w = NULL;

	assert_int_equal(store_open(fixture_db_path(name), STORE_READ_WRITE, &s), 0);
	/* Durability is not under test here; ordering and counting are. */
	assert_int_equal(store_set_synchronous_full(s, 0), 0);
	assert_int_equal(store_sandbox_put(s, &sb), 0);
	assert_int_equal(writer_new(s, cfg, &w), 0);
	assert_non_null(w);
	sink_free(sink);
	assert_int_equal(sink_new(w, &sink), 0);
	return w;
}

static struct writer *start_writer(const char *name, unsigned batch_max, uint64_t queue_max)
{
	struct writer_config cfg = { .batch_max = batch_max, .queue_max = queue_max };

	return start_writer_cfg(name, &cfg);
}

static struct writer_op event_op(uint64_t token, int64_t i)
{
	struct writer_op op = { .type = WRITER_OP_EVENT, .token = token };
	char fields[64];

	event_init(&op.ev);
	op.ev.ts = 1000 + i;
	op.ev.sandbox_id = 1;
	op.ev.step = i / 100;
	op.ev.source = EVENT_SOURCE_EBPF;
	strcpy(op.ev.kind, "proc.exec");
	op.ev.pid = (int32_t)(i % 30000) + 1;
	snprintf(fields, sizeof(fields), "{\"i\":%lld}", (long long)i);
	assert_int_equal(event_set_fields_text(&op.ev, fields, strlen(fields)), 0);
	return op;
}

static struct writer_op reply_op(uint64_t token, const char *msg)
{
	struct writer_op op = { .type = WRITER_OP_REPLY, .token = token };

	event_init(&op.ev);
	op.msg = strdup(msg);
	assert_non_null(op.msg);
	return op;
}

static void submit(struct writer *w, struct writer_op op)
{
	assert_int_equal(sink_submit(sink, &op), 0);
	/* The op's contents moved into the queue. */
	assert_null(op.ev.fields);
	assert_null(op.msg);
}

/* Every completion dispatched, in the order the writer delivered them. */
struct completions {
	struct writer_completion *v;
	size_t n, cap;
};

static void collect_cb(const struct writer_completion *c, void *data)
{
	struct completions *cs = data;

	if (cs->n == cs->cap) {
		cs->cap = cs->cap ? cs->cap * 2 : 1024;
		cs->v = realloc(cs->v, cs->cap * sizeof(*cs->v));
		assert_non_null(cs->v);
	}
	cs->v[cs->n++] = *c; /* takes c->msg */
}

static void completions_free(struct completions *cs)
{
	for (size_t i = 0; i < cs->n; i++)
		free(cs->v[i].msg);
	free(cs->v);
	memset(cs, 0, sizeof(*cs));
}

/* Events in the database, read through a reader's connection after the writer closed it. */
static int64_t stored_events(const char *name)
{
	struct store *s = NULL;
	int64_t n = -1;

	assert_int_equal(store_open(fixture_db_path(name), STORE_READ_ONLY, &s), 0);
	assert_int_equal(store_event_count(s, 0, &n), 0);
	store_close(s);
	return n;
}

#define MANY 50000

static void test_every_event_op_completes_once_in_submission_order(void **state)
{
	struct writer *w = start_writer("many", 1000, 0);
	struct completions cs = { 0 };
	struct writer_stats st;

	for (int64_t i = 0; i < MANY; i++)
		submit(w, event_op((uint64_t)i + 1, i));
	writer_stop(w);
	writer_dispatch(w, collect_cb, &cs);
	assert_int_equal(cs.n, MANY);
	for (size_t i = 0; i < cs.n; i++) {
		if (cs.v[i].token != i + 1 || cs.v[i].result != 0)
			fail_msg("completion %zu: token %llu result %d", i,
				 (unsigned long long)cs.v[i].token, cs.v[i].result);
		assert_null(cs.v[i].msg);
	}
	/* Nothing is delivered twice. */
	completions_free(&cs);
	writer_dispatch(w, collect_cb, &cs);
	assert_int_equal(cs.n, 0);

	writer_get_stats(w, &st);
	assert_int_equal(st.ops, MANY);
	assert_int_equal(st.events, MANY);
	assert_true(st.batches >= MANY / 1000);
	assert_true(st.max_batch <= 1000);
	assert_int_equal(st.failed_ops, 0);
	assert_int_equal(st.lost_events, 0);
	assert_int_equal(st.pending, 0);
	writer_free(w);
	assert_int_equal(stored_events("many"), MANY);
}

/* Event ids are given at submission, in order, and a writer on an existing store goes on after
 * its largest id: what the daemon derives from an event can name it before it is stored. */
static void test_event_ids_given_in_submission_order_and_kept(void **state)
{
	struct writer *w = start_writer("ids", 4, 0);
	struct store *s = NULL;
	int64_t max = 0;

	for (int64_t i = 0; i < 10; i++) {
		submit(w, event_op(0, i));
		assert_int_equal(sink_last_event_id(sink), i + 1);
	}
	submit(w, reply_op(0, "{}")); /* no event, no id */
	assert_int_equal(sink_last_event_id(sink), 10);
	writer_free(w);
	w = start_writer("ids", 4, 0);
	submit(w, event_op(0, 10));
	assert_int_equal(sink_last_event_id(sink), 11);
	writer_free(w);
	assert_int_equal(store_open(fixture_db_path("ids"), STORE_READ_ONLY, &s), 0);
	assert_int_equal(store_max_id(s, "events", &max), 0);
	store_close(s);
	assert_int_equal(max, 11);
	assert_int_equal(stored_events("ids"), 11);
}

static void test_reply_msg_comes_back_verbatim_in_order(void **state)
{
	struct writer *w = start_writer("reply", 7, 0);
	struct completions cs = { 0 };
	uint64_t token = 0;
	char msg[64];
	size_t k = 0;

	for (int i = 0; i < 100; i++) {
		submit(w, event_op(++token, i));
		if (i % 3 == 0) {
			snprintf(msg, sizeof(msg), "{\"ok\":true,\"line\":%d}", i);
			submit(w, reply_op(++token, msg));
		}
		/* Ops without a token are applied but complete silently. */
		submit(w, event_op(0, 1000 + i));
	}
	writer_stop(w);
	writer_dispatch(w, collect_cb, &cs);
	assert_int_equal(cs.n, token);
	for (int i = 0; i < 100; i++) {
		assert_int_equal(cs.v[k].token, k + 1);
		assert_null(cs.v[k].msg);
		k++;
		if (i % 3 == 0) {
			snprintf(msg, sizeof(msg), "{\"ok\":true,\"line\":%d}", i);
			assert_int_equal(cs.v[k].token, k + 1);
			assert_int_equal(cs.v[k].result, 0);
			assert_non_null(cs.v[k].msg);
			assert_string_equal(cs.v[k].msg, msg);
			k++;
		}
	}
	completions_free(&cs);
	writer_free(w);
	assert_int_equal(stored_events("reply"), 200);
}

static void test_completion_wakes_the_fd_before_stop(void **state)
{
	struct writer *w = start_writer("fd", 16, 0);
	struct pollfd pfd = { .fd = writer_fd(w), .events = POLLIN };
	struct completions cs = { 0 };

	assert_true(pfd.fd >= 0);
	for (uint64_t round = 1; round <= 10; round++) {
		/* Give the writer time to go idle, so that this submit has to wake it. */
		usleep(10000);
		submit(w, event_op(round, (int64_t)round));
		/* The writer runs on its own: the completion arrives without writer_stop. */
		assert_int_equal(poll(&pfd, 1, 10000), 1);
		assert_true(pfd.revents & POLLIN);
		writer_dispatch(w, collect_cb, &cs);
		assert_int_equal(cs.n, 1);
		assert_int_equal(cs.v[0].token, round);
		assert_int_equal(cs.v[0].result, 0);
		/* Dispatch drained the fd. */
		assert_int_equal(poll(&pfd, 1, 0), 0);
		completions_free(&cs);
	}
	writer_free(w);
}

static void test_submit_after_stop_is_eshutdown_and_frees_the_op(void **state)
{
	struct writer *w = start_writer("stop", 16, 0);
	struct writer_op op = event_op(1, 1);
	struct completions cs = { 0 };

	writer_stop(w);
	writer_stop(w); /* idempotent */
	assert_int_equal(sink_submit(sink, &op), -ESHUTDOWN);
	/* The op was cleared, so its fields are not leaked (valgrind) nor left dangling. */
	assert_null(op.ev.fields);
	op = reply_op(2, "late");
	assert_int_equal(sink_submit(sink, &op), -ESHUTDOWN);
	assert_null(op.msg);
	writer_dispatch(w, collect_cb, &cs);
	assert_int_equal(cs.n, 0);
	writer_free(w);
	writer_free(NULL);
	assert_int_equal(stored_events("stop"), 0);
}

#define QUEUE_MAX 32

static void test_full_after_queue_max_ops_wait(void **state)
{
	struct writer *w = start_writer("full", 4, QUEUE_MAX);
	struct completions cs = { 0 };
	sqlite3 *db = NULL;
	uint64_t submitted = 0;
	int full = 0;

	/* A second connection takes the write lock, so the writer, once it has swapped out what
	 * was queued, waits in BEGIN (busy timeout 5 s) and queues fill up deterministically. */
	assert_int_equal(sqlite3_open(fixture_db_path("full"), &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);

	/* Fewer than queue_max ops can never be too many, whatever the writer has taken. */
	while (submitted < QUEUE_MAX - 1) {
		submitted++;
		submit(w, event_op(submitted, (int64_t)submitted));
		assert_false(writer_full(w));
	}
	/* The blocked writer takes at most one swap of the queue, so at most 2 * queue_max ops
	 * fill it. */
	while (!full && submitted < 2 * QUEUE_MAX) {
		submitted++;
		submit(w, event_op(submitted, (int64_t)submitted));
		full = writer_full(w);
	}
	assert_true(full);
	assert_true(submitted >= QUEUE_MAX);

	assert_int_equal(sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	writer_stop(w);
	assert_false(writer_full(w));
	writer_dispatch(w, collect_cb, &cs);
	assert_int_equal(cs.n, submitted);
	for (size_t i = 0; i < cs.n; i++) {
		assert_int_equal(cs.v[i].token, i + 1);
		assert_int_equal(cs.v[i].result, 0);
	}
	completions_free(&cs);
	writer_free(w);
	assert_int_equal(stored_events("full"), (int64_t)submitted);
}

#define QUEUE_BYTES (64 << 10)

/*
 * The queue's memory bound: ops of about 1 KiB each (their fields) fill 64 KiB after about 60 of
 * them however many are allowed by count; the writer's pending_bytes is what they hold, the
 * bound reached is counted once, and everything is stored once the writer may write again.
 */
static void test_full_at_queue_max_bytes(void **state)
{
	struct writer_config cfg = { .batch_max = 4,
				     .queue_max = 1000000,
				     .queue_max_bytes = QUEUE_BYTES };
	struct writer *w = start_writer_cfg("fullbytes", &cfg);
	struct completions cs = { 0 };
	struct writer_stats st;
	char fields[1100];
	sqlite3 *db = NULL;
	uint64_t submitted = 0, held = 0;
	int full = 0;

	(void)state;
	assert_int_equal(sqlite3_open(fixture_db_path("fullbytes"), &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
	memset(fields, 'x', sizeof(fields));
	memcpy(fields, "{\"pad\":\"", 8);
	memcpy(fields + sizeof(fields) - 3, "\"}", 3);
	while (!full && submitted < 1000) {
		struct writer_op op;

		submitted++;
		op = event_op(submitted, (int64_t)submitted);
		assert_int_equal(event_set_fields_text(&op.ev, fields, strlen(fields)), 0);
		held += writer_op_bytes(&op);
		submit(w, op);
		full = writer_full(w);
		assert_int_equal(full, held >= QUEUE_BYTES);
	}
	assert_true(full);
	assert_true(submitted < 70);
	writer_get_stats(w, &st);
	assert_int_equal(st.pending_bytes, held);
	assert_int_equal(st.full, 1);
	assert_true(writer_full(w)); /* still: counted once */
	writer_get_stats(w, &st);
	assert_int_equal(st.full, 1);

	assert_int_equal(sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	writer_stop(w);
	writer_dispatch(w, collect_cb, &cs);
	assert_int_equal(cs.n, submitted);
	completions_free(&cs);
	writer_get_stats(w, &st);
	assert_int_equal(st.pending_bytes, 0);
	assert_false(writer_full(w));
	writer_free(w);
	assert_int_equal(stored_events("fullbytes"), (int64_t)submitted);
}

/* A trace op for call id in sandbox 1, owning a freshly parsed record and its event. */
static struct writer_op trace_op(uint64_t token, const char *call_id, int step)
{
	struct writer_op op = { .type = WRITER_OP_TRACE, .token = token };
	char line[512], err[128];

	snprintf(line, sizeof(line),
		 "{\"gen_ai.operation.name\":\"execute_tool\",\"gen_ai.tool.name\":\"run\","
		 "\"gen_ai.tool.call.id\":\"%s\",\"firebreak.sandbox\":\"wsb\","
		 "\"firebreak.step\":%d,\"phase\":\"start\"}",
		 call_id, step);
	op.trace = calloc(1, sizeof(*op.trace));
	assert_non_null(op.trace);
	if (trace_parse_line(line, strlen(line), op.trace, err, sizeof(err)) != TRACE_OK)
		fail_msg("%s", err);
	assert_int_equal(trace_record_to_event(op.trace, 5000, &op.ev), 0);
	op.ev.sandbox_id = 1;
	return op;
}

static void test_trace_ops_report_new_duplicate_and_conflict(void **state)
{
	struct writer *w = start_writer("trace", 2, 0);
	struct writer_op sb_op = { .type = WRITER_OP_SANDBOX, .token = 1 };
	struct completions cs = { 0 };
	struct writer_stats st;

	event_init(&sb_op.ev);
	sb_op.sandbox = calloc(1, sizeof(*sb_op.sandbox));
	assert_non_null(sb_op.sandbox);
	*sb_op.sandbox = (struct store_sandbox){ .id = 2, .name = "second", .state = "running" };
	submit(w, sb_op);
	submit(w, trace_op(2, "c-1", 1));
	submit(w, trace_op(3, "c-1", 1));
	submit(w, trace_op(4, "c-1", 2));
	submit(w, trace_op(5, "c-2", 2));
	writer_stop(w);
	writer_dispatch(w, collect_cb, &cs);
	assert_int_equal(cs.n, 5);
	assert_int_equal(cs.v[0].result, 0);
	assert_int_equal(cs.v[1].result, STORE_TRACE_NEW);
	assert_int_equal(cs.v[2].result, STORE_TRACE_DUPLICATE);
	assert_int_equal(cs.v[3].result, STORE_TRACE_CONFLICT);
	assert_int_equal(cs.v[4].result, STORE_TRACE_NEW);
	for (int i = 0; i < 5; i++)
		assert_int_equal(cs.v[i].token, i + 1);
	writer_get_stats(w, &st);
	/* Only the new phases appended an event. */
	assert_int_equal(st.events, 2);
	assert_int_equal(st.ops, 5);
	completions_free(&cs);
	writer_free(w);
	assert_int_equal(stored_events("trace"), 2);
}

/* The stage the sink shows events to: what it saw, and what its after() did. */
struct stage_seen {
	int64_t ids[16];
	size_t n, afters;
	struct writer *w;
};

static struct stage_seen seen;

static int stage_observe(const struct event *ev, void *data)
{
	struct stage_seen *s = data;

	/* Before the op is queued: nothing of it is in the writer's queue yet. */
	if (s->n < ARRAY_SIZE(s->ids))
		s->ids[s->n++] = ev->id;
	return ev->pid == 7; /* this one wants its after() */
}

static void stage_after(void *data)
{
	struct stage_seen *s = data;

	s->afters++;
	/* What the stage records comes back through the same sink: observed, no new after(). */
	submit(s->w, event_op(0, 6));
}

/*
 * The sink gives each event its id and shows it to the stage before queueing it; only events
 * are shown; an after() runs once its event is queued, and what it submits is observed without
 * starting another after().
 */
static void test_sink_shows_each_event_to_the_stage_with_its_id(void **state)
{
	struct writer *w = start_writer("sink", 8, 0);

	memset(&seen, 0, sizeof(seen));
	seen.w = w;
	sink_set_stage(sink, stage_observe, stage_after, &seen);
	submit(w, event_op(0, 1));
	submit(w, reply_op(0, "{}"));
	submit(w, event_op(0, 6)); /* pid 7: its after() submits one more */
	assert_int_equal(seen.n, 3);
	assert_int_equal(seen.ids[0], 1);
	assert_int_equal(seen.ids[1], 2);
	assert_int_equal(seen.ids[2], 3);
	assert_int_equal(seen.afters, 1);
	assert_int_equal(sink_last_event_id(sink), 3);
	sink_set_stage(sink, NULL, NULL, NULL);
	writer_free(w);
	assert_int_equal(stored_events("sink"), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_event_op_completes_once_in_submission_order),
		cmocka_unit_test(test_sink_shows_each_event_to_the_stage_with_its_id),
		cmocka_unit_test(test_reply_msg_comes_back_verbatim_in_order),
		cmocka_unit_test(test_event_ids_given_in_submission_order_and_kept),
		cmocka_unit_test(test_completion_wakes_the_fd_before_stop),
		cmocka_unit_test(test_submit_after_stop_is_eshutdown_and_frees_the_op),
		cmocka_unit_test(test_full_after_queue_max_ops_wait),
		cmocka_unit_test(test_full_at_queue_max_bytes),
		cmocka_unit_test(test_trace_ops_report_new_duplicate_and_conflict),
	};

	log_max_level = LOG_LEVEL_ERROR;
	return cmocka_run_group_tests(tests, group_setup, fixture_dir_down);
}
