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
 * two, a page at least); 0 and *ret, or -errno (logged).
 */
int dns_tracer_new(uint64_t ring_size, struct dns_tracer **ret);

/* Detaches from every cgroup and frees; accepts NULL. */
void dns_tracer_free(struct dns_tracer *t);

/* An fd that becomes readable when the ring buffer has passed its wake-up watermark. */
int dns_tracer_fd(struct dns_tracer *t);

/*
 * Attaches (on) the hooks to the cgroup with id cgid at cgroup_dir (its v2 directory; its step
 * cgroups below inherit them), or detaches them (off; cgroup_dir unused). 0 or -errno.
 */
int dns_tracer_watch(struct dns_tracer *t, uint64_t cgid, const char *cgroup_dir, int on);

/* Calls fn for each waiting record; returns how many, or -errno. */
int dns_tracer_drain(struct dns_tracer *t, void (*fn)(const struct dns_trace_event *e, void *data),
		     void *data);

/* What the kernel could not record, per DNS_TRACE_LOST_*, since the tracer started. */
void dns_tracer_lost(struct dns_tracer *t, uint64_t ret[DNS_TRACE_LOSSES]);

#endif
