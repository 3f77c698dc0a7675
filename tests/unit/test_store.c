/*
 * The SQLite store (store/store.h) on real database files: schema creation and migration, refusal
 * of databases it must not touch, read-only mode, batched inserts read back through the timeline,
 * trace phases folded into steps, retention, and the sandbox table. Each test makes its own file in
 * one temporary directory, which the group teardown removes whatever happened.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <sys/stat.h>

#include "fixtures.h"
#include "log.h"
#include "macro.h"
#include "store/store.h"
#include "timeutil.h"

/* 'FBRK', as store/store.c marks its databases. */
#define APPLICATION_ID 0x4642524b

static int group_setup(void **state)
{
	return fixture_dir_up("store");
}

static struct store *open_new(const char *name)
{
	struct store *s = NULL;

	assert_int_equal(store_open(fixture_db_path(name), STORE_READ_WRITE, &s), 0);
	assert_non_null(s);
	return s;
}

/* A second, plain SQLite connection, to check what the store wrote behind its API. */
static sqlite3 *raw_open(const char *path)
{
	sqlite3 *db = NULL;

	assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
	sqlite3_busy_timeout(db, 5000);
	return db;
}

static int64_t raw_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* Copies the first column of the first row of sql into buf ("" for NULL). */
static const char *raw_text(sqlite3 *db, const char *sql, char *buf, size_t size)
{
	sqlite3_stmt *st;
	const unsigned char *v;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_text(st, 0);
	snprintf(buf, size, "%s", v ? (const char *)v : "");
	sqlite3_finalize(st);
	return buf;
}

static void raw_exec(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("%s: %s", sql, err);
}

static int table_exists(sqlite3 *db, const char *name)
{
	char sql[256];

	snprintf(sql, sizeof(sql),
		 "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = '%s'", name);
	return raw_int(db, sql) == 1;
}

/* Reads a whole (small) file, to prove a refused file was left byte for byte as it was. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	char *buf;

	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	*len = (size_t)ftell(f);
	rewind(f);
	buf = malloc(*len + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, *len, f), *len);
	fclose(f);
	return buf;
}

static int file_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

static void put_sandbox(struct store *s, int64_t id, const char *name)
{
	struct store_sandbox sb = { .id = id, .state = "running" };

	sb.created_ts = sb.updated_ts = id;

	strcpy(sb.name, name);
	assert_int_equal(store_sandbox_put(s, &sb), 0);
}

/* An event with every column set from i, so that a column lost or swapped is noticed. */
static void make_event(struct event *ev, int64_t sandbox_id, const char *sandbox, int64_t ts,
		       int64_t step, int i)
{
	char fields[128];

	event_init(ev);
	ev->ts = ts;
	ev->sandbox_id = sandbox_id;
	snprintf(ev->sandbox, sizeof(ev->sandbox), "%s", sandbox);
	ev->step = step;
	snprintf(ev->tool, sizeof(ev->tool), "tool%d", i % 13);
	ev->source = (enum event_source)(i % _EVENT_SOURCE_MAX);
	snprintf(ev->kind, sizeof(ev->kind), "kind.k%d", i % 7);
	ev->pid = 1000 + i;
	ev->ppid = i % 3 ? 999 : 0;
	ev->uid = i % 5 ? 1000 + i % 5 : EVENT_UID_NONE;
	snprintf(ev->comm, sizeof(ev->comm), "c%d", i);
	if (i % 4) {
		snprintf(fields, sizeof(fields), "{\"i\":%d,\"path\":\"/bin/x%d\"}", i, i);
		assert_int_equal(event_set_fields_text(ev, fields, strlen(fields)), 0);
	}
}

static void insert(struct store *s, struct event *ev)
{
	assert_int_equal(store_event_insert(s, ev), 0);
	assert_true(ev->id > 0);
}

/* What store_timeline hands out, copied so it outlives the callback. */
struct collected {
	struct event *v;
	size_t n, cap;
};

static int collect_cb(const struct event *ev, void *data)
{
	struct collected *c = data;

	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 64;
		c->v = realloc(c->v, c->cap * sizeof(*c->v));
		assert_non_null(c->v);
	}
	assert_int_equal(event_copy(&c->v[c->n++], ev), 0);
	return 0;
}

static void collected_free(struct collected *c)
{
	for (size_t i = 0; i < c->n; i++)
		event_clear(&c->v[i]);
	free(c->v);
	memset(c, 0, sizeof(*c));
}

static void timeline(struct store *s, const struct store_timeline_query *q, struct collected *c)
{
	collected_free(c);
	assert_int_equal(store_timeline(s, q, collect_cb, c), 0);
}

static struct store_timeline_query query(int64_t sandbox_id)
{
	struct store_timeline_query q = { .sandbox_id = sandbox_id, .step_lo = EVENT_STEP_NONE };

	return q;
}

static int64_t event_count(struct store *s, int64_t sandbox_id)
{
	int64_t n = -1;

	assert_int_equal(store_event_count(s, sandbox_id, &n), 0);
	return n;
}

static void assert_same_event(const struct event *got, const struct event *want)
{
	assert_int_equal(got->id, want->id);
	assert_int_equal(got->ts, want->ts);
	assert_int_equal(got->sandbox_id, want->sandbox_id);
	assert_string_equal(got->sandbox, want->sandbox);
	assert_int_equal(got->step, want->step);
	assert_string_equal(got->tool, want->tool);
	assert_int_equal(got->source, want->source);
	assert_string_equal(got->kind, want->kind);
	assert_int_equal(got->pid, want->pid);
	assert_int_equal(got->ppid, want->ppid);
	assert_int_equal(got->uid, want->uid);
	assert_string_equal(got->comm, want->comm);
	if (want->fields) {
		assert_non_null(got->fields);
		assert_int_equal(got->fields_len, want->fields_len);
		assert_string_equal(got->fields, want->fields);
	} else {
		assert_null(got->fields);
	}
}

static void test_open_creates_schema_at_latest_version(void **state)
{
	static const char *const tables[] = { "sandboxes",  "steps",	 "events",
					      "step_spans", "incidents", "incident_events",
					      "policies",   "cursors" };
	const char *path = fixture_db_path("create");
	struct store *s = open_new("create");
	struct stat st;
	char buf[32];
	sqlite3 *db;

	assert_int_equal(store_latest_version(), 4);
	assert_int_equal(store_version(s), store_latest_version());
	db = raw_open(path);
	assert_string_equal(raw_text(db, "PRAGMA journal_mode", buf, sizeof(buf)), "wal");
	assert_int_equal(raw_int(db, "PRAGMA application_id"), APPLICATION_ID);
	assert_int_equal(raw_int(db, "PRAGMA user_version"), store_latest_version());
	assert_int_equal(raw_int(db, "PRAGMA page_size"), 16384);
	assert_int_equal(raw_int(db, "PRAGMA auto_vacuum"), 2); /* incremental */
	for (size_t i = 0; i < ARRAY_SIZE(tables); i++)
		if (!table_exists(db, tables[i]))
			fail_msg("no table %s", tables[i]);
	sqlite3_close(db);
	/* What sandboxes did is for root and the firebreak group only. */
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640);
	store_close(s);

	/* Opening it again changes nothing and needs no migration. */
	s = open_new("create");
	assert_int_equal(store_version(s), store_latest_version());
	store_close(s);
	assert_int_equal(store_open(path, STORE_READ_ONLY, &s), 0);
	assert_int_equal(store_version(s), store_latest_version());
	store_close(s);
	store_close(NULL);
}

/* A policy is kept once, by its hash, exactly as given; asking for an unknown hash is -ENOENT. */
static void test_policies_kept_by_hash(void **state)
{
	struct store *s = open_new("policies");
	char *text = NULL;

	assert_int_equal(store_policy_put(s, "sha256:aa", "p", "{\"version\": 1}", 7), 0);
	assert_int_equal(store_policy_put(s, "sha256:aa", "p", "{\"other\": 1}", 8), 0);
	assert_int_equal(store_policy_get(s, "sha256:aa", &text), 0);
	assert_string_equal(text, "{\"version\": 1}");
	free(text);
	assert_int_equal(store_policy_get(s, "sha256:bb", &text), -ENOENT);
	store_close(s);
}

static void test_migration_from_version_1_keeps_data_and_adds_incidents(void **state)
{
	const char *path = fixture_db_path("migrate");
	struct collected c = { 0 };
	struct store_timeline_query q = query(1);
	struct store_sandbox sb;
	struct event ev[5];
	struct store *s = NULL;
	int64_t incident = 0;
	sqlite3 *db;

	assert_int_equal(store_open_at_version(path, store_latest_version() + 1, &s), -EINVAL);
	assert_int_equal(store_open_at_version(path, -1, &s), -EINVAL);
	assert_null(s);
	assert_int_equal(store_open_at_version(path, 1, &s), 0);
	assert_int_equal(store_version(s), 1);
	db = raw_open(path);
	assert_int_equal(raw_int(db, "PRAGMA user_version"), 1);
	assert_false(table_exists(db, "incidents"));
	sqlite3_close(db);

	assert_int_equal(store_begin(s), 0);
	put_sandbox(s, 1, "old-sb");
	for (int i = 0; i < 5; i++) {
		make_event(&ev[i], 1, "old-sb", 100 + i, i, i);
		insert(s, &ev[i]);
	}
	assert_int_equal(store_commit(s), 0);
	store_close(s);

	/* A version 1 database is not what a reader of this build can read. */
	assert_int_equal(store_open(path, STORE_READ_ONLY, &s), -EPROTO);
	assert_int_equal(store_open(path, STORE_READ_WRITE, &s), 0);
	assert_int_equal(store_version(s), store_latest_version());
	db = raw_open(path);
	assert_int_equal(raw_int(db, "PRAGMA user_version"), store_latest_version());
	assert_int_equal(raw_int(db, "PRAGMA application_id"), APPLICATION_ID);
	assert_true(table_exists(db, "incidents"));
	assert_true(table_exists(db, "detections"));
	sqlite3_close(db);

	assert_int_equal(store_sandbox_find(s, "old-sb", &sb), 0);
	assert_int_equal(sb.id, 1);
	timeline(s, &q, &c);
	assert_int_equal(c.n, 5);
	for (int i = 0; i < 5; i++)
		assert_same_event(&c.v[i], &ev[i]);
	/* The step spans written at version 1 still serve step queries. */
	q.step_lo = 1;
	q.step_hi = 2;
	timeline(s, &q, &c);
	assert_int_equal(c.n, 2);
	assert_int_equal(c.v[0].id, ev[1].id);
	assert_int_equal(c.v[1].id, ev[2].id);
	assert_int_equal(store_incident_insert(s, 1, 100, 200, "alert", "x", &incident), 0);
	assert_true(incident > 0);
	collected_free(&c);
	for (int i = 0; i < 5; i++)
		event_clear(&ev[i]);
	store_close(s);
}

static void test_newer_schema_is_refused_in_both_modes(void **state)
{
	const char *path = fixture_db_path("newer");
	struct store *s = open_new("newer");
	char sql[64];
	sqlite3 *db;

	store_close(s);
	db = raw_open(path);
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", store_latest_version() + 1);
	raw_exec(db, sql);
	sqlite3_close(db);

	s = NULL;
	assert_int_equal(store_open(path, STORE_READ_WRITE, &s), -EPROTO);
	assert_int_equal(store_open(path, STORE_READ_ONLY, &s), -EPROTO);
	assert_null(s);
	/* Nothing was downgraded or migrated on the way. */
	db = raw_open(path);
	assert_int_equal(raw_int(db, "PRAGMA user_version"), store_latest_version() + 1);
	sqlite3_close(db);
}

static void test_foreign_sqlite_file_is_refused_and_left_unmodified(void **state)
{
	const char *path = fixture_db_path("foreign");
	char wal[PATH_MAX + 8];
	struct store *s = NULL;
	size_t len_before, len_after;
	char *before, *after;
	sqlite3 *db;

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	raw_exec(db, "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT);"
		     "INSERT INTO notes (text) VALUES ('mine'), ('also mine');");
	sqlite3_close(db);
	before = slurp(path, &len_before);

	assert_int_equal(store_open(path, STORE_READ_WRITE, &s), -EBADMSG);
	assert_int_equal(store_open(path, STORE_READ_ONLY, &s), -EBADMSG);
	assert_null(s);

	after = slurp(path, &len_after);
	assert_int_equal(len_after, len_before);
	assert_memory_equal(after, before, len_before);
	snprintf(wal, sizeof(wal), "%s-wal", path);
	assert_false(file_exists(wal));
	db = raw_open(path);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM notes"), 2);
	assert_int_equal(raw_int(db, "PRAGMA user_version"), 0);
	sqlite3_close(db);
	free(before);
	free(after);
}

static void test_sqlite_file_of_another_application_is_refused(void **state)
{
	const char *path = fixture_db_path("other-app");
	struct store *s = NULL;
	sqlite3 *db;

	/* No tables at all, but another program's application_id: still not ours to migrate. */
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	raw_exec(db, "PRAGMA application_id = 1234");
	sqlite3_close(db);
	assert_int_equal(store_open(path, STORE_READ_WRITE, &s), -EBADMSG);
	db = raw_open(path);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM sqlite_schema"), 0);
	assert_int_equal(raw_int(db, "PRAGMA application_id"), 1234);
	sqlite3_close(db);
}

static void test_file_that_is_not_sqlite_is_refused_and_left_unmodified(void **state)
{
	const char *path = fixture_db_path("text");
	struct store *s = NULL;
	size_t len_before, len_after;
	char *before, *after;
	FILE *f = fopen(path, "we");

	assert_non_null(f);
	for (int i = 0; i < 200; i++)
		fprintf(f, "line %d of a text file that is not a database\n", i);
	fclose(f);
	before = slurp(path, &len_before);
	assert_int_equal(store_open(path, STORE_READ_WRITE, &s), -EBADMSG);
	assert_int_equal(store_open(path, STORE_READ_ONLY, &s), -EBADMSG);
	after = slurp(path, &len_after);
	assert_int_equal(len_after, len_before);
	assert_memory_equal(after, before, len_before);
	free(before);
	free(after);
}

static void test_read_only_open_of_missing_file_is_enoent_and_creates_nothing(void **state)
{
	const char *path = fixture_db_path("missing");
	struct store *s = NULL;

	assert_int_equal(store_open(path, STORE_READ_ONLY, &s), -ENOENT);
	assert_null(s);
	assert_false(file_exists(path));
}

static void test_read_only_open_of_older_version_is_eproto(void **state)
{
	const char *path = fixture_db_path("older");
	struct store *s = NULL;
	sqlite3 *db;

	assert_int_equal(store_open_at_version(path, 1, &s), 0);
	store_close(s);
	s = NULL;
	assert_int_equal(store_open(path, STORE_READ_ONLY, &s), -EPROTO);
	assert_null(s);
	/* A reader never upgrades. */
	db = raw_open(path);
	assert_int_equal(raw_int(db, "PRAGMA user_version"), 1);
	sqlite3_close(db);
}

static void test_read_only_store_refuses_writes(void **state)
{
	const char *path = fixture_db_path("ro");
	struct store *s = open_new("ro");
	struct store_sandbox sb = { .id = 2, .name = "two", .state = "running" };
	struct event ev;

	put_sandbox(s, 1, "one");
	store_close(s);

	assert_int_equal(store_open(path, STORE_READ_ONLY, &s), 0);
	make_event(&ev, 1, "one", 5, 1, 1);
	/* Whether BEGIN IMMEDIATE or the INSERT notices first, nothing may be written. */
	if (store_begin(s) == 0) {
		assert_true(store_event_insert(s, &ev) < 0);
		store_rollback(s);
	}
	assert_true(store_event_insert(s, &ev) < 0);
	assert_true(store_sandbox_put(s, &sb) < 0);
	assert_int_equal(event_count(s, 0), 0);
	assert_int_equal(store_sandbox_find(s, "two", &sb), -ENOENT);
	event_clear(&ev);
	store_close(s);
}

/* A timestamp order unlike insertion order, with every ts used twice (ties go by id). */
#define BATCH_N 10000
#define BATCH_TS(i) (1000000LL + ((int64_t)(i)*7919) % (BATCH_N / 2))

static int cmp_ts_id(const void *a, const void *b)
{
	const struct event *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static void test_batch_of_10000_events_reads_back_in_ts_id_order_intact(void **state)
{
	struct store *s = open_new("batch");
	struct store_timeline_query q = query(1);
	struct event *want = calloc(BATCH_N, sizeof(*want));
	struct collected c = { 0 };

	assert_non_null(want);
	put_sandbox(s, 1, "batch-sb");
	put_sandbox(s, 2, "other-sb");
	assert_int_equal(store_begin(s), 0);
	for (int i = 0; i < BATCH_N; i++) {
		struct event other;

		make_event(&want[i], 1, "batch-sb", BATCH_TS(i), i % 3 ? i / 100 : EVENT_STEP_NONE,
			   i);
		insert(s, &want[i]);
		if (i % 10 == 0) {
			make_event(&other, 2, "other-sb", BATCH_TS(i), 1, i);
			insert(s, &other);
			event_clear(&other);
		}
	}
	assert_int_equal(store_commit(s), 0);
	assert_int_equal(event_count(s, 1), BATCH_N);
	assert_int_equal(event_count(s, 2), BATCH_N / 10);
	assert_int_equal(event_count(s, 0), BATCH_N + BATCH_N / 10);

	qsort(want, BATCH_N, sizeof(*want), cmp_ts_id);
	timeline(s, &q, &c);
	assert_int_equal(c.n, BATCH_N);
	for (size_t i = 0; i < c.n; i++)
		assert_same_event(&c.v[i], &want[i]);

	q.limit = 10;
	timeline(s, &q, &c);
	assert_int_equal(c.n, 10);
	for (size_t i = 0; i < c.n; i++)
		assert_int_equal(c.v[i].id, want[i].id);

	collected_free(&c);
	for (int i = 0; i < BATCH_N; i++)
		event_clear(&want[i]);
	free(want);
	store_close(s);
}

static int stop_after_three_cb(const struct event *ev, void *data)
{
	int *calls = data;

	return ++*calls == 3 ? 42 : 0;
}

/* Sandboxes 1 "a" and 2 "b", each with events at 100..109. */
static void put_two_sandboxes_ten_events_each(struct store *s)
{
	struct event ev;

	put_sandbox(s, 1, "a");
	put_sandbox(s, 2, "b");
	assert_int_equal(store_begin(s), 0);
	for (int i = 0; i < 10; i++) {
		make_event(&ev, 1, "a", 100 + i, EVENT_STEP_NONE, i);
		insert(s, &ev);
		event_clear(&ev);
		make_event(&ev, 2, "b", 100 + i, EVENT_STEP_NONE, i);
		insert(s, &ev);
		event_clear(&ev);
	}
	assert_int_equal(store_commit(s), 0);
}

static void test_timeline_since_is_inclusive_until_exclusive_and_limit_counts(void **state)
{
	struct store *s = open_new("bounds");
	struct store_timeline_query q = query(1);
	struct collected c = { 0 };
	int calls = 0;

	put_two_sandboxes_ten_events_each(s);
	q.since = 103;
	q.until = 107;
	timeline(s, &q, &c);
	assert_int_equal(c.n, 4);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(c.v[i].ts, 103 + i);
		assert_int_equal(c.v[i].sandbox_id, 1);
	}

	q.until = 0; /* no end */
	timeline(s, &q, &c);
	assert_int_equal(c.n, 7);
	assert_int_equal(c.v[6].ts, 109);

	q.since = 0;
	q.until = 100; /* exclusive: the first event is at 100 */
	timeline(s, &q, &c);
	assert_int_equal(c.n, 0);

	q.since = 109;
	q.until = 110;
	timeline(s, &q, &c);
	assert_int_equal(c.n, 1);
	assert_int_equal(c.v[0].ts, 109);

	q.since = 105;
	q.until = 0;
	q.limit = 3;
	timeline(s, &q, &c);
	assert_int_equal(c.n, 3);
	assert_int_equal(c.v[0].ts, 105);
	assert_int_equal(c.v[2].ts, 107);

	/* A callback's non-zero value stops the walk and is returned. */
	q = query(1);
	assert_int_equal(store_timeline(s, &q, stop_after_three_cb, &calls), 42);
	assert_int_equal(calls, 3);

	q = query(3); /* a sandbox with no events */
	timeline(s, &q, &c);
	assert_int_equal(c.n, 0);
	collected_free(&c);
	store_close(s);
}

/* What the step test inserted, to compute the expected answer independently of the store. */
struct inserted {
	int64_t id, sandbox_id, step, ts;
};

static void insert_step_event(struct store *s, int64_t sandbox_id, int64_t step, int64_t ts,
			      struct inserted *log, size_t *n)
{
	struct event ev;

	make_event(&ev, sandbox_id, sandbox_id == 1 ? "a" : "b", ts, step, (int)*n);
	insert(s, &ev);
	log[(*n)++] = (struct inserted){ ev.id, sandbox_id, step, ts };
	event_clear(&ev);
}

static int cmp_inserted(const void *a, const void *b)
{
	const struct inserted *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Runs a step query for sandbox 1 and compares with the events log says it must return. */
static void check_step_query(struct store *s, int64_t lo, int64_t hi, const struct inserted *log,
			     size_t n)
{
	struct store_timeline_query q = query(1);
	struct inserted *want = calloc(n, sizeof(*want));
	struct collected c = { 0 };
	size_t n_want = 0;

	assert_non_null(want);
	for (size_t i = 0; i < n; i++)
		if (log[i].sandbox_id == 1 && log[i].step != EVENT_STEP_NONE && log[i].step >= lo &&
		    log[i].step <= hi)
			want[n_want++] = log[i];
	qsort(want, n_want, sizeof(*want), cmp_inserted);
	q.step_lo = lo;
	q.step_hi = hi;
	timeline(s, &q, &c);
	assert_int_equal(c.n, n_want);
	for (size_t i = 0; i < c.n; i++) {
		assert_int_equal(c.v[i].id, want[i].id);
		assert_int_equal(c.v[i].ts, want[i].ts);
		assert_int_equal(c.v[i].step, want[i].step);
	}
	collected_free(&c);
	free(want);
}

static void test_step_range_returns_exactly_those_steps_sorted_by_ts(void **state)
{
	struct store *s = open_new("steps");
	struct inserted log[256];
	size_t n = 0;

	put_sandbox(s, 1, "a");
	put_sandbox(s, 2, "b");
	assert_int_equal(store_begin(s), 0);
	for (int64_t step = 0; step < 10; step++) {
		for (int k = 0; k < 3; k++) {
			/* Step 4's events arrive newest first. */
			int64_t ts = 1000 * step + (step == 4 ? 30 - 10 * k : 10 * k);

			insert_step_event(s, 1, step, ts, log, &n);
			/* The other sandbox uses the same step numbers, interleaved. */
			insert_step_event(s, 2, step, ts + 1, log, &n);
		}
		/* Events of no step between the steps' own. */
		insert_step_event(s, 1, EVENT_STEP_NONE, 1000 * step + 5, log, &n);
	}
	assert_int_equal(store_commit(s), 0);
	/* A later batch adds to step 4 (older ts than its first events) and to step 12. */
	assert_int_equal(store_begin(s), 0);
	insert_step_event(s, 1, 12, 500, log, &n);
	insert_step_event(s, 1, 4, 3999, log, &n);
	insert_step_event(s, 2, 4, 4001, log, &n);
	assert_int_equal(store_commit(s), 0);

	check_step_query(s, 3, 5, log, n);
	check_step_query(s, 4, 4, log, n);
	check_step_query(s, 0, 9, log, n);
	check_step_query(s, 9, 12, log, n);
	check_step_query(s, 50, 60, log, n);
	store_close(s);
}

static void test_step_range_sees_events_of_many_interleaved_steps(void **state)
{
	struct store *s = open_new("steps-many");
	struct inserted *log = calloc(4000, sizeof(*log));
	size_t n = 0;

	/* More than 64 steps alternate within one batch, so one step's events are noted in several
	 * spans that must be merged when the batch is written. */
	assert_non_null(log);
	put_sandbox(s, 1, "a");
	assert_int_equal(store_begin(s), 0);
	for (int round = 0; round < 20; round++)
		for (int64_t step = 0; step < 150; step++)
			if ((step + round) % 2 == 0)
				insert_step_event(s, 1, step, 100000 * round + step, log, &n);
	assert_int_equal(store_commit(s), 0);
	check_step_query(s, 3, 5, log, n);
	check_step_query(s, 70, 70, log, n);
	check_step_query(s, 0, 149, log, n);
	free(log);
	store_close(s);
}

/* Parses a trace line built from fmt into rec and its event, as the trace socket would. */
_printf_(3, 4) static void make_trace(struct trace_record *rec, struct event *ev, const char *fmt,
				      ...)
{
	char line[1024], err[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (trace_parse_line(line, strlen(line), rec, err, sizeof(err)) != TRACE_OK)
		fail_msg("%s: %s", line, err);
	assert_int_equal(trace_record_to_event(rec, 777, ev), 0);
	ev->sandbox_id = 1;
}

#define TRACE_LINE(call, step, tool, phase, extra)                                                 \
	"{\"gen_ai.operation.name\":\"execute_tool\",\"gen_ai.tool.name\":\"" tool "\","           \
	"\"gen_ai.tool.call.id\":\"" call "\",\"firebreak.sandbox\":\"a\","                        \
	"\"firebreak.step\":" step ",\"phase\":\"" phase "\"" extra "}"

#define TRACEPARENT "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

/* Applies one trace line in its own transaction; returns store_trace_apply's result. */
static int apply_line(struct store *s, const char *line, int64_t *ret_id)
{
	struct trace_record rec;
	struct event ev;
	int r;

	make_trace(&rec, &ev, "%s", line);
	assert_int_equal(store_begin(s), 0);
	r = store_trace_apply(s, &rec, &ev);
	assert_int_equal(store_commit(s), 0);
	if (ret_id)
		*ret_id = ev.id;
	trace_record_clear(&rec);
	event_clear(&ev);
	return r;
}

static void test_multi_row_insert_numbers_rows_in_order_and_keeps_step_ranges(void **state)
{
	struct store *s = open_new("many-rows");
	struct event evs[37], *ptrs[37];
	struct collected c = { 0 };
	struct store_timeline_query q;

	/* 37 = two groups of STORE_INSERT_ROWS (16) and 5 single rows; steps alternate so that the
	 * step ranges of a multi-row statement must come out right too. */
	put_sandbox(s, 1, "a");
	for (int i = 0; i < 37; i++) {
		make_event(&evs[i], 1, "a", 1000 + i, i % 3, i);
		ptrs[i] = &evs[i];
	}
	assert_int_equal(store_begin(s), 0);
	assert_int_equal(store_events_insert(s, ptrs, 37), 0);
	assert_int_equal(store_commit(s), 0);
	for (int i = 1; i < 37; i++)
		assert_int_equal(evs[i].id, evs[i - 1].id + 1);
	q = query(1);
	timeline(s, &q, &c);
	assert_int_equal(c.n, 37);
	for (int i = 0; i < 37; i++) {
		assert_int_equal(c.v[i].id, evs[i].id);
		assert_int_equal(c.v[i].pid, evs[i].pid);
		if (evs[i].fields)
			assert_string_equal(c.v[i].fields, evs[i].fields);
		else
			assert_null(c.v[i].fields);
	}
	q.step_lo = q.step_hi = 2;
	timeline(s, &q, &c);
	assert_int_equal(c.n, 12); /* i = 2, 5, ..., 35 */
	for (size_t i = 0; i < c.n; i++)
		assert_int_equal(c.v[i].step, 2);
	collected_free(&c);
	for (int i = 0; i < 37; i++)
		event_clear(&evs[i]);
	store_close(s);
}

static void test_trace_apply_detects_new_duplicate_and_conflict(void **state)
{
	struct store *s = open_new("trace");
	int64_t id = 0;

	put_sandbox(s, 1, "a");
	assert_int_equal(apply_line(s, TRACE_LINE("c-1", "1", "run", "start", ""), &id),
			 STORE_TRACE_NEW);
	assert_true(id > 0);
	assert_int_equal(event_count(s, 1), 1);

	/* A replayed line is acknowledged but not stored twice. */
	id = 0;
	assert_int_equal(apply_line(s, TRACE_LINE("c-1", "1", "run", "start", ""), &id),
			 STORE_TRACE_DUPLICATE);
	assert_int_equal(id, 0);
	assert_int_equal(event_count(s, 1), 1);

	assert_int_equal(apply_line(s, TRACE_LINE("c-1", "2", "run", "start", ""), NULL),
			 STORE_TRACE_CONFLICT);
	assert_int_equal(apply_line(s, TRACE_LINE("c-1", "1", "other", "start", ""), NULL),
			 STORE_TRACE_CONFLICT);
	assert_int_equal(apply_line(s, TRACE_LINE("c-1", "2", "run", "end", ""), NULL),
			 STORE_TRACE_CONFLICT);
	/* The end is still missing, but it names another tool: not this call's end. */
	assert_int_equal(apply_line(s, TRACE_LINE("c-1", "1", "other", "end", ""), NULL),
			 STORE_TRACE_CONFLICT);
	assert_int_equal(event_count(s, 1), 1);

	assert_int_equal(
		apply_line(s, TRACE_LINE("c-1", "1", "run", "end", ",\"exit_code\":0"), NULL),
		STORE_TRACE_NEW);
	assert_int_equal(
		apply_line(s, TRACE_LINE("c-1", "1", "run", "end", ",\"exit_code\":0"), NULL),
		STORE_TRACE_DUPLICATE);
	assert_int_equal(event_count(s, 1), 2);

	/* The same call id in another sandbox is another call. */
	put_sandbox(s, 2, "b");
	{
		struct trace_record rec;
		struct event ev;

		make_trace(&rec, &ev, TRACE_LINE("c-1", "9", "x", "start", ""));
		ev.sandbox_id = 2;
		assert_int_equal(store_trace_apply(s, &rec, &ev), STORE_TRACE_NEW);
		trace_record_clear(&rec);
		event_clear(&ev);
	}
	assert_int_equal(event_count(s, 2), 1);
	store_close(s);
}

static void test_trace_apply_accepts_end_before_start(void **state)
{
	const char *path = fixture_db_path("trace-order");
	struct store *s = open_new("trace-order");
	sqlite3 *db;

	put_sandbox(s, 1, "a");
	assert_int_equal(
		apply_line(s, TRACE_LINE("c-2", "4", "run", "end", ",\"exit_code\":1,\"ts\":2000"),
			   NULL),
		STORE_TRACE_NEW);
	assert_int_equal(
		apply_line(s, TRACE_LINE("c-2", "4", "run", "start", ",\"ts\":1000"), NULL),
		STORE_TRACE_NEW);
	assert_int_equal(
		apply_line(s, TRACE_LINE("c-2", "4", "run", "start", ",\"ts\":1000"), NULL),
		STORE_TRACE_DUPLICATE);
	assert_int_equal(event_count(s, 1), 2);
	db = raw_open(path);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM steps"), 1);
	assert_int_equal(raw_int(db, "SELECT start_ts FROM steps WHERE call_id = 'c-2'"), 1000);
	assert_int_equal(raw_int(db, "SELECT end_ts FROM steps WHERE call_id = 'c-2'"), 2000);
	assert_int_equal(raw_int(db, "SELECT exit_code FROM steps WHERE call_id = 'c-2'"), 1);
	assert_int_equal(raw_int(db, "SELECT step FROM steps WHERE call_id = 'c-2'"), 4);
	sqlite3_close(db);
	store_close(s);
}

static void test_trace_apply_merges_annotations_and_sets_coerced(void **state)
{
	const char *path = fixture_db_path("trace-ann");
	struct store *s = open_new("trace-ann");
	json_t *got, *want;
	char buf[512];
	sqlite3 *db;
	int r;

	put_sandbox(s, 1, "a");
	r = apply_line(s,
		       TRACE_LINE("c-3", "5", "run", "start",
				  ",\"annotations\":{\"a\":1,\"b\":\"start\"},"
				  "\"traceparent\":\"" TRACEPARENT "\""),
		       NULL);
	assert_int_equal(r, STORE_TRACE_NEW);
	db = raw_open(path);
	assert_int_equal(raw_int(db, "SELECT coerced FROM steps WHERE call_id = 'c-3'"), 0);
	r = apply_line(s,
		       TRACE_LINE("c-3", "5", "run", "end",
				  ",\"exit_code\":3,\"error.type\":\"timeout\",\"annotations\":"
				  "{\"coerced\":true,\"reason\":\"r\",\"b\":\"end\"}"),
		       NULL);
	assert_int_equal(r, STORE_TRACE_NEW);
	assert_int_equal(raw_int(db, "SELECT coerced FROM steps WHERE call_id = 'c-3'"), 1);
	assert_int_equal(raw_int(db, "SELECT exit_code FROM steps WHERE call_id = 'c-3'"), 3);
	assert_string_equal(raw_text(db, "SELECT error_type FROM steps WHERE call_id = 'c-3'", buf,
				     sizeof(buf)),
			    "timeout");
	assert_string_equal(raw_text(db, "SELECT traceparent FROM steps WHERE call_id = 'c-3'", buf,
				     sizeof(buf)),
			    TRACEPARENT);
	raw_text(db, "SELECT annotations FROM steps WHERE call_id = 'c-3'", buf, sizeof(buf));
	got = json_loads(buf, 0, NULL);
	assert_non_null(got);
	/* RFC 7396 merge: the end's value wins where both have a key. */
	want = json_pack("{s:i, s:s, s:b, s:s}", "a", 1, "b", "end", "coerced", 1, "reason", "r");
	assert_true(json_equal(got, want));
	json_decref(got);
	json_decref(want);

	/* A coerced start stays coerced whatever the end says. */
	assert_int_equal(apply_line(s,
				    TRACE_LINE("c-4", "6", "run", "start",
					       ",\"annotations\":{\"coerced\":true}"),
				    NULL),
			 STORE_TRACE_NEW);
	assert_int_equal(apply_line(s,
				    TRACE_LINE("c-4", "6", "run", "end",
					       ",\"annotations\":{\"note\":\"x\"}"),
				    NULL),
			 STORE_TRACE_NEW);
	assert_int_equal(raw_int(db, "SELECT coerced FROM steps WHERE call_id = 'c-4'"), 1);
	sqlite3_close(db);
	store_close(s);
}

/* Inserts one event per second t in [1, n] for each of sandboxes 1, 2 and none (host). */
static void insert_per_second(struct store *s, int n, int64_t *ids_a)
{
	struct event ev;

	assert_int_equal(store_begin(s), 0);
	for (int t = 1; t <= n; t++) {
		make_event(&ev, 1, "a", t * NSEC_PER_SEC, EVENT_STEP_NONE, t);
		insert(s, &ev);
		ids_a[t] = ev.id;
		event_clear(&ev);
		make_event(&ev, 2, "b", t * NSEC_PER_SEC, EVENT_STEP_NONE, t);
		insert(s, &ev);
		event_clear(&ev);
		make_event(&ev, 0, "", t * NSEC_PER_SEC, EVENT_STEP_NONE, t);
		insert(s, &ev);
		event_clear(&ev);
	}
	assert_int_equal(store_commit(s), 0);
}

static int64_t count_where(sqlite3 *db, const char *cond)
{
	char sql[512];

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM events WHERE %s", cond);
	return raw_int(db, sql);
}

static void test_retention_by_age_keeps_incident_windows_and_linked_events(void **state)
{
	const char *path = fixture_db_path("ret-age");
	struct store *s = open_new("ret-age");
	struct store_retention q = { .max_age_ns = 150 * NSEC_PER_SEC,
				     .now_ns = 200 * NSEC_PER_SEC,
				     .chunk = 10 };
	int64_t ids_a[101], incident = 0, other = 0;
	sqlite3 *db;

	put_sandbox(s, 1, "a");
	put_sandbox(s, 2, "b");
	insert_per_second(s, 100, ids_a);
	assert_int_equal(store_incident_insert(s, 1, 20 * NSEC_PER_SEC, 30 * NSEC_PER_SEC, "alert",
					       "window", &incident),
			 0);
	assert_int_equal(store_incident_insert(s, 1, 90 * NSEC_PER_SEC, 95 * NSEC_PER_SEC, "warn",
					       NULL, &other),
			 0);
	assert_int_equal(store_incident_link_event(s, other, ids_a[5]), 0);
	/* Linking twice is not an error, and keeps one link. */
	assert_int_equal(store_incident_link_event(s, other, ids_a[5]), 0);

	/* Cut-off at 50 s: 49 s of three sources go, but for sandbox a's window (20-30 s, both
	 * ends included: 11 events) and its linked event at 5 s. */
	assert_int_equal(store_retention_run(s, &q), 49 * 3 - 11 - 1);
	assert_int_equal(event_count(s, 0), 300 - (49 * 3 - 11 - 1));
	db = raw_open(path);
	assert_int_equal(count_where(db, "ts < 50000000000 AND sandbox_id = 1"), 12);
	assert_int_equal(count_where(db, "ts >= 20000000000 AND ts <= 30000000000 AND "
					 "sandbox_id = 1"),
			 11);
	assert_int_equal(count_where(db, "ts < 50000000000 AND sandbox_id = 2"), 0);
	assert_int_equal(count_where(db, "ts < 50000000000 AND sandbox_id IS NULL"), 0);
	assert_int_equal(count_where(db, "id = (SELECT event_id FROM incident_events)"), 1);
	/* An event exactly at the cut-off is not older than max_age. */
	assert_int_equal(count_where(db, "ts = 50000000000"), 3);
	assert_int_equal(raw_int(db, "SELECT count(*) FROM incident_events"), 1);
	sqlite3_close(db);

	/* Nothing more is due: a second run deletes nothing. */
	assert_int_equal(store_retention_run(s, &q), 0);
	/* No caps at all: nothing is deleted. */
	q.max_age_ns = 0;
	assert_int_equal(store_retention_run(s, &q), 0);
	assert_int_equal(event_count(s, 0), 300 - (49 * 3 - 11 - 1));
	store_close(s);
}

static void test_retention_keeps_everything_after_an_open_incident_starts(void **state)
{
	const char *path = fixture_db_path("ret-open");
	struct store *s = open_new("ret-open");
	struct store_retention q = { .max_age_ns = 100 * NSEC_PER_SEC,
				     .now_ns = 1000 * NSEC_PER_SEC,
				     .chunk = 1000 };
	int64_t ids_a[101], incident = 0;
	char buf[16];
	sqlite3 *db;

	put_sandbox(s, 1, "a");
	put_sandbox(s, 2, "b");
	insert_per_second(s, 100, ids_a);
	assert_int_equal(
		store_incident_insert(s, 1, 60 * NSEC_PER_SEC, 0, "alert", "open one", &incident),
		0);
	db = raw_open(path);
	assert_int_equal(raw_int(db, "SELECT end_ts IS NULL FROM incidents"), 1);
	assert_string_equal(raw_text(db, "SELECT state FROM incidents", buf, sizeof(buf)), "open");

	/* Everything is past the age cap; only sandbox a from 60 s on is kept. */
	assert_int_equal(store_retention_run(s, &q), 100 + 100 + 59);
	assert_int_equal(event_count(s, 1), 41);
	assert_int_equal(event_count(s, 2), 0);
	assert_int_equal(count_where(db, "sandbox_id = 1 AND ts < 60000000000"), 0);
	sqlite3_close(db);
	store_close(s);
}

static void test_retention_by_size_deletes_oldest_first_never_incident_events(void **state)
{
	const char *path = fixture_db_path("ret-size");
	struct store *s = open_new("ret-size");
	struct store_retention q = { .now_ns = 1, .chunk = 100 };
	char fields[700];
	uint64_t size = 0, cap;
	int64_t incident = 0, before, n, oldest_kept;
	struct event ev;
	sqlite3 *db;

	put_sandbox(s, 1, "a");
	assert_int_equal(store_begin(s), 0);
	for (int t = 1; t <= 3000; t++) {
		make_event(&ev, 1, "a", t * NSEC_PER_SEC, t / 10, t);
		snprintf(fields, sizeof(fields), "{\"pad\":\"%0600d\"}", t);
		assert_int_equal(event_set_fields_text(&ev, fields, strlen(fields)), 0);
		insert(s, &ev);
		event_clear(&ev);
	}
	assert_int_equal(store_commit(s), 0);
	/* The oldest 100 events lie in an incident's window. */
	assert_int_equal(store_incident_insert(s, 1, 1 * NSEC_PER_SEC, 100 * NSEC_PER_SEC, "alert",
					       NULL, &incident),
			 0);
	assert_int_equal(store_size(s, &size), 0);
	assert_true(size > 2000000);
	cap = size / 3;
	q.max_bytes = cap;

	before = event_count(s, 0);
	n = store_retention_run(s, &q);
	assert_true(n > 0);
	assert_int_equal(before - event_count(s, 0), n);
	assert_int_equal(store_size(s, &size), 0);
	assert_true(size <= cap);

	db = raw_open(path);
	assert_int_equal(count_where(db, "ts <= 100000000000"), 100);
	/* What is left outside the window is the newest: a contiguous run up to the last event. */
	oldest_kept = raw_int(db, "SELECT min(ts) FROM events WHERE ts > 100000000000");
	assert_true(oldest_kept > 101 * NSEC_PER_SEC);
	assert_int_equal(count_where(db, "ts > 100000000000"),
			 3000 - oldest_kept / NSEC_PER_SEC + 1);

	/* A cap nothing can meet: every event outside the incident goes, the incident's stay. */
	q.max_bytes = 1;
	before = event_count(s, 0);
	n = store_retention_run(s, &q);
	assert_int_equal(n, before - 100);
	assert_int_equal(event_count(s, 0), 100);
	assert_int_equal(count_where(db, "ts <= 100000000000"), 100);
	sqlite3_close(db);
	store_close(s);
}

struct sandbox_list {
	struct store_sandbox v[8];
	int n;
	int stop_at;
};

static int list_cb(const struct store_sandbox *sb, void *data)
{
	struct sandbox_list *l = data;

	assert_true(l->n < 8);
	l->v[l->n++] = *sb;
	return l->n == l->stop_at ? 7 : 0;
}

/* The list of test_sandbox_put_list_find_and_max_id: by id, alpha updated, its steps and last
 * event. */
static void check_listed(const struct sandbox_list *l)
{
	assert_int_equal(l->n, 3);
	assert_int_equal(l->v[0].id, 1);
	assert_int_equal(l->v[1].id, 2);
	assert_int_equal(l->v[2].id, 5);
	assert_string_equal(l->v[0].name, "alpha");
	assert_string_equal(l->v[0].state, "frozen");
	assert_int_equal(l->v[0].created_ts, 10);
	assert_int_equal(l->v[0].updated_ts, 20);
	assert_string_equal(l->v[0].policy_hash, "sha256:aa");
	assert_string_equal(l->v[0].cgroup, "/sys/fs/cgroup/firebreak/alpha");
	assert_int_equal(l->v[0].steps, 1);
	assert_int_equal(l->v[0].last_ts, 99);
	assert_string_equal(l->v[1].name, "beta");
	assert_int_equal(l->v[1].steps, 0);
	assert_int_equal(l->v[1].last_ts, 0);
	assert_string_equal(l->v[2].policy_hash, "");
}

static void test_sandbox_put_list_find_and_max_id(void **state)
{
	struct store *s = open_new("sandboxes");
	struct store_sandbox sb = { .id = 1,
				    .name = "alpha",
				    .state = "registered",
				    .created_ts = 10,
				    .updated_ts = 10,
				    .policy_hash = "sha256:aa",
				    .cgroup = "/sys/fs/cgroup/firebreak/alpha" };
	struct sandbox_list l = { .stop_at = 0 };
	struct event ev;
	int64_t max = -1;

	assert_int_equal(store_sandbox_max_id(s, &max), 0);
	assert_int_equal(max, 0);
	assert_int_equal(store_sandbox_find(s, "alpha", &sb), -ENOENT);
	assert_string_equal(sb.name, "alpha"); /* left untouched */

	assert_int_equal(store_sandbox_put(s, &sb), 0);
	put_sandbox(s, 5, "gamma");
	put_sandbox(s, 2, "beta");
	/* An update by id changes state and time; an empty hash or cgroup keeps the old one, and
	 * the name stays what it was registered as. */
	sb = (struct store_sandbox){ .id = 1, .name = "renamed", .state = "frozen" };
	sb.updated_ts = 20;
	assert_int_equal(store_sandbox_put(s, &sb), 0);
	/* Another id with a name already taken is refused. */
	sb = (struct store_sandbox){ .id = 9, .name = "beta", .state = "running" };
	assert_true(store_sandbox_put(s, &sb) < 0);

	make_event(&ev, 1, "alpha", 99, 1, 1);
	insert(s, &ev);
	event_clear(&ev);
	make_event(&ev, 1, "alpha", 42, 1, 2);
	insert(s, &ev);
	event_clear(&ev);
	assert_int_equal(apply_line(s, TRACE_LINE("c-1", "1", "run", "start", ",\"ts\":50"), NULL),
			 STORE_TRACE_NEW);

	assert_int_equal(store_sandbox_list(s, list_cb, &l), 0);
	check_listed(&l);

	l = (struct sandbox_list){ .stop_at = 2 };
	assert_int_equal(store_sandbox_list(s, list_cb, &l), 7);
	assert_int_equal(l.n, 2);

	assert_int_equal(store_sandbox_find(s, "beta", &sb), 0);
	assert_int_equal(sb.id, 2);
	assert_string_equal(sb.state, "running");
	assert_int_equal(sb.created_ts, 2);
	assert_int_equal(store_sandbox_find(s, "renamed", &sb), -ENOENT);
	assert_int_equal(store_sandbox_max_id(s, &max), 0);
	assert_int_equal(max, 5);
	store_close(s);
}

static void test_event_count_per_sandbox_and_in_total(void **state)
{
	struct store *s = open_new("count");
	struct event ev;

	put_sandbox(s, 1, "a");
	put_sandbox(s, 2, "b");
	assert_int_equal(event_count(s, 0), 0);
	for (int i = 0; i < 6; i++) {
		int64_t sandbox_id = i < 3 ? 1 : i < 5 ? 2 : 0;

		make_event(&ev, sandbox_id, "", i, EVENT_STEP_NONE, i);
		insert(s, &ev);
		event_clear(&ev);
	}
	assert_int_equal(event_count(s, 1), 3);
	assert_int_equal(event_count(s, 2), 2);
	assert_int_equal(event_count(s, 9), 0);
	assert_int_equal(event_count(s, 0), 6);
	store_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_creates_schema_at_latest_version),
		cmocka_unit_test(test_policies_kept_by_hash),
		cmocka_unit_test(test_migration_from_version_1_keeps_data_and_adds_incidents),
		cmocka_unit_test(test_newer_schema_is_refused_in_both_modes),
		cmocka_unit_test(test_foreign_sqlite_file_is_refused_and_left_unmodified),
		cmocka_unit_test(test_sqlite_file_of_another_application_is_refused),
		cmocka_unit_test(test_file_that_is_not_sqlite_is_refused_and_left_unmodified),
		cmocka_unit_test(test_read_only_open_of_missing_file_is_enoent_and_creates_nothing),
		cmocka_unit_test(test_read_only_open_of_older_version_is_eproto),
		cmocka_unit_test(test_read_only_store_refuses_writes),
		cmocka_unit_test(test_batch_of_10000_events_reads_back_in_ts_id_order_intact),
		cmocka_unit_test(test_timeline_since_is_inclusive_until_exclusive_and_limit_counts),
		cmocka_unit_test(test_step_range_returns_exactly_those_steps_sorted_by_ts),
		cmocka_unit_test(test_step_range_sees_events_of_many_interleaved_steps),
		cmocka_unit_test(test_multi_row_insert_numbers_rows_in_order_and_keeps_step_ranges),
		cmocka_unit_test(test_trace_apply_detects_new_duplicate_and_conflict),
		cmocka_unit_test(test_trace_apply_accepts_end_before_start),
		cmocka_unit_test(test_trace_apply_merges_annotations_and_sets_coerced),
		cmocka_unit_test(test_retention_by_age_keeps_incident_windows_and_linked_events),
		cmocka_unit_test(test_retention_keeps_everything_after_an_open_incident_starts),
		cmocka_unit_test(test_retention_by_size_deletes_oldest_first_never_incident_events),
		cmocka_unit_test(test_sandbox_put_list_find_and_max_id),
		cmocka_unit_test(test_event_count_per_sandbox_and_in_total),
	};

	/* The refusals these tests provoke are logged as errors; the rest is noise here. */
	log_max_level = LOG_LEVEL_ERROR;
	return cmocka_run_group_tests(tests, group_setup, fixture_dir_down);
}
