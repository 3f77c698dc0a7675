/*
 * The kill path at real-time priority: one thread, SCHED_FIFO, that does a verdict's freeze or
 * kill (the cgroup write) and waits for cgroup.events to confirm it, so that neither the write
 * nor the wake-up on "populated 0" waits behind the busy processes of the very sandbox it stops.
 * Its work per wake-up is bounded (KILLER_BATCH requests, one pread per watched cgroup), it
 * blocks in poll between, and it touches no store, log or allocator: the loop records what it did
 * (action_conclude) when the completion comes back on an eventfd. Without CAP_SYS_NICE it runs at
 * normal priority, counted and said once.
 */
#ifndef FB_KILLER_H
#define FB_KILLER_H

#include <stdint.h>

#include "actions.h"
#include "store/store.h"

/* Jobs in flight at once (queued or waiting for their confirm); past it the loop acts itself. */
#define KILLER_JOBS_MAX 64
/* Requests one wake-up of the thread takes at most. */
#define KILLER_BATCH 8
/* The thread's SCHED_FIFO priority: above every normal task, below the kernel's own threads
 * that run at 50 (irq threads) so it never holds up an interrupt. */
#define KILLER_RT_PRIORITY 20

struct daemon;
struct killer;

/* One action for the thread, and what it did. */
struct killer_job {
	/* asked */
	struct store_sandbox sb; /* a copy: the loop's may be gone by the time the job is done */
	enum action_kind kind;
	char requested_by[64];
	char reason[256];
	int64_t trigger_ts, detection_id, incident_id;
	uint64_t queued; /* monotonic ns, when the loop handed it over */
	/* done */
	struct action_done done; /* the write: its result, when it started and ended */
	int confirm;		 /* 0 confirmed, -ETIMEDOUT, or -errno */
	uint64_t confirmed;	 /* monotonic ns, when it was confirmed or given up */
};

/* Starts the thread (real-time where the kernel lets it) and registers its counters. 0 or
 * -errno. */
int killer_start(struct daemon *d);

/*
 * Hands an action on sb to the thread. 0, or -EBUSY when KILLER_JOBS_MAX are in flight or the
 * thread is gone (the caller then acts itself; counted).
 */
int killer_submit(struct daemon *d, const struct store_sandbox *sb,
		  const struct action_request *rq);

/* The kind of action in flight on sandbox id (a kill, if one is), or -1: the loop sends none
 * twice, and holds no kill back behind a freeze. */
int killer_in_flight(struct daemon *d, int64_t sandbox_id);

/* Waits for what is in flight, records it, and stops the thread. */
void killer_stop(struct daemon *d);

#endif
