#include "verdicts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "actions.h"
#include "counters.h"
#include "daemon.h"
#include "detectors/detect.h"
#include "hashmap.h"
#include "killer.h"
#include "lures.h"
#include "macro.h"
#include "metrics.h"
#include "policies.h"
#include "policy/policy.h"
#include "timeutil.h"

#define PENDING_MAX 64

/* One sandbox's detectors, and the incident its verdicts gather in. */
struct sandbox_detect {
	char name[FB_NAME_MAX + 1]; /* the map's key */
	struct detect_state *st;
	int64_t incident_id; /* open incident, 0: none yet */
	/* The events this state was fed, first and last: replay's epochs (detectors.start and
	 * .stop markers say where a fresh state began and where it ended). */
	int64_t first_fed, last_fed;
	char policy_hash[72]; /* the policy it judges by, "" if none */
};

struct pending_verdict {
	char sandbox[FB_NAME_MAX + 1];
	struct detect_verdict v;
};

/* The detector stage's own state. */
struct verdicts {
	struct hashmap *detect;		/* sandbox name -> struct sandbox_detect */
	struct hashmap *open_incidents; /* sandbox name -> its incident left open in the store */
	struct detect_config cfg;
	struct sandbox_detect *fresh; /* a sandbox's detectors that just fed their first event */
	struct pending_verdict pending[PENDING_MAX]; /* waiting for their op to be queued */
	size_t n_pending;
	int64_t next_detection_id, next_incident_id;
	uint64_t verdicts, dropped;
};

/* An incident still open in the store: its sandbox's verdicts keep joining it after a restart. */
struct open_incident {
	char sandbox[FB_NAME_MAX + 1]; /* the map's key */
	int64_t id;
};

static int note_open(const struct store_incident *inc, void *data)
{
	struct hashmap *open = data;
	struct open_incident *o;

	/* Newest first: the first one seen for a sandbox is the one to extend. */
	if (strcmp(inc->state, "open") != 0 || hashmap_get(open, inc->sandbox))
		return 0;
	if (!(o = calloc(1, sizeof(*o))))
		return -ENOMEM;
	strscpy(o->sandbox, sizeof(o->sandbox), inc->sandbox);
	o->id = inc->id;
	if (hashmap_put(open, o->sandbox, o) < 0) {
		free(o);
		return -ENOMEM;
	}
	return 0;
}

static uint64_t detector_states(const void *state)
{
	const struct verdicts *v = state;

	return v->detect ? hashmap_size(v->detect) : 0;
}

static const struct counter_def counters[] = {
	{ "sandboxes", COUNTER_GAUGE, "sandboxes with detector state", .read = detector_states },
	{ "verdicts", COUNTER_TOTAL, "verdicts the detectors gave",
	  COUNTER_AT(struct verdicts, verdicts) },
	{ "dropped", COUNTER_TOTAL, "verdicts dropped: too many waited at once",
	  COUNTER_FAMILY_LOST, "detector_queue", COUNTER_AT(struct verdicts, dropped) },
};

int verdicts_init(struct daemon *d, struct store *s)
{
	int r;

	if (!(d->verdicts = calloc(1, sizeof(*d->verdicts))))
		return -ENOMEM;
	if ((r = counters_add(d->counters, "detectors", counters, ARRAY_SIZE(counters),
			      d->verdicts)) < 0)
		return r;
	if ((r = store_max_id(s, "detections", &d->verdicts->next_detection_id)) < 0 ||
	    (r = store_max_id(s, "incidents", &d->verdicts->next_incident_id)) < 0)
		return r;
	d->verdicts->next_detection_id++;
	d->verdicts->next_incident_id++;
	detect_config_defaults(&d->verdicts->cfg);
	if ((r = hashmap_new(&d->verdicts->detect)) < 0 ||
	    (r = hashmap_new(&d->verdicts->open_incidents)) < 0)
		return r;
	return store_incident_list(s, 0, note_open, d->verdicts->open_incidents);
}

static struct sandbox_detect *detectors_of(struct daemon *d, const struct store_sandbox *sb)
{
	struct sandbox_detect *sd = hashmap_get(d->verdicts->detect, sb->name);
	struct policy *p;

	if (sd)
		return sd;
	if (!(sd = calloc(1, sizeof(*sd))))
		return NULL;
	strscpy(sd->name, sizeof(sd->name), sb->name);
	{
		struct open_incident *o = hashmap_remove(d->verdicts->open_incidents, sb->name);

		if (o)
			sd->incident_id = o->id;
		free(o);
	}
	p = policies_for(d, sb); /* NULL: the rules that need a tool's scope stay quiet */
	if (p)
		strscpy(sd->policy_hash, sizeof(sd->policy_hash), sb->policy_hash);
	if (detect_state_new(p, &d->verdicts->cfg, &sd->st) < 0 ||
	    hashmap_put(d->verdicts->detect, sd->name, sd) < 0) {
		detect_state_free(sd->st);
		free(sd);
		sd = NULL;
	}
	policy_free(p);
	if (sd) {
		char marker[LURE_MARKER_LEN + 1];

		policies_decoy_marker(d, sb, marker);
		detect_state_set_marker(sd->st, marker);
	}
	return sd;
}

struct detect_state *verdicts_detectors(struct daemon *d, const struct store_sandbox *sb)
{
	struct sandbox_detect *sd = d->verdicts && d->verdicts->detect ? detectors_of(d, sb) : NULL;

	return sd ? sd->st : NULL;
}

/* The writer's observer: every event, before it is queued. Verdicts wait for after(). */
static int observe(const struct event *ev, void *data)
{
	struct detect_verdict v[4];
	struct daemon *d = data;
	struct sandbox_detect *sd;
	struct store_sandbox *sb;
	size_t n;

	metrics_observe(d->metrics, ev);
	/* A sandbox that is gone (its last records arrive after it) has nothing left to judge. */
	if (!ev->sandbox[0] || !(sb = registry_find(d->registry, ev->sandbox)) ||
	    strcmp(sb->state, "destroyed") == 0 || strcmp(sb->state, "unwatched") == 0 ||
	    !(sd = detectors_of(d, sb)))
		return 0;
	if (!sd->first_fed) {
		sd->first_fed = ev->id;
		d->verdicts->fresh = sd; /* announced in after(), once this event is queued */
	}
	sd->last_fed = ev->id;
	n = detect_event(sd->st, ev, v, ARRAY_SIZE(v));
	for (size_t i = 0; i < n; i++) {
		struct pending_verdict *pv;

		if (d->verdicts->n_pending == PENDING_MAX) {
			d->verdicts->dropped++;
			continue;
		}
		pv = &d->verdicts->pending[d->verdicts->n_pending++];
		strscpy(pv->sandbox, sizeof(pv->sandbox), ev->sandbox);
		pv->v = v[i];
	}
	return n > 0 || d->verdicts->fresh;
}

/* The verdict's row, its event and its incident, in one store operation. */
static void record(struct daemon *d, const struct store_sandbox *sb, int64_t incident_id,
		   const struct detect_verdict *v, int64_t det_id, int create, const char *action)
{
	struct store_detection *det = calloc(1, sizeof(*det));
	json_t *ids = json_array(), *f;
	struct writer_op op;
	char *ids_text;

	for (size_t i = 0; i < v->n_ids; i++)
		json_array_append_new(ids, json_integer((json_int_t)v->event_ids[i]));
	ids_text = json_dumps(ids, JSON_COMPACT);
	writer_event_init(&op, sb, time_now_ns(), v->step, v->tool[0] ? v->tool : NULL,
			  EVENT_SOURCE_DETECTOR, "verdict");
	op.type = WRITER_OP_VERDICT;
	f = json_pack("{s:s, s:s, s:s, s:s, s:O, s:I, s:I, s:I, s:s}", "rule", v->rule, "severity",
		      detect_severity_name(v->severity), "action", action, "reason", v->reason,
		      "event_ids", ids, "trigger_ts", (json_int_t)v->ts, "detection_id",
		      (json_int_t)det_id, "incident_id", (json_int_t)incident_id, "policy_hash",
		      sb->policy_hash);
	json_decref(ids);
	if (!det || !ids_text || !f || event_set_fields(&op.ev, f) < 0 ||
	    strlen(ids_text) >= sizeof(det->event_ids)) {
		log_error("sandbox %s: verdict %s not recorded: out of memory", sb->name, v->rule);
		free(det);
		free(ids_text);
		json_decref(f);
		writer_op_clear(&op);
		return;
	}
	json_decref(f);
	det->id = det_id;
	det->ts = v->ts;
	det->sandbox_id = sb->id;
	det->step = v->step;
	strscpy(det->rule, sizeof(det->rule), v->rule);
	strscpy(det->severity, sizeof(det->severity), detect_severity_name(v->severity));
	strscpy(det->policy_hash, sizeof(det->policy_hash), sb->policy_hash);
	det->incident_id = incident_id;
	strscpy(det->event_ids, sizeof(det->event_ids), ids_text);
	strscpy(det->reason, sizeof(det->reason), v->reason);
	free(ids_text);
	op.detection = det;
	op.create_incident = create;
	sink_submit(d->sink, &op);
}

/* Acts on one verdict: the action first (kill path), then the record, then the action's record. */
static void handle(struct daemon *d, const struct pending_verdict *pv)
{
	struct store_sandbox *sb = registry_find(d->registry, pv->sandbox);
	struct sandbox_detect *sd = hashmap_get(d->verdicts->detect, pv->sandbox);
	const struct detect_verdict *v = &pv->v;
	enum policy_action pa;
	int kind, create = 0, acted = 0, acted_here = 0, in_flight;
	struct action_done done;
	char what[64];
	int64_t det_id;

	if (!sb || !sd)
		return;
	/* What the sandbox's policy says this severity does (docs/detectors.md has the defaults).
	 */
	pa = detect_verdict_action(sd->st, v);
	kind = pa == POLICY_ACTION_KILL		? ACTION_KILL
	       : pa == POLICY_ACTION_QUARANTINE ? ACTION_QUARANTINE
	       : pa == POLICY_ACTION_FREEZE	? ACTION_FREEZE
						: -1;
	/* One action in flight per sandbox, but a kill is never held back by a freeze. */
	in_flight = killer_in_flight(d, sb->id);
	det_id = d->verdicts->next_detection_id++;
	/* At alert or above: the sandbox's incident opens, or grows. */
	if (pa >= POLICY_ACTION_ALERT && !sd->incident_id) {
		sd->incident_id = d->verdicts->next_incident_id++;
		create = 1;
	}
	struct action_request rq = { .kind = (enum action_kind)kind,
				     .requested_by = v->rule,
				     .reason = v->reason,
				     .trigger_ts = v->ts,
				     .detection_id = det_id,
				     .incident_id =
					     pa >= POLICY_ACTION_ALERT ? sd->incident_id : 0 };
	if (kind >= 0 && d->cfg->detector_actions && sb->cgroup[0] && in_flight != ACTION_KILL &&
	    (in_flight < 0 || kind == ACTION_KILL) &&
	    (strcmp(sb->state, "running") == 0 ||
	     (kind == ACTION_KILL && strcmp(sb->state, "frozen") == 0))) {
		/* The kill path: the real-time thread writes and confirms; the loop records it when
		 * it is done. Should the thread be full, the loop acts itself, now. */
		if (killer_submit(d, sb, &rq) < 0)
			action_act(sb, (enum action_kind)kind, &done), acted_here = 1;
		acted = 1;
	}
	d->verdicts->verdicts++;
	if (acted)
		snprintf(what, sizeof(what), "%s", action_kind_name((enum action_kind)kind));
	else if (kind >= 0 && !d->cfg->detector_actions)
		snprintf(what, sizeof(what), "none (detector_actions off)");
	else if (kind >= 0 && in_flight >= 0)
		snprintf(what, sizeof(what), "none (a %s is under way)",
			 action_kind_name((enum action_kind)in_flight));
	else if (kind >= 0)
		snprintf(what, sizeof(what), "none (the sandbox is %s)", sb->state);
	else
		snprintf(what, sizeof(what), "%s", policy_action_name(pa));
	record(d, sb, pa >= POLICY_ACTION_ALERT ? sd->incident_id : 0, v, det_id, create, what);
	if (acted_here)
		action_finish(d, sb, &rq, &done, NULL);
	log_warn("sandbox %s: %s (%s) on step %lld: %s", sb->name, v->rule,
		 detect_severity_name(v->severity), (long long)v->step, v->reason);
}

/*
 * Replay's markers: a fresh detector state for the sandbox began at event first_event_id, under
 * the policy of that hash ("": none); and where a state ended, at the last event it was fed.
 */
static void marker(struct daemon *d, const char *sandbox, const char *kind, json_t *f)
{
	struct store_sandbox *sb = registry_find(d->registry, sandbox);
	struct writer_op op;

	if (!sb) {
		json_decref(f);
		return;
	}
	writer_event_init(&op, sb, time_now_ns(), EVENT_STEP_NONE, NULL, EVENT_SOURCE_DETECTOR,
			  kind);
	sink_submit_event(d->sink, &op, f);
}

/* A state fed its first event just now: say so (the marker itself is fed next). */
static void announce_fresh(struct daemon *d)
{
	struct sandbox_detect *sd = d->verdicts->fresh;

	if (!sd)
		return;
	d->verdicts->fresh = NULL;
	marker(d, sd->name, "detectors.start",
	       json_pack("{s:I, s:s, s:s}", "first_event_id", (json_int_t)sd->first_fed,
			 "policy_hash", sd->policy_hash, "decoy_marker",
			 detect_state_marker(sd->st)));
}

static void after(void *data)
{
	struct daemon *d = data;

	announce_fresh(d);

	/* Handling one may queue events whose verdicts join the list: until it is empty. */
	while (d->verdicts->n_pending) {
		struct verdicts *vs = d->verdicts;
		struct pending_verdict pv = vs->pending[0];

		memmove(vs->pending, vs->pending + 1, --vs->n_pending * sizeof(pv));
		handle(d, &pv);
		announce_fresh(d);
	}
}

void verdicts_start(struct daemon *d)
{
	sink_set_stage(d->sink, observe, after, d);
}

/* Closes the sandbox's incident: an "incident.closed" event, and its end in the store. */
static void close_incident(struct daemon *d, const char *sandbox, int64_t id)
{
	struct store_sandbox *sb = registry_find(d->registry, sandbox);
	struct writer_op op;

	if (!sb || id <= 0)
		return;
	writer_event_init(&op, sb, time_now_ns(), EVENT_STEP_NONE, NULL, EVENT_SOURCE_DETECTOR,
			  "incident.closed");
	op.type = WRITER_OP_INCIDENT_CLOSE;
	op.incident_id = id;
	sink_submit_event(d->sink, &op,
			  json_pack("{s:I, s:s}", "incident_id", (json_int_t)id, "reason",
				    "the sandbox is gone"));
}

void verdicts_forget(struct daemon *d, const char *sandbox)
{
	struct verdicts *vs = d->verdicts;
	struct sandbox_detect *sd = vs && vs->detect ? hashmap_remove(vs->detect, sandbox) : NULL;
	struct open_incident *o =
		vs && vs->open_incidents ? hashmap_remove(vs->open_incidents, sandbox) : NULL;

	/* Its detectors end here: replay feeds nothing past their last event. */
	if (sd && sd->first_fed)
		marker(d, sandbox, "detectors.stop",
		       json_pack("{s:I}", "last_event_id", (json_int_t)sd->last_fed));
	if (sd && d->verdicts->fresh == sd)
		d->verdicts->fresh = NULL;
	/* Its incident ends with it; one left open in the store by an earlier run, too. */
	if (sd && sd->incident_id)
		close_incident(d, sandbox, sd->incident_id);
	else if (o)
		close_incident(d, sandbox, o->id);
	free(o);
	if (sd) {
		detect_state_free(sd->st);
		free(sd);
	}
}

void verdicts_stop(struct daemon *d)
{
	struct verdicts *vs = d->verdicts;
	struct sandbox_detect *sd;
	size_t pos = 0;

	if (!vs)
		return;
	if (d->sink)
		sink_set_stage(d->sink, NULL, NULL, NULL);
	while (vs->detect && (sd = hashmap_next(vs->detect, &pos))) {
		detect_state_free(sd->st);
		free(sd);
	}
	hashmap_free(vs->detect);
	pos = 0;
	for (void *o; vs->open_incidents && (o = hashmap_next(vs->open_incidents, &pos));)
		free(o);
	hashmap_free(vs->open_incidents);
	counters_remove(d->counters, vs);
	free(vs);
	d->verdicts = NULL;
}
