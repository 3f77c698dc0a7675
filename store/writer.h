/*
 * The batched store writer. The event loop hands it operations (events through the sink,
 * store/sink.h, which gives them their ids); a thread of its own applies them with prepared
 * statements, one transaction per batch (group commit: while one batch commits, the next
 * accumulates), and hands back a completion per operation that asked for one. The loop thus
 * never waits on SQLite or fsync, and a completion means the operation is durable. The writer
 * only writes: it knows nothing of who looks at the events.
 */
#ifndef FB_WRITER_H
#define FB_WRITER_H

#include <stdint.h>

#include "event.h"
#include "store.h"
#include "trace.h"

struct writer;

enum writer_op_type {
	WRITER_OP_EVENT,   /* append ev */
	WRITER_OP_TRACE,   /* apply trace (owned) and, if new, append ev */
	WRITER_OP_SANDBOX, /* put sandbox (owned) */
	WRITER_OP_REPLY,   /* nothing to write: carries msg back in order with the rest */
	WRITER_OP_ACTION,  /* insert action (owned) and append ev, its event */
	WRITER_OP_VERDICT, /* insert detection (owned; and open or raise its incident), append ev */
	WRITER_OP_INCIDENT_CLOSE, /* close incident_id at ev's time, append ev */
	WRITER_OP_POLICY,	  /* keep policy (owned): its text under its hash */
	WRITER_OP_CURSOR,	  /* put cursor (owned) alone: a file restarted, nothing to store */
};

/* A policy's text for the store (WRITER_OP_POLICY). */
struct writer_policy {
	char hash[72];
	char name[64];
	char *text; /* owned */
	int64_t ts;
};

struct writer_op {
	enum writer_op_type type;
	uint64_t token; /* who hears of the completion; 0 = nobody */
	struct event ev;
	struct trace_record *trace;
	struct store_sandbox *sandbox;
	struct store_action *action;
	struct store_detection *detection;
	int create_incident; /* WRITER_OP_VERDICT: the detection opens its incident */
	int64_t incident_id; /* WRITER_OP_INCIDENT_CLOSE */
	struct writer_policy *policy;
	/*
	 * Any op: also put this cursor (owned), in the same transaction as what the op writes, and
	 * only if that worked: a follower's position moves with the events of its lines.
	 */
	struct store_cursor *cursor;
	char *msg; /* owned; returned in the completion */
};

struct writer_completion {
	uint64_t token;
	int result; /* the store's result (>= 0) or -errno */
	char *msg;  /* owned by the receiver: the op's msg, or an error text */
};

struct writer_stats {
	uint64_t ops;	      /* applied and committed */
	uint64_t events;      /* events appended */
	uint64_t batches;     /* transactions committed */
	uint64_t failed_ops;  /* in a batch whose commit failed: not durable, completed with -EIO */
	uint64_t lost_events; /* events among failed_ops, lost at the store stage */
	uint64_t max_batch;
	uint64_t retention_deleted;
	uint64_t pending;	/* queued now */
	uint64_t pending_bytes; /* what the queued and in-flight ops hold (writer_op_bytes) */
	uint64_t full;	  /* times the queue reached a bound and producers were told to pause */
	uint64_t trims;	  /* times the heap was given back to the kernel after a backlog */
	uint64_t busy_ns; /* time spent applying and committing batches */
};

struct writer_config {
	unsigned batch_max;	  /* ops per transaction */
	uint64_t queue_max;	  /* writer_full() beyond this many ops */
	uint64_t queue_max_bytes; /* or beyond this much memory held by them (0: no bound) */
	struct store_retention retention; /* now_ns is filled in at each run */
	uint64_t retention_interval_ns;	  /* 0: no retention */
};

/*
 * Starts the writer thread on store s (which it owns from now on, closing it in writer_free).
 * Returns 0 and *ret, or -errno.
 */
int writer_new(struct store *s, const struct writer_config *cfg, struct writer **ret);

/* An fd that becomes readable when completions are waiting (for the event loop). */
int writer_fd(struct writer *w);

/*
 * Queues op, moving its contents (op is left empty); an op that appends an event must carry its
 * id (the sink's). Never blocks on the store. Returns 0, or -ESHUTDOWN once writer_stop() has
 * been called (op is then cleared).
 */
int writer_submit(struct writer *w, struct writer_op *op);

/* Whether op appends an event (and so needs an id). */
int writer_op_has_event(const struct writer_op *op);

/* The largest event id the store held when the writer took it (ids go on after it). */
int64_t writer_max_event_id(const struct writer *w);

/*
 * Starts op as an event of sandbox sb, the one way every collector fills the common fields:
 * time, sandbox id and name, step (EVENT_STEP_NONE: none) and tool (NULL: none), source, kind.
 */
void writer_event_init(struct writer_op *op, const struct store_sandbox *sb, int64_t ts,
		       int64_t step, const char *tool, enum event_source source, const char *kind);

/* Sets op's fields from f (taking the reference; NULL: none). 0, or -ENOMEM (op is cleared). */
int writer_op_set_fields(struct writer_op *op, json_t *f);

/*
 * Whether queue_max or more operations are waiting, or they and those being written hold
 * queue_max_bytes or more: producers should pause.
 */
int writer_full(struct writer *w);

/* Calls fn for each waiting completion, in submission order; fn takes ownership of c->msg. */
void writer_dispatch(struct writer *w, void (*fn)(const struct writer_completion *c, void *data),
		     void *data);

/* A snapshot of the counters. */
void writer_get_stats(struct writer *w, struct writer_stats *ret);

/* Stops taking ops, applies every queued op, and joins the thread. Idempotent. */
void writer_stop(struct writer *w);

/* Stops the writer if needed, frees it and closes the store; accepts NULL. */
void writer_free(struct writer *w);

/* The memory op holds while it waits: itself and what it owns, as queue_max_bytes counts it. */
size_t writer_op_bytes(const struct writer_op *op);

/* Frees what op owns (after a failed submit, or an op never submitted). */
void writer_op_clear(struct writer_op *op);

#endif
