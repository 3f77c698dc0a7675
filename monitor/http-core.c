/* The core's side of the HTTP API: the socket, the child's life, the channel's server. */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "child.h"
#include "counters.h"
#include "daemon.h"
#include "monitor/http/http-tokens.h"
#include "macro.h"
#include "timeutil.h"

/* The core's side of the API: the socket the child serves, the child, and what it refused. */
struct http_core {
	const struct config *cfg;
	int listen_fd; /* the TCP socket the child serves, or -1 (listen = off) */
	int port;      /* its port (the configured one, or the one given for 0) */
	struct child child;
	uint64_t refused;	 /* channel requests refused by the dispatch table */
	struct log_ratelimit rl; /* on logging them */
};

static int is_loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	return sa->sa_family == AF_INET6 &&
	       IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
}

/* Binds ADDRESS:PORT ([v6]:PORT for IPv6), numeric only: no name lookup at start. */
static int bind_listen(struct daemon *d)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE,
				  .ai_socktype = SOCK_STREAM };
	char host[128], *colon;
	const char *port;
	struct addrinfo *ai;
	union {
		struct sockaddr sa;
		struct sockaddr_storage ss;
	} bound;
	socklen_t len = sizeof(bound);
	int fd, one = 1, r;

	strscpy(host, sizeof(host), d->cfg->listen);
	if (!(colon = strrchr(host, ':')))
		return log_errno(-EINVAL, "listen %s: ADDRESS:PORT", d->cfg->listen);
	*colon = '\0';
	port = colon + 1;
	char *h = host;
	if (h[0] == '[' && colon > host && colon[-1] == ']') {
		h++;
		colon[-1] = '\0';
	}
	if ((r = getaddrinfo(h, port, &hints, &ai)) != 0) {
		log_error("listen %s: %s", d->cfg->listen, gai_strerror(r));
		return -EINVAL;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 128) < 0 ||
	    getsockname(fd, &bound.sa, &len) < 0) {
		r = -errno;
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return log_errno(r, "HTTP API: listen on %s", d->cfg->listen);
	}
	if (!is_loopback(ai->ai_addr))
		log_warn(
			"HTTP API on %s, not a loopback address: whoever reaches it may try tokens "
			"(the API still needs them; sandboxes never reach it)",
			d->cfg->listen);
	freeaddrinfo(ai);
	d->http_core->port =
		ntohs(bound.sa.sa_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
						     : ((struct sockaddr_in *)&bound)->sin_port);
	d->http_core->listen_fd = fd;
	return 0;
}

static int spawn(struct daemon *d)
{
	int sv[2], r;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	/* The child's fd 3 is its end of the channel, 4 the listening socket. */
	r = child_start(&d->http_core->child, (int[]){ sv[1], d->http_core->listen_fd }, 2);
	close(sv[1]);
	if (r < 0) {
		close(sv[0]);
		return r;
	}
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	if (lineserver_add_client(d->http, sv[0], 0) < 0)
		close(sv[0]);
	log_info("HTTP API child %d serving %s (port %d)", (int)d->http_core->child.pid,
		 d->cfg->listen, d->http_core->port);
	return 0;
}

int http_init(struct daemon *d)
{
	if (!(d->http_core = calloc(1, sizeof(*d->http_core))))
		return -ENOMEM;
	d->http_core->cfg = d->cfg;
	d->http_core->rl.interval_ns = 10ULL * NSEC_PER_SEC;
	d->http_core->rl.burst = 20;
	d->http_core->listen_fd = -1;
	d->http_core->child = (struct child){ .name = "HTTP API",
					      .flag = "--http-child",
					      .argv = d->self->argv,
					      .loop = d->loop,
					      .pidfd = -1 };
	return 0;
}

void http_free(struct daemon *d)
{
	if (d->http_core)
		counters_remove(d->counters, d->http_core);
	free(d->http_core);
	d->http_core = NULL;
}

uint64_t http_channel_refused(struct daemon *d)
{
	return d->http_core->refused;
}

int http_count_refused(struct daemon *d)
{
	d->http_core->refused++;
	return log_ratelimit_ok(&d->http_core->rl);
}

int http_start(struct daemon *d)
{
	struct lineserver_config cfg = {
		.name = "http",
		.id = LINESERVER_HTTP,
		.line_max = FB_TRACE_LINE_MAX + 16,
		.clients_max = 2, /* the child, and a dying one's last replies */
		.reply_buffer_max = 64 << 20,
		.stall_timeout_ns = 30 * NSEC_PER_SEC,
		.group = (gid_t)-1,
	};
	int r;

	if (strcmp(d->cfg->listen, "off") == 0)
		return 0;
	if ((r = http_token_ensure(d->cfg->http_read_token)) < 0 ||
	    (r = http_token_ensure(d->cfg->http_action_token)) < 0)
		return r;
	/* The child reads them again as root; checked here too, so a bad file stops the start. */
	char t[HTTP_TOKEN_MAX + 1];
	if ((r = http_token_load(d->cfg->http_read_token, t)) < 0 ||
	    (r = http_token_load(d->cfg->http_action_token, t)) < 0)
		return r;
	explicit_bzero(t, sizeof(t));
	if ((r = bind_listen(d)) < 0)
		return r;
	if ((r = lineserver_new(d->loop, d->writer, -1, &cfg, &http_privsep_ops, d, &d->http)) < 0)
		return log_errno(r, "HTTP API channel");
	if ((r = spawn(d)) < 0)
		return log_errno(r, "HTTP API child");
	return 0;
}

void http_tick(struct daemon *d)
{
	int r;

	if (d->http_core->listen_fd < 0 || !child_due(&d->http_core->child))
		return;
	if ((r = spawn(d)) < 0) {
		log_errno(r, "HTTP API child");
		d->http_core->child.restart_at_ns =
			(int64_t)time_mono_ns() + 10 * (int64_t)NSEC_PER_SEC;
	}
}

void http_stop(struct daemon *d)
{
	child_stop(&d->http_core->child);
	lineserver_free(d->http);
	d->http = NULL;
	if (d->http_core->listen_fd >= 0)
		close(d->http_core->listen_fd);
	d->http_core->listen_fd = -1;
}

/* The API's part of the stats that is not counters: whether it is on, where, which child. */
static json_t *http_status(const void *state)
{
	const struct http_core *h = state;

	if (h->listen_fd < 0)
		return json_pack("{s:b}", "on", 0);
	return json_pack("{s:b, s:s, s:i, s:i}", "on", 1, "listen", h->cfg->listen, "port", h->port,
			 "child_pid", (int)h->child.pid);
}

static const struct counter_def http_counters[] = {
	{ "child_restarts", COUNTER_TOTAL, "times the HTTP child was started again after it died",
	  COUNTER_FAMILY_HTTP_RESTARTS, COUNTER_AT(struct http_core, child.restarts) },
	{ "channel_refused", COUNTER_TOTAL, "channel requests the dispatch table refused",
	  COUNTER_FAMILY_HTTP_REFUSED, COUNTER_AT(struct http_core, refused) },
};

int http_add_counters(struct daemon *d)
{
	int r = counters_add_status(d->counters, "http", http_status, d->http_core);

	return r < 0 ? r
		     : counters_add(d->counters, "http", http_counters, ARRAY_SIZE(http_counters),
				    d->http_core);
}
