/*
 * The file collector's pure parts: what a path is (lib/filepath.c) and the per-step aggregation
 * (collectors/file/file-agg.c): which events stay individual, and that every counted one comes
 * out of a summary exactly once.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "collectors/file/file-agg.h"
#include "event-describe.h"
#include "event.h"
#include "filepath.h"
#include "macro.h"

static void test_sensitive_paths_are_classed(void **state)
{
	(void)state;
	assert_true(filepath_class("/home/agent/.ssh/id_ed25519") & FILEPATH_CREDENTIAL);
	assert_true(filepath_class("/workspace/.aws/credentials") & FILEPATH_CREDENTIAL);
	assert_true(filepath_class("/workspace/.env") & FILEPATH_CREDENTIAL);
	assert_true(filepath_class("/workspace/server.pem") & FILEPATH_CREDENTIAL);
	assert_true(filepath_class("/var/run/secrets/kubernetes.io/serviceaccount/token") &
		    FILEPATH_CREDENTIAL);
	assert_false(filepath_class("/tmp/v/lib/python3.11/site-packages/certifi/cacert.pem") &
		     FILEPATH_CREDENTIAL);
	assert_false(filepath_class("/workspace/credentials") & FILEPATH_CREDENTIAL);
	assert_true(filepath_class("/workspace/.bashrc") & FILEPATH_SHELL_RC);
	assert_true(filepath_class("/tmp/a.pth") & FILEPATH_PYTHON_HOOK);
	assert_true(filepath_class("/x/site-packages/a.pth") & FILEPATH_SITE_DIR);
	assert_true(filepath_class("/w/.git/hooks/post-checkout") & FILEPATH_GIT_HOOK);
	assert_false(filepath_class("/w/.git/hooks/post-checkout.sample") & FILEPATH_GIT_HOOK);
	assert_true(filepath_class("/var/spool/cron/crontabs/agent") & FILEPATH_CRON);
	assert_true(filepath_class("/workspace/.bash_history") & FILEPATH_HISTORY);
	assert_true(filepath_class("/proc/12/environ") & FILEPATH_PROC_PEEK);
	assert_true(filepath_class("/proc/12/task/13/maps") & FILEPATH_PROC_PEEK);
	assert_false(filepath_class("/proc/12/stat") & FILEPATH_SENSITIVE);
	assert_true(filepath_class("/proc/kcore") & FILEPATH_KERNEL);
	assert_true(filepath_class("/sys/kernel/notes") & FILEPATH_KERNEL);
	assert_int_equal(filepath_class("/workspace/src/main.c"), 0);
	assert_int_equal(filepath_proc_pid("/proc/12/task/13/maps"), 12);
	assert_int_equal(filepath_proc_pid("/proc/self/environ"), 0);
	assert_int_equal(filepath_proc_pid("/proc/12x/environ"), 0);
}

struct sums {
	uint64_t count;
	unsigned n;
	int64_t step;
	char dir[64];
};

static void add_up(const struct file_agg_summary *s, void *data)
{
	struct sums *x = data;

	x->count += s->count;
	x->n++;
	x->step = s->step;
	snprintf(x->dir, sizeof(x->dir), "%s", s->dir);
}

/* Ten thousand opens of one directory in one step: 8 events, the rest in one exact summary. */
static void test_a_step_and_directory_summarise_exactly(void **state)
{
	struct file_agg *a;
	struct sums x = { 0 };
	unsigned single = 0;

	(void)state;
	assert_int_equal(file_agg_new(&a), 0);
	for (int i = 0; i < 10000; i++)
		single +=
			(unsigned)file_agg_add(a, "s", 4, "t", "file.open", "/w/site-packages", i);
	assert_int_equal(single, FILE_AGG_INDIVIDUAL);
	assert_int_equal(file_agg_pending(a), 10000 - FILE_AGG_INDIVIDUAL);
	/* Another step, another kind or another directory starts its own budget. */
	assert_int_equal(file_agg_add(a, "s", 5, "t", "file.open", "/w/site-packages", 1), 1);
	assert_int_equal(file_agg_add(a, "s", 4, "t", "file.write", "/w/site-packages", 1), 1);
	assert_int_equal(file_agg_add(a, "s", 4, "t", "file.open", "/w/other", 1), 1);
	file_agg_flush(a, 0, add_up, &x);
	assert_int_equal(x.count, 10000 - FILE_AGG_INDIVIDUAL);
	assert_int_equal(x.n, 1);
	assert_int_equal(x.step, 4);
	assert_string_equal(x.dir, "/w/site-packages");
	assert_int_equal(file_agg_pending(a), 0);
	/* Flushed, not forgotten: the next ones still count; once forgotten, they are single. */
	assert_int_equal(file_agg_add(a, "s", 4, "t", "file.open", "/w/site-packages", 20000), 0);
	memset(&x, 0, sizeof(x));
	file_agg_flush(a, INT64_MAX, add_up, &x);
	assert_int_equal(x.count, 1);
	assert_int_equal(file_agg_add(a, "s", 4, "t", "file.open", "/w/site-packages", 20001), 1);
	file_agg_free(a);
}

/* A full table says so; the caller flushes and adds again, nothing is dropped. */
static void test_a_full_table_is_refused_not_dropped(void **state)
{
	struct file_agg *a;
	struct sums x = { 0 };
	char dir[32];

	(void)state;
	assert_int_equal(file_agg_new(&a), 0);
	for (int i = 0; i < FILE_AGG_ENTRIES; i++) {
		snprintf(dir, sizeof(dir), "/d%d", i);
		assert_int_equal(file_agg_add(a, "s", 1, NULL, "file.create", dir, 1), 1);
	}
	assert_int_equal(file_agg_add(a, "s", 1, NULL, "file.create", "/new", 1), -ENOSPC);
	file_agg_flush(a, INT64_MAX, add_up, &x);
	assert_int_equal(x.n, 0); /* individual ones leave no summary */
	assert_int_equal(file_agg_add(a, "s", 1, NULL, "file.create", "/new", 1), 1);
	file_agg_free(a);
}

/* The timeline's lines for the file kinds say what happened to which path. */
static void test_file_events_read_well(void **state)
{
	static const char summary[] = "{\"of\":\"file.open\",\"dir\":\"/w/d\",\"count\":19996}";
	static const char rename[] = "{\"from\":\"/tmp/a\",\"to\":\"/w/.bashrc\"}";
	static const char attrib[] = "{\"path\":\"/w/p\",\"mode\":\"4755\",\"setuid\":true}";
	struct event ev;
	char buf[256];

	(void)state;
	event_init(&ev);
	strcpy(ev.kind, "file.summary");
	ev.fields = (char *)summary;
	ev.fields_len = strlen(summary);
	assert_string_equal(event_describe(&ev, buf, sizeof(buf)),
			    "file.summary: 19996 file.open in /w/d");
	strcpy(ev.kind, "file.rename");
	strcpy(ev.comm, "mv");
	ev.pid = 7;
	ev.fields = (char *)rename;
	ev.fields_len = strlen(rename);
	assert_string_equal(event_describe(&ev, buf, sizeof(buf)),
			    "file.rename /tmp/a -> /w/.bashrc (mv pid 7)");
	strcpy(ev.kind, "file.attrib");
	ev.fields = (char *)attrib;
	ev.fields_len = strlen(attrib);
	assert_string_equal(event_describe(&ev, buf, sizeof(buf)),
			    "file.attrib /w/p mode 4755 SETUID (mv pid 7)");
	ev.fields = NULL;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sensitive_paths_are_classed),
		cmocka_unit_test(test_a_step_and_directory_summarise_exactly),
		cmocka_unit_test(test_a_full_table_is_refused_not_dropped),
		cmocka_unit_test(test_file_events_read_well),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
