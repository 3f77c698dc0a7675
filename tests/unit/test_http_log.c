/*
 * The L7 proxy's access log (collectors/http/): the line parser on the vectors of
 * tests/proxy-log/ (good.log: each line read, with its fields; bad.log: each refused) and on
 * hostile bytes (NUL, overlong, truncations at every length, mutations); the follower on a real
 * file (lines appended in pieces, truncated, rotated, an overlong line); the tool a source
 * address names; the step a time falls in; and the cursor across a restart of the whole
 * collector on a real store: no line stored twice, none skipped.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "collectors/collector.h"
#include "collectors/http/http-events.h"
#include "collectors/http/http-follow.h"
#include "collectors/http/http-parse.h"
#include "collectors/http/http-steps.h"
#include "config.h"
#include "counters.h"
#include "fixtures.h"
#include "loop.h"
#include "names.h"
#include "store/registry.h"
#include "store/sink.h"
#include "store/store.h"
#include "store/writer.h"

static struct http_log_line l;

static int group_setup(void **state)
{
	return fixture_dir_up("http-log");
}

/* Calls fn for each line of tests/proxy-log/NAME; returns how many. */
static size_t each_vector(const char *name, void (*fn)(const char *line, size_t len, size_t i))
{
	char path[PATH_MAX], *line = NULL;
	size_t cap = 0, n = 0;
	ssize_t len;
	FILE *f;

	fixture_repo_path(name, path, sizeof(path));
	f = fopen(path, "re");
	assert_non_null(f);
	while ((len = getline(&line, &cap, f)) >= 0) {
		if (len > 0 && line[len - 1] == '\n')
			len--;
		fn(line, (size_t)len, n++);
	}
	free(line);
	fclose(f);
	return n;
}

static void good_line(const char *line, size_t len, size_t i)
{
	const char *why = NULL;

	if (http_log_parse(line, len, &l, &why) != 0)
		fail_msg("good.log line %zu refused: %s", i + 1, why);
	switch (i) {
	case 0: /* an allowed GET */
		assert_int_equal(l.ts_ns, 1767225600123000000LL);
		assert_string_equal(l.client, "10.199.0.67");
		assert_int_equal(l.status, 200);
		assert_int_equal(l.bytes_in, 120);
		assert_int_equal(l.bytes_out, 5120);
		assert_int_equal(l.duration_ms, 12);
		assert_string_equal(l.rule, "registry");
		assert_int_equal(l.refused, HTTP_REFUSED_NONE);
		assert_string_equal(l.method.s, "GET");
		assert_string_equal(l.path.s, "/simple/requests/");
		assert_null(l.sni.s);
		break;
	case 1: /* a POST past the rule's limits */
		assert_int_equal(l.refused, HTTP_REFUSED_RULE);
		assert_string_equal(l.refused_rule, "registry");
		assert_int_equal(l.status_upstream, -1);
		assert_string_equal(l.err, "ERR_ACCESS_DENIED");
		break;
	case 2: /* the decoy's marker, with the rule it would have gone by */
		assert_true(l.decoy);
		assert_string_equal(l.rule, "registry");
		assert_string_equal(l.sni.s, "registry.test");
		break;
	case 3: /* IPv6, and every escape: %20 %5b %5d \\ %00 %ff \r \n */
		assert_int_equal(l.family, AF_INET6);
		assert_string_equal(l.client, "fd66:6272:fb:1::100");
		assert_int_equal(l.path.len, 15);
		assert_memory_equal(l.path.s, "/a b[c]\\\0end\xff\r\n", 15);
		break;
	case 4: /* an IPv4 client shown as mapped */
		assert_int_equal(l.family, AF_INET);
		assert_string_equal(l.client, "10.199.0.68");
		assert_int_equal(l.refused, HTTP_REFUSED_HOST);
		assert_null(l.scheme.s);
		break;
	case 5:
		assert_int_equal(l.refused, HTTP_REFUSED_SNI);
		assert_int_equal(l.status, 503);
		break;
	case 6: /* everything squid may leave out */
		assert_int_equal(l.port, -1);
		assert_int_equal(l.status, -1);
		assert_int_equal(l.bytes_in, -1);
		assert_null(l.host.s);
		break;
	}
}

static void bad_line(const char *line, size_t len, size_t i)
{
	const char *why = NULL;

	if (http_log_parse(line, len, &l, &why) == 0)
		fail_msg("bad.log line %zu was read: %.*s", i + 1, (int)len, line);
	assert_non_null(why);
}

static void test_vectors_good_are_read_with_their_fields(void **state)
{
	assert_int_equal(each_vector("tests/proxy-log/good.log", good_line), 7);
}

static void test_vectors_bad_are_each_refused(void **state)
{
	assert_true(each_vector("tests/proxy-log/bad.log", bad_line) >= 40);
}

static const char good0[] = "1767225600.123\t10.199.0.67\t40000\t80\t200\t200\t120\t5120\t5000\t12"
			    "\t-\t198.51.100.7\trule:registry\thttp\tGET\tregistry.test\t-\t/p";

static void test_hostile_nul_overlong_cut_and_mutated(void **state)
{
	char buf[sizeof(good0)], *big;
	const char *why;
	size_t n = strlen(good0);
	unsigned seed = 1;

	/* A NUL anywhere is refused, though the rest is a good line. */
	for (size_t i = 0; i < n; i++) {
		memcpy(buf, good0, n);
		buf[i] = '\0';
		assert_int_equal(http_log_parse(buf, n, &l, &why), -EINVAL);
	}
	/* Every prefix is refused or read, never read past its end (ASan watches). */
	for (size_t k = 0; k < n; k++) {
		char *p = malloc(k ? k : 1);

		memcpy(p, good0, k);
		(void)http_log_parse(p, k, &l, &why);
		free(p);
	}
	/* Longer than the cap: refused whole, not cut into a line. */
	big = fixture_repeat('a', HTTP_LOG_LINE_MAX + 1);
	memcpy(big, good0, n);
	assert_int_equal(http_log_parse(big, HTTP_LOG_LINE_MAX + 1, &l, &why), -EINVAL);
	assert_string_equal(why, "line too long");
	/* A long path within the line cap is kept to its cap and says it was cut. */
	memset(big, 'b', HTTP_LOG_LINE_MAX + 1);
	memcpy(big, good0, n);
	assert_int_equal(http_log_parse(big, n + 20000, &l, &why), 0);
	assert_true(l.path.cut);
	assert_int_equal(l.path.len, HTTP_LOG_PATH_MAX);
	free(big);
	/* Random byte flips: each is read or refused with a reason. */
	for (int round = 0; round < 20000; round++) {
		memcpy(buf, good0, n);
		for (int k = 0; k < 3; k++)
			buf[rand_r(&seed) % n] = (char)(rand_r(&seed) & 0xff);
		why = NULL;
		if (http_log_parse(buf, n, &l, &why) < 0)
			assert_non_null(why);
	}
}

static void test_unquote_is_squids_encoding_reversed(void **state)
{
	char out[8];
	int cut;

	assert_int_equal(http_log_unquote("%41%5d\\\\", 8, out, sizeof(out), &cut), 3);
	assert_string_equal(out, "A]\\");
	assert_int_equal(http_log_unquote("abcdefghij", 10, out, sizeof(out), &cut), 7);
	assert_true(cut);
	assert_int_equal(http_log_unquote("%4", 2, out, sizeof(out), &cut), -EINVAL);
	assert_int_equal(http_log_unquote("%", 1, out, sizeof(out), &cut), -EINVAL);
	assert_int_equal(http_log_unquote("\\t", 2, out, sizeof(out), &cut), -EINVAL);
	assert_int_equal(http_log_unquote("a\tb", 3, out, sizeof(out), &cut), -EINVAL);
}

static void test_source_address_names_its_tool_on_its_link_only(void **state)
{
	char a4[32], a6[64];
	uint8_t bin[16];

	for (unsigned k = 1; k < 1024; k += 97) {
		for (unsigned t = 0; t < 5; t++) {
			egress_tool_addrs(k, t, a4, sizeof(a4), a6, sizeof(a6));
			assert_int_equal(inet_pton(AF_INET, a4, bin), 1);
			assert_int_equal(egress_tool_of_address(k, 5, AF_INET, bin), (int)t);
			assert_int_equal(egress_tool_of_address(k + 1, 5, AF_INET, bin), -1);
			assert_int_equal(egress_tool_of_address(k, t, AF_INET, bin), -1);
			assert_int_equal(inet_pton(AF_INET6, a6, bin), 1);
			assert_int_equal(egress_tool_of_address(k, 5, AF_INET6, bin), (int)t);
			assert_int_equal(egress_tool_of_address(k + 1, 5, AF_INET6, bin), -1);
		}
	}
	/* The sandbox's own address (.2) is no tool's. */
	assert_int_equal(inet_pton(AF_INET, "10.199.0.66", bin), 1);
	assert_int_equal(egress_tool_of_address(1, 5, AF_INET, bin), -1);
}

static void test_step_of_a_tool_at_a_time(void **state)
{
	struct http_steps *s;
	int64_t step = -1;
	int amb;

	assert_int_equal(http_steps_new(&s), 0);
	http_steps_start(s, 1, "install_deps", 1000000000);
	http_steps_end(s, 1, 2000000000);
	http_steps_start(s, 2, "run_tests", 2000000000);
	http_steps_start(s, 3, "install_deps", 3000000000);
	/* Ended before the line is read: still found by its time. */
	assert_int_equal(http_steps_at(s, "install_deps", 1500000000, &step, &amb), 1);
	assert_int_equal(step, 1);
	assert_int_equal(http_steps_at(s, "install_deps", 3500000000, &step, &amb), 1);
	assert_int_equal(step, 3);
	/* Between its steps, the tool ran none. */
	assert_int_equal(http_steps_at(s, "install_deps", 2500000000, &step, &amb), 0);
	assert_false(amb);
	/* Two steps of one tool at once share its address: no step, said so. */
	http_steps_start(s, 4, "install_deps", 3100000000);
	assert_int_equal(http_steps_at(s, "install_deps", 3500000000, &step, &amb), 0);
	assert_true(amb);
	http_steps_free(s);
}

/* A harness may give a number again (a copy-in's step 1, then a tool's --step 1): the new step
 * is that number from its start on, not the old one reported twice. */
static void test_step_number_used_again(void **state)
{
	struct http_steps *s;
	int64_t step = -1;
	int amb;

	assert_int_equal(http_steps_new(&s), 0);
	http_steps_start(s, 1, "setup", 1000000000);
	http_steps_end(s, 1, 1100000000);
	http_steps_start(s, 1, "install_deps", 1200000000);
	assert_int_equal(http_steps_at(s, "install_deps", 1300000000, &step, &amb), 1);
	assert_int_equal(step, 1);
	/* The same start again (a restarted daemon) changes nothing. */
	http_steps_start(s, 1, "install_deps", 1250000000);
	assert_int_equal(http_steps_at(s, "install_deps", 1210000000, &step, &amb), 1);
	http_steps_free(s);
}

/* The follower: what it hands out and notes. */
struct seen {
	char text[16][64];
	size_t n, notes[4];
	int64_t next;
};

static int seen_line(const char *line, size_t len, uint64_t inode, int64_t next, void *data)
{
	struct seen *s = data;

	if (s->n < 16)
		snprintf(s->text[s->n++], 64, "%.*s", (int)(len < 60 ? len : 60), line);
	s->next = next;
	return 0;
}

static void seen_note(enum http_follow_note what, uint64_t inode, int64_t offset, void *data)
{
	((struct seen *)data)->notes[what]++;
}

static const struct http_follow_ops seen_ops = { seen_line, seen_note };

static void append(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void test_follower_pieces_truncation_rotation_overlong(void **state)
{
	char path[PATH_MAX], old[PATH_MAX + 8], *big;
	struct http_follow *f;
	struct seen s = { 0 };

	snprintf(path, sizeof(path), "%s/follow.log", fixture_dir());
	snprintf(old, sizeof(old), "%s.1", path);
	assert_int_equal(http_follow_new(path, 0, 0, &seen_ops, &s, &f), 0);
	assert_int_equal(http_follow_poll(f, 100), 0); /* not there yet */
	append(path, "one\ntw");
	assert_int_equal(http_follow_poll(f, 100), 1);
	append(path, "o\n");
	assert_int_equal(http_follow_poll(f, 100), 1);
	assert_string_equal(s.text[1], "two");
	assert_int_equal(http_follow_offset(f), 8);
	/* Truncated under it: noted, read again from the start. */
	assert_int_equal(truncate(path, 0), 0);
	append(path, "3\n");
	assert_int_equal(http_follow_poll(f, 100), 1);
	assert_int_equal(s.notes[HTTP_FOLLOW_TRUNCATED], 1);
	assert_string_equal(s.text[2], "3");
	/* Rotated: the old file's last line first, then the new file's. */
	append(path, "four\n");
	assert_int_equal(rename(path, old), 0);
	append(path, "five\n");
	assert_int_equal(http_follow_poll(f, 100), 2);
	assert_string_equal(s.text[3], "four");
	assert_string_equal(s.text[4], "five");
	assert_int_equal(s.notes[HTTP_FOLLOW_ROTATED], 1);
	/* An overlong line is noted once and skipped to its newline; the next is read. */
	big = fixture_repeat('x', HTTP_LOG_LINE_MAX + 100);
	append(path, big);
	append(path, "\nsix\n");
	free(big);
	assert_int_equal(http_follow_poll(f, 100), 1);
	assert_int_equal(s.notes[HTTP_FOLLOW_OVERLONG], 1);
	assert_string_equal(s.text[5], "six");
	http_follow_free(f);
	/* From a cursor: the same inode goes on at the offset, another starts again. */
	memset(&s, 0, sizeof(s));
	{
		struct stat st;

		assert_int_equal(stat(path, &st), 0);
		assert_int_equal(http_follow_new(path, st.st_ino, 5, &seen_ops, &s, &f), 0);
		append(path, "seven\n");
		assert_true(http_follow_poll(f, 100) >= 1);
		assert_int_equal(s.notes[HTTP_FOLLOW_RESTARTED], 0);
		http_follow_free(f);
		memset(&s, 0, sizeof(s));
		assert_int_equal(http_follow_new(path, st.st_ino + 1, 5, &seen_ops, &s, &f), 0);
		assert_true(http_follow_poll(f, 100) >= 3);
		assert_string_equal(s.text[0], "five");
		assert_int_equal(s.notes[HTTP_FOLLOW_RESTARTED], 1);
		http_follow_free(f);
	}
	unlink(old);
	unlink(path);
}

/* The whole collector on a real store, stopped and started again in between. */
static const char two_tools[] =
	"{\"version\": 1, \"name\": \"h\", \"sandbox\": {}, \"tools\": {"
	" \"install_deps\": {\"commands\": [{\"program\": \"/usr/bin/pip\", \"operands\": "
	"\"any\"}]},"
	" \"fetch\": {\"commands\": [{\"program\": \"/usr/bin/curl\", \"operands\": \"any\"}]}}}";

struct run {
	struct config cfg;
	struct loop *loop;
	struct writer *w;
	struct sink *sink;
	struct registry *reg;
	struct counters *counters;
	struct http_events *he;
};

static void run_start(struct run *r)
{
	struct writer_config wc = { .batch_max = 64, .queue_max = 100000 };
	struct store_sandbox *sb;
	struct collector_env env;
	struct policy *p = fixture_policy("h.json", two_tools);
	struct store *s;

	config_defaults(&r->cfg);
	snprintf(r->cfg.runtime_dir, sizeof(r->cfg.runtime_dir), "%s/run", fixture_dir());
	snprintf(r->cfg.db, sizeof(r->cfg.db), "%s", fixture_db_path("cursor"));
	assert_int_equal(store_open(r->cfg.db, STORE_READ_WRITE, &s), 0);
	assert_int_equal(registry_new(&r->reg), 0);
	assert_int_equal(registry_load(r->reg, s), 0);
	assert_int_equal(writer_new(s, &wc, &r->w), 0);
	assert_int_equal(sink_new(r->w, &r->sink), 0);
	assert_int_equal(loop_new(&r->loop), 0);
	assert_int_equal(counters_new(&r->counters), 0);
	if (!(sb = registry_find(r->reg, "sb1"))) {
		struct writer_op op = { .type = WRITER_OP_SANDBOX };

		assert_int_equal(registry_add(r->reg, "sb1", 1, &sb), 0);
		strcpy(sb->state, "running");
		op.sandbox = malloc(sizeof(*sb));
		*op.sandbox = *sb;
		assert_int_equal(sink_submit(r->sink, &op), 0);
	}
	env = (struct collector_env){ r->loop, r->sink, r->reg, &r->cfg, r->counters };
	assert_int_equal(http_events_new(&env, &r->he), 0);
	http_events_step_start(r->he, "sb1", 7, "fetch", 0);
	assert_int_equal(http_events_watch(r->he, sb, p), 0);
	http_events_step_start(r->he, "sb1", 7, "fetch", 0);
	policy_free(p);
}

static void run_stop(struct run *r)
{
	http_events_free(r->he);
	sink_stop(r->sink);
	writer_free(r->w);
	sink_free(r->sink);
	registry_free(r->reg);
	counters_free(r->counters);
	loop_free(r->loop);
}

static int count_kind(const struct event *ev, void *data)
{
	int64_t *n = data;

	if (strcmp(ev->kind, "http.request") == 0 || strcmp(ev->kind, "http.refused") == 0) {
		n[0]++;
		assert_string_equal(ev->tool, "fetch"); /* 10.199.0.68: tool 1 of link 1 */
		assert_int_equal(ev->step, 7);
		assert_int_equal(ev->source, EVENT_SOURCE_PROXY);
	} else if (strcmp(ev->kind, "monitor.loss") == 0) {
		n[1]++;
	}
	return 0;
}

static const char line_fmt[] = "17672256%02d.000\t10.199.0.68\t4%04d\t80\t%s\t-\t10\t20\t-\t1\t-\t-"
			       "\t%s\thttp\tGET\tregistry.test\t-\t/n%d\n";

static void add_lines(const char *log, int from, int to)
{
	char line[512];

	for (int i = from; i < to; i++) {
		snprintf(line, sizeof(line), line_fmt, i % 100, i, i % 3 ? "200" : "403",
			 i % 3 ? "rule:registry" : "refused:registry", i);
		append(log, line);
	}
}

static void test_cursor_restart_neither_loses_nor_duplicates(void **state)
{
	char dir[PATH_MAX], log[PATH_MAX + 32];
	int64_t n[2] = { 0, 0 };
	struct store_cursor c;
	struct store *s;
	struct stat st;
	struct run r;

	snprintf(dir, sizeof(dir), "%s/run", fixture_dir());
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(dir, sizeof(dir), "%s/run/sandboxes", fixture_dir());
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(dir, sizeof(dir), "%s/run/sandboxes/sb1", fixture_dir());
	assert_int_equal(mkdir(dir, 0700), 0);
	snprintf(log, sizeof(log), "%s/state.json", dir);
	append(log, "{\"link\": 1}");
	snprintf(log, sizeof(log), "%s/" HTTP_EVENTS_LOG, dir);
	add_lines(log, 0, 30);
	append(log, "not a line of the proxy's\n");
	add_lines(log, 30, 40);
	append(log, "1767225600.000\t10.199.0.68\t1"); /* a line squid is still writing */

	run_start(&r);
	run_stop(&r);
	/* Restarted: the rest of the cut line and more lines come. */
	append(log, "\t80\t200\t-\t1\t1\t-\t1\t-\t-\t-\thttp\tGET\tregistry.test\t-\t/cut\n");
	add_lines(log, 40, 55);
	run_start(&r);
	run_stop(&r);
	run_start(&r); /* nothing new: nothing stored */
	run_stop(&r);

	assert_int_equal(store_open(fixture_db_path("cursor"), STORE_READ_ONLY, &s), 0);
	assert_int_equal(store_sandbox_events(s, 1, NULL, count_kind, n), 0);
	assert_int_equal(n[0], 56); /* 55 lines and the one cut across the restart */
	assert_int_equal(n[1], 1);  /* the line that is not the proxy's */
	assert_int_equal(store_cursor_get(s, 1, HTTP_EVENTS_LOG, &c), 0);
	assert_int_equal(stat(log, &st), 0);
	assert_int_equal(c.offset, st.st_size);
	assert_int_equal(c.inode, (uint64_t)st.st_ino);
	store_close(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors_good_are_read_with_their_fields),
		cmocka_unit_test(test_vectors_bad_are_each_refused),
		cmocka_unit_test(test_hostile_nul_overlong_cut_and_mutated),
		cmocka_unit_test(test_unquote_is_squids_encoding_reversed),
		cmocka_unit_test(test_source_address_names_its_tool_on_its_link_only),
		cmocka_unit_test(test_step_of_a_tool_at_a_time),
		cmocka_unit_test(test_step_number_used_again),
		cmocka_unit_test(test_follower_pieces_truncation_rotation_overlong),
		cmocka_unit_test(test_cursor_restart_neither_loses_nor_duplicates),
	};

	return cmocka_run_group_tests(tests, group_setup, fixture_dir_down);
}
