/*
 * What the monitor records of its own doing, through the same sink as every collector: a
 * sandbox's row when its state changes, and the monitor's own events about a sandbox.
 */
#ifndef FB_RECORDS_H
#define FB_RECORDS_H

#include <jansson.h>
#include <stdint.h>

struct daemon;
struct store_sandbox;

/*
 * Stores sb's row as it is now; with token, msg (owned) is that client's answer once the row is
 * durable (the control socket formats it). 0, or -ENOMEM (msg freed) or the sink's error.
 */
int record_sandbox_answered(struct daemon *d, const struct store_sandbox *sb, uint64_t token,
			    char *msg);

/* Stores sb's row as it is now (no one is answered); logs if it cannot. */
void record_sandbox(struct daemon *d, const struct store_sandbox *sb);

/* Stores a monitor event of sb's, kind (sandbox.watch, ...), with fields f (taken). */
void record_event(struct daemon *d, const struct store_sandbox *sb, const char *kind, json_t *f);

#endif
