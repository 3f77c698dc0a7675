#include "replay.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "lures.h"
#include "macro.h"
#include "policy/policy.h"

/* Where detector states began and ended (the monitor's markers), in id order. */
struct epoch {
	int64_t first, last; /* events fed: [first, last]; last INT64_MAX while it ran on */
	char policy_hash[80];
	char marker[LURE_MARKER_LEN + 1]; /* the decoys' marker the live state had */
	int started;
};

struct run {
	struct store *s;
	const struct replay_opts *o;
	struct replay_result *res;
	struct epoch *epochs;
	size_t n_epochs, cap_epochs, cur; /* cur: the epoch being fed, or n_epochs: none */
	struct detect_state *st;
	struct detect_config cfg;
	size_t cap_recorded, cap_replayed;
	int err;
};

static int add_verdict(struct replay_verdict **list, size_t *n, size_t *cap,
		       const struct replay_verdict *v)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		struct replay_verdict *l = realloc(*list, c * sizeof(*l));

		if (!l)
			return -ENOMEM;
		*list = l;
		*cap = c;
	}
	(*list)[(*n)++] = *v;
	return 0;
}

static int marker_cb(const struct event *ev, void *data)
{
	struct run *r = data;
	json_t *f = event_get_fields(ev);
	json_int_t id;

	if (!f)
		return 0;
	if (strcmp(ev->kind, "detectors.start") == 0 &&
	    (id = json_integer_value(json_object_get(f, "first_event_id"))) > 0) {
		if (r->n_epochs == r->cap_epochs) {
			size_t c = r->cap_epochs ? r->cap_epochs * 2 : 8;
			struct epoch *e = realloc(r->epochs, c * sizeof(*e));

			if (!e) {
				json_decref(f);
				return -ENOMEM;
			}
			r->epochs = e;
			r->cap_epochs = c;
		}
		struct epoch *e = &r->epochs[r->n_epochs++];

		e->first = id;
		e->last = INT64_MAX;
		e->started = 0;
		strscpy(e->policy_hash, sizeof(e->policy_hash),
			json_string_value(json_object_get(f, "policy_hash"))
				? json_string_value(json_object_get(f, "policy_hash"))
				: "");
		strscpy(e->marker, sizeof(e->marker),
			json_string_value(json_object_get(f, "decoy_marker"))
				? json_string_value(json_object_get(f, "decoy_marker"))
				: "");
		/* The one before ran at most to here (a restart leaves no stop marker). */
		if (r->n_epochs > 1 && r->epochs[r->n_epochs - 2].last > id - 1)
			r->epochs[r->n_epochs - 2].last = id - 1;
	} else if (strcmp(ev->kind, "detectors.stop") == 0 && r->n_epochs &&
		   (id = json_integer_value(json_object_get(f, "last_event_id"))) > 0) {
		r->epochs[r->n_epochs - 1].last = id;
	}
	json_decref(f);
	return 0;
}

/* A fresh state for epoch i, under its policy (or the one given). */
static int start_epoch(struct run *r, size_t i)
{
	struct policy *p = NULL;
	char *text = NULL, err[256];
	int rc;

	detect_state_free(r->st);
	r->st = NULL;
	r->cur = i;
	r->res->epochs++;
	if (!r->o->policy && r->epochs[i].policy_hash[0]) {
		if (store_policy_get(r->s, r->epochs[i].policy_hash, &text) < 0 ||
		    policy_load_text("the recorded policy", text, strlen(text), &p, err,
				     sizeof(err)) < 0)
			r->res->missing_policy = 1;
		free(text);
		strscpy(r->res->policy, sizeof(r->res->policy), r->epochs[i].policy_hash);
	}
	rc = detect_state_new(r->o->policy ? r->o->policy : p, &r->cfg, &r->st);
	if (rc == 0)
		detect_state_set_marker(r->st, r->epochs[i].marker);
	policy_free(p);
	return rc;
}

static void replayed_from(const struct detect_state *st, const struct detect_verdict *v, int64_t at,
			  struct replay_verdict *out)
{
	memset(out, 0, sizeof(*out));
	out->at_id = at;
	out->ts = v->ts;
	out->step = v->step;
	strscpy(out->rule, sizeof(out->rule), v->rule);
	strscpy(out->severity, sizeof(out->severity), detect_severity_name(v->severity));
	strscpy(out->action, sizeof(out->action), policy_action_name(detect_verdict_action(st, v)));
	strscpy(out->reason, sizeof(out->reason), v->reason);
	out->n_ids = v->n_ids;
	memcpy(out->event_ids, v->event_ids, v->n_ids * sizeof(v->event_ids[0]));
}

static int recorded_from(const struct event *ev, struct replay_verdict *out)
{
	json_t *f = event_get_fields(ev), *ids;
	size_t i;
	json_t *x;

	memset(out, 0, sizeof(*out));
	if (!f)
		return -EBADMSG;
	out->at_id = ev->id;
	out->ts = json_integer_value(json_object_get(f, "trigger_ts"));
	out->step = ev->step;
	strscpy(out->rule, sizeof(out->rule), json_string_value(json_object_get(f, "rule")) ?: "?");
	strscpy(out->severity, sizeof(out->severity),
		json_string_value(json_object_get(f, "severity")) ?: "?");
	strscpy(out->action, sizeof(out->action),
		json_string_value(json_object_get(f, "action")) ?: "?");
	strscpy(out->reason, sizeof(out->reason),
		json_string_value(json_object_get(f, "reason")) ?: "");
	ids = json_object_get(f, "event_ids");
	json_array_foreach (ids, i, x) {
		if (out->n_ids < DETECT_IDS_MAX)
			out->event_ids[out->n_ids++] = json_integer_value(x);
	}
	json_decref(f);
	return 0;
}

static int event_cb(const struct event *ev, void *data)
{
	struct run *r = data;
	struct detect_verdict v[8];
	struct replay_verdict out[8];
	size_t n = 0;
	int rc;

	r->res->events++;
	if (strcmp(ev->kind, "verdict") == 0) {
		struct replay_verdict rec;

		if (recorded_from(ev, &rec) == 0 &&
		    (rc = add_verdict(&r->res->recorded, &r->res->n_recorded, &r->cap_recorded,
				      &rec)) < 0)
			return rc;
	}
	/* Which state, if any, the monitor fed this event to: the one it began with this event
	 * (a fresh state), or the one running, until past its last. */
	if (r->cur < r->n_epochs && ev->id > r->epochs[r->cur].last) {
		detect_state_free(r->st);
		r->st = NULL;
		r->cur = r->n_epochs;
	}
	/* An epoch starts at its first event, or at the first of its events the store still has
	 * (retention, a failed commit). */
	for (size_t i = 0; i < r->n_epochs && ev->id >= r->epochs[i].first; i++) {
		if (!r->epochs[i].started && ev->id <= r->epochs[i].last) {
			r->epochs[i].started = 1;
			if ((rc = start_epoch(r, i)) < 0)
				return rc;
		}
	}
	if (r->st && r->cur < r->n_epochs && ev->id >= r->epochs[r->cur].first &&
	    ev->id <= r->epochs[r->cur].last) {
		r->res->fed++;
		n = detect_event(r->st, ev, v, ARRAY_SIZE(v));
		for (size_t i = 0; i < n; i++) {
			replayed_from(r->st, &v[i], ev->id, &out[i]);
			if ((rc = add_verdict(&r->res->replayed, &r->res->n_replayed,
					      &r->cap_replayed, &out[i])) < 0)
				return rc;
		}
	}
	return r->o->on_event ? r->o->on_event(ev, n ? out : NULL, n, r->o->data) : 0;
}

int replay_sandbox(struct store *s, const struct store_sandbox *sb, const struct replay_opts *o,
		   struct replay_result *ret)
{
	struct run r = { .s = s, .o = o, .res = ret };
	int rc;

	memset(ret, 0, sizeof(*ret));
	detect_config_defaults(&r.cfg);
	if ((rc = store_sandbox_events(s, sb->id, "detectors.", marker_cb, &r)) < 0)
		goto out;
	/* A store from before the markers: one state from the start, under the sandbox's policy. */
	if (r.n_epochs == 0) {
		if (!(r.epochs = calloc(1, sizeof(*r.epochs)))) {
			rc = -ENOMEM;
			goto out;
		}
		r.n_epochs = 1;
		r.epochs[0].first = INT64_MIN; /* started here, fed from the first event */
		r.epochs[0].last = INT64_MAX;
		r.epochs[0].started = 1;
		strscpy(r.epochs[0].policy_hash, sizeof(r.epochs[0].policy_hash), sb->policy_hash);
		if ((rc = start_epoch(&r, 0)) < 0)
			goto out;
	} else {
		r.cur = r.n_epochs;
	}
	if (o->policy)
		strscpy(ret->policy, sizeof(ret->policy), policy_hash(o->policy));
	rc = store_sandbox_events(s, sb->id, NULL, event_cb, &r);
	if (rc > 0)
		rc = 0; /* the caller's callback stopped it */
out:
	detect_state_free(r.st);
	free(r.epochs);
	if (rc < 0)
		replay_result_free(ret);
	return rc;
}

void replay_result_free(struct replay_result *r)
{
	free(r->recorded);
	free(r->replayed);
	r->recorded = r->replayed = NULL;
	r->n_recorded = r->n_replayed = 0;
}

int replay_same_finding(const struct replay_verdict *a, const struct replay_verdict *b)
{
	return strcmp(a->rule, b->rule) == 0 && a->n_ids == b->n_ids &&
	       memcmp(a->event_ids, b->event_ids, a->n_ids * sizeof(a->event_ids[0])) == 0;
}

int replay_action_stops(const char *action)
{
	return strncmp(action, "kill", 4) == 0 || strncmp(action, "freeze", 6) == 0 ||
	       strncmp(action, "quarantine", 10) == 0;
}

json_t *replay_verdict_json(const struct replay_verdict *v)
{
	json_t *ids = json_array();

	for (size_t i = 0; i < v->n_ids; i++)
		json_array_append_new(ids, json_integer(v->event_ids[i]));
	return json_pack("{s:s, s:s, s:s, s:s, s:o, s:I, s:I, s:o}", "rule", v->rule, "severity",
			 v->severity, "action", v->action, "reason", v->reason, "step",
			 v->step == EVENT_STEP_NONE ? json_null() : json_integer(v->step), "ts",
			 (json_int_t)v->ts, "at_event", (json_int_t)v->at_id, "event_ids", ids);
}

const struct replay_verdict *replay_first_stop(const struct replay_verdict *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (replay_action_stops(v[i].action))
			return &v[i];
	return NULL;
}

int replay_differs(const struct replay_result *res, size_t i)
{
	return i >= res->n_recorded || i >= res->n_replayed ||
	       !replay_verdict_same(&res->recorded[i], &res->replayed[i]);
}

int replay_changed(const struct replay_result *res, size_t i, const struct replay_verdict **ret_was)
{
	const struct replay_verdict *a = NULL;

	for (size_t j = 0; j < res->n_recorded && !a; j++)
		if (replay_same_finding(&res->recorded[j], &res->replayed[i]))
			a = &res->recorded[j];
	*ret_was = a;
	return !a || strcmp(a->severity, res->replayed[i].severity) != 0;
}

int replay_removed(const struct replay_result *res, size_t j)
{
	for (size_t i = 0; i < res->n_replayed; i++)
		if (replay_same_finding(&res->recorded[j], &res->replayed[i]))
			return 0;
	return 1;
}

static json_t *stop_json(const struct replay_verdict *v, size_t n)
{
	const struct replay_verdict *s = replay_first_stop(v, n);

	return s ? replay_verdict_json(s) : json_null();
}

json_t *replay_json(const struct replay_result *res, int what_if)
{
	json_t *rec = json_array(), *rep = json_array(), *added = json_array(),
	       *removed = json_array(), *changed = json_array(), *bugs = json_array();
	size_t n = res->n_recorded > res->n_replayed ? res->n_recorded : res->n_replayed;
	const struct replay_verdict *was;

	for (size_t i = 0; i < res->n_recorded; i++)
		json_array_append_new(rec, replay_verdict_json(&res->recorded[i]));
	for (size_t i = 0; i < res->n_replayed; i++)
		json_array_append_new(rep, replay_verdict_json(&res->replayed[i]));
	for (size_t i = 0; !what_if && i < n; i++)
		if (replay_differs(res, i))
			json_array_append_new(bugs, json_integer((json_int_t)i));
	for (size_t i = 0; what_if && i < res->n_replayed; i++) {
		if (!replay_changed(res, i, &was))
			continue;
		if (!was)
			json_array_append_new(added, replay_verdict_json(&res->replayed[i]));
		else
			json_array_append_new(changed,
					      json_pack("{s:o, s:o}", "recorded",
							replay_verdict_json(was), "replayed",
							replay_verdict_json(&res->replayed[i])));
	}
	for (size_t j = 0; what_if && j < res->n_recorded; j++)
		if (replay_removed(res, j))
			json_array_append_new(removed, replay_verdict_json(&res->recorded[j]));
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:I}", "recorded", rec,
			 "replayed", rep, "added", added, "removed", removed, "changed", changed,
			 "determinism_bugs", bugs, "recorded_first_stop",
			 stop_json(res->recorded, res->n_recorded), "replayed_first_stop",
			 stop_json(res->replayed, res->n_replayed), "events",
			 (json_int_t)res->events, "fed", (json_int_t)res->fed);
}

int replay_verdict_same(const struct replay_verdict *a, const struct replay_verdict *b)
{
	return strcmp(a->rule, b->rule) == 0 && strcmp(a->severity, b->severity) == 0 &&
	       a->step == b->step && a->n_ids == b->n_ids &&
	       memcmp(a->event_ids, b->event_ids, a->n_ids * sizeof(a->event_ids[0])) == 0;
}
