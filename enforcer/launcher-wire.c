#include "launcher-wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "macro.h"

#define WIRE_MAX_FDS 3

int launcher_wire_send(int fd, json_t *obj, const int *fds, int nfds)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(WIRE_MAX_FDS * sizeof(int))];
	} cm;
	char *text = obj ? json_dumps(obj, JSON_COMPACT) : NULL;
	struct iovec iov;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	size_t len;
	ssize_t n;

	json_decref(obj);
	if (!text)
		return -ENOMEM;
	len = strlen(text);
	if (len > LAUNCHER_REQUEST_MAX || nfds > WIRE_MAX_FDS) {
		free(text);
		return -EMSGSIZE;
	}
	iov = (struct iovec){ .iov_base = text, .iov_len = len };
	if (nfds > 0) {
		struct cmsghdr *c;

		msg.msg_control = cm.buf;
		msg.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, (size_t)nfds * sizeof(int));
	}
	/* A message goes whole or not at all: a big request needs a send buffer that holds it. */
	if (len > 64 << 10)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &(int){ (int)len + (64 << 10) },
			   sizeof(int));
	while ((n = sendmsg(fd, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR)
		;
	free(text);
	if (n < 0)
		return -errno;
	return n == (ssize_t)len ? 0 : -EIO;
}

static void close_fds(const struct msghdr *msg)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR((struct msghdr *)msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int f;

			memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			close(f);
		}
	}
}

int launcher_wire_recv(int fd, json_t **ret, int *fds, int maxfds, int *ret_nfds)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(WIRE_MAX_FDS * sizeof(int))];
	} cm;
	struct iovec iov;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	_cleanup_free_ char *buf = NULL;
	struct cmsghdr *c;
	json_t *obj;
	ssize_t n;
	int nfds = 0;

	*ret = NULL;
	*ret_nfds = 0;
	/* Its size first (MSG_TRUNC returns the real length), then the message whole. */
	while ((n = recv(fd, NULL, 0, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT)) < 0 && errno == EINTR)
		;
	if (n < 0)
		return -errno;
	if (n > LAUNCHER_REQUEST_MAX)
		n = LAUNCHER_REQUEST_MAX + 1; /* read and refused below: it must not stay queued */
	if (!(buf = malloc((size_t)n + 1)))
		return -ENOMEM;
	iov = (struct iovec){ .iov_base = buf, .iov_len = (size_t)n + 1 };
	msg.msg_control = cm.buf;
	msg.msg_controllen = sizeof(cm.buf);
	while ((n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT)) < 0 && errno == EINTR)
		;
	if (n < 0)
		return -errno;
	if (n == 0)
		return -ECONNRESET;
	if ((msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || n > LAUNCHER_REQUEST_MAX) {
		close_fds(&msg);
		return -EMSGSIZE;
	}
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		size_t k = c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS
				   ? (c->cmsg_len - CMSG_LEN(0)) / sizeof(int)
				   : 0;

		if ((int)k + nfds > maxfds) {
			close_fds(&msg);
			for (int i = 0; i < nfds; i++)
				close(fds[i]);
			return -EBADMSG;
		}
		memcpy(fds + nfds, CMSG_DATA(c), k * sizeof(int));
		nfds += (int)k;
	}
	obj = json_loadb(buf, (size_t)n, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(obj)) {
		json_decref(obj);
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		return -EBADMSG;
	}
	*ret = obj;
	*ret_nfds = nfds;
	return 0;
}
