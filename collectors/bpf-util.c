#include "bpf-util.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define CPUS_MAX 1024

uint64_t bpf_percpu_sum(int map_fd, uint32_t key)
{
	static uint64_t per[CPUS_MAX]; /* static: 8 KiB; the collectors run on the loop thread only */
	int ncpu = libbpf_num_possible_cpus();
	uint64_t sum = 0;

	if (ncpu <= 0 || ncpu > CPUS_MAX || bpf_map_lookup_elem(map_fd, &key, per) < 0)
		return 0;
	for (int c = 0; c < ncpu; c++)
		sum += per[c];
	return sum;
}
