/*
 * The sink: the one place every event enters on its way to the store, from every collector,
 * protocol and stage alike. It gives the event its id (in submission order, after the largest
 * the store has, so an id is known before the store has the event), shows the event to the
 * stage that judges events (the detectors and the metrics, set by the monitor), then queues it
 * for the writer. What the stage decides (verdicts, actions, their incidents) comes back in
 * through the same sink: data flows one way, and the writer behind it only writes.
 * Loop thread only.
 */
#ifndef FB_SINK_H
#define FB_SINK_H

#include <jansson.h>
#include <stdint.h>

#include "writer.h"

struct sink;

/* A sink in front of writer w (borrowed); 0 and *ret, or -ENOMEM. */
int sink_new(struct writer *w, struct sink **ret);

/* Frees it (not the writer); accepts NULL. */
void sink_free(struct sink *s);

/*
 * The stage, on the submitting thread: observe(ev) sees every event before its op is queued (ev
 * is complete, its id given) and, if it returned non-zero, after(data) runs once the op is
 * queued (after may submit ops of its own; those are observed too, but never trigger after
 * again while it runs). observe NULL: no stage.
 */
void sink_set_stage(struct sink *s, int (*observe)(const struct event *ev, void *data),
		    void (*after)(void *data), void *data);

/*
 * Gives an event op its id, shows it to the stage, and queues it (any other op is queued as it
 * is, in the same order). Returns writer_submit's result (op is moved or cleared).
 */
int sink_submit(struct sink *s, struct writer_op *op);

/* Sets op's fields from f (taking the reference; NULL: none) and submits it; 0 or -errno. */
int sink_submit_event(struct sink *s, struct writer_op *op, json_t *f);

/* Stops the writer (it applies everything queued first); nothing submitted later is judged. */
void sink_stop(struct sink *s);

/* Whether the writer's queue is full: producers should pause. */
int sink_full(struct sink *s);

/* The id the event of the op last submitted got (call it right after, on the same thread). */
int64_t sink_last_event_id(const struct sink *s);

#endif
