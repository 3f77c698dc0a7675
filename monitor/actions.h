/*
 * The kill switch: freeze, thaw and kill a sandbox's cgroup (an enforcer's or an adopted one).
 * The cgroup is acted on first, with nothing before it but a path lookup: no SQLite, no logging,
 * no allocation. Then the action is confirmed from cgroup.events, its latency measured, and it is
 * recorded (an "action.KIND" event and a row of the actions table, in one store operation).
 */
#ifndef FB_ACTIONS_H
#define FB_ACTIONS_H

#include <jansson.h>
#include <stdint.h>

struct daemon;
struct store_sandbox;

enum action_kind {
	ACTION_FREEZE,
	ACTION_THAW,
	ACTION_KILL,
	ACTION_QUARANTINE, /* freeze, and take the sandbox's link at the gate down */
	_ACTION_MAX
};

struct action_request {
	enum action_kind kind;
	const char *requested_by; /* "cli", a rule id, "watchdog" */
	const char *reason;	  /* NULL: none */
	int64_t trigger_ts;   /* wall ns of the event that triggered it; 0: the request itself */
	int64_t detection_id; /* 0: none */
	int64_t incident_id;  /* 0: none */
};

/* "freeze", "thaw", "kill", "quarantine". */
const char *action_kind_name(enum action_kind k);

/* What action_act did: its result and when it started and ended (monotonic ns). */
struct action_done {
	int r;
	uint64_t t0, t1;
};

/*
 * The kill path: acts on sb's cgroup (the write, nothing else before it) and says how it went.
 * action_finish then confirms and records. 0 or -errno.
 */
int action_act(const struct store_sandbox *sb, enum action_kind kind, struct action_done *done);

/*
 * Confirms what action_act did, sets sb's state, records it (an action.KIND event and an actions
 * row, in one store operation). With ret_record, *ret_record is the record's fields (a new
 * reference: a reply is made of them). Returns as action_apply.
 */
int action_finish(struct daemon *d, struct store_sandbox *sb, const struct action_request *rq,
		  const struct action_done *done, json_t **ret_record);

/*
 * Records what action_act did once it is confirmed (c: 0, -ETIMEDOUT, -errno) elsewhere (the
 * killer thread): the quarantine's gate link, sb's state, the record, the log line. queued is
 * when the action was asked for (monotonic ns; done->t0 if at once). Returns as action_apply.
 */
int action_conclude(struct daemon *d, struct store_sandbox *sb, const struct action_request *rq,
		    const struct action_done *done, uint64_t queued, int c, json_t **ret_record);

/*
 * Acts on sb's cgroup, confirms, records (ret_record as above). Returns 0 (done and confirmed),
 * -ETIMEDOUT (done, not confirmed within a second), or -errno (not done; recorded as failed all
 * the same).
 */
int action_apply(struct daemon *d, struct store_sandbox *sb, const struct action_request *rq,
		 json_t **ret_record);

/*
 * Records an action done at done_ts (wall ns) that waited queue_ns for the killer thread, took
 * act_ns to do and confirm_ns to confirm, with its result ("ok", "unconfirmed", "failed: ..."):
 * an action.KIND event and an actions row, in one store operation (ret_record as above).
 */
void action_record(struct daemon *d, const struct store_sandbox *sb,
		   const struct action_request *rq, int64_t done_ts, int64_t queue_ns,
		   int64_t act_ns, int64_t confirm_ns, const char *result, json_t **ret_record);

/* The action named name ("freeze", ...), or -EINVAL. */
int action_kind_from_name(const char *name);

#endif
