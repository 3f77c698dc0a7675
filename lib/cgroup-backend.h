/* What lib/cgroup.c needs from each controller backend (cgroup-v1.c, cgroup-v2.c). Internal. */
#ifndef FB_CGROUP_BACKEND_H
#define FB_CGROUP_BACKEND_H

#include <stdint.h>

struct cgroup_backend {
	const char *name;
	/* Each takes the cgroup's directory in the hierarchy holding that controller. */
	int (*set_memory)(const char *dir, uint64_t bytes, int no_swap);
	int (*set_pids)(const char *dir, uint64_t max);
	int (*set_cpu)(const char *dir, uint64_t quota_us, uint64_t period_us);
	int (*set_io)(const char *dir, uint64_t read_bps, uint64_t write_bps);
	int (*memory_peak)(const char *dir, uint64_t *ret);
};

extern const struct cgroup_backend cgroup_v1_backend;
extern const struct cgroup_backend cgroup_v2_backend;

/* Writes value to dir/file (one write, as the kernel wants it); 0 or -errno. */
int cgroup_write(const char *dir, const char *file, const char *value);

/* Reads dir/file as one unsigned number ("max" reads as UINT64_MAX); 0 or -errno. */
int cgroup_read_u64(const char *dir, const char *file, uint64_t *ret);

/* Calls fn(major, minor) for each whole block device worth throttling (not loop, ram, zram). */
int cgroup_each_disk(int (*fn)(unsigned major, unsigned minor, void *data), void *data);

#endif
