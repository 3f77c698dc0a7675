/*
 * The exporter: firebreakd re-executed as `firebreakd --exporter`, jailed like the HTTP child but
 * allowed to connect out. It reads the store (read-only) from where it left off and pushes:
 * every event as a Loki line labelled {sandbox, tool, kind, severity}, and each incident, once it
 * has settled, as an OTLP/HTTP trace (lib/otlp.c). Batches; a failed push is counted and retried
 * with backoff from the same place, so a dead target loses nothing the store keeps and catches
 * up when it returns. It never touches the core's loop. docs/export.md.
 */
#ifndef FB_EXPORT_H
#define FB_EXPORT_H

#include <jansson.h>
#include <stdint.h>

struct config;
struct daemon;

/* Where the exporter is, kept in a fixed-size record of the state file (its fd 3). */
struct export_state {
	int64_t loki_after, otlp_after; /* the last event and incident delivered */
	uint64_t loki_pushes, loki_lines, loki_errors;
	uint64_t otlp_pushes, otlp_spans, otlp_errors;
};

#define EXPORT_STATE_SIZE 512

/* Encodes s into buf (EXPORT_STATE_SIZE, padded with spaces), or decodes; 0 or -EINVAL. */
void export_state_encode(const struct export_state *s, char buf[EXPORT_STATE_SIZE]);
int export_state_decode(const char *buf, size_t len, struct export_state *ret);

/* The core's side: starts the exporter if an endpoint is set, restarts it, stops it. */
int export_start(struct daemon *d);
void export_tick(struct daemon *d);
void export_stop(struct daemon *d);

/* The exporter's counters, for /metrics and status (from the state file); a new object. */
json_t *export_stats_json(struct daemon *d);

/* The exporter's main. */
int export_main(const struct config *cfg, int foreground);

#endif
