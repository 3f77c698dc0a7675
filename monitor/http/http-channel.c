/*
 * The child's end of the channel to the core: requests as "TYPE PAYLOAD\n" lines, replies as one
 * line each, in the order the requests were sent. Callers on any thread send a run of requests
 * under one lock (so the run's sequence numbers are contiguous) and wait for their replies, which
 * a reader thread hands out by sequence number.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "http-child.h"
#include "log.h"

/* A reply not back in this long: the core is stuck; the request answers 504. */
#define CHANNEL_TIMEOUT_S 30
#define CHANNEL_LINE_MAX (64 << 20)

struct waiter {
	uint64_t first; /* sequence number of its first request */
	size_t n, got;
	char **replies;
	struct waiter *next;
};

struct channel {
	int fd;
	pthread_mutex_t send_lock; /* one run of requests at a time */
	pthread_mutex_t lock;	   /* what follows */
	pthread_cond_t replied;
	uint64_t next_seq, next_reply;
	struct waiter *waiters;
	int dead;
	pthread_t reader;
};

static void deliver(struct channel *c, char *line)
{
	uint64_t seq;

	pthread_mutex_lock(&c->lock);
	seq = c->next_reply++;
	for (struct waiter *w = c->waiters; w; w = w->next) {
		if (seq >= w->first && seq < w->first + w->n) {
			w->replies[seq - w->first] = line;
			line = NULL;
			if (++w->got == w->n)
				pthread_cond_broadcast(&c->replied);
			break;
		}
	}
	pthread_mutex_unlock(&c->lock);
	free(line); /* its caller gave up waiting */
}

static void *reader_main(void *arg)
{
	struct channel *c = arg;
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap);

	while (buf) {
		ssize_t n;
		char *nl;

		if (len == cap) {
			char *nb = cap < CHANNEL_LINE_MAX ? realloc(buf, cap * 2) : NULL;

			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		n = read(c->fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		while ((nl = memchr(buf, '\n', len))) {
			size_t l = (size_t)(nl - buf);
			char *line = strndup(buf, l);

			if (!line)
				goto out;
			deliver(c, line);
			memmove(buf, nl + 1, len - l - 1);
			len -= l + 1;
		}
	}
out:
	free(buf);
	pthread_mutex_lock(&c->lock);
	c->dead = 1;
	pthread_cond_broadcast(&c->replied);
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

int channel_new(int fd, struct channel **ret)
{
	struct channel *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	c->fd = fd;
	pthread_mutex_init(&c->send_lock, NULL);
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->replied, NULL);
	if (pthread_create(&c->reader, NULL, reader_main, c) != 0) {
		free(c);
		return -EAGAIN;
	}
	*ret = c;
	return 0;
}

void channel_free(struct channel *c)
{
	if (!c)
		return;
	shutdown(c->fd, SHUT_RDWR);
	pthread_join(c->reader, NULL);
	close(c->fd);
	free(c);
}

int channel_dead(struct channel *c)
{
	int dead;

	pthread_mutex_lock(&c->lock);
	dead = c->dead;
	pthread_mutex_unlock(&c->lock);
	return dead;
}

static int send_all(int fd, struct iovec *iov, int n)
{
	while (n > 0) {
		ssize_t w = writev(fd, iov, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		while (n > 0 && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

int channel_call(struct channel *c, const char *type, const char *const *payloads,
		 const size_t *lens, size_t n, char **ret)
{
	struct waiter w = { .n = n, .replies = ret };
	struct timespec deadline;
	int r = 0;

	memset(ret, 0, n * sizeof(*ret));
	if (n == 0)
		return 0;
	pthread_mutex_lock(&c->send_lock);
	pthread_mutex_lock(&c->lock);
	if (c->dead) {
		pthread_mutex_unlock(&c->lock);
		pthread_mutex_unlock(&c->send_lock);
		return -EPIPE;
	}
	w.first = c->next_seq;
	c->next_seq += n;
	w.next = c->waiters;
	c->waiters = &w;
	pthread_mutex_unlock(&c->lock);
	for (size_t i = 0; i < n && r == 0; i++) {
		struct iovec iov[4] = {
			{ (void *)type, strlen(type) },
			{ (void *)" ", lens[i] || payloads[i] ? 1 : 0 },
			{ (void *)payloads[i], lens[i] },
			{ (void *)"\n", 1 },
		};
		r = send_all(c->fd, iov, 4);
	}
	pthread_mutex_unlock(&c->send_lock);
	if (r < 0) {
		/* Sequence numbers no longer match what was sent: the channel is done for. */
		pthread_mutex_lock(&c->lock);
		c->dead = 1;
		pthread_mutex_unlock(&c->lock);
		shutdown(c->fd, SHUT_RDWR);
	}

	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += CHANNEL_TIMEOUT_S;
	pthread_mutex_lock(&c->lock);
	while (r == 0 && w.got < n && !c->dead)
		if (pthread_cond_timedwait(&c->replied, &c->lock, &deadline) == ETIMEDOUT)
			r = -ETIMEDOUT;
	if (w.got == n)
		r = 0; /* everything came, even if just as the time ran out */
	else if (r == 0)
		r = -EPIPE;
	for (struct waiter **p = &c->waiters; *p; p = &(*p)->next) {
		if (*p == &w) {
			*p = w.next;
			break;
		}
	}
	pthread_mutex_unlock(&c->lock);
	if (r < 0 && r != -EPIPE && r != -ETIMEDOUT)
		r = -EPIPE; /* a send failed: the core is gone */
	return r;
}
