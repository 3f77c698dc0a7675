/*
 * The counter registry (counters.h): registrations in order, read when a view is asked for. The
 * views are made a few times a second at most (status, a scrape), so a linear walk is enough.
 */
#include "counters.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Each Prometheus family, named once: its name, type, help and the key of its one label. */
static const struct {
	const char *name, *type, *help, *label_key;
	double scale; /* from the counter's unit to the family's */
} families[_COUNTER_FAMILY_MAX] = {
	[COUNTER_FAMILY_LOST] = { "firebreak_events_lost_total", "counter",
				  "Events lost, by the stage where they were lost.", "stage", 1 },
	[COUNTER_FAMILY_HTTP_RESTARTS] = { "firebreak_http_child_restarts_total", "counter",
					   "Times the HTTP API's child was started again after it "
					   "died.",
					   NULL, 1 },
	[COUNTER_FAMILY_HTTP_REFUSED] = { "firebreak_http_channel_refused_total", "counter",
					  "Requests of the HTTP child that the core's dispatch "
					  "table refused.",
					  NULL, 1 },
	[COUNTER_FAMILY_EXPORT_ERRORS] = { "firebreak_exporter_errors_total", "counter",
					   "Pushes an exporter could not deliver (retried).",
					   "exporter", 1 },
	[COUNTER_FAMILY_EXPORT_PUSHES] = { "firebreak_exporter_pushes_total", "counter",
					   "Pushes an exporter delivered.", "exporter", 1 },
	[COUNTER_FAMILY_EXPORT_ITEMS] = { "firebreak_exporter_items_total", "counter",
					  "Spans (OTLP) and lines (Loki) delivered.", "exporter",
					  1 },
	[COUNTER_FAMILY_START_TIME] = { "firebreak_start_time_seconds", "gauge",
					"When firebreakd started.", NULL, 1e-9 },
};

struct registration {
	const char *prefix;
	const struct counter_def *defs; /* NULL: a status part */
	size_t n;
	json_t *(*status)(const void *state);
	void (*snapshot)(const void *state, void *buf);
	size_t snap_size;
	const void *state;
};

struct counters {
	struct registration *regs;
	size_t n, cap;
};

int counters_new(struct counters **ret)
{
	struct counters *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	*ret = c;
	return 0;
}

void counters_free(struct counters *c)
{
	if (!c)
		return;
	free(c->regs);
	free(c);
}

static int add(struct counters *c, const struct registration *r)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 32;
		struct registration *regs = realloc(c->regs, cap * sizeof(*regs));

		if (!regs)
			return -ENOMEM;
		c->regs = regs;
		c->cap = cap;
	}
	c->regs[c->n++] = *r;
	return 0;
}

int counters_add(struct counters *c, const char *prefix, const struct counter_def *defs, size_t n,
		 const void *state)
{
	return add(c, &(struct registration){
			      .prefix = prefix, .defs = defs, .n = n, .state = state });
}

int counters_add_snapshot(struct counters *c, const char *prefix, const struct counter_def *defs,
			  size_t n, const void *state, size_t size,
			  void (*snapshot)(const void *state, void *buf))
{
	return add(c, &(struct registration){ .prefix = prefix,
					      .defs = defs,
					      .n = n,
					      .state = state,
					      .snapshot = snapshot,
					      .snap_size = size });
}

int counters_add_status(struct counters *c, const char *prefix, json_t *(*fn)(const void *state),
			const void *state)
{
	return add(c, &(struct registration){ .prefix = prefix, .status = fn, .state = state });
}

void counters_remove(struct counters *c, const void *state)
{
	size_t kept = 0;

	for (size_t i = 0; c && i < c->n; i++)
		if (c->regs[i].state != state)
			c->regs[kept++] = c->regs[i];
	if (c)
		c->n = kept;
}

/* Where a registration's values are read from: its state, or a fresh snapshot of it. */
static const void *values_of(const struct registration *r, void **buf)
{
	*buf = NULL;
	if (!r->snapshot)
		return r->state;
	if (!(*buf = calloc(1, r->snap_size)))
		return NULL;
	r->snapshot(r->state, *buf);
	return *buf;
}

static uint64_t value(const struct counter_def *d, const void *state, const void *values)
{
	if (d->read)
		return d->read(state);
	return *(const uint64_t *)((const char *)values + d->offset);
}

/* The object at the dotted path under root, made where missing (NULL: -ENOMEM, or a clash). */
static json_t *object_at(json_t *root, const char *path, size_t len)
{
	json_t *o = root;

	while (len > 0 && o) {
		size_t seg = 0;
		char key[64];
		json_t *next;

		while (seg < len && path[seg] != '.')
			seg++;
		if (seg >= sizeof(key))
			return NULL;
		memcpy(key, path, seg);
		key[seg] = '\0';
		next = json_object_get(o, key);
		if (!next) {
			next = json_object();
			if (json_object_set_new(o, key, next) < 0)
				return NULL;
		}
		o = json_is_object(next) ? next : NULL;
		path += seg + (seg < len);
		len -= seg + (seg < len);
	}
	return o;
}

/* Sets prefix.name = v under root. */
static int put(json_t *root, const char *prefix, const char *name, json_t *v)
{
	char path[256] = "";
	size_t n = 0;
	const char *leaf = strrchr(name, '.');
	json_t *o;

	if (prefix[0])
		n = (size_t)snprintf(path, sizeof(path), "%s%s", prefix, leaf ? "." : "");
	if (leaf)
		n += (size_t)snprintf(path + n, sizeof(path) - n, "%.*s", (int)(leaf - name), name);
	if (n >= sizeof(path) || !(o = object_at(root, path, n))) {
		json_decref(v);
		return -ENOMEM;
	}
	return json_object_set_new(o, leaf ? leaf + 1 : name, v) < 0 ? -ENOMEM : 0;
}

json_t *counters_stats_json(const struct counters *c)
{
	json_t *root = json_object();

	for (size_t i = 0; root && i < c->n; i++) {
		const struct registration *r = &c->regs[i];

		if (r->status) {
			json_t *part = r->status(r->state), *at;

			at = part ? object_at(root, r->prefix, strlen(r->prefix)) : NULL;
			if (at)
				json_object_update(at, part);
			json_decref(part);
			continue;
		}
		void *buf;
		const void *values = values_of(r, &buf);

		for (size_t k = 0; values && k < r->n; k++)
			put(root, r->prefix, r->defs[k].name,
			    json_integer((json_int_t)value(&r->defs[k], r->state, values)));
		free(buf);
	}
	return root;
}

/* The series of family f: each label once, with the sum of the counters that carry it. */
static json_t *family_json(const struct counters *c, enum counter_family f)
{
	json_t *series = json_array(), *fam;

	for (size_t i = 0; series && i < c->n; i++) {
		const struct registration *r = &c->regs[i];
		const void *values = NULL;
		void *buf = NULL;

		for (size_t k = 0; r->defs && k < r->n; k++) {
			const struct counter_def *d = &r->defs[k];
			const char *label = d->label ? d->label : "";
			json_t *s = NULL, *e;
			size_t j;

			if (d->family != f || (!values && !(values = values_of(r, &buf))))
				continue;
			json_array_foreach (series, j, e)
				if (strcmp(json_string_value(json_object_get(e, "label")), label) ==
				    0)
					s = e;
			if (!s) {
				s = json_pack("{s:s, s:I}", "label", label, "value", (json_int_t)0);
				json_array_append_new(series, s);
			}
			json_object_set_new(
				s, "value",
				json_integer(json_integer_value(json_object_get(s, "value")) +
					     (json_int_t)value(d, r->state, values)));
		}
		free(buf);
	}
	/* A family with no series yet is listed all the same (a dashboard's queries name it). */
	if (!series)
		return NULL;
	fam = json_pack("{s:s, s:s, s:s, s:s?, s:f, s:o}", "name", families[f].name, "type",
			families[f].type, "help", families[f].help, "label_key",
			families[f].label_key, "scale", families[f].scale, "series", series);
	return fam;
}

json_t *counters_metrics_json(const struct counters *c)
{
	json_t *arr = json_array();

	for (int f = COUNTER_FAMILY_NONE + 1; arr && f < _COUNTER_FAMILY_MAX; f++) {
		json_t *fam = family_json(c, (enum counter_family)f);

		if (fam)
			json_array_append_new(arr, fam);
	}
	return arr;
}
