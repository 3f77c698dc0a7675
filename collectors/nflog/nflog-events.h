/*
 * The gate's denied packets as events: aggregated per (sandbox, source, destination, protocol,
 * port) into "net.denied" events whose counts add up exactly to the packets read.
 */
#ifndef FB_NFLOG_EVENTS_H
#define FB_NFLOG_EVENTS_H

struct daemon;

/* Starts following the gate's namespace (opened when it appears, again when it is made anew). */
int nflog_events_start(struct daemon *d);

#include <stdint.h>

/* Packets read and counted in aggregates not stored yet. */
uint64_t nflog_events_pending(struct daemon *d);

/* Opens the gate's NFLOG group if the gate is new (the tick does it too); call before a sandbox
 * with egress runs anything. */
void nflog_events_follow(struct daemon *d);

/* Flushes every aggregate and closes the reader. */
void nflog_events_stop(struct daemon *d);

#endif
