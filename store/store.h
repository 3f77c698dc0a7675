/*
 * The SQLite store. One writer (firebreakd's writer thread) opens it read-write, which applies the
 * migrations from schema/; every reader (the CLI, the HTTP child, replay) opens it read-only.
 * Functions return 0 (or a count) on success and -errno on failure; SQLite's message is logged
 * once, here.
 */
#ifndef FB_STORE_H
#define FB_STORE_H

#include <stdint.h>

#include "bounds.h"
#include "event.h"
#include "trace.h"

struct store;

enum store_mode {
	STORE_READ_ONLY,  /* refuses a database of another schema version */
	STORE_READ_WRITE, /* creates the file, upgrades an older schema, refuses a newer one */
};

/* The schema version this build writes. */
int store_latest_version(void);

/*
 * Opens path. Returns 0 and *ret, or -ENOENT (read-only, no file), -EPROTO (a newer schema, or an
 * older one opened read-only; the log says which), -EBADMSG (not a firebreak database), -errno.
 */
int store_open(const char *path, enum store_mode mode, struct store **ret);

/* Opens read-write but migrates only up to version (tests of the upgrade path). */
int store_open_at_version(const char *path, int version, struct store **ret);

/* Closes the store and finalises its statements; accepts NULL. */
void store_close(struct store *s);

/* The schema version of the open database. */
int store_version(struct store *s);

/* Whether every commit is fsynced (synchronous=FULL, the default) or only ordered (NORMAL). */
int store_set_synchronous_full(struct store *s, int full);

/* Gives back the page cache's unused memory (after a backlog: it refills as it is needed). */
void store_release_memory(struct store *s);

/* Sets SQLite's page cache size in KiB. */
int store_set_cache_kib(struct store *s, int kib);

int store_begin(struct store *s);
int store_commit(struct store *s);
int store_rollback(struct store *s);

/* Appends ev (ev->sandbox_id resolved, or 0 for none); sets ev->id. */
int store_event_insert(struct store *s, struct event *ev);

/* Appends n events in order, several per statement; sets each id. 0 or -errno (then some of
 * them may be in the open transaction: roll it back). */
int store_events_insert(struct store *s, struct event *const *evs, size_t n);

enum store_trace_result {
	STORE_TRACE_NEW,       /* the phase was new: the step row was updated and ev appended */
	STORE_TRACE_DUPLICATE, /* this phase of this call id was already stored: nothing written */
	STORE_TRACE_CONFLICT,  /* the call id is stored with another step number or tool */
};

/* Applies one trace phase to the steps table and, if new, appends ev. Returns a result or -errno.
 */
int store_trace_apply(struct store *s, const struct trace_record *rec, struct event *ev);

struct store_sandbox {
	int64_t id;
	char name[FB_NAME_MAX + 1];
	char state[16];
	int64_t created_ts;
	int64_t updated_ts;
	char policy_hash[72];
	char cgroup[256];
	/* Filled by store_sandbox_list only: */
	int64_t steps;
	int64_t last_ts;
};

/* Inserts or updates a sandbox by id (state, updated_ts, policy_hash, cgroup). */
int store_sandbox_put(struct store *s, const struct store_sandbox *sb);

/* Calls cb for each sandbox in id order; stops and returns cb's value if it is non-zero. */
int store_sandbox_list(struct store *s, int (*cb)(const struct store_sandbox *sb, void *data),
		       void *data);

/* Looks a sandbox up by name into *ret; -ENOENT if there is none. */
int store_sandbox_find(struct store *s, const char *name, struct store_sandbox *ret);

/* The largest sandbox id in the store (0 if none). */
int store_sandbox_max_id(struct store *s, int64_t *ret);

struct store_timeline_query {
	int64_t sandbox_id;
	int64_t since;	 /* ns since the epoch, inclusive; 0 = from the beginning */
	int64_t until;	 /* exclusive; 0 = no end */
	int64_t step_lo; /* inclusive; EVENT_STEP_NONE = any step */
	int64_t step_hi; /* inclusive */
	int64_t limit;	 /* 0 = all */
	/* A cursor: only events after (after_ts, after_id) in (ts, id) order; after_id 0 = none. */
	int64_t after_ts, after_id;
};

/*
 * Calls cb with each matching event in (ts, id) order; ev (and its fields) is valid during the
 * call only. The monitor's bookkeeping for replay (detectors.start, detectors.stop) is left
 * out. Stops and returns cb's value if it is non-zero; otherwise returns 0 or -errno.
 */
int store_timeline(struct store *s, const struct store_timeline_query *q,
		   int (*cb)(const struct event *ev, void *data), void *data);

/* Calls cb with each event whose id is above after_id, in id order, at most limit; as timeline. */
int store_events_after(struct store *s, int64_t after_id, int64_t limit,
		       int (*cb)(const struct event *ev, void *data), void *data);

/*
 * Calls cb with each event of the sandbox in id order (the order the monitor saw them), only those
 * whose kind starts with kind_prefix if not NULL; stops at cb's non-zero value; as timeline.
 */
int store_sandbox_events(struct store *s, int64_t sandbox_id, const char *kind_prefix,
			 int (*cb)(const struct event *ev, void *data), void *data);

/* Calls cb with the latest event of kind of the sandbox's own (no step), if any; as timeline. */
int store_event_latest(struct store *s, int64_t sandbox_id, const char *kind,
		       int (*cb)(const struct event *ev, void *data), void *data);

/* One verdict as stored (the detections table). */
struct store_detection_row {
	int64_t id, ts, step; /* step: EVENT_STEP_NONE if none */
	char rule[64], severity[16], policy_hash[80];
	const char *event_ids; /* JSON array text, valid during the callback */
	const char *reason;
};

/* Calls cb with each detection of incident_id, oldest first; stops at cb's non-zero value. */
int store_incident_detections(struct store *s, int64_t incident_id,
			      int (*cb)(const struct store_detection_row *det, void *data),
			      void *data);

/* A tool call as the steps table has it (the harness's trace, joined). */
struct store_step {
	int64_t step;
	char call_id[FB_CALL_ID_MAX + 1];
	char tool[FB_TOOL_MAX + 1];
	int64_t start_ts, end_ts; /* 0: not reported */
	int64_t exit_code;	  /* INT64_MIN: none */
	char error_type[FB_ERROR_TYPE_MAX + 1];
	int coerced;
	char traceparent[64]; /* W3C, "" if the harness sent none */
};

/*
 * Calls cb with the sandbox's steps that overlap [since, until) (until 0: no end), by step; stops
 * at cb's non-zero value. 0 or -errno.
 */
int store_steps(struct store *s, int64_t sandbox_id, int64_t since, int64_t until,
		int (*cb)(const struct store_step *st, void *data), void *data);

/* Counts the events of a sandbox (0 = all sandboxes). */
int store_event_count(struct store *s, int64_t sandbox_id, int64_t *ret);

/* One freeze, thaw, kill or quarantine (the actions table). */
struct store_action {
	int64_t ts; /* ns since the epoch, when it was done */
	int64_t sandbox_id;
	char kind[16];	       /* freeze, thaw, kill, quarantine */
	char requested_by[64]; /* a rule id, "cli", "http", "watchdog" */
	int64_t detection_id;  /* 0: none */
	int64_t incident_id;   /* 0: none */
	int64_t latency_ns;    /* from the triggering event (or the request) to done; -1: unknown */
	char result[64];       /* "ok", "unconfirmed", or what failed */
	char reason[256];
};

/* Inserts an action; sets *ret_id (may be NULL). */
int store_action_insert(struct store *s, const struct store_action *a, int64_t *ret_id);

/* One verdict (the detections table); its id is given by the caller (firebreakd). */
struct store_detection {
	int64_t id;
	int64_t ts;
	int64_t sandbox_id;
	int64_t step; /* EVENT_STEP_NONE: none */
	char rule[48];
	char severity[16];
	char policy_hash[72];
	int64_t incident_id; /* 0: none */
	char event_ids[200]; /* JSON array of the triggering events' ids */
	char reason[256];
};

/*
 * Stores a verdict; with incident_id, first opens that incident (create: id, start_ts, severity)
 * or raises its severity and links the triggering events to it. One call, in the caller's
 * transaction.
 */
int store_detection_insert(struct store *s, const struct store_detection *det, int create_incident);

/*
 * Calls cb with each step of sandbox sandbox_id that the enforcer started (step.start) and did
 * not end (no step.end): its step, tool and the start's fields (JSON text). Stops at cb's non-zero.
 */
int store_open_steps(struct store *s, int64_t sandbox_id,
		     int (*cb)(int64_t step, const char *tool, const char *fields, void *data),
		     void *data);

/* Keeps a policy's text under its hash (the first text given for a hash stays). */
int store_policy_put(struct store *s, const char *hash, const char *name, const char *text,
		     int64_t ts);

/* The text kept under hash, in *ret (free it); -ENOENT if none. */
int store_policy_get(struct store *s, const char *hash, char **ret);

/*
 * Where a follower of a file is (schema 004): the file's inode, the offset of the next line not
 * stored, and how many lines of that inode are stored. Written in the transaction of the events
 * of the lines it covers (writer_op.cursor), so it never runs ahead of them or lags behind.
 */
struct store_cursor {
	int64_t sandbox_id;
	char source[32];
	uint64_t inode;
	int64_t offset;
	int64_t lines;
	int64_t updated_ts;
};

/* Inserts or replaces the cursor of (sandbox_id, source). 0 or -errno. */
int store_cursor_put(struct store *s, const struct store_cursor *c);

/* The cursor of (sandbox_id, source) into *ret; -ENOENT if there is none. */
int store_cursor_get(struct store *s, int64_t sandbox_id, const char *source,
		     struct store_cursor *ret);

/* Closes incident id at end_ts (its sandbox is gone); a closed one stays as it was. */
int store_incident_close(struct store *s, int64_t id, int64_t end_ts);

/* The largest id of table "events", "detections" or "incidents" (0 if none). */
int store_max_id(struct store *s, const char *table, int64_t *ret);

/* An incident as listed (store_incident_list). */
struct store_incident {
	int64_t id;
	int64_t sandbox_id;
	char sandbox[FB_NAME_MAX + 1];
	int64_t opened_ts, start_ts, end_ts; /* end_ts 0 while open */
	char severity[16];
	char state[16];
	char summary[256]; /* the verdict that opened it */
	int64_t detections;
};

/* Calls cb for incident id (0: every incident, newest first); stops at cb's non-zero value. */
int store_incident_list(struct store *s, int64_t id,
			int (*cb)(const struct store_incident *inc, void *data), void *data);

/* Records an incident window; its events are then kept by retention. Sets *ret_id. */
int store_incident_insert(struct store *s, int64_t sandbox_id, int64_t start_ts, int64_t end_ts,
			  const char *severity, const char *summary, int64_t *ret_id);

/* Links an event to an incident explicitly (kept by retention wherever it lies). */
int store_incident_link_event(struct store *s, int64_t incident_id, int64_t event_id);

struct store_retention {
	int64_t max_age_ns; /* raw events older than this go; 0 = no age cap */
	uint64_t max_bytes; /* then the oldest go until the live data fits; 0 = no size cap */
	int64_t now_ns;
	int64_t chunk; /* rows deleted per statement (bounds the time of each) */
};

/*
 * Deletes raw events past the caps, oldest first, never one inside an incident's window or linked
 * to an incident, in chunks of q->chunk rows, each in its own transaction. Returns the number of
 * events deleted, or -errno. Not to be called inside a transaction.
 */
int64_t store_retention_run(struct store *s, const struct store_retention *q);

/* The bytes the live data occupies (pages in use, free pages excluded). */
int store_size(struct store *s, uint64_t *ret_bytes);

#endif
