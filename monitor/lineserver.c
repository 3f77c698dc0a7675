#include "lineserver.h"

#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>

#include "log.h"
#include "macro.h"
#include "timeutil.h"
#include "unixsock.h"

#define READ_CHUNK 65536
#define SLOT_BITS 24
#define GEN_BITS 32

struct client {
	struct lineserver *ls;
	size_t slot;
	int open; /* 0: the slot is free (the table is calloc'd and never written whole: a slot's
		     pages become resident only once a client has used it) */
	int fd;
	uint32_t gen;
	char *in;
	size_t in_len, in_cap;
	int discarding; /* inside a line over the cap: skip to its newline */
	char *out;
	size_t out_len, out_off, out_cap;
	uint64_t lines_in;    /* lines handed to the handler */
	uint64_t replies_out; /* replies queued to out */
	int eof;
	int root;  /* the peer is uid 0 (the firebreak group is trusted, but with less) */
	uid_t uid; /* the peer's, for the per-uid cap ((uid_t)-1: unknown) */
	uint64_t partial_since; /* monotonic ns the unfinished line in `in` began (0: none) */
	uint32_t events;
	uint64_t last_active;	/* monotonic ns of the last complete line or reply */
	uint64_t stalled_since; /* replies pending: since when not a byte of them was taken */
};

struct lineserver {
	struct loop *loop;
	struct writer *writer;
	int listen_fd;
	struct lineserver_config cfg;
	struct lineserver_ops ops;
	void *data;
	struct client *clients;
	unsigned slots_used; /* one past the highest slot ever taken: where the scans stop */
	int paused;	     /* by the writer's backpressure */
	int stopped;	     /* shutting down: no accept, no read */
	struct lineserver_stats stats;
	struct log_ratelimit rl;
};

static uint64_t make_token(struct lineserver *ls, size_t slot)
{
	return ((uint64_t)ls->cfg.id << (SLOT_BITS + GEN_BITS)) |
	       ((uint64_t)ls->clients[slot].gen << SLOT_BITS) | (uint64_t)(slot + 1);
}

unsigned lineserver_token_server(uint64_t token)
{
	return (unsigned)(token >> (SLOT_BITS + GEN_BITS));
}

static struct client *token_client(struct lineserver *ls, uint64_t token)
{
	size_t slot = (size_t)(token & ((1u << SLOT_BITS) - 1));
	uint32_t gen = (uint32_t)(token >> SLOT_BITS);

	if (slot == 0 || slot > ls->cfg.clients_max)
		return NULL;
	slot--;
	if (!ls->clients[slot].open || ls->clients[slot].gen != gen)
		return NULL;
	return &ls->clients[slot];
}

static void client_close(struct lineserver *ls, struct client *c)
{
	if (!c->open)
		return;
	loop_remove(ls->loop, c->fd);
	close(c->fd);
	c->fd = -1;
	c->open = 0;
	c->gen++; /* completions still in the writer for this client now find nobody */
	free(c->in);
	free(c->out);
	c->in = c->out = NULL;
	c->in_len = c->in_cap = c->out_len = c->out_off = c->out_cap = 0;
	ls->stats.clients--;
}

static size_t out_pending(const struct client *c)
{
	return c->out_len - c->out_off;
}

/* Recomputes what the client waits for; closes it when it is done. Returns 0 if still open. */
static int client_update(struct lineserver *ls, struct client *c)
{
	uint32_t want = 0;
	int over = out_pending(c) > ls->cfg.reply_buffer_max;

	if (c->eof && c->lines_in == c->replies_out && out_pending(c) == 0) {
		client_close(ls, c);
		return -1;
	}
	/* Reading pauses over reply_buffer_max (no accepted line is dropped and the loop never
	 * blocks on a slow reader); the stall clock runs whenever replies wait unread. */
	if (out_pending(c) > 0 && c->stalled_since == 0)
		c->stalled_since = time_mono_ns();
	else if (out_pending(c) == 0)
		c->stalled_since = 0;
	if (!c->eof && !over && !ls->paused && !ls->stopped)
		want |= EPOLLIN;
	if (out_pending(c) > 0)
		want |= EPOLLOUT;
	if (want != c->events) {
		loop_modify(ls->loop, c->fd, want);
		c->events = want;
	}
	return 0;
}

/* Sends what it can without blocking; returns -1 if the client was closed. */
static int client_flush(struct lineserver *ls, struct client *c)
{
	while (out_pending(c) > 0) {
		ssize_t n = send(c->fd, c->out + c->out_off, out_pending(c),
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			client_close(ls, c);
			return -1;
		}
		c->out_off += (size_t)n;
		c->stalled_since = 0; /* it reads: the clock starts again from here */
	}
	if (c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	return 0;
}

static int client_append(struct client *c, const char *s, size_t n)
{
	if (c->out_off > 0 && c->out_off == c->out_len)
		c->out_off = c->out_len = 0;
	if (c->out_len + n + 1 > c->out_cap) {
		size_t cap = c->out_cap ? c->out_cap : 4096;
		char *p;

		if (c->out_off > 0) {
			memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
			c->out_len -= c->out_off;
			c->out_off = 0;
		}
		while (cap < c->out_len + n + 1)
			cap *= 2;
		if (cap != c->out_cap) {
			p = realloc(c->out, cap);
			if (!p)
				return -ENOMEM;
			c->out = p;
			c->out_cap = cap;
		}
	}
	memcpy(c->out + c->out_len, s, n);
	c->out[c->out_len + n] = '\n';
	c->out_len += n + 1;
	return 0;
}

static void handle_line(struct lineserver *ls, size_t slot, const char *line, size_t len)
{
	struct client *c = &ls->clients[slot];

	c->lines_in++;
	c->last_active = time_mono_ns();
	ls->stats.lines++;
	if (!line)
		ls->stats.oversize++;
	ls->ops.line(ls, make_token(ls, slot), c->lines_in, line, len, ls->data);
}

/* Splits the input buffer into lines; keeps a partial line; enforces the cap. */
static void process_input(struct lineserver *ls, size_t slot)
{
	struct client *c = &ls->clients[slot];
	size_t start = 0;

	for (;;) {
		char *nl = memchr(c->in + start, '\n', c->in_len - start);

		if (!nl)
			break;
		size_t len = (size_t)(nl - (c->in + start));

		if (c->discarding)
			c->discarding = 0; /* the end of the over-long line: already answered */
		else if (len > ls->cfg.line_max + 1) /* + 1: a trailing '\r' is allowed */
			handle_line(ls, slot, NULL, ls->cfg.line_max);
		else
			handle_line(ls, slot, c->in + start, len);
		start = (size_t)(nl - c->in) + 1;
		if (!ls->clients[slot].open)
			return;
	}
	memmove(c->in, c->in + start, c->in_len - start);
	c->in_len -= start;
	if (c->in_len == 0 && !c->discarding)
		c->partial_since = 0;
	else if (start > 0 || c->partial_since == 0)
		c->partial_since = time_mono_ns(); /* a new line began in this read */
	/* A partial line over the cap (plus room for a trailing '\r') is refused now, whole. */
	if (c->in_len > ls->cfg.line_max + 1) {
		if (!c->discarding)
			handle_line(ls, slot, NULL, ls->cfg.line_max);
		c->discarding = 1;
		c->in_len = 0;
	}
}

static void client_read(struct lineserver *ls, size_t slot)
{
	struct client *c = &ls->clients[slot];
	size_t want = ls->cfg.line_max + 2 + READ_CHUNK;
	ssize_t n;

	if (c->in_cap < want) {
		/* Grow to the cap lazily: most clients send short lines. */
		size_t cap = c->in_cap ? c->in_cap * 2 : 8192;
		char *p;

		if (cap > want)
			cap = want;
		if (c->in_len + 4096 > c->in_cap) {
			p = realloc(c->in, cap);
			if (!p) {
				client_close(ls, c);
				return;
			}
			c->in = p;
			c->in_cap = cap;
		}
	}
	n = read(c->fd, c->in + c->in_len, c->in_cap - c->in_len);
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return;
		client_close(ls, c);
		return;
	}
	if (n == 0) {
		/* A last line without a newline still counts as a line. */
		if (c->in_len > 0 && !c->discarding)
			handle_line(ls, slot, c->in, c->in_len);
		c->in_len = 0;
		c->eof = 1;
		return;
	}
	c->in_len += (size_t)n;
	process_input(ls, slot);
}

static void client_event(struct loop *l, int fd, uint32_t events, void *data)
{
	struct client *c = data;
	struct lineserver *ls = c->ls;
	size_t slot = c->slot;

	if (c->fd != fd)
		return;
	if ((events & EPOLLIN) && !ls->stopped) {
		client_read(ls, slot);
		if (!c->open)
			return;
	}
	if (events & (EPOLLERR | EPOLLHUP) && !(events & EPOLLIN)) {
		client_close(ls, c);
		return;
	}
	if (client_flush(ls, c) < 0)
		return;
	client_update(ls, c);
}

/* Says why in one line, best effort (the peer may not read); the caller closes. */
static void send_refusal(int fd, const char *why)
{
	char line[160];
	int n = snprintf(line, sizeof(line), "{\"ok\":false,\"error\":\"%s\"}\n", why);

	(void)!send(fd, line, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
}

static void accept_event(struct loop *l, int lfd, uint32_t events, void *data)
{
	struct lineserver *ls = data;

	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		int r;

		if (fd < 0) {
			if (errno != EAGAIN && errno != EINTR && log_ratelimit_ok(&ls->rl))
				log_warn_errno(-errno, "%s: accept", ls->cfg.name);
			return;
		}
		r = unixsock_peer_trusted(fd, ls->cfg.group);
		if (r <= 0) {
			ls->stats.refused_peer++;
			if (log_ratelimit_ok(&ls->rl))
				log_warn("%s: refused a peer that is neither root nor in group %s",
					 ls->cfg.name, "firebreak");
			send_refusal(fd, "permission denied");
			close(fd);
			continue;
		}
		if (lineserver_add_client(ls, fd, -1) < 0)
			close(fd);
	}
}

static unsigned clients_of_uid(struct lineserver *ls, uid_t uid)
{
	unsigned n = 0;

	for (unsigned i = 0; i < ls->slots_used; i++)
		n += ls->clients[i].open && ls->clients[i].uid == uid;
	return n;
}

int lineserver_add_client(struct lineserver *ls, int fd, int root)
{
	size_t slot;

	for (slot = 0; slot < ls->cfg.clients_max; slot++)
		if (!ls->clients[slot].open)
			break;
	if (slot == ls->cfg.clients_max || ls->stopped) {
		ls->stats.refused_full++;
		if (log_ratelimit_ok(&ls->rl))
			log_warn("%s: refused a client: %u connected already", ls->cfg.name,
				 ls->cfg.clients_max);
		send_refusal(fd, ls->stopped ? "shutting down" : "too many clients");
		return -EBUSY;
	}
	struct client *c = &ls->clients[slot];
	uid_t uid = (uid_t)-1;

	if (root < 0) {
		struct ucred cred;
		socklen_t credlen = sizeof(cred);

		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &credlen) == 0)
			uid = cred.uid;
		root = uid == 0;
	}
	/* One uid of the firebreak group cannot take every slot: root's clients (the enforcer,
	 * the CLI's kill switch) always find room the group's cannot fill. */
	if (!root && uid != (uid_t)-1 && ls->cfg.clients_per_uid_max &&
	    clients_of_uid(ls, uid) >= ls->cfg.clients_per_uid_max) {
		ls->stats.refused_uid++;
		if (log_ratelimit_ok(&ls->rl))
			log_warn("%s: refused a client of uid %u: %u of its connected already",
				 ls->cfg.name, (unsigned)uid, ls->cfg.clients_per_uid_max);
		send_refusal(fd, "too many clients of this user");
		return -EBUSY;
	}
	c->root = root;
	c->uid = uid;
	c->partial_since = 0;
	c->fd = fd;
	c->open = 1;
	if (slot + 1 > ls->slots_used)
		ls->slots_used = (unsigned)slot + 1;
	c->in_len = c->out_len = c->out_off = 0;
	c->discarding = c->eof = 0;
	c->lines_in = c->replies_out = 0;
	c->last_active = time_mono_ns();
	c->stalled_since = 0;
	c->events = (ls->paused || ls->stopped) ? 0 : EPOLLIN;
	c->ls = ls;
	c->slot = slot;
	if (loop_add(ls->loop, fd, c->events, client_event, c) < 0) {
		c->fd = -1;
		c->open = 0;
		return -ENOMEM;
	}
	ls->stats.accepted++;
	ls->stats.clients++;
	return 0;
}

int lineserver_new(struct loop *l, struct writer *w, int fd, const struct lineserver_config *cfg,
		   const struct lineserver_ops *ops, void *data, struct lineserver **ret)
{
	struct lineserver *ls = calloc(1, sizeof(*ls));
	int r;

	if (!ls)
		return -ENOMEM;
	if (cfg->id == 0 || cfg->id > 255 || cfg->clients_max == 0 ||
	    cfg->clients_max >= (1u << SLOT_BITS)) {
		free(ls);
		return -EINVAL;
	}
	ls->loop = l;
	ls->writer = w;
	ls->listen_fd = fd;
	ls->cfg = *cfg;
	ls->ops = *ops;
	ls->data = data;
	ls->rl.interval_ns = 10ULL * NSEC_PER_SEC;
	ls->rl.burst = 20;
	ls->clients = calloc(cfg->clients_max, sizeof(*ls->clients));
	if (!ls->clients) {
		free(ls);
		return -ENOMEM;
	}
	r = fd >= 0 ? loop_add(l, fd, EPOLLIN, accept_event, ls) : 0;
	if (r < 0) {
		free(ls->clients);
		free(ls);
		return r;
	}
	*ret = ls;
	return 0;
}

void lineserver_free(struct lineserver *ls)
{
	if (!ls)
		return;
	for (unsigned i = 0; i < ls->slots_used; i++)
		client_close(ls, &ls->clients[i]);
	if (ls->listen_fd >= 0) {
		loop_remove(ls->loop, ls->listen_fd);
		close(ls->listen_fd);
	}
	free(ls->clients);
	free(ls);
}

void lineserver_complete(struct lineserver *ls, const struct writer_completion *wc)
{
	struct client *c = token_client(ls, wc->token);
	_cleanup_free_ char *reply = NULL;

	if (!c) {
		/* The client has gone; the protocol still sees the result, so its counters hold. */
		ls->stats.replies_dropped++;
		free(ls->ops.reply(wc, 0, ls->data));
		free(wc->msg);
		return;
	}
	reply = ls->ops.reply(wc, c->replies_out + 1, ls->data);
	free(wc->msg);
	c->replies_out++;
	c->last_active = time_mono_ns();
	if (!reply || client_append(c, reply, strlen(reply)) < 0) {
		log_error("%s: out of memory for a reply; closing the client", ls->cfg.name);
		client_close(ls, c);
		return;
	}
	/* Sent by lineserver_flush() once the whole round of completions is in: one send() per
	 * client per round instead of one per reply. */
}

void lineserver_flush(struct lineserver *ls)
{
	if (!ls)
		return;
	for (unsigned i = 0; i < ls->slots_used; i++) {
		struct client *c = &ls->clients[i];

		if (!c->open)
			continue;
		if (out_pending(c) > 0 && client_flush(ls, c) < 0)
			continue;
		client_update(ls, c);
	}
}

int lineserver_peer_root(struct lineserver *ls, uint64_t token)
{
	struct client *c = token_client(ls, token);

	return c && c->root;
}

int lineserver_reply(struct lineserver *ls, uint64_t token, const char *reply)
{
	struct writer_op op = { .type = WRITER_OP_REPLY, .token = token };

	event_init(&op.ev);
	op.msg = strdup(reply);
	if (!op.msg)
		return -ENOMEM;
	return writer_submit(ls->writer, &op);
}

void lineserver_tick(struct lineserver *ls)
{
	if (!ls)
		return;
	uint64_t now = time_mono_ns();

	for (unsigned i = 0; i < ls->slots_used; i++) {
		struct client *c = &ls->clients[i];

		if (!c->open)
			continue;
		if (c->stalled_since && ls->cfg.stall_timeout_ns &&
		    now - c->stalled_since >= ls->cfg.stall_timeout_ns) {
			ls->stats.closed_stalled++;
			if (log_ratelimit_ok(&ls->rl))
				log_warn("%s: closed a client that read none of %zu bytes of "
					 "replies "
					 "for %llds",
					 ls->cfg.name, out_pending(c),
					 (long long)(ls->cfg.stall_timeout_ns / NSEC_PER_SEC));
			client_close(ls, c);
			continue;
		}
		if (c->partial_since && ls->cfg.request_timeout_ns &&
		    now - c->partial_since >= ls->cfg.request_timeout_ns) {
			ls->stats.closed_partial++;
			if (log_ratelimit_ok(&ls->rl))
				log_warn(
					"%s: closed a client whose line was unfinished after %llds",
					ls->cfg.name,
					(long long)(ls->cfg.request_timeout_ns / NSEC_PER_SEC));
			send_refusal(c->fd, "request timeout: a line was begun and not finished");
			client_close(ls, c);
			continue;
		}
		if (ls->cfg.idle_timeout_ns && c->lines_in == c->replies_out &&
		    out_pending(c) == 0 && now - c->last_active >= ls->cfg.idle_timeout_ns) {
			ls->stats.closed_idle++;
			if (log_ratelimit_ok(&ls->rl))
				log_info("%s: closed a client idle for %llds", ls->cfg.name,
					 (long long)(ls->cfg.idle_timeout_ns / NSEC_PER_SEC));
			send_refusal(c->fd, "idle timeout");
			client_close(ls, c);
		}
	}
}

void lineserver_pause(struct lineserver *ls, int pause)
{
	if (!ls)
		return;
	if (ls->paused == pause)
		return;
	ls->paused = pause;
	for (unsigned i = 0; i < ls->slots_used; i++)
		if (ls->clients[i].open)
			client_update(ls, &ls->clients[i]);
}

void lineserver_stop_input(struct lineserver *ls)
{
	if (!ls)
		return;
	ls->stopped = 1;
	if (ls->listen_fd >= 0) {
		loop_remove(ls->loop, ls->listen_fd);
		close(ls->listen_fd);
		ls->listen_fd = -1;
	}
	for (unsigned i = 0; i < ls->slots_used; i++)
		if (ls->clients[i].open)
			client_update(ls, &ls->clients[i]);
}

void lineserver_flush_and_close(struct lineserver *ls, uint64_t timeout_ns)
{
	if (!ls)
		return;
	uint64_t deadline = time_mono_ns() + timeout_ns;

	for (unsigned i = 0; i < ls->slots_used; i++) {
		struct client *c = &ls->clients[i];

		while (c->open && out_pending(c) > 0 && time_mono_ns() < deadline) {
			struct pollfd p = { .fd = c->fd, .events = POLLOUT };

			if (poll(&p, 1, 50) < 0 || client_flush(ls, c) < 0)
				break;
		}
		client_close(ls, c);
	}
}

void lineserver_get_stats(struct lineserver *ls, struct lineserver_stats *ret)
{
	*ret = ls->stats;
}
