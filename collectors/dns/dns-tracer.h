/*
 * The DNS tracer's user side: the port-53 payloads of watched sandboxes' sockets, read from a
 * ring buffer. Wraps the libbpf skeleton (no one else includes it).
 */
#ifndef FB_DNS_TRACER_H
#define FB_DNS_TRACER_H

#include <stdint.h>

#include "dns-trace.h"

struct dns_tracer;

/*
 * Loads the tracer (attached to no cgroup yet) with a ring buffer of ring_size bytes (a power of
 * two, a page at least), each watched sandbox's share of it refilled at share_rate bytes a
 * second (0: no shares); 0 and *ret, or -errno (logged).
 */
int dns_tracer_new(uint64_t ring_size, uint64_t share_rate, struct dns_tracer **ret);

/* Detaches from every cgroup and frees; accepts NULL. */
void dns_tracer_free(struct dns_tracer *t);

/* An fd that becomes readable when the ring buffer has passed its wake-up watermark. */
int dns_tracer_fd(struct dns_tracer *t);

/*
 * Watches (on) the sandbox whose cgroup has id cgid, at level (1..DNS_TRACE_LEVEL_MAX, the same
 * on and off) and cgroup_dir (its v2 directory; its step cgroups below inherit the hooks): its
 * entry in the kernel's watched map (kept, with its counts, if it is there), then the hooks. Off
 * detaches the hooks only (cgroup_dir unused): dns_tracer_forget drops the entry once the ring
 * is drained. Watched cgroups must not nest. 0 or -errno.
 */
int dns_tracer_watch(struct dns_tracer *t, uint64_t cgid, unsigned level, const char *cgroup_dir,
		     int on);

/* Drops the watched map's entry of cgid at level (after dns_tracer_watch off). */
void dns_tracer_forget(struct dns_tracer *t, uint64_t cgid, unsigned level);

/* The kernel's counts for the watched sandbox cgid into *ret: 0, or -ENOENT if not watched. */
int dns_tracer_watch_lost(struct dns_tracer *t, uint64_t cgid, struct dns_trace_watch *ret);

/* Calls fn for each waiting record; returns how many, or -errno. */
int dns_tracer_drain(struct dns_tracer *t, void (*fn)(const struct dns_trace_event *e, void *data),
		     void *data);

/* What the kernel could not record, per DNS_TRACE_LOST_*, since the tracer started. */
void dns_tracer_lost(struct dns_tracer *t, uint64_t ret[DNS_TRACE_LOSSES]);

#endif
