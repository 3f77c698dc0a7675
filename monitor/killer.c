#include "killer.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cgroup.h"
#include "counters.h"
#include "daemon.h"
#include "loop.h"
#include "macro.h"
#include "store/registry.h"
#include "timeutil.h"

/* How long the thread waits for cgroup.events to confirm an action (as action_finish does). */
#define KILLER_CONFIRM_NS (1000 * NSEC_PER_MSEC)

enum slot_state { SLOT_FREE, SLOT_QUEUED, SLOT_ACTIVE, SLOT_DONE };

struct killer {
	pthread_t thread;
	int started;
	int req_efd;	      /* the loop -> the thread: a job is queued, or stop */
	int done_efd;	      /* the thread -> the loop: a job is done */
	pthread_mutex_t lock; /* guards state[] and stop; jobs[i] belongs to whoever state says */
	enum slot_state state[KILLER_JOBS_MAX];
	struct killer_job jobs[KILLER_JOBS_MAX];
	int stop;
	/* The thread's own: each active job's cgroup.events and deadline. */
	int events_fd[KILLER_JOBS_MAX];
	uint64_t deadline[KILLER_JOBS_MAX];
	/* Set once by the thread before the loop reads it (killer_start waits). */
	int rt_errno; /* 0: SCHED_FIFO; else why not */
	/* Counters (the loop's). */
	uint64_t submitted, confirmed, unconfirmed, failed, busy, realtime;
};

static const struct counter_def killer_counters[] = {
	{ "submitted", COUNTER_TOTAL, "actions handed to the kill path's thread",
	  COUNTER_AT(struct killer, submitted) },
	{ "confirmed", COUNTER_TOTAL, "of them, confirmed by cgroup.events",
	  COUNTER_AT(struct killer, confirmed) },
	{ "unconfirmed", COUNTER_TOTAL, "of them, done but not confirmed within a second",
	  COUNTER_AT(struct killer, unconfirmed) },
	{ "failed", COUNTER_TOTAL, "of them, whose cgroup write failed",
	  COUNTER_AT(struct killer, failed) },
	{ "busy", COUNTER_TOTAL,
	  "actions the loop did itself: the thread had 64 in flight, or none ran",
	  COUNTER_AT(struct killer, busy) },
	{ "realtime", COUNTER_GAUGE, "1 if the thread runs SCHED_FIFO, 0 if the kernel refused it",
	  COUNTER_AT(struct killer, realtime) },
};

static void poke(int efd)
{
	uint64_t one = 1;

	(void)!write(efd, &one, sizeof(one));
}

/* What cgroup.events says when the job's action is done. */
static void wanted(enum action_kind k, const char **key, char *want)
{
	*key = k == ACTION_KILL ? "populated" : "frozen";
	*want = k == ACTION_KILL ? '0' : k == ACTION_THAW ? '0' : '1';
}

/* The thread is done with job i: hand it to the loop. */
static void finish(struct killer *k, int i, int confirm)
{
	if (k->events_fd[i] >= 0)
		close(k->events_fd[i]);
	k->events_fd[i] = -1;
	k->jobs[i].confirm = confirm;
	k->jobs[i].confirmed = time_mono_ns();
	pthread_mutex_lock(&k->lock);
	k->state[i] = SLOT_DONE;
	pthread_mutex_unlock(&k->lock);
	poke(k->done_efd);
}

/* Checks whether job i is confirmed; finishes it if it is, or if it is out of time. */
static void check(struct killer *k, int i, uint64_t now)
{
	const char *key;
	char want;
	int r;

	wanted(k->jobs[i].kind, &key, &want);
	r = cgroup_events_has(k->events_fd[i], key, want);
	if (r == 1)
		finish(k, i, 0);
	else if (r < 0)
		finish(k, i, r);
	else if (now >= k->deadline[i])
		finish(k, i, -ETIMEDOUT);
}

/* The write first, then the cgroup.events to watch for its confirm. */
static void begin(struct killer *k, int i)
{
	struct killer_job *j = &k->jobs[i];

	if (action_act(&j->sb, j->kind, &j->done) < 0) {
		finish(k, i, 0);
		return;
	}
	if ((k->events_fd[i] = cgroup_events_open(j->sb.cgroup)) < 0) {
		int r = k->events_fd[i];

		k->events_fd[i] = -1;
		finish(k, i, r);
		return;
	}
	k->deadline[i] = j->done.t1 + KILLER_CONFIRM_NS;
	check(k, i, time_mono_ns());
}

/* Takes up to KILLER_BATCH queued jobs; says whether more are left (and whether to stop). */
static int take(struct killer *k, int *taken, int *n, int *stop)
{
	int more = 0;

	*n = 0;
	pthread_mutex_lock(&k->lock);
	for (int i = 0; i < KILLER_JOBS_MAX; i++) {
		if (k->state[i] != SLOT_QUEUED)
			continue;
		if (*n == KILLER_BATCH) {
			more = 1;
			break;
		}
		k->state[i] = SLOT_ACTIVE;
		taken[(*n)++] = i;
	}
	*stop = k->stop;
	pthread_mutex_unlock(&k->lock);
	return more;
}

static void *killer_main(void *arg)
{
	struct killer *k = arg;
	struct sched_param sp = { .sched_priority = KILLER_RT_PRIORITY };
	struct pollfd pfd[1 + KILLER_JOBS_MAX];
	int slot_of[1 + KILLER_JOBS_MAX];

	k->rt_errno = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	poke(k->done_efd); /* killer_start waits for this */
	for (;;) {
		uint64_t now = time_mono_ns(), next = UINT64_MAX, v;
		int taken[KILLER_BATCH], n, np = 1, stop, active = 0;

		pfd[0] = (struct pollfd){ .fd = k->req_efd, .events = POLLIN };
		for (int i = 0; i < KILLER_JOBS_MAX; i++) {
			if (k->events_fd[i] < 0)
				continue;
			pfd[np] = (struct pollfd){ .fd = k->events_fd[i], .events = POLLPRI };
			slot_of[np++] = i;
			if (k->deadline[i] < next)
				next = k->deadline[i];
		}
		/* Blocks between wake-ups: nothing here spins, at any priority. */
		if (poll(pfd, (nfds_t)np,
			 next == UINT64_MAX ? -1
			 : next <= now	    ? 0
					    : (int)((next - now) / NSEC_PER_MSEC) + 1) < 0 &&
		    errno != EINTR)
			continue;
		if (pfd[0].revents & POLLIN)
			(void)!read(k->req_efd, &v, sizeof(v));
		/* Bounded work per wake-up: KILLER_BATCH writes, one pread per watched cgroup. */
		if (take(k, taken, &n, &stop))
			poke(k->req_efd); /* the rest at the next wake-up */
		for (int t = 0; t < n; t++)
			begin(k, taken[t]);
		now = time_mono_ns();
		for (int p = 1; p < np; p++)
			if (k->events_fd[slot_of[p]] >= 0 &&
			    ((pfd[p].revents & (POLLPRI | POLLERR)) ||
			     now >= k->deadline[slot_of[p]]))
				check(k, slot_of[p], now);
		for (int i = 0; i < KILLER_JOBS_MAX; i++)
			active += k->events_fd[i] >= 0;
		if (stop && active == 0 && n == 0)
			break;
	}
	return NULL;
}

/* Completions, on the loop: each job recorded as action_finish would have. */
static void on_done(struct loop *l, int fd, uint32_t events, void *data)
{
	struct daemon *d = data;
	struct killer *k = d->killer;
	uint64_t v;

	(void)l;
	(void)events;
	(void)!read(fd, &v, sizeof(v));
	for (int i = 0; i < KILLER_JOBS_MAX; i++) {
		struct killer_job j;
		struct store_sandbox *sb;

		pthread_mutex_lock(&k->lock);
		if (k->state[i] != SLOT_DONE) {
			pthread_mutex_unlock(&k->lock);
			continue;
		}
		j = k->jobs[i];
		k->state[i] = SLOT_FREE;
		pthread_mutex_unlock(&k->lock);
		struct action_request rq = { .kind = j.kind,
					     .requested_by = j.requested_by,
					     .reason = j.reason[0] ? j.reason : NULL,
					     .trigger_ts = j.trigger_ts,
					     .detection_id = j.detection_id,
					     .incident_id = j.incident_id };
		/* The loop's own sandbox if it is still the same one; else the job's copy. */
		sb = registry_find(d->registry, j.sb.name);
		if (!sb || sb->id != j.sb.id)
			sb = &j.sb;
		k->failed += j.done.r < 0;
		k->confirmed += j.done.r == 0 && j.confirm == 0;
		k->unconfirmed += j.done.r == 0 && j.confirm != 0;
		action_conclude(d, sb, &rq, &j.done, j.queued, j.confirm, NULL);
	}
}

int killer_start(struct daemon *d)
{
	struct killer *k = calloc(1, sizeof(*k));
	uint64_t v;
	int r;

	if (!k)
		return -ENOMEM;
	k->req_efd = k->done_efd = -1;
	pthread_mutex_init(&k->lock, NULL);
	for (int i = 0; i < KILLER_JOBS_MAX; i++)
		k->events_fd[i] = -1;
	d->killer = k;
	/* The layout is read once, here: the thread then only writes and reads cgroup files. */
	if ((r = cgroup_layout(NULL)) < 0)
		return r;
	k->req_efd = eventfd(0, EFD_CLOEXEC);
	k->done_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (k->req_efd < 0 || k->done_efd < 0)
		return -errno;
	if ((r = -pthread_create(&k->thread, NULL, killer_main, k)) < 0)
		return r;
	k->started = 1;
	/* Its first word: whether it runs at real-time priority. */
	for (struct pollfd p = { .fd = k->done_efd, .events = POLLIN }; poll(&p, 1, -1) < 0;)
		;
	(void)!read(k->done_efd, &v, sizeof(v));
	k->realtime = k->rt_errno == 0;
	if (k->rt_errno)
		log_warn("the kill path's thread runs at normal priority: SCHED_FIFO refused (%s); "
			 "a kill may wait behind the sandbox's own processes",
			 strerror(k->rt_errno));
	if ((r = loop_add(d->loop, k->done_efd, EPOLLIN, on_done, d)) < 0 ||
	    (r = counters_add(d->counters, "killer", killer_counters, ARRAY_SIZE(killer_counters),
			      k)) < 0)
		return r;
	return 0;
}

int killer_submit(struct daemon *d, const struct store_sandbox *sb, const struct action_request *rq)
{
	struct killer *k = d->killer;
	int slot = -1;

	if (!k || !k->started) {
		if (k)
			k->busy++;
		return -EBUSY;
	}
	pthread_mutex_lock(&k->lock);
	for (int i = 0; i < KILLER_JOBS_MAX && slot < 0 && !k->stop; i++)
		if (k->state[i] == SLOT_FREE)
			slot = i;
	if (slot >= 0) {
		struct killer_job *j = &k->jobs[slot];

		memset(j, 0, sizeof(*j));
		j->sb = *sb;
		j->kind = rq->kind;
		strscpy(j->requested_by, sizeof(j->requested_by), rq->requested_by);
		if (rq->reason)
			strscpy(j->reason, sizeof(j->reason), rq->reason);
		j->trigger_ts = rq->trigger_ts;
		j->detection_id = rq->detection_id;
		j->incident_id = rq->incident_id;
		j->queued = time_mono_ns();
		k->state[slot] = SLOT_QUEUED;
	}
	pthread_mutex_unlock(&k->lock);
	if (slot < 0) {
		k->busy++;
		return -EBUSY;
	}
	k->submitted++;
	poke(k->req_efd);
	return 0;
}

int killer_in_flight(struct daemon *d, int64_t sandbox_id)
{
	struct killer *k = d->killer;
	int kind = -1;

	if (!k)
		return -1;
	pthread_mutex_lock(&k->lock);
	for (int i = 0; i < KILLER_JOBS_MAX; i++)
		if (k->state[i] != SLOT_FREE && k->jobs[i].sb.id == sandbox_id &&
		    (kind < 0 || k->jobs[i].kind == ACTION_KILL))
			kind = (int)k->jobs[i].kind;
	pthread_mutex_unlock(&k->lock);
	return kind;
}

void killer_stop(struct daemon *d)
{
	struct killer *k = d->killer;

	if (!k)
		return;
	if (k->started) {
		pthread_mutex_lock(&k->lock);
		k->stop = 1;
		pthread_mutex_unlock(&k->lock);
		poke(k->req_efd);
		pthread_join(k->thread, NULL);
		k->started = 0;
		on_done(d->loop, k->done_efd, EPOLLIN, d); /* record what it finished last */
		loop_remove(d->loop, k->done_efd);
	}
	counters_remove(d->counters, k);
	if (k->req_efd >= 0)
		close(k->req_efd);
	if (k->done_efd >= 0)
		close(k->done_efd);
	pthread_mutex_destroy(&k->lock);
	free(k);
	d->killer = NULL;
}
