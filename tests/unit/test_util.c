/*
 * The small utilities everything leans on: time, duration and size parsing (lib/timeutil.h), the
 * configuration (lib/config.h) and the string hash map (lib/hashmap.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>

#include "config.h"
#include "fixtures.h"
#include "hashmap.h"
#include "log.h"
#include "macro.h"
#include "timeutil.h"

/* 2026-11-29T21:17:56Z in seconds since the epoch. */
#define T0_SEC 1795987076LL
#define SENTINEL 0x5151515151515151LL

static int64_t duration(const char *s)
{
	int64_t v = SENTINEL;

	if (duration_parse(s, &v) != 0)
		fail_msg("duration_parse(\"%s\") refused", s);
	return v;
}

static void expect_bad_duration(const char *s)
{
	int64_t v = SENTINEL;

	if (duration_parse(s, &v) != -EINVAL)
		fail_msg("duration_parse(\"%s\") accepted", s);
	/* A refused value leaves the output alone. */
	assert_int_equal(v, SENTINEL);
}

static void test_duration_parse_units(void **state)
{
	assert_int_equal(duration("250ms"), 250 * NSEC_PER_MSEC);
	assert_int_equal(duration("30s"), 30 * NSEC_PER_SEC);
	assert_int_equal(duration("15m"), 15 * 60 * NSEC_PER_SEC);
	assert_int_equal(duration("2h"), 2 * 3600 * NSEC_PER_SEC);
	assert_int_equal(duration("7d"), 7 * 86400 * NSEC_PER_SEC);
	assert_int_equal(duration("10ns"), 10);
	assert_int_equal(duration("3us"), 3000);
	assert_int_equal(duration("5"), 5 * NSEC_PER_SEC); /* a bare number is seconds */
	assert_int_equal(duration("0"), 0);
	assert_int_equal(duration("0ms"), 0);
	assert_int_equal(duration("007s"), 7 * NSEC_PER_SEC);
}

static void test_duration_parse_refuses_bad_input_and_overflow(void **state)
{
	static const char *const bad[] = {
		"",
		"s",
		"ms",
		"-5s",
		"+5s",
		" 5s",
		"5 s",
		"5s ",
		"1.5s",
		"5x",
		"5S",
		"5sec",
		"5mss",
		"0x10s",
		"1e3s",
		/* INT64_MAX ns is 9223372036.85 s. */
		"9223372037",
		"9223372037s",
		"106752d",
		"2562048h",
		"153722868m",
		"9223372036854775808ns",
		"18446744073709551616",
		"99999999999999999999999s",
	};

	expect_bad_duration(NULL);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		expect_bad_duration(bad[i]);
	/* The largest values that fit. */
	assert_int_equal(duration("9223372036"), 9223372036LL * NSEC_PER_SEC);
	assert_int_equal(duration("106751d"), 106751LL * 86400 * NSEC_PER_SEC);
	assert_int_equal(duration("9223372036854775807ns"), INT64_MAX);
}

static uint64_t size(const char *s)
{
	uint64_t v = (uint64_t)SENTINEL;

	if (size_parse(s, &v) != 0)
		fail_msg("size_parse(\"%s\") refused", s);
	return v;
}

static void test_size_parse_suffixes_and_limits(void **state)
{
	static const char *const bad[] = {
		"",
		"M",
		"-1",
		"1.5G",
		"12X",
		"1k",
		"1m",
		"1KB",
		"1 K",
		" 1K",
		"1K ",
		"0x10",
		"8388608T",
		"9223372036854775808",
		"18446744073709551615",
		"99999999999999999999",
	};

	assert_int_equal(size("512M"), 512ULL << 20);
	assert_int_equal(size("2G"), 2ULL << 30);
	assert_int_equal(size("1048576"), 1048576);
	assert_int_equal(size("1K"), 1024);
	assert_int_equal(size("3T"), 3ULL << 40);
	assert_int_equal(size("0"), 0);
	assert_int_equal(size("8388607T"), 8388607ULL << 40);
	assert_int_equal(size("9223372036854775807"), INT64_MAX);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		uint64_t v = (uint64_t)SENTINEL;

		if (size_parse(bad[i], &v) != -EINVAL)
			fail_msg("size_parse(\"%s\") accepted", bad[i]);
		assert_int_equal(v, (uint64_t)SENTINEL);
	}
}

static int64_t point(const char *s, int64_t now)
{
	int64_t v = SENTINEL;

	if (time_parse(s, now, &v) != 0)
		fail_msg("time_parse(\"%s\") refused", s);
	return v;
}

static void test_time_parse_epoch_ns_and_rfc3339(void **state)
{
	assert_int_equal(point("1795987076000000000", 0), T0_SEC * NSEC_PER_SEC);
	assert_int_equal(point("0", 5), 0);
	assert_int_equal(point("9223372036854775807", 0), INT64_MAX);
	assert_int_equal(point("2026-11-29T21:17:56Z", 0), T0_SEC * NSEC_PER_SEC);
	assert_int_equal(point("2026-11-29T21:17:56.5Z", 0), T0_SEC * NSEC_PER_SEC + 500000000);
	assert_int_equal(point("2026-11-29T21:17:56.000000001Z", 0), T0_SEC * NSEC_PER_SEC + 1);
	assert_int_equal(point("2026-11-29T21:17:56.123456789Z", 0),
			 T0_SEC * NSEC_PER_SEC + 123456789);
	/* Digits past the nanosecond are cut, not rounded. */
	assert_int_equal(point("2026-11-29T21:17:56.1234567899Z", 0),
			 T0_SEC * NSEC_PER_SEC + 123456789);
	assert_int_equal(point("1970-01-01T00:00:00Z", 0), 0);
	/* The last representable nanosecond. */
	assert_int_equal(point("2262-04-11T23:47:16.854775807Z", 0), INT64_MAX);
}

static void test_time_parse_ages_count_back_from_now(void **state)
{
	const int64_t now = T0_SEC * NSEC_PER_SEC;

	assert_int_equal(point("90s", now), now - 90 * NSEC_PER_SEC);
	assert_int_equal(point("15m", now), now - 15 * 60 * NSEC_PER_SEC);
	assert_int_equal(point("2h", now), now - 2 * 3600 * NSEC_PER_SEC);
	assert_int_equal(point("7d", now), now - 7 * 86400 * NSEC_PER_SEC);
	/* The same age from another now is another point. */
	assert_int_equal(point("15m", now + 1), now + 1 - 15 * 60 * NSEC_PER_SEC);
}

static void test_time_format_round_trips_through_time_parse(void **state)
{
	static const int64_t values[] = {
		0,
		1,
		999999999,
		T0_SEC * NSEC_PER_SEC,
		T0_SEC * NSEC_PER_SEC + 123456789,
		INT64_MAX,
		951782400LL * NSEC_PER_SEC, /* 2000-02-29 */
	};
	char buf[64];

	assert_string_equal(time_format_rfc3339(T0_SEC * NSEC_PER_SEC + 5, buf, sizeof(buf)),
			    "2026-11-29T21:17:56.000000005Z");
	for (size_t i = 0; i < ARRAY_SIZE(values); i++)
		assert_int_equal(point(time_format_rfc3339(values[i], buf, sizeof(buf)), 0),
				 values[i]);
}

static void test_time_parse_refuses_bad_input_and_overflow(void **state)
{
	static const char *const bad[] = {
		"",
		"yesterday",
		"now",
		"-5",
		"15x",
		"15 m",
		"0s",
		"15ms", /* ages are whole seconds or more */
		"2026-11-29T21:17:56",
		"2026-11-29T21:17:56+01:00",
		"2026-11-29T21:17:56.Z",
		"2026-11-29T21:17:56Zjunk",
		"2026-11-29 21:17:56Z",
		"2026-13-29T21:17:56Z",
		"2026-11-29T25:17:56Z",
		"T",
		/* Past what int64 nanoseconds can hold. */
		"2262-04-11T23:47:16.854775808Z",
		"2262-04-12T00:00:00Z",
		"9999-12-31T23:59:59Z",
		"99999999999999999999",
		"106752d",
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		int64_t v = SENTINEL;

		if (time_parse(bad[i], T0_SEC * NSEC_PER_SEC, &v) != -EINVAL)
			fail_msg("time_parse(\"%s\") accepted as %lld", bad[i], (long long)v);
		assert_int_equal(v, SENTINEL);
	}
	assert_int_equal(time_parse(NULL, 0, &(int64_t){ 0 }), -EINVAL);
}

static void expect_set(struct config *cfg, const char *key, const char *value)
{
	char err[160] = "";

	if (config_set(cfg, key, value, err, sizeof(err)) != 0)
		fail_msg("%s = %s refused: %s", key, value, err);
}

/* A refused value changes nothing in cfg and says why. */
static void expect_refused(const char *key, const char *value)
{
	struct config cfg, before;
	char err[160] = "";

	config_defaults(&cfg);
	before = cfg;
	if (config_set(&cfg, key, value, err, sizeof(err)) != -EINVAL)
		fail_msg("%s = %s accepted", key, value);
	assert_true(err[0] != '\0');
	assert_memory_equal(&cfg, &before, sizeof(cfg));
}

static void test_config_set_accepts_each_key(void **state)
{
	struct config cfg;

	config_defaults(&cfg);
	expect_set(&cfg, "db", "/srv/fb/x.db");
	assert_string_equal(cfg.db, "/srv/fb/x.db");
	expect_set(&cfg, "runtime_dir", "/run/fb2");
	assert_string_equal(cfg.runtime_dir, "/run/fb2");
	expect_set(&cfg, "listen", "0.0.0.0:8080");
	assert_string_equal(cfg.listen, "0.0.0.0:8080");
	expect_set(&cfg, "listen", "[::1]:9137");
	assert_string_equal(cfg.listen, "[::1]:9137");
	expect_set(&cfg, "log_level", "debug");
	assert_int_equal(cfg.log_level, LOG_LEVEL_DEBUG);
	expect_set(&cfg, "log_level", "error");
	assert_int_equal(cfg.log_level, LOG_LEVEL_ERROR);
	expect_set(&cfg, "sync", "normal");
	assert_int_equal(cfg.sync_full, 0);
	expect_set(&cfg, "sync", "full");
	assert_int_equal(cfg.sync_full, 1);
	expect_set(&cfg, "batch_max", "100");
	assert_int_equal(cfg.batch_max, 100);
	expect_set(&cfg, "batch_max", "1000000");
	assert_int_equal(cfg.batch_max, 1000000);
	expect_set(&cfg, "queue_max", "2048");
	assert_int_equal(cfg.queue_max, 2048);
	expect_set(&cfg, "queue_max", "1K");
	assert_int_equal(cfg.queue_max, 1024);
	expect_set(&cfg, "retention_max_age", "7d");
	assert_int_equal(cfg.retention_max_age_ns, 7 * 86400 * NSEC_PER_SEC);
	expect_set(&cfg, "retention_max_age", "0");
	assert_int_equal(cfg.retention_max_age_ns, 0);
	expect_set(&cfg, "retention_max_size", "512M");
	assert_int_equal(cfg.retention_max_bytes, 512ULL << 20);
	expect_set(&cfg, "retention_max_size", "0");
	assert_int_equal(cfg.retention_max_bytes, 0);
	expect_set(&cfg, "retention_interval", "10m");
	assert_int_equal(cfg.retention_interval_ns, 600 * NSEC_PER_SEC);
	expect_set(&cfg, "trace_clients_max", "10");
	assert_int_equal(cfg.trace_clients_max, 10);
	expect_set(&cfg, "trace_clients_max", "65536");
	assert_int_equal(cfg.trace_clients_max, 65536);
	expect_set(&cfg, "trace_idle_timeout", "5m");
	assert_int_equal(cfg.trace_idle_timeout_ns, 300 * NSEC_PER_SEC);
	expect_set(&cfg, "trace_stall_timeout", "250ms");
	assert_int_equal(cfg.trace_stall_timeout_ns, 250 * NSEC_PER_MSEC);
	expect_set(&cfg, "trace_reply_buffer_max", "64K");
	assert_int_equal(cfg.trace_reply_buffer_max, 65536);
	expect_set(&cfg, "trace_reply_buffer_max", "1G");
	assert_int_equal(cfg.trace_reply_buffer_max, 1ULL << 30);
}

static void test_config_set_refuses_bad_values_and_unknown_keys(void **state)
{
	char long_path[PATH_MAX + 2], long_listen[200];

	long_path[0] = '/';
	memset(long_path + 1, 'p', sizeof(long_path) - 2);
	long_path[sizeof(long_path) - 1] = '\0';
	memset(long_listen, '1', sizeof(long_listen) - 1);
	long_listen[sizeof(long_listen) - 1] = '\0';
	long_listen[3] = ':';

	expect_refused("db", "relative/x.db");
	expect_refused("db", "");
	expect_refused("db", long_path);
	expect_refused("runtime_dir", "run");
	expect_refused("listen", "nocolon");
	expect_refused("listen", long_listen);
	expect_refused("log_level", "loud");
	expect_refused("log_level", "INFO");
	expect_refused("sync", "sometimes");
	expect_refused("sync", "");
	expect_refused("batch_max", "0");
	expect_refused("batch_max", "1000001");
	expect_refused("batch_max", "many");
	expect_refused("queue_max", "1023");
	expect_refused("queue_max", "100000001");
	expect_refused("retention_max_age", "forever");
	expect_refused("retention_max_age", "-1d");
	expect_refused("retention_max_size", "lots");
	expect_refused("retention_max_size", "8388608T");
	expect_refused("retention_interval", "1y");
	expect_refused("trace_clients_max", "0");
	expect_refused("trace_clients_max", "65537");
	expect_refused("trace_idle_timeout", "-1");
	/* Unlike the retention settings, the client timeouts cannot be switched off. */
	expect_refused("trace_idle_timeout", "0");
	expect_refused("trace_stall_timeout", "0");
	expect_refused("trace_stall_timeout", "soon");
	expect_refused("trace_reply_buffer_max", "4095");
	expect_refused("trace_reply_buffer_max", "2G");
	expect_refused("no_such_key", "1");
	expect_refused("", "1");
	expect_refused("DB", "/x");
}

static void test_config_set_names_the_unknown_key(void **state)
{
	struct config cfg;
	char err[160] = "";

	config_defaults(&cfg);
	assert_int_equal(config_set(&cfg, "colour", "red", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "colour"));
}

/* docs/config.md's table of keys is the key table's, row for row: no key undocumented, no row
 * for a key that is not there, no default or bound described otherwise. */
static void test_config_md_shows_exactly_the_key_table(void **state)
{
	char path[PATH_MAX], line[1024], want[1024];
	size_t i = 0;
	FILE *f;

	fixture_repo_path("docs/config.md", path, sizeof(path));
	f = fopen(path, "re");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "| `", 3) != 0)
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (config_doc_row(i, want, sizeof(want)) < 0)
			fail_msg("docs/config.md row %zu is no key: %s", i + 1, line);
		if (strcmp(line, want) != 0)
			fail_msg("docs/config.md row %zu:\n got  %s\n want %s", i + 1, line, want);
		i++;
	}
	fclose(f);
	if (config_doc_row(i, want, sizeof(want)) == 0)
		fail_msg("docs/config.md lacks row %zu: %s", i + 1, want);
	assert_true(i >= 30);
}

/* Writes text to a new file in a fresh temporary directory; the caller unlinks both. */
static void write_temp(char *dir, size_t dirsize, char *path, size_t pathsize, const char *text)
{
	FILE *f;

	snprintf(dir, dirsize, "/tmp/fb-test-util-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, pathsize, "%s/firebreakd.conf", dir);
	f = fopen(path, "we");
	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

static void remove_temp(const char *dir, const char *path)
{
	unlink(path);
	assert_int_equal(rmdir(dir), 0);
}

/* Loads text as a config file over the defaults; returns config_load's result. */
static int load_text(const char *text, struct config *cfg)
{
	char dir[64], path[128];
	int r;

	write_temp(dir, sizeof(dir), path, sizeof(path), text);
	config_defaults(cfg);
	r = config_load(cfg, path, 1);
	remove_temp(dir, path);
	return r;
}

static void test_config_load_reads_keys_comments_and_blank_lines(void **state)
{
	struct config cfg, defaults;

	config_defaults(&defaults);
	assert_int_equal(load_text("# Firebreak\n"
				   "\n"
				   "   \t\n"
				   "db = /srv/fb.db\n"
				   "  # indented comment\n"
				   "batch_max=512\n"
				   "\tsync   =   normal   \n"
				   "retention_max_age = 2d\n"
				   "listen = 127.0.0.1:1",
				   &cfg),
			 0);
	assert_string_equal(cfg.db, "/srv/fb.db");
	assert_int_equal(cfg.batch_max, 512);
	assert_int_equal(cfg.sync_full, 0);
	assert_int_equal(cfg.retention_max_age_ns, 2 * 86400 * NSEC_PER_SEC);
	/* The last line has no newline and still counts. */
	assert_string_equal(cfg.listen, "127.0.0.1:1");
	/* What the file does not name keeps its default. */
	assert_string_equal(cfg.runtime_dir, defaults.runtime_dir);
	assert_int_equal(cfg.queue_max, defaults.queue_max);

	/* An empty file is a valid file. */
	assert_int_equal(load_text("", &cfg), 0);
	assert_memory_equal(&cfg, &defaults, sizeof(cfg));
}

static void test_config_load_refuses_unknown_key_and_bad_lines(void **state)
{
	static const char *const bad[] = {
		"db = /x\nbogus = 1\n",
		"batch_max = 0\n",
		"just some words\n",
		"= /x\n",
		"db /x\n",
		"batch_max = 100 # an inline comment is not a comment\n",
	};
	char *long_line = malloc(5000);
	struct config cfg;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		if (load_text(bad[i], &cfg) != -EINVAL)
			fail_msg("accepted: %s", bad[i]);
	/* A line past the 4 KiB line buffer is refused whole, not read as two lines (here a good
	 * setting and a blank line). */
	assert_non_null(long_line);
	memset(long_line, ' ', 4999);
	memcpy(long_line, "batch_max = 5", 13);
	long_line[4998] = '\n';
	long_line[4999] = '\0';
	assert_int_equal(load_text(long_line, &cfg), -EINVAL);
	free(long_line);
}

static void test_config_load_of_missing_file_depends_on_required(void **state)
{
	struct config cfg, before;

	config_defaults(&cfg);
	before = cfg;
	assert_int_equal(config_load(&cfg, "/nonexistent/firebreak/firebreakd.conf", 0), 0);
	assert_memory_equal(&cfg, &before, sizeof(cfg));
	assert_int_equal(config_load(&cfg, "/nonexistent/firebreak/firebreakd.conf", 1), -ENOENT);
	assert_memory_equal(&cfg, &before, sizeof(cfg));
}

static void test_config_socket_path_joins_runtime_dir(void **state)
{
	struct config cfg;
	char buf[64], tiny[8];

	config_defaults(&cfg);
	assert_int_equal(config_socket_path(&cfg, FB_TRACE_SOCKET, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "/run/firebreak/trace.sock");
	assert_int_equal(config_socket_path(&cfg, FB_TRACE_SOCKET, tiny, sizeof(tiny)),
			 -ENAMETOOLONG);
}

#define N_KEYS 10000

struct item {
	char key[16];
	int visits;
};

static void test_hashmap_put_get_remove_10000_keys(void **state)
{
	struct item *items = calloc(N_KEYS, sizeof(*items));
	struct hashmap *m = NULL;
	int replacement = 0;

	assert_non_null(items);
	assert_int_equal(hashmap_new(&m), 0);
	for (int i = 0; i < N_KEYS; i++) {
		snprintf(items[i].key, sizeof(items[i].key), "key-%d", i);
		assert_int_equal(hashmap_put(m, items[i].key, &items[i]), 0);
	}
	assert_int_equal(hashmap_size(m), N_KEYS);
	for (int i = 0; i < N_KEYS; i++)
		assert_ptr_equal(hashmap_get(m, items[i].key), &items[i]);
	assert_null(hashmap_get(m, "key-10000"));
	assert_null(hashmap_get(m, ""));

	/* Replacing keeps the size; the lookup is by content, not by pointer. */
	assert_int_equal(hashmap_put(m, "key-7", &replacement), 0);
	assert_int_equal(hashmap_size(m), N_KEYS);
	assert_ptr_equal(hashmap_get(m, items[7].key), &replacement);
	assert_int_equal(hashmap_put(m, items[7].key, &items[7]), 0);

	/* Removing every odd key shifts many probe chains; the even keys must all stay found. */
	for (int i = 1; i < N_KEYS; i += 2)
		assert_ptr_equal(hashmap_remove(m, items[i].key), &items[i]);
	assert_int_equal(hashmap_size(m), N_KEYS / 2);
	for (int i = 0; i < N_KEYS; i++)
		assert_ptr_equal(hashmap_get(m, items[i].key), i % 2 ? NULL : &items[i]);
	assert_null(hashmap_remove(m, items[1].key));
	assert_int_equal(hashmap_size(m), N_KEYS / 2);

	/* Put them back, remove the first half instead. */
	for (int i = 1; i < N_KEYS; i += 2)
		assert_int_equal(hashmap_put(m, items[i].key, &items[i]), 0);
	for (int i = 0; i < N_KEYS / 2; i++)
		assert_ptr_equal(hashmap_remove(m, items[i].key), &items[i]);
	for (int i = 0; i < N_KEYS; i++)
		assert_ptr_equal(hashmap_get(m, items[i].key), i < N_KEYS / 2 ? NULL : &items[i]);
	assert_int_equal(hashmap_size(m), N_KEYS / 2);
	hashmap_free(m);
	hashmap_free(NULL);
	free(items);
}

/* FNV-1a as lib/hashmap.c computes it, to pick keys that share a home slot. */
static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static void test_hashmap_removal_inside_a_wrapping_collision_chain(void **state)
{
	/* Eleven keys whose home is slot 14 of the initial 16 slots: their chain runs through 15
	 * and wraps to 0..8. With another hash the test loses its aim but stays correct. */
	struct item items[11];
	struct hashmap *m = NULL;
	int n = 0;

	for (int i = 0; n < (int)ARRAY_SIZE(items); i++) {
		snprintf(items[n].key, sizeof(items[n].key), "c%d", i);
		if ((fnv1a(items[n].key) & 15) == 14)
			n++;
	}
	/* Remove each key in turn from a full chain; every other key must stay reachable. */
	for (int victim = 0; victim < n; victim++) {
		assert_int_equal(hashmap_new(&m), 0);
		for (int i = 0; i < n; i++)
			assert_int_equal(hashmap_put(m, items[i].key, &items[i]), 0);
		assert_ptr_equal(hashmap_remove(m, items[victim].key), &items[victim]);
		for (int i = 0; i < n; i++)
			assert_ptr_equal(hashmap_get(m, items[i].key),
					 i == victim ? NULL : &items[i]);
		/* And then all the others, in reverse order. */
		for (int i = n - 1; i >= 0; i--)
			if (i != victim)
				assert_ptr_equal(hashmap_remove(m, items[i].key), &items[i]);
		assert_int_equal(hashmap_size(m), 0);
		hashmap_free(m);
	}
}

static void test_hashmap_iteration_visits_each_entry_once(void **state)
{
	struct item *items = calloc(N_KEYS, sizeof(*items));
	struct hashmap *m = NULL;
	struct item *it;
	size_t pos = 0, seen = 0;

	assert_non_null(items);
	assert_int_equal(hashmap_new(&m), 0);
	assert_null(hashmap_next(m, &pos));
	for (int i = 0; i < N_KEYS; i++) {
		snprintf(items[i].key, sizeof(items[i].key), "k%d", i);
		assert_int_equal(hashmap_put(m, items[i].key, &items[i]), 0);
	}
	for (int i = 0; i < N_KEYS; i += 3)
		hashmap_remove(m, items[i].key);
	pos = 0;
	while ((it = hashmap_next(m, &pos))) {
		it->visits++;
		seen++;
	}
	assert_int_equal(seen, hashmap_size(m));
	for (int i = 0; i < N_KEYS; i++)
		assert_int_equal(items[i].visits, i % 3 ? 1 : 0);
	/* The end stays the end. */
	assert_null(hashmap_next(m, &pos));
	hashmap_free(m);
	free(items);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_duration_parse_units),
		cmocka_unit_test(test_duration_parse_refuses_bad_input_and_overflow),
		cmocka_unit_test(test_size_parse_suffixes_and_limits),
		cmocka_unit_test(test_time_parse_epoch_ns_and_rfc3339),
		cmocka_unit_test(test_time_parse_ages_count_back_from_now),
		cmocka_unit_test(test_time_format_round_trips_through_time_parse),
		cmocka_unit_test(test_time_parse_refuses_bad_input_and_overflow),
		cmocka_unit_test(test_config_set_accepts_each_key),
		cmocka_unit_test(test_config_set_refuses_bad_values_and_unknown_keys),
		cmocka_unit_test(test_config_set_names_the_unknown_key),
		cmocka_unit_test(test_config_md_shows_exactly_the_key_table),
		cmocka_unit_test(test_config_load_reads_keys_comments_and_blank_lines),
		cmocka_unit_test(test_config_load_refuses_unknown_key_and_bad_lines),
		cmocka_unit_test(test_config_load_of_missing_file_depends_on_required),
		cmocka_unit_test(test_config_socket_path_joins_runtime_dir),
		cmocka_unit_test(test_hashmap_put_get_remove_10000_keys),
		cmocka_unit_test(test_hashmap_removal_inside_a_wrapping_collision_chain),
		cmocka_unit_test(test_hashmap_iteration_visits_each_entry_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
