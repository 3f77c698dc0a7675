/*
 * The denied-packet collector: the gate's NFLOG group, read with libpcap, aggregated per
 * (sandbox, source, destination, protocol, port) into "net.denied" events whose counts add up
 * exactly to the packets read.
 */
#ifndef FB_NFLOG_EVENTS_H
#define FB_NFLOG_EVENTS_H

struct collector_env;
struct nflog_events;

/*
 * Starts following the gate's namespace (opened when it appears, again when it is made anew)
 * and registers its counters ("nflog"). 0 and *ret, or -errno.
 */
int nflog_events_new(const struct collector_env *env, struct nflog_events **ret);

/* Opens the gate's NFLOG group if the gate is new (the tick does it too); call before a sandbox
 * with egress runs anything. Accepts NULL. */
void nflog_events_follow(struct nflog_events *s);

/* Flushes every aggregate and closes the reader; accepts NULL. */
void nflog_events_free(struct nflog_events *s);

#endif
