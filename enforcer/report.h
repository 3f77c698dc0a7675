/*
 * The enforcer's channel to firebreakd: the control socket, with requests pipelined (sent without
 * waiting) and their acknowledgements checked together, so recording a step costs the tool call
 * no round trip before it runs.
 */
#ifndef FB_REPORT_H
#define FB_REPORT_H

#include "config.h"
#include "event.h"

struct report;

/* Connects to the monitor's control socket; 0, or -errno (no monitor answers). */
int report_open(const struct config *cfg, struct report **ret);

/* Closes the connection (unread acknowledgements are dropped); accepts NULL. */
void report_close(struct report *rp);

/* Queues a registration of the sandbox (state: running, destroyed, ...). */
int report_register(struct report *rp, const char *name, const char *state, const char *cgroup,
		    const char *policy_hash);

/* Queues one event (source enforcer). */
int report_event(struct report *rp, const struct event *ev);

/*
 * Queues a request that the step's execs be confined in the kernel to what its tool may run (a
 * tool with "children"); answered at once, without a store write: wait for it before the tool
 * starts.
 */
int report_exec_scope(struct report *rp, const char *name, int64_t step, const char *tool,
		      uint64_t cgid, const char *program);

/*
 * Waits for every queued request's acknowledgement, at most 10 s from the call: 0, -EPROTO (a
 * refusal, printed) or -ETIMEDOUT (no answer in time: the monitor is hung; printed).
 */
int report_wait(struct report *rp);

/*
 * For a caller that waits for acknowledgements in its own loop (the exec launcher): cb(data, seq,
 * ok) is called for each acknowledgement taken, whoever takes it (report_wait too); seq is the
 * request's number on this connection, report_sent() right after it was queued.
 */
void report_on_ack(struct report *rp, void (*cb)(void *data, uint64_t seq, int ok), void *data);
uint64_t report_sent(const struct report *rp);
unsigned report_pending(const struct report *rp);
int report_fd(const struct report *rp);

/* Takes the acknowledgements the socket holds, without waiting: 0, -EPROTO (a refusal, printed),
 * or -errno (the connection is gone). */
int report_take_acks(struct report *rp);

/*
 * Whether rp's connection still stands, checked between records with every reply read (the exec
 * launcher keeps one open across calls, and the monitor may have restarted since): 1 or 0.
 */
int report_alive(struct report *rp);

#endif
