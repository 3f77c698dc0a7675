#include "metrics.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "detectors/detect.h"
#include "counters.h"
#include "hashmap.h"
#include "macro.h"
#include "store/registry.h"

/* Distinct (source, kind) and (rule, severity) pairs kept apart; the rest count as "other" (the
 * enforcer's event op takes any dotted kind: a label set must stay bounded). */
#define SERIES_MAX 512

/* Upper bounds of the verdict→action latency histogram, in ns (100 µs .. 10 s). */
static const int64_t latency_le[] = {
	100000,	  250000,   500000,    1000000,	  2500000,    5000000,	   10000000,
	25000000, 50000000, 100000000, 250000000, 1000000000, 10000000000,
};
#define LATENCY_BUCKETS ARRAY_SIZE(latency_le)

struct counter {
	char key[96]; /* "a\tb": two label values */
	uint64_t n;
};

struct sandbox_use {
	char name[FB_NAME_MAX + 1];
	int64_t cpu_us, memory, pids;
};

struct metrics {
	struct hashmap *events, *verdicts, *actions, *use;
	uint64_t events_other, verdicts_other;
	/* The last (source, kind) counted: events come in runs of one kind, and this is on the
	 * path every event takes, so a repeat costs a compare, not a format and a lookup. */
	struct counter *last;
	enum event_source last_source;
	uint64_t latency_counts[LATENCY_BUCKETS + 1]; /* the last: above every bound */
	int64_t latency_sum_ns;
	uint64_t latency_count;
};

int metrics_new(struct metrics **ret)
{
	struct metrics *m = calloc(1, sizeof(*m));

	if (!m || hashmap_new(&m->events) < 0 || hashmap_new(&m->verdicts) < 0 ||
	    hashmap_new(&m->actions) < 0 || hashmap_new(&m->use) < 0) {
		metrics_free(m);
		return -ENOMEM;
	}
	*ret = m;
	return 0;
}

static void free_values(struct hashmap *h)
{
	size_t pos = 0;
	void *v;

	while ((v = hashmap_next(h, &pos)))
		free(v);
	hashmap_free(h);
}

void metrics_free(struct metrics *m)
{
	if (!m)
		return;
	free_values(m->events);
	free_values(m->verdicts);
	free_values(m->actions);
	free_values(m->use);
	free(m);
}

/* Adds one to the pair (a, b); its counter, or NULL if the map is full (counted as other). */
static struct counter *count(struct hashmap *h, const char *a, const char *b)
{
	char key[sizeof(((struct counter *)0)->key)];
	struct counter *c;

	if ((size_t)snprintf(key, sizeof(key), "%s\t%s", a, b) >= sizeof(key))
		return NULL;
	if ((c = hashmap_get(h, key))) {
		c->n++;
		return c;
	}
	if (hashmap_size(h) >= SERIES_MAX || !(c = calloc(1, sizeof(*c))))
		return NULL;
	memcpy(c->key, key, sizeof(key));
	c->n = 1;
	if (hashmap_put(h, c->key, c) < 0) {
		free(c);
		return NULL;
	}
	return c;
}

static void observe_action(struct metrics *m, const struct event *ev)
{
	char result[64] = "", by[64] = "";
	int64_t latency;

	event_field_str(ev, "result", result, sizeof(result));
	/* "failed: ...", "frozen; gate link: ...": the class, not the text. */
	result[strcspn(result, ":;")] = '\0';
	(void)count(m->actions, ev->kind + strlen("action."), result[0] ? result : "unknown");
	/* A detector's action: its latency runs from the event that triggered the verdict. */
	if (!event_field_str(ev, "requested_by", by, sizeof(by)) || !strchr(by, '.') ||
	    !event_field_int(ev, "latency_ns", &latency) || latency < 0)
		return;
	size_t b = 0;

	while (b < LATENCY_BUCKETS && latency > latency_le[b])
		b++;
	m->latency_counts[b]++;
	m->latency_sum_ns += latency;
	m->latency_count++;
}

static void observe_use(struct metrics *m, const struct event *ev)
{
	struct sandbox_use *u = hashmap_get(m->use, ev->sandbox);
	int64_t v;

	if (!u) {
		if (hashmap_size(m->use) >= 65536 || !(u = calloc(1, sizeof(*u))))
			return;
		strscpy(u->name, sizeof(u->name), ev->sandbox);
		u->cpu_us = u->memory = u->pids = -1;
		if (hashmap_put(m->use, u->name, u) < 0) {
			free(u);
			return;
		}
	}
	if (event_field_int(ev, "cpu_usage_us", &v))
		u->cpu_us = v;
	if (event_field_int(ev, "memory_current", &v))
		u->memory = v;
	if (event_field_int(ev, "pids_current", &v))
		u->pids = v;
}

void metrics_observe(struct metrics *m, const struct event *ev)
{
	char rule[64], severity[16];

	if (!m)
		return;
	if (m->last && m->last_source == ev->source &&
	    strcmp(m->last->key + strlen(event_source_to_string(ev->source)) + 1, ev->kind) == 0)
		m->last->n++;
	else if ((m->last = count(m->events, event_source_to_string(ev->source), ev->kind)))
		m->last_source = ev->source;
	else
		m->events_other++;
	if (strcmp(ev->kind, "verdict") == 0 && event_field_str(ev, "rule", rule, sizeof(rule)) &&
	    event_field_str(ev, "severity", severity, sizeof(severity)) &&
	    !count(m->verdicts, rule, severity))
		m->verdicts_other++;
	else if (strncmp(ev->kind, "action.", 7) == 0)
		observe_action(m, ev);
	else if (strcmp(ev->kind, "cgroup.stats") == 0 && ev->step == EVENT_STEP_NONE &&
		 ev->sandbox[0])
		observe_use(m, ev);
}

/* [{"a": ..., "b": ..., "n": N}, ...] from a map of pairs, with the overflow as ("other", ""). */
static json_t *pairs_json(struct hashmap *h, const char *a, const char *b, uint64_t other)
{
	json_t *arr = json_array();
	struct counter *c;
	size_t pos = 0;

	while (arr && (c = hashmap_next(h, &pos))) {
		const char *tab = strchr(c->key, '\t');

		json_array_append_new(arr, json_pack("{s:s%, s:s, s:I}", a, c->key,
						     (size_t)(tab - c->key), b, tab + 1, "n",
						     (json_int_t)c->n));
	}
	if (arr && other)
		json_array_append_new(arr, json_pack("{s:s, s:s, s:I}", a, "other", b, "other",
						     (json_int_t)other));
	return arr;
}

json_t *metrics_snapshot(struct daemon *d)
{
	struct metrics *m = d->metrics;
	json_t *o, *states = json_object(), *use = json_array(), *lat = json_array();
	struct store_sandbox *sb;
	size_t pos = 0;

	if (!m || !states || !use || !lat) {
		json_decref(states);
		json_decref(use);
		json_decref(lat);
		return NULL;
	}
	while ((sb = registry_next(d->registry, &pos))) {
		json_t *n = json_object_get(states, sb->state);
		struct sandbox_use *u;

		json_object_set_new(states, sb->state,
				    json_integer(n ? json_integer_value(n) + 1 : 1));
		/* Resource gauges for the sandboxes that still have processes to measure. */
		if (!registry_live(sb) || !(u = hashmap_get(m->use, sb->name)))
			continue;
		json_array_append_new(use, json_pack("{s:s, s:I, s:I, s:I}", "sandbox", sb->name,
						     "cpu_us", (json_int_t)u->cpu_us, "memory",
						     (json_int_t)u->memory, "pids",
						     (json_int_t)u->pids));
	}
	for (size_t b = 0; b <= LATENCY_BUCKETS; b++)
		json_array_append_new(
			lat,
			json_pack("[I, I]", (json_int_t)(b < LATENCY_BUCKETS ? latency_le[b] : -1),
				  (json_int_t)m->latency_counts[b]));
	/* "counters": the families of the counter registry (loss by stage, the children's
	 * restarts, the exporters), formatted by the child like everything else here. */
	o = json_pack("{s:o, s:o, s:o, s:{s:o, s:I, s:I}, s:o, s:o, s:o}", "events",
		      pairs_json(m->events, "source", "kind", m->events_other), "verdicts",
		      pairs_json(m->verdicts, "rule", "severity", m->verdicts_other), "actions",
		      pairs_json(m->actions, "action", "result", 0), "latency", "buckets", lat,
		      "sum_ns", (json_int_t)m->latency_sum_ns, "count",
		      (json_int_t)m->latency_count, "sandboxes_by_state", states, "sandboxes", use,
		      "counters", counters_metrics_json(d->counters));
	return o;
}
