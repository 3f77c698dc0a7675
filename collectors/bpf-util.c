#include "bpf-util.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>

#include "log.h"

#define CPUS_MAX 1024

uint64_t bpf_percpu_sum(int map_fd, uint32_t key)
{
	static uint64_t
		per[CPUS_MAX]; /* static: 8 KiB; the collectors run on the loop thread only */
	int ncpu = libbpf_num_possible_cpus();
	uint64_t sum = 0;

	if (ncpu <= 0 || ncpu > CPUS_MAX || bpf_map_lookup_elem(map_fd, &key, per) < 0)
		return 0;
	for (int c = 0; c < ncpu; c++)
		sum += per[c];
	return sum;
}

int bpf_collector_attach(struct bpf_object_skeleton *s, struct bpf_map *ring,
			 ring_buffer_sample_fn fn, void *ctx, const char *what,
			 struct ring_buffer **ret_rb)
{
	struct ring_buffer *rb;
	int r;

	if ((r = bpf_object__attach_skeleton(s)) < 0)
		return log_errno(r, "%s: load and attach", what);
	rb = ring_buffer__new(bpf_map__fd(ring), fn, ctx, NULL);
	if (!rb)
		return log_errno(-errno, "%s: ring buffer", what);
	*ret_rb = rb;
	return 0;
}

uint64_t bpf_share_burst(uint64_t ring_size, uint64_t least)
{
	uint64_t burst = ring_size / 8 > least ? ring_size / 8 : least;

	return burst < ring_size / 2 ? burst : ring_size / 2;
}

void bpf_levels_set(const unsigned *at_level, unsigned max, unsigned dflt, volatile uint32_t *lo,
		    volatile uint32_t *hi)
{
	unsigned l_lo = 0, l_hi = 0;

	for (unsigned l = 1; l <= max; l++)
		if (at_level[l]) {
			l_lo = l_lo ? l_lo : l;
			l_hi = l;
		}
	if (!l_lo)
		l_lo = l_hi = dflt;
	if (l_lo < *lo)
		*lo = l_lo;
	*hi = l_hi;
	*lo = l_lo;
}
