/* The core's side of the HTTP API: the socket, the child's life, the channel's server. */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon.h"
#include "http-tokens.h"
#include "macro.h"
#include "timeutil.h"

#define HTTP_BACKOFF_MIN_NS (100 * NSEC_PER_MSEC)
#define HTTP_BACKOFF_MAX_NS (10 * NSEC_PER_SEC)
/* A child that ran this long before dying is started again at once. */
#define HTTP_STABLE_NS (10 * NSEC_PER_SEC)

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

	strscpy(host, sizeof(host), d->cfg.listen);
	if (!(colon = strrchr(host, ':')))
		return log_errno(-EINVAL, "listen %s: ADDRESS:PORT", d->cfg.listen);
	*colon = '\0';
	port = colon + 1;
	char *h = host;
	if (h[0] == '[' && colon > host && colon[-1] == ']') {
		h++;
		colon[-1] = '\0';
	}
	if ((r = getaddrinfo(h, port, &hints, &ai)) != 0) {
		log_error("listen %s: %s", d->cfg.listen, gai_strerror(r));
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
		return log_errno(r, "HTTP API: listen on %s", d->cfg.listen);
	}
	if (!is_loopback(ai->ai_addr))
		log_warn("HTTP API on %s, not a loopback address: whoever reaches it may try tokens "
			 "(the API still needs them; sandboxes never reach it)",
			 d->cfg.listen);
	freeaddrinfo(ai);
	d->http_port = ntohs(bound.sa.sa_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
							     : ((struct sockaddr_in *)&bound)->sin_port);
	d->http_listen_fd = fd;
	return 0;
}

static void on_child_exit(struct loop *l, int fd, uint32_t events, void *data);

static int spawn(struct daemon *d)
{
	int sv[2], pidfd, n = 0;
	char *args[64];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	args[n++] = (char *)"firebreakd";
	args[n++] = (char *)"--http-child";
	for (char **a = d->argv + 1; *a && n < (int)ARRAY_SIZE(args) - 1; a++)
		args[n++] = *a;
	args[n] = NULL;
	pid = fork();
	if (pid < 0) {
		int r = -errno;

		close(sv[0]);
		close(sv[1]);
		return r;
	}
	if (pid == 0) {
		/* Fresh state by exec: nothing of the core's threads, maps, store or memory crosses;
		 * only the channel (3) and the listening socket (4). */
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (dup2(sv[1], 3) < 0 || dup2(d->http_listen_fd, 4) < 0)
			_exit(127);
		execv("/proc/self/exe", args);
		_exit(127);
	}
	close(sv[1]);
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	if (lineserver_add_client(d->http, sv[0], 1) < 0)
		close(sv[0]);
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0 || loop_add(d->loop, pidfd, EPOLLIN, on_child_exit, d) < 0) {
		log_error("HTTP child %d: cannot watch it", (int)pid);
		if (pidfd >= 0)
			close(pidfd);
		pidfd = -1;
	}
	d->http_pid = pid;
	d->http_pidfd = pidfd;
	d->http_started_ns = (int64_t)time_mono_ns();
	log_info("HTTP API child %d serving %s (port %d)", (int)pid, d->cfg.listen, d->http_port);
	return 0;
}

static void on_child_exit(struct loop *l, int fd, uint32_t events, void *data)
{
	struct daemon *d = data;
	int64_t now = (int64_t)time_mono_ns();
	int status = 0;

	if (waitpid(d->http_pid, &status, WNOHANG) == 0)
		return;
	loop_remove(l, fd);
	close(fd);
	d->http_pidfd = -1;
	if (now - d->http_started_ns >= HTTP_STABLE_NS)
		d->http_backoff_ns = 0;
	else
		d->http_backoff_ns = d->http_backoff_ns ? d->http_backoff_ns * 2 : HTTP_BACKOFF_MIN_NS;
	if (d->http_backoff_ns > HTTP_BACKOFF_MAX_NS)
		d->http_backoff_ns = HTTP_BACKOFF_MAX_NS;
	d->http_restart_at_ns = now + d->http_backoff_ns;
	d->http_restarts++;
	if (WIFSIGNALED(status))
		log_warn("HTTP API child %d killed by signal %d; starting it again in %lld ms",
			 (int)d->http_pid, WTERMSIG(status),
			 (long long)(d->http_backoff_ns / NSEC_PER_MSEC));
	else
		log_warn("HTTP API child %d exited %d; starting it again in %lld ms", (int)d->http_pid,
			 WEXITSTATUS(status), (long long)(d->http_backoff_ns / NSEC_PER_MSEC));
	d->http_pid = 0;
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

	d->http_listen_fd = d->http_pidfd = -1;
	if (strcmp(d->cfg.listen, "off") == 0)
		return 0;
	if ((r = http_token_ensure(d->cfg.http_read_token)) < 0 ||
	    (r = http_token_ensure(d->cfg.http_action_token)) < 0)
		return r;
	/* The child reads them again as root; checked here too, so a bad file stops the start. */
	char t[HTTP_TOKEN_MAX + 1];
	if ((r = http_token_load(d->cfg.http_read_token, t)) < 0 ||
	    (r = http_token_load(d->cfg.http_action_token, t)) < 0)
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

	if (d->http_listen_fd < 0 || d->http_pid || !d->http_restart_at_ns ||
	    (int64_t)time_mono_ns() < d->http_restart_at_ns)
		return;
	d->http_restart_at_ns = 0;
	if ((r = spawn(d)) < 0) {
		log_errno(r, "HTTP API child");
		d->http_restart_at_ns = (int64_t)time_mono_ns() + HTTP_BACKOFF_MAX_NS;
	}
}

void http_stop(struct daemon *d)
{
	if (d->http_pid > 0) {
		struct pollfd p = { .fd = d->http_pidfd, .events = POLLIN };

		kill(d->http_pid, SIGTERM);
		if (d->http_pidfd < 0 || poll(&p, 1, 1000) <= 0)
			kill(d->http_pid, SIGKILL);
		waitpid(d->http_pid, NULL, 0);
		d->http_pid = 0;
	}
	if (d->http_pidfd >= 0) {
		loop_remove(d->loop, d->http_pidfd);
		close(d->http_pidfd);
		d->http_pidfd = -1;
	}
	lineserver_free(d->http);
	d->http = NULL;
	if (d->http_listen_fd >= 0)
		close(d->http_listen_fd);
	d->http_listen_fd = -1;
}

json_t *http_stats_json(struct daemon *d)
{
	if (d->http_listen_fd < 0)
		return json_pack("{s:b}", "on", 0);
	return json_pack("{s:b, s:s, s:i, s:i, s:I, s:I}", "on", 1, "listen", d->cfg.listen, "port",
			 d->http_port, "child_pid", (int)d->http_pid, "child_restarts",
			 (json_int_t)d->http_restarts, "channel_refused", (json_int_t)d->http_refused);
}
