/* What lib/cgroup.c needs from each controller backend (cgroup-v1.c, cgroup-v2.c). Internal. */
#ifndef FB_CGROUP_BACKEND_H
#define FB_CGROUP_BACKEND_H

#include <stddef.h>
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

/* Resources, as lib/cgroup.c probes where each lives. */
enum cgroup_resource { CGROUP_RES_MEMORY, CGROUP_RES_PIDS, CGROUP_RES_CPU, CGROUP_RES_IO, _CGROUP_RES_MAX };

/*
 * The directory of rel in the hierarchy holding resource (v2 for CGROUP_RES_MAX), and whether
 * that hierarchy is v2. Returns 1 (v2), 0 (v1), or -errno (-ENODEV: no such controller).
 */
int cgroup_resource_dir(enum cgroup_resource res, const char *rel, char *buf, size_t size);

/* Calls fn(major, minor) for each whole block device worth throttling (not loop, ram, zram). */
int cgroup_each_disk(int (*fn)(unsigned major, unsigned minor, void *data), void *data);

#endif
