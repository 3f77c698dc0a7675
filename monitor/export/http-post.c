#include "http-post.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "macro.h"
#include "timeutil.h"

/* Waits until fd is ready for events or the deadline (monotonic ns) passes; 0 or -errno. */
static int wait_for(int fd, short events, uint64_t deadline)
{
	for (;;) {
		uint64_t now = time_mono_ns();
		struct pollfd p = { .fd = fd, .events = events };
		int n;

		if (now >= deadline)
			return -ETIMEDOUT;
		n = poll(&p, 1, (int)((deadline - now) / NSEC_PER_MSEC) + 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n > 0)
			return 0;
	}
}

/* A non-blocking socket connected to ep by the deadline; the fd, or -errno. */
static int post_connect(const struct endpoint *ep, uint64_t deadline)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai;
	int err = 0, r;
	socklen_t elen = sizeof(err);
	_cleanup_close_ int fd = -1;

	if (getaddrinfo(ep->host, ep->port, &hints, &ai) != 0)
		return -EINVAL;
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		freeaddrinfo(ai);
		return -errno;
	}
	r = connect(fd, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
	if (r < 0 && errno != EINPROGRESS)
		return -errno;
	if ((r = wait_for(fd, POLLOUT, deadline)) < 0)
		return r;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) < 0 || err)
		return -(err ? err : errno);
	return TAKE_FD(fd);
}

/* Writes head[0..hlen) then body[0..len) to fd by the deadline; 0 or -errno. */
static int post_send(int fd, const char *head, size_t hlen, const char *body, size_t len,
		     uint64_t deadline)
{
	size_t off = 0;
	int r;

	while (off < hlen + len) {
		struct iovec iov[2] = {
			{ (char *)head + (off < hlen ? off : hlen), off < hlen ? hlen - off : 0 },
			{ (char *)body + (off > hlen ? off - hlen : 0),
			  len - (off > hlen ? off - hlen : 0) },
		};
		ssize_t n = writev(fd, iov, 2);

		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			if ((r = wait_for(fd, POLLOUT, deadline)) < 0)
				return r;
			continue;
		}
		if (n < 0)
			return -errno;
		off += (size_t)n;
	}
	return 0;
}

/* Reads the answer's status line from fd by the deadline; 0 and *ret_status, or -errno. */
static int post_read_status(int fd, uint64_t deadline, int *ret_status)
{
	char answer[256];
	size_t got = 0;
	int r, status;

	/* The status line is all we need. */
	while (got < sizeof(answer) - 1 && !memchr(answer, '\n', got)) {
		ssize_t n = read(fd, answer + got, sizeof(answer) - 1 - got);

		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			if ((r = wait_for(fd, POLLIN, deadline)) < 0)
				return r;
			continue;
		}
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	answer[got] = '\0';
	if (sscanf(answer, "HTTP/1.%*d %d", &status) != 1)
		return -EPROTO;
	*ret_status = status;
	return 0;
}

int http_post(const struct endpoint *ep, const char *content_type, const char *body, size_t len,
	      int timeout_ms, int *ret_status)
{
	uint64_t deadline = time_mono_ns() + (uint64_t)timeout_ms * NSEC_PER_MSEC;
	char head[512];
	size_t hlen;
	int r;
	_cleanup_close_ int fd = post_connect(ep, deadline);

	if (fd < 0)
		return fd;
	hlen = (size_t)snprintf(head, sizeof(head),
				"POST %s HTTP/1.1\r\nHost: %s:%s\r\nContent-Type: %s\r\n"
				"Content-Length: %zu\r\nConnection: close\r\n"
				"User-Agent: firebreakd\r\n\r\n",
				ep->path, ep->host, ep->port, content_type, len);
	if ((r = post_send(fd, head, hlen, body, len, deadline)) < 0)
		return r;
	return post_read_status(fd, deadline, ret_status);
}
