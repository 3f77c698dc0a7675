/*
 * firebreak trace: streams a tool-call trace from stdin to the monitor's trace socket, keeping up
 * to --window lines in flight, and checks every ack. With --retry-for, a lost connection (the
 * monitor restarted) is re-dialled and every line not yet acknowledged is sent again; the monitor
 * recognises a phase it already stored and acknowledges it as a duplicate, so each line is stored
 * exactly once.
 */
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>

#include "cli.h"
#include "event.h"
#include "macro.h"
#include "timeutil.h"
#include "unixsock.h"

static const char usage_text[] =
	"Usage: firebreak trace SANDBOX [--window N] [--retry-for DURATION] [--quiet]\n"
	"Sends JSON lines from stdin (one object per tool-call phase, see docs/trace.md) to the\n"
	"monitor and checks that each is acknowledged. Lines without \"firebreak.sandbox\" get\n"
	"SANDBOX. Exits 0 if every line was stored, 1 if any was refused or could not be sent.\n"
	"  --window N            lines in flight before waiting for acks (default 1024)\n"
	"  --retry-for DURATION  on a lost connection, reconnect for this long and resend what\n"
	"                        was not acknowledged (default: do not retry)\n"
	"  --quiet               print refusals only, no summary\n";

struct pending {
	char *line; /* with its newline */
	size_t len;
	uint64_t input_lineno;
};

struct sender {
	const char *sandbox;
	char path[PATH_MAX + 32];
	int fd;
	struct pending *ring; /* lines sent (or to resend), oldest first */
	size_t cap, head, count;
	size_t sent;	      /* of the ring's lines, how many went out on this connection */
	char rbuf[8192];
	size_t rlen;
	uint64_t ok, duplicates, refused, reconnects;
	int64_t retry_ns;
	int quiet;
};

/* Adds "firebreak.sandbox" when missing; refuses a line naming another sandbox. */
static int prepare_line(struct sender *s, const char *line, size_t len, char **ret, size_t *ret_len,
			uint64_t lineno)
{
	json_t *obj = json_loadb(line, len, 0, NULL), *sb;
	char *text;

	if (!obj || !json_is_object(obj)) {
		/* Not ours to judge: the monitor refuses it with the reason, and we report that. */
		json_decref(obj);
		text = malloc(len + 2);
		if (!text)
			return -ENOMEM;
		memcpy(text, line, len);
		text[len] = '\n';
		*ret = text;
		*ret_len = len + 1;
		return 0;
	}
	sb = json_object_get(obj, "firebreak.sandbox");
	if (json_is_string(sb) && strcmp(json_string_value(sb), s->sandbox) != 0) {
		fprintf(stderr, "firebreak trace: input line %llu names sandbox '%s', not '%s'\n",
			(unsigned long long)lineno, json_string_value(sb), s->sandbox);
		json_decref(obj);
		return -EINVAL;
	}
	if (!sb)
		json_object_set_new(obj, "firebreak.sandbox", json_string(s->sandbox));
	text = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(obj);
	if (!text)
		return -ENOMEM;
	*ret_len = strlen(text) + 1;
	*ret = realloc(text, *ret_len + 1);
	if (!*ret) {
		free(text);
		return -ENOMEM;
	}
	(*ret)[*ret_len - 1] = '\n';
	(*ret)[*ret_len] = '\0';
	return 0;
}

static struct pending *ring_at(struct sender *s, size_t i)
{
	return &s->ring[(s->head + i) % s->cap];
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static int connect_with_retry(struct sender *s)
{
	uint64_t deadline = time_mono_ns() + (uint64_t)s->retry_ns;

	for (;;) {
		int fd = unixsock_connect(s->path);

		if (fd >= 0) {
			s->fd = fd;
			s->rlen = 0;
			s->sent = 0;
			return 0;
		}
		if (s->retry_ns <= 0 || time_mono_ns() >= deadline)
			return cli_fail("trace", "cannot connect to %s: %s", s->path, strerror(-fd)),
			       fd;
		nanosleep(&(struct timespec){ 0, 100 * NSEC_PER_MSEC }, NULL);
	}
}

/* The connection broke: dial again and resend every unacknowledged line. */
static int reconnect(struct sender *s)
{
	int r;

	close(s->fd);
	s->fd = -1;
	if (s->retry_ns <= 0)
		return cli_fail("trace", "lost the connection to the monitor with %zu lines "
					 "unacknowledged (use --retry-for to resend them)",
				s->count),
		       -ECONNRESET;
	s->reconnects++;
	if ((r = connect_with_retry(s)) < 0)
		return r;
	for (size_t i = 0; i < s->count; i++) {
		struct pending *p = ring_at(s, i);

		if (write_all(s->fd, p->line, p->len) < 0)
			return reconnect(s);
		s->sent++;
	}
	return 0;
}

/* Handles one reply: it answers the oldest line in flight. */
static int handle_reply(struct sender *s, const char *line, size_t len)
{
	json_t *reply = json_loadb(line, len, 0, NULL);
	struct pending *p;

	if (s->count == 0 || s->sent == 0) {
		json_decref(reply);
		/* A refusal of the connection itself (too many clients, idle): no line to pin. */
		fprintf(stderr, "firebreak trace: the monitor says: %.*s\n", (int)len, line);
		return -EPROTO;
	}
	p = ring_at(s, 0);
	if (reply && json_is_true(json_object_get(reply, "ok"))) {
		if (json_is_true(json_object_get(reply, "duplicate")))
			s->duplicates++;
		else
			s->ok++;
	} else {
		const char *err = json_string_value(json_object_get(reply, "error"));

		s->refused++;
		fprintf(stderr, "firebreak trace: input line %llu refused: %s\n",
			(unsigned long long)p->input_lineno, err ? err : "(unreadable reply)");
	}
	json_decref(reply);
	free(p->line);
	s->head = (s->head + 1) % s->cap;
	s->count--;
	s->sent--;
	return 0;
}

/* Reads what replies are there (blocking for one if block); -ECONNRESET if the link died. */
static int read_replies(struct sender *s, int block)
{
	for (;;) {
		struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
		char *nl;
		ssize_t n;
		int r;

		while ((nl = memchr(s->rbuf, '\n', s->rlen))) {
			size_t len = (size_t)(nl - s->rbuf);

			if ((r = handle_reply(s, s->rbuf, len)) < 0)
				return r;
			memmove(s->rbuf, nl + 1, s->rlen - len - 1);
			s->rlen -= len + 1;
			block = 0;
		}
		if (s->count == 0 && !block)
			return 0; /* nothing owed: an end of stream now is the monitor's farewell */
		if (poll(&pfd, 1, block ? -1 : 0) == 0)
			return 0;
		n = read(s->fd, s->rbuf + s->rlen, sizeof(s->rbuf) - s->rlen);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -ECONNRESET;
		s->rlen += (size_t)n;
		if (s->rlen == sizeof(s->rbuf) && !memchr(s->rbuf, '\n', s->rlen))
			return cli_fail("trace", "a reply longer than any the monitor sends"),
			       -EPROTO;
	}
}

static int send_line(struct sender *s, char *line, size_t len, uint64_t lineno)
{
	struct pending *p;

	p = ring_at(s, s->count);
	p->line = line;
	p->len = len;
	p->input_lineno = lineno;
	s->count++;
	if (write_all(s->fd, line, len) < 0)
		return reconnect(s); /* resends this line too */
	s->sent++;
	return 0;
}

static int run(struct sender *s)
{
	_cleanup_free_ char *buf = NULL;
	size_t bufsize = 0;
	uint64_t lineno = 0, local_errors = 0;
	ssize_t n;
	int r;

	if ((r = connect_with_retry(s)) < 0)
		return r;
	while ((n = getline(&buf, &bufsize, stdin)) >= 0) {
		char *line;
		size_t len;

		lineno++;
		while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
			n--;
		if (n == 0)
			continue;
		r = prepare_line(s, buf, (size_t)n, &line, &len, lineno);
		if (r == -EINVAL) {
			local_errors++;
			continue;
		}
		if (r < 0)
			return r;
		while (s->count == s->cap) {
			r = read_replies(s, 1);
			if (r == -ECONNRESET)
				r = reconnect(s);
			if (r < 0)
				return r;
		}
		if ((r = send_line(s, line, len, lineno)) < 0)
			return r;
		r = read_replies(s, 0);
		if (r == -ECONNRESET)
			r = reconnect(s);
		if (r < 0)
			return r;
	}
	/* All sent: say so, then collect the remaining acks. */
	while (s->count > 0) {
		shutdown(s->fd, SHUT_WR);
		r = read_replies(s, 1);
		if (r == -ECONNRESET)
			r = reconnect(s);
		if (r < 0)
			return r;
	}
	s->refused += local_errors;
	return 0;
}

int cli_trace(struct cli *cli, int argc, char **argv)
{
	enum { OPT_WINDOW = 256, OPT_RETRY, OPT_QUIET };
	static const struct option opts[] = {
		{ "window", required_argument, NULL, OPT_WINDOW },
		{ "retry-for", required_argument, NULL, OPT_RETRY },
		{ "quiet", no_argument, NULL, OPT_QUIET },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct sender s = { .fd = -1, .cap = 1024 };
	int c, r;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_WINDOW: {
			uint64_t w;
			if (size_parse(optarg, &w) < 0 || w < 1 || w > 1000000)
				return cli_usage(stderr, usage_text);
			s.cap = (size_t)w;
			break;
		}
		case OPT_RETRY:
			if (duration_parse(optarg, &s.retry_ns) < 0)
				return cli_usage(stderr, usage_text);
			break;
		case OPT_QUIET:
			s.quiet = 1;
			break;
		case 'h':
			return cli_usage(stdout, usage_text);
		default:
			return cli_usage(stderr, usage_text);
		}
	}
	if (optind + 1 != argc)
		return cli_usage(stderr, usage_text);
	s.sandbox = argv[optind];
	if (!event_sandbox_name_valid(s.sandbox))
		return cli_fail("trace", "'%s' is not a valid sandbox name", s.sandbox);
	if (config_socket_path(&cli->cfg, FB_TRACE_SOCKET, s.path, sizeof(s.path)) < 0)
		return cli_fail("trace", "runtime dir path too long");
	s.ring = calloc(s.cap, sizeof(*s.ring));
	if (!s.ring)
		return cli_fail("trace", "out of memory");
	r = run(&s);
	for (size_t i = 0; i < s.count; i++)
		free(ring_at(&s, i)->line);
	free(s.ring);
	if (s.fd >= 0)
		close(s.fd);
	if (!s.quiet)
		fprintf(stderr,
			"firebreak trace: %llu stored, %llu already stored, %llu refused, "
			"%llu reconnects\n",
			(unsigned long long)s.ok, (unsigned long long)s.duplicates,
			(unsigned long long)s.refused, (unsigned long long)s.reconnects);
	if (r < 0 && r != -ECONNRESET && r != -EPROTO && r != -ENOENT && r != -ECONNREFUSED)
		cli_fail("trace", "%s", strerror(-r));
	return r < 0 || s.refused > 0 ? 1 : 0;
}
