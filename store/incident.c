#include "incident.h"

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "event.h"
#include "macro.h"

struct scan {
	const struct store_incident *inc;
	struct incident_story *st;
	int pass;
	int64_t cur_step; /* the step running at the event's time */
	int64_t coerced_ts;
	int64_t first_trigger; /* the first verdict's first triggering event id */
	int64_t verdict_ts;
};

/* An event's step, or the step running when it happened (NFLOG drops and actions have none). */
static int64_t step_of(struct scan *x, const struct event *ev)
{
	if (ev->step != EVENT_STEP_NONE)
		x->cur_step = ev->step;
	return ev->step != EVENT_STEP_NONE ? ev->step : x->cur_step;
}

static int refused_egress(const struct event *ev, json_t *f)
{
	if (strcmp(ev->kind, "net.denied") == 0 || strcmp(ev->kind, "http.refused") == 0)
		return 1; /* the gate dropped it, or its L7 proxy refused it */
	return (strcmp(ev->kind, "net.connect") == 0 || strcmp(ev->kind, "net.sendmsg") == 0) &&
	       json_is_string(json_object_get(f, "egress_hook")) &&
	       strcmp(json_string_value(json_object_get(f, "egress_hook")), "refused") == 0;
}

static int on_event(const struct event *ev, void *data)
{
	struct scan *x = data;
	struct incident_story *st = x->st;
	int64_t step = step_of(x, ev);
	json_t *f = event_get_fields(ev);

	if (x->pass == 1) {
		if (strcmp(ev->kind, "tool_call.start") == 0 && !x->coerced_ts &&
		    json_is_true(json_object_get(json_object_get(f, "annotations"), "coerced"))) {
			st->coerced_step = ev->step;
			x->coerced_ts = ev->ts;
		} else if (strcmp(ev->kind, "verdict") == 0 && !x->verdict_ts &&
			   json_integer_value(json_object_get(f, "incident_id")) == x->inc->id) {
			json_t *ids = json_object_get(f, "event_ids");

			st->flagged_step = step;
			x->verdict_ts = ev->ts;
			x->first_trigger = json_integer_value(json_array_get(ids, 0));
		} else if ((strcmp(ev->kind, "action.kill") == 0 ||
			    strcmp(ev->kind, "action.freeze") == 0) &&
			   json_integer_value(json_object_get(f, "incident_id")) == x->inc->id &&
			   strcmp(st->action, "killed") != 0) {
			/* The strongest the incident's verdicts did: a kill over an earlier freeze.
			 */
			st->action_step = step;
			strcpy(st->action, ev->kind[7] == 'k' ? "killed" : "frozen");
		}
	} else {
		if (ev->id == x->first_trigger && st->cmd_step == EVENT_STEP_NONE) {
			st->cmd_step = step;
			if (!st->since)
				st->since = ev->ts;
		}
		if (st->denied_step == EVENT_STEP_NONE &&
		    ev->ts >= (x->coerced_ts ?: x->inc->start_ts) && refused_egress(ev, f))
			st->denied_step = step;
	}
	json_decref(f);
	return 0;
}

static void append_step(char *buf, size_t size, const char *what, int64_t step, int first)
{
	size_t n = strlen(buf);

	if (step == EVENT_STEP_NONE)
		return;
	snprintf(buf + n, size - n, "%s%s @ %s%lld", n ? ", " : "", what, first ? "step " : "",
		 (long long)step);
}

int incident_story(struct store *s, const struct store_incident *inc, struct incident_story *ret)
{
	struct store_timeline_query q = { .sandbox_id = inc->sandbox_id,
					  .step_lo = EVENT_STEP_NONE };
	struct scan x = { .inc = inc, .st = ret, .cur_step = EVENT_STEP_NONE };
	int r;

	memset(ret, 0, sizeof(*ret));
	ret->coerced_step = ret->cmd_step = ret->denied_step = ret->flagged_step =
		ret->action_step = EVENT_STEP_NONE;
	for (x.pass = 1; x.pass <= 2; x.pass++) {
		x.cur_step = EVENT_STEP_NONE;
		if ((r = store_timeline(s, &q, on_event, &x)) < 0)
			return r;
	}
	if (x.coerced_ts)
		ret->since = x.coerced_ts;
	if (!ret->since)
		ret->since = inc->start_ts;
	append_step(ret->text, sizeof(ret->text), "coerced", ret->coerced_step, 1);
	append_step(ret->text, sizeof(ret->text), "ran cmd", ret->cmd_step, !ret->text[0]);
	append_step(ret->text, sizeof(ret->text), "egress denied", ret->denied_step, !ret->text[0]);
	append_step(ret->text, sizeof(ret->text), "flagged", ret->flagged_step, !ret->text[0]);
	if (ret->action[0])
		append_step(ret->text, sizeof(ret->text), ret->action, ret->action_step,
			    !ret->text[0]);
	return 0;
}
