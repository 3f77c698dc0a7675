/* Small helpers the collectors' user sides share. */
#ifndef FB_BPF_UTIL_H
#define FB_BPF_UTIL_H

#include <bpf/libbpf.h>
#include <stdint.h>

/* The sum over every CPU of key's u64 in the per-CPU array map_fd; 0 if it cannot be read. */
uint64_t bpf_percpu_sum(int map_fd, uint32_t key);

/*
 * The last steps of a collector's start, in BCC libbpf-tools' order (open, set the read-only
 * config, load: the collector's own; then these): attaches the loaded skeleton s and sets up a
 * reader of its ring buffer map ring, which calls fn(ctx, record, size) for each record that
 * ring_buffer__consume() drains. The kernel side decides when the reader's fd wakes (by
 * watermark, not per record); this adds no wakeup of its own. 0 and *ret_rb (the caller frees it
 * with ring_buffer__free), or -errno, logged with what ("process tracer").
 */
int bpf_collector_attach(struct bpf_object_skeleton *s, struct bpf_map *ring,
			 ring_buffer_sample_fn fn, void *ctx, const char *what,
			 struct ring_buffer **ret_rb);

/*
 * A watched sandbox's burst in a ring of ring_size bytes that all sandboxes share
 * (collectors/share.bpf.h): an eighth of the ring, least bytes at least (what an honest step's
 * start takes), never more than half the ring.
 */
uint64_t bpf_share_burst(uint64_t ring_size, uint64_t least);

/*
 * Tells a kernel half which levels to look at for watched cgroups (share.bpf.h's level_lo and
 * level_hi, in its skeleton's data): the shallowest and deepest l in 1..max with at_level[l] > 0,
 * or both dflt when none is. Widens before it narrows, so no watched level is ever out of the
 * range in between.
 */
void bpf_levels_set(const unsigned *at_level, unsigned max, unsigned dflt, volatile uint32_t *lo,
		    volatile uint32_t *hi);

#endif
