/*
 * The exporter's door (monitor/export.h has the core's side): its main, and the state record the
 * core and the exporter share through the state file.
 */
#ifndef FB_EXPORT_MAIN_H
#define FB_EXPORT_MAIN_H

#include <stddef.h>
#include <stdint.h>

struct config;

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

/* The exporter's main. */
int export_main(const struct config *cfg, int foreground);

#endif
