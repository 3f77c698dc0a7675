/*
 * What lib/cgroup.c needs from each controller backend (cgroup-v1.c, cgroup-v2.c), and what the
 * backends share (cgroup-backend.c; cgroup_write and cgroup_read_u64 are cgroup.c's). Internal.
 */
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
	/* One disk's io caps (0: none that way); cgroup_set_io() calls it for every disk. */
	int (*set_io_device)(const char *dir, unsigned major, unsigned minor, uint64_t read_bps,
			     uint64_t write_bps);
	int (*memory_peak)(const char *dir, uint64_t *ret);
};

extern const struct cgroup_backend cgroup_v1_backend;
extern const struct cgroup_backend cgroup_v2_backend;

/* Writes value to dir/file (one write, as the kernel wants it); 0 or -errno. */
int cgroup_write(const char *dir, const char *file, const char *value);

/* Reads dir/file as one unsigned number ("max" reads as UINT64_MAX); 0 or -errno. */
int cgroup_read_u64(const char *dir, const char *file, uint64_t *ret);

/* Writes value in decimal to dir/file; 0 or -errno. */
int cgroup_write_u64(const char *dir, const char *file, uint64_t value);

/* Sets pids.max, which v1 and v2 name and read alike; 0 or -errno. */
int cgroup_set_pids(const char *dir, uint64_t max);

/*
 * Caps io on each whole disk worth throttling (not loop, ram, zram) through b->set_io_device;
 * 0, or the -errno of the first disk that fails (those after it are left as they were).
 */
int cgroup_set_io(const struct cgroup_backend *b, const char *dir, uint64_t read_bps,
		  uint64_t write_bps);

/* Resources, as lib/cgroup.c probes where each lives. */
enum cgroup_resource {
	CGROUP_RES_MEMORY,
	CGROUP_RES_PIDS,
	CGROUP_RES_CPU,
	CGROUP_RES_IO,
	_CGROUP_RES_MAX
};

/*
 * The directory of rel in the hierarchy holding resource (v2 for CGROUP_RES_MAX), and whether
 * that hierarchy is v2. Returns 1 (v2), 0 (v1), or -errno (-ENODEV: no such controller).
 */
int cgroup_resource_dir(enum cgroup_resource res, const char *rel, char *buf, size_t size);

#endif
