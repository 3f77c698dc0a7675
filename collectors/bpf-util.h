/* Small helpers the collectors' user sides share. */
#ifndef FB_BPF_UTIL_H
#define FB_BPF_UTIL_H

#include <stdint.h>

/* The sum over every CPU of key's u64 in the per-CPU array map_fd; 0 if it cannot be read. */
uint64_t bpf_percpu_sum(int map_fd, uint32_t key);

#endif
