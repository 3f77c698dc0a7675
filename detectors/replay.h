/*
 * Replay (docs/replay.md): a sandbox's recorded events fed again, in the order the monitor saw
 * them, through the very detectors it ran (detectors/, in this library), under the recorded
 * policy or another. Reads a store or a bundle; touches nothing live.
 *
 * The monitor marks where each detector state began (a "detectors.start" event: the first event
 * it was fed and the policy's hash) and ended ("detectors.stop": the last event fed): replay
 * starts a fresh state at the same events and feeds exactly the events the live one was fed.
 */
#ifndef FB_REPLAY_H
#define FB_REPLAY_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "detect.h"
#include "store/store.h"

struct policy;

/* A verdict, recorded (its "verdict" event) or replayed. */
struct replay_verdict {
	int64_t at_id; /* recorded: the verdict event's id; replayed: the event that fired it */
	int64_t ts;    /* the triggering event's */
	int64_t step;  /* EVENT_STEP_NONE if none */
	char rule[48];
	char severity[16];
	char action[48]; /* replayed: what the policy says (kill...); recorded: what was done */
	char reason[256];
	int64_t event_ids[DETECT_IDS_MAX];
	size_t n_ids;
};

struct replay_result {
	struct replay_verdict *recorded, *replayed;
	size_t n_recorded, n_replayed;
	uint64_t events, fed; /* the sandbox's events; those fed to the detectors */
	unsigned epochs;      /* detector states (monitor restarts start new ones) */
	char policy[80];      /* the policy judged by: its hash, or "FILE" given, or "" for none */
	int missing_policy;   /* a recorded policy was not in the store or bundle */
};

struct replay_opts {
	const struct policy *policy; /* NULL: the recorded ones */
	/* Called for each event in order with the verdicts it produced (NULL: none); non-zero
	 * stops the replay. For printing and pacing. */
	int (*on_event)(const struct event *ev, const struct replay_verdict *v, size_t n,
			void *data);
	void *data;
};

/* Replays sb's events from s; 0 and *ret (free with replay_result_free), or -errno. */
int replay_sandbox(struct store *s, const struct store_sandbox *sb, const struct replay_opts *o,
		   struct replay_result *ret);

void replay_result_free(struct replay_result *r);

/* Whether two verdicts are the same: rule, severity, step and triggering events. */
int replay_verdict_same(const struct replay_verdict *a, const struct replay_verdict *b);

/* Whether two verdicts are about the same finding (rule and triggering events), whatever their
 * severity: how a what-if replay tells a changed verdict from an added one. */
int replay_same_finding(const struct replay_verdict *a, const struct replay_verdict *b);

/* Whether an action (a policy's, or what the monitor recorded doing) stops the sandbox. */
int replay_action_stops(const char *action);

/* The first of n verdicts whose action stops the sandbox, or NULL. */
const struct replay_verdict *replay_first_stop(const struct replay_verdict *v, size_t n);

/* Whether verdict i of a replay with the recorded policy differs from the recorded one (or
 * one of the two lists is shorter): a determinism bug. */
int replay_differs(const struct replay_result *res, size_t i);

/* Under another policy, replayed verdict i: its recorded finding in *ret_was (NULL: added),
 * and whether it is a change (same finding, another severity); 0 if it is the same. */
int replay_changed(const struct replay_result *res, size_t i,
		   const struct replay_verdict **ret_was);

/* Whether recorded verdict j has no replayed verdict of the same finding (removed). */
int replay_removed(const struct replay_result *res, size_t j);

/* A verdict in JSON: rule, severity, action, reason, step, ts, at_event, event_ids. */
json_t *replay_verdict_json(const struct replay_verdict *v);

/*
 * The comparison as one JSON object: the recorded and replayed verdicts; with what_if, the
 * verdicts added, removed and changed and each side's first stopping action; without, the
 * differences (determinism bugs). NULL on -ENOMEM.
 */
json_t *replay_json(const struct replay_result *res, int what_if);

#endif
