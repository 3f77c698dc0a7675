#include "loop.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"

struct source {
	int fd;
	int owned; /* created by the loop (timer, signalfd): closed on remove */
	int dead;  /* removed during this round of dispatch; freed after it */
	loop_io_fn fn;
	void *data;
	loop_timer_fn timer_fn;
	void (*signal_fn)(struct loop *l, int signo, void *data);
	void *user; /* the timer's or signal handler's data (data points at the source) */
	struct source *next_dead;
};

struct loop {
	int epfd;
	struct source **by_fd; /* fd -> source */
	size_t by_fd_cap;
	struct source *dead; /* freed once the current epoll batch is dispatched */
	int quit;
	int code;
};

int loop_new(struct loop **ret)
{
	struct loop *l = calloc(1, sizeof(*l));

	if (!l)
		return -ENOMEM;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (l->epfd < 0) {
		int r = -errno;
		free(l);
		return r;
	}
	*ret = l;
	return 0;
}

static void reap_dead(struct loop *l)
{
	while (l->dead) {
		struct source *s = l->dead;

		l->dead = s->next_dead;
		free(s);
	}
}

void loop_free(struct loop *l)
{
	if (!l)
		return;
	for (size_t fd = 0; fd < l->by_fd_cap; fd++) {
		struct source *s = l->by_fd[fd];

		if (!s)
			continue;
		if (s->owned)
			close(s->fd);
		free(s);
	}
	reap_dead(l);
	free(l->by_fd);
	close(l->epfd);
	free(l);
}

static int add_source(struct loop *l, struct source *s, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = s };

	if ((size_t)s->fd >= l->by_fd_cap) {
		size_t cap = l->by_fd_cap ? l->by_fd_cap : 64;
		struct source **n;

		while (cap <= (size_t)s->fd)
			cap *= 2;
		n = realloc(l->by_fd, cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		memset(n + l->by_fd_cap, 0, (cap - l->by_fd_cap) * sizeof(*n));
		l->by_fd = n;
		l->by_fd_cap = cap;
	}
	if (l->by_fd[s->fd])
		return -EEXIST;
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, s->fd, &ev) < 0)
		return -errno;
	l->by_fd[s->fd] = s;
	return 0;
}

int loop_add(struct loop *l, int fd, uint32_t events, loop_io_fn fn, void *data)
{
	struct source *s = calloc(1, sizeof(*s));
	int r;

	if (!s)
		return -ENOMEM;
	s->fd = fd;
	s->fn = fn;
	s->data = data;
	r = add_source(l, s, events);
	if (r < 0)
		free(s);
	return r;
}

int loop_modify(struct loop *l, int fd, uint32_t events)
{
	struct epoll_event ev = { .events = events };

	if (fd < 0 || (size_t)fd >= l->by_fd_cap || !l->by_fd[fd])
		return -ENOENT;
	ev.data.ptr = l->by_fd[fd];
	return epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev) < 0 ? -errno : 0;
}

int loop_remove(struct loop *l, int fd)
{
	struct source *s;

	if (fd < 0 || (size_t)fd >= l->by_fd_cap || !l->by_fd[fd])
		return -ENOENT;
	s = l->by_fd[fd];
	l->by_fd[fd] = NULL;
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
	if (s->owned)
		close(s->fd);
	/* Events for s may still sit in this round's batch: free it only after the round. */
	s->dead = 1;
	s->next_dead = l->dead;
	l->dead = s;
	return 0;
}

/*
 * Watches fd, which the loop made (a timer or a signalfd) and closes when it is removed, for
 * input: a source like proto whose handler gets the source itself as its data. 0, or -errno
 * (fd is then closed).
 */
static int add_owned(struct loop *l, int fd, const struct source *proto)
{
	struct source *s = calloc(1, sizeof(*s));
	int r;

	if (!s) {
		close(fd);
		return -ENOMEM;
	}
	*s = *proto;
	s->fd = fd;
	s->owned = 1;
	s->data = s;
	r = add_source(l, s, EPOLLIN);
	if (r < 0) {
		close(fd);
		free(s);
	}
	return r;
}

static void timer_ready(struct loop *l, int fd, uint32_t events, void *data)
{
	struct source *s = data;
	uint64_t n = 0;

	if (read(fd, &n, sizeof(n)) == sizeof(n) && n > 0)
		s->timer_fn(l, n, s->user);
}

int loop_add_timer(struct loop *l, uint64_t interval_ns, loop_timer_fn fn, void *data)
{
	struct itimerspec its = {
		.it_interval = { (time_t)(interval_ns / 1000000000ULL),
				 (long)(interval_ns % 1000000000ULL) },
	};
	const struct source proto = { .fn = timer_ready, .timer_fn = fn, .user = data };
	int fd, r;

	its.it_value = its.it_interval;
	fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (timerfd_settime(fd, 0, &its, NULL) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	r = add_owned(l, fd, &proto);
	return r < 0 ? r : fd;
}

static void signal_ready(struct loop *l, int fd, uint32_t events, void *data)
{
	struct source *s = data;
	struct signalfd_siginfo si;

	while (read(fd, &si, sizeof(si)) == sizeof(si))
		s->signal_fn(l, (int)si.ssi_signo, s->user);
}

int loop_add_signals(struct loop *l, const int *signals, int n,
		     void (*fn)(struct loop *l, int signo, void *data), void *data)
{
	const struct source proto = { .fn = signal_ready, .signal_fn = fn, .user = data };
	sigset_t mask;
	int fd;

	sigemptyset(&mask);
	for (int i = 0; i < n; i++)
		sigaddset(&mask, signals[i]);
	if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
		return -errno;
	fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (fd < 0)
		return -errno;
	return add_owned(l, fd, &proto);
}

int loop_run(struct loop *l)
{
	struct epoll_event events[64];

	while (!l->quit) {
		int n = epoll_wait(l->epfd, events, (int)ARRAY_SIZE(events), -1);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return log_errno(-errno, "epoll_wait");
		}
		for (int i = 0; i < n && !l->quit; i++) {
			struct source *s = events[i].data.ptr;

			if (!s->dead)
				s->fn(l, s->fd, events[i].events, s->data);
		}
		reap_dead(l);
	}
	return l->code;
}

void loop_quit(struct loop *l, int code)
{
	l->quit = 1;
	l->code = code;
}
