/*
 * The one counter table. A module declares each of its counters once, in a table of struct
 * counter_def (its name, help, type, and where its value is), and registers that table with its
 * own state. Both views are generated from the registry: the stats JSON (control "stats",
 * `firebreak status --json`, the shutdown log line) and the series of the Prometheus page. A
 * counter is named in one place; its Prometheus family, where it has one, is named once in
 * counters.c. Loop thread only (the values themselves may be read from any state the owner
 * keeps; a read function may take the owner's lock).
 */
#ifndef FB_COUNTERS_H
#define FB_COUNTERS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

enum counter_type {
	COUNTER_TOTAL, /* only grows */
	COUNTER_GAUGE, /* a level: goes up and down */
};

/* The Prometheus families counters feed (counters.c names each once, with its help). */
enum counter_family {
	COUNTER_FAMILY_NONE,	      /* the stats JSON only */
	COUNTER_FAMILY_LOST,	      /* firebreak_events_lost_total{stage} */
	COUNTER_FAMILY_HTTP_RESTARTS, /* firebreak_http_child_restarts_total */
	COUNTER_FAMILY_HTTP_REFUSED,  /* firebreak_http_channel_refused_total */
	COUNTER_FAMILY_EXPORT_ERRORS, /* firebreak_exporter_errors_total{exporter} */
	COUNTER_FAMILY_EXPORT_PUSHES, /* firebreak_exporter_pushes_total{exporter} */
	COUNTER_FAMILY_EXPORT_ITEMS,  /* firebreak_exporter_items_total{exporter} */
	COUNTER_FAMILY_START_TIME,    /* firebreak_start_time_seconds (a value in ns, shown in s) */
	_COUNTER_FAMILY_MAX
};

struct counter_def {
	const char *name; /* its path under the owner's prefix in the stats JSON: "read", "a.b" */
	enum counter_type type;
	const char *help; /* what it counts, one line */
	enum counter_family family;
	const char *label; /* its label's value in the family ("kernel_ring_buffer"), or NULL */
	size_t offset;	   /* where its uint64_t is in the owner's state, unless read is set */
	uint64_t (*read)(const void *state); /* or: computed from the state */
};

/* A counter at a uint64_t field of the owner's state struct. */
#define COUNTER_AT(type, field) .offset = offsetof(type, field)

struct counters;

/* A new empty registry; 0 or -ENOMEM. */
int counters_new(struct counters **ret);

/* Frees the registry (not the owners' states); accepts NULL. */
void counters_free(struct counters *c);

/*
 * Registers n counters of an owner whose state is at state, under prefix in the stats JSON
 * ("proc_trace"; "" for the top level). defs and prefix are borrowed: they must live as long as
 * the registration (static tables, or tables in the owner's state). 0 or -ENOMEM.
 */
int counters_add(struct counters *c, const char *prefix, const struct counter_def *defs, size_t n,
		 const void *state);

/*
 * The same, for an owner whose counters are read as one consistent snapshot (under its lock):
 * snapshot(state, buf) fills size bytes of buf, and the defs' offsets are into buf. 0 or -ENOMEM.
 */
int counters_add_snapshot(struct counters *c, const char *prefix, const struct counter_def *defs,
			  size_t n, const void *state, size_t size,
			  void (*snapshot)(const void *state, void *buf));

/*
 * Registers a part of the stats JSON that is not counters (a listen address, whether an
 * exporter is on): fn returns a new object, merged at prefix. 0 or -ENOMEM.
 */
int counters_add_status(struct counters *c, const char *prefix, json_t *(*fn)(const void *state),
			const void *state);

/* Forgets every registration of state (its owner is going); the others stay. */
void counters_remove(struct counters *c, const void *state);

/* Every counter, and every status part, as one new nested JSON object (NULL: -ENOMEM). */
json_t *counters_stats_json(const struct counters *c);

/*
 * The Prometheus view: [{"name", "type", "help", "label_key", "scale", "series": [{"label",
 * "value"}]}], one element per family (one with no counter registered has no series), the
 * counters that share a label summed. The HTTP child formats it (monitor/http/http-metrics.c).
 * A new array, or NULL.
 */
json_t *counters_metrics_json(const struct counters *c);

#endif
