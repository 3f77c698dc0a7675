/*
 * What the monitor records of its own doing, through the same sink as every collector: a
 * sandbox's row when its state changes, and the monitor's own events about a sandbox.
 */
#ifndef FB_RECORDS_H
#define FB_RECORDS_H

#include <jansson.h>

struct daemon;
struct store_sandbox;

/* Stores sb's row as it is now (no one is answered); logs if it cannot. */
void record_sandbox(struct daemon *d, const struct store_sandbox *sb);

/* Stores a monitor event of sb's, kind (sandbox.watch, ...), with fields f (taken). */
void record_event(struct daemon *d, const struct store_sandbox *sb, const char *kind, json_t *f);

#endif
