/*
 * The exporter: firebreakd re-executed as `firebreakd --exporter`, jailed like the HTTP child but
 * allowed to connect out. It reads the store (read-only) from where it left off and pushes:
 * every event as a Loki line labelled {sandbox, tool, kind, severity}, and each incident, once it
 * has settled, as an OTLP/HTTP trace (store/otlp.c). Batches; a failed push is counted and retried
 * with backoff from the same place, so a dead target loses nothing the store keeps and catches
 * up when it returns. It never touches the core's loop. docs/export.md.
 */
#ifndef FB_EXPORT_H
#define FB_EXPORT_H

#include <jansson.h>
#include <stdint.h>

#include "monitor/export/export-main.h"

struct config;
struct daemon;

/* The core's side: starts the exporter if an endpoint is set, restarts it, stops it. */
int export_start(struct daemon *d);
void export_tick(struct daemon *d);
void export_stop(struct daemon *d);
/* Frees what export_start made (stopping it first if needed). */
void export_free(struct daemon *d);

/* Registers the exporter's part of the stats and its counters (read from its state file). */
int export_add_counters(struct daemon *d);

#endif
