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
#include <sys/uio.h>
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
	"  --window N            lines in flight before waiting for acks (default 1024, at\n"
	"                        most 16384)\n"
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
	size_t sent;	 /* of the ring's lines, how many went out on this connection */
	size_t sent_off; /* bytes of ring line `sent` already written */
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
			(unsigned long long)lineno, cli_safe(json_string_value(sb)),
			cli_safe(s->sandbox));
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

/* Writes every queued line (ring entries sent..count) with writev; 0 or -errno. */
static int flush_lines(struct sender *s)
{
	while (s->sent < s->count) {
		struct iovec iov[256];
		int n = 0;
		ssize_t w;

		for (size_t i = s->sent; i < s->count && n < 256; i++, n++) {
			struct pending *p = ring_at(s, i);
			size_t off = i == s->sent ? s->sent_off : 0;

			iov[n].iov_base = p->line + off;
			iov[n].iov_len = p->len - off;
		}
		/* sendmsg for MSG_NOSIGNAL: a monitor that died mid-write is a reconnect, not a
		 * SIGPIPE that kills us with lines unsent. */
		struct msghdr msg = { .msg_iov = iov, .msg_iovlen = (size_t)n };

		w = sendmsg(s->fd, &msg, MSG_NOSIGNAL);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		/* Advance over what went out, whole lines first. */
		while (w > 0) {
			struct pending *p = ring_at(s, s->sent);
			size_t left = p->len - s->sent_off;

			if ((size_t)w < left) {
				s->sent_off += (size_t)w;
				break;
			}
			w -= (ssize_t)left;
			s->sent++;
			s->sent_off = 0;
		}
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
			s->sent_off = 0;
			return 0;
		}
		if (s->retry_ns <= 0 || time_mono_ns() >= deadline)
			return cli_fail("trace", "cannot connect to %s: %s", s->path,
					strerror(-fd)),
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
		return cli_fail("trace",
				"lost the connection to the monitor with %zu lines "
				"unacknowledged (use --retry-for to resend them)",
				s->count),
		       -ECONNRESET;
	s->reconnects++;
	if ((r = connect_with_retry(s)) < 0)
		return r;
	/* Everything unacknowledged goes out again; the monitor knows what it already stored. */
	if (flush_lines(s) < 0)
		return reconnect(s);
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
		fprintf(stderr, "firebreak trace: the monitor says: %s\n",
			cli_safe(strndupa(line, len)));
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
			(unsigned long long)p->input_lineno,
			err ? cli_safe(err) : "(unreadable reply)");
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

/* Queues a line in the ring (the caller made room); it goes out at the next flush. */
static void queue_line(struct sender *s, char *line, size_t len, uint64_t lineno)
{
	struct pending *p = ring_at(s, s->count);

	p->line = line;
	p->len = len;
	p->input_lineno = lineno;
	s->count++;
}

/* Sends what is queued, then takes what replies are there (waiting for one if block). */
static int exchange(struct sender *s, int block)
{
	int r;

	for (;;) {
		r = flush_lines(s);
		if (r == 0)
			r = read_replies(s, block);
		if (r == -ECONNRESET || r == -EPIPE)
			r = reconnect(s);
		else
			return r;
		if (r < 0)
			return r;
		block = 0; /* after a reconnect, what was owed is being resent */
	}
}

/* stdin as it is read: the bytes not yet queued as lines, and what was counted of them. */
struct input {
	char *buf;
	size_t len, cap;
	uint64_t lineno, local_errors;
	int eof;
};

/* Reads the next chunk of stdin onto in's buffer; at the end, ends a last line without its
 * newline. 0 or -errno. */
static int read_chunk(struct input *in)
{
	ssize_t n;

	if (in->cap - in->len < 65536) {
		char *p = realloc(in->buf, in->cap + 65536);

		if (!p)
			return -ENOMEM;
		in->buf = p;
		in->cap += 65536;
	}
	do
		n = read(STDIN_FILENO, in->buf + in->len, in->cap - in->len);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0) {
		in->eof = 1;
		if (in->len > 0 && in->buf[in->len - 1] != '\n')
			in->buf[in->len++] = '\n'; /* a last line without its newline */
	}
	in->len += (size_t)n;
	return 0;
}

/* Queues every complete line of the buffer (making room by exchanging), keeps the rest. */
static int queue_lines(struct sender *s, struct input *in)
{
	size_t start = 0;
	char *nl;
	int r;

	for (; (nl = memchr(in->buf + start, '\n', in->len - start));
	     start = (size_t)(nl - in->buf) + 1) {
		size_t l = (size_t)(nl - (in->buf + start)), line_len;
		char *line;

		in->lineno++;
		while (l > 0 && in->buf[start + l - 1] == '\r')
			l--;
		if (l == 0)
			continue;
		r = prepare_line(s, in->buf + start, l, &line, &line_len, in->lineno);
		if (r == -EINVAL) {
			in->local_errors++;
			continue;
		}
		if (r < 0)
			return r;
		while (s->count == s->cap)
			if ((r = exchange(s, 1)) < 0)
				return r;
		queue_line(s, line, line_len, in->lineno);
	}
	memmove(in->buf, in->buf + start, in->len - start);
	in->len -= start;
	return 0;
}

/*
 * Reads stdin in chunks and queues every complete line of a chunk before sending them together: one
 * writev per chunk, not a write per line, yet a line that arrives alone still goes out at once.
 */
static int run(struct sender *s)
{
	struct input in = { 0 };
	int r;

	if ((r = connect_with_retry(s)) < 0)
		return r;
	while (!in.eof)
		if ((r = read_chunk(&in)) < 0 || (r = queue_lines(s, &in)) < 0 ||
		    (r = exchange(s, 0)) < 0)
			goto out;
	/* All sent: say so, then collect the remaining acks. */
	while (s->count > 0) {
		if (s->sent == s->count)
			shutdown(s->fd, SHUT_WR);
		if ((r = exchange(s, 1)) < 0)
			goto out;
	}
	s->refused += in.local_errors;
	r = 0;
out:
	free(in.buf);
	return r;
}

enum { OPT_WINDOW = 256, OPT_RETRY, OPT_QUIET };

static int on_option(int c, const char *arg, void *data)
{
	struct sender *s = data;
	uint64_t w;

	switch (c) {
	case OPT_WINDOW:
		/* Capped so that a window of unread acks stays well under the daemon's reply
		 * buffer (trace_reply_buffer_max, 1 MiB by default). */
		if (size_parse(arg, &w) < 0 || w < 1 || w > 16384)
			return cli_usage(stderr, usage_text);
		s->cap = (size_t)w;
		break;
	case OPT_RETRY:
		if (duration_parse(arg, &s->retry_ns) < 0)
			return cli_usage(stderr, usage_text);
		break;
	case OPT_QUIET:
		s->quiet = 1;
		break;
	default:
		return cli_usage(stderr, usage_text);
	}
	return CLI_CONTINUE;
}

int cli_trace(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "window", required_argument, NULL, OPT_WINDOW },
		{ "retry-for", required_argument, NULL, OPT_RETRY },
		{ "quiet", no_argument, NULL, OPT_QUIET },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct sender s = { .fd = -1, .cap = 1024 };
	int r;

	r = cli_options(argc, argv, "h", opts, usage_text, 1, on_option, &s);
	if (r != CLI_CONTINUE)
		return r;
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
