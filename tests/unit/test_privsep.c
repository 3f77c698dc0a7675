/*
 * The core's end of the HTTP child's channel (monitor/http-privsep.c), driven as a compromised
 * child would drive it: over a real socketpair, through the real line server and store writer.
 * Only the dispatch table's types pass, each within its cap; anything else gets a refusal, is
 * counted, and the channel keeps serving in order.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fixtures.h"
#include "monitor/daemon.h"
#include "counters.h"
#include "monitor/control.h"
#include "monitor/http.h"
#include "monitor/metrics.h"
#include "store/registry.h"
#include "timeutil.h"

static void complete(const struct writer_completion *c, void *data)
{
	lineserver_complete(((struct daemon *)data)->http, c);
}

static void on_writer(struct loop *l, int fd, uint32_t events, void *data)
{
	struct daemon *d = data;

	writer_dispatch(d->writer, complete, d);
	lineserver_flush(d->http);
}

static void on_timeout(struct loop *l, uint64_t n, void *data)
{
	loop_quit(l, 0);
}

/* Sends the requests, runs the core's loop a while, and returns what came back. */
static char *exchange(const char *requests)
{
	struct writer_config wc = { .batch_max = 64, .queue_max = 1024 };
	struct lineserver_config lc = { .name = "http",
					.id = LINESERVER_HTTP,
					.line_max = 65552,
					.clients_max = 2,
					.reply_buffer_max = 1 << 20,
					.group = (gid_t)-1 };
	static struct config cfg;
	static struct daemon_self self = { .group = (gid_t)-1 };
	struct daemon d = { .cfg = &cfg, .self = &self };
	static char out[65536];
	struct store *s = NULL;
	const char *path = fixture_db_path("privsep");
	int sv[2];
	ssize_t n;
	size_t len = 0;

	config_defaults(&cfg);
	unlink(path);
	assert_int_equal(store_open(path, STORE_READ_WRITE, &s), 0);
	assert_int_equal(store_set_synchronous_full(s, 0), 0);
	assert_int_equal(writer_new(s, &wc, &d.writer), 0);
	assert_int_equal(sink_new(d.writer, &d.sink), 0);
	assert_int_equal(registry_new(&d.registry), 0);
	assert_int_equal(metrics_new(&d.metrics), 0);
	assert_int_equal(loop_new(&d.loop), 0);
	assert_int_equal(counters_new(&d.counters), 0);
	assert_int_equal(http_init(&d), 0);
	assert_int_equal(trace_ingest_init(&d), 0);
	assert_int_equal(control_init(&d), 0);
	assert_int_equal(loop_add(d.loop, writer_fd(d.writer), EPOLLIN, on_writer, &d), 0);
	assert_true(loop_add_timer(d.loop, 300 * NSEC_PER_MSEC, on_timeout, NULL) >= 0);
	assert_int_equal(lineserver_new(d.loop, d.writer, -1, &lc, &http_privsep_ops, &d, &d.http),
			 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	assert_int_equal(lineserver_add_client(d.http, sv[0], 1), 0);
	assert_int_equal(write(sv[1], requests, strlen(requests)), (ssize_t)strlen(requests));
	shutdown(sv[1], SHUT_WR);
	loop_run(d.loop);
	while ((n = read(sv[1], out + len, sizeof(out) - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	close(sv[1]);
	lineserver_free(d.http);
	writer_free(d.writer);
	sink_free(d.sink);
	registry_free(d.registry);
	metrics_free(d.metrics);
	loop_free(d.loop);
	/* Every refusal was counted (the tests below say how many they sent). */
	snprintf(out + len, sizeof(out) - len, "refused=%llu\n",
		 (unsigned long long)http_channel_refused(&d));
	http_free(&d);
	trace_ingest_free(&d);
	control_free(&d);
	counters_free(d.counters);
	return out;
}

static void test_only_the_table_passes(void **state)
{
	char big[3000], req[4096];
	const char *out;

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	snprintf(req, sizeof(req),
		 "ping\n"
		 "exec /bin/sh\n"		   /* no such type */
		 "register {\"sandbox\":\"x\"}\n"  /* a control op, not a channel type */
		 "freeze {\"sandbox\":\"%s\"}\n"   /* over freeze's 1 KiB cap */
		 "ping extra\n"			   /* ping takes no payload */
		 "freeze\n"			   /* freeze needs one */
		 "kill {\"sandbox\":\"nosuch\"}\n" /* a real type, judged by the core */
		 "freeze {\"op\":\"quarantine\",\"sandbox\":\"x\"}\n" /* no smuggled op */
		 "ping\n",
		 big);
	out = exchange(req);
	assert_string_equal(
		out,
		"{\"ok\":true}\n"
		"{\"ok\":false,\"line\":2,\"error\":\"unknown request "
		"type\",\"class\":\"request\"}\n"
		"{\"ok\":false,\"line\":3,\"error\":\"unknown request "
		"type\",\"class\":\"request\"}\n"
		"{\"ok\":false,\"line\":4,\"error\":\"payload over its type's cap, or "
		"none\",\"class\":\"request\"}\n"
		"{\"ok\":false,\"line\":5,\"error\":\"payload over its type's cap, or "
		"none\",\"class\":\"request\"}\n"
		"{\"ok\":false,\"line\":6,\"error\":\"payload over its type's cap, or "
		"none\",\"class\":\"request\"}\n"
		"{\"ok\":false,\"line\":7,\"error\":\"unknown sandbox\",\"class\":\"request\"}\n"
		"{\"ok\":false,\"line\":8,\"error\":\"an action needs "
		"{\\\"sandbox\\\":...}\",\"class\":\"request\"}\n"
		"{\"ok\":true}\n"
		"refused=6\n");
}

/* A trace line is judged exactly as on the trace socket. */
static void test_trace_is_the_socket_s(void **state)
{
	const char *out = exchange("trace {\"not\":\"a trace line\"}\ntrace\n");

	assert_non_null(strstr(out, "\"line\":1"));
	assert_non_null(strstr(out, "\"class\":\"unknown_key\""));
	assert_non_null(
		strstr(out, "\"line\":2,\"error\":\"payload over its type's cap, or none\""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_only_the_table_passes),
		cmocka_unit_test(test_trace_is_the_socket_s),
	};
	int r;

	if (fixture_dir_up("privsep") < 0)
		return 1;
	log_max_level = LOG_LEVEL_ERROR;
	r = cmocka_run_group_tests(tests, NULL, NULL);
	fixture_dir_down(NULL);
	return r;
}
