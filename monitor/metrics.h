/*
 * What the Prometheus metrics count that no other counter does: events by source and kind,
 * verdicts by rule and severity, actions by kind and result with the verdict→action latency, and
 * each sandbox's latest resource use. Fed by the writer's observer (every event of every source
 * passes there once), read as one JSON snapshot by the HTTP child (monitor/http-privsep.c), which
 * formats the text. Loop thread only.
 */
#ifndef FB_METRICS_H
#define FB_METRICS_H

#include <jansson.h>

struct daemon;
struct event;
struct metrics;

int metrics_new(struct metrics **ret);
void metrics_free(struct metrics *m);

/* Counts one event on its way to the store. */
void metrics_observe(struct metrics *m, const struct event *ev);

/* Everything the /metrics page shows, as a new JSON object (docs/api.md lists the names). */
json_t *metrics_snapshot(struct daemon *d);

#endif
