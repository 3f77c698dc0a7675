/* Resource caps through cgroup v1 controllers, for hosts (like ours) that keep them there. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cgroup-backend.h"
#include "macro.h"

static int v1_set_memory(const char *dir, uint64_t bytes, int no_swap)
{
	int r;

	if ((r = cgroup_write_u64(dir, "memory.limit_in_bytes", bytes)) < 0)
		return r;
	/* memsw exists only with swap accounting (it must be set after limit_in_bytes). */
	if (no_swap && (r = cgroup_write_u64(dir, "memory.memsw.limit_in_bytes", bytes)) < 0 &&
	    r != -ENOENT)
		return r;
	/* 0: never swap this cgroup's pages, even where the host has swap. */
	if (no_swap && (r = cgroup_write(dir, "memory.swappiness", "0")) < 0 && r != -ENOENT)
		return r;
	return 0;
}

static int v1_set_cpu(const char *dir, uint64_t quota_us, uint64_t period_us)
{
	int r;

	if ((r = cgroup_write_u64(dir, "cpu.cfs_period_us", period_us)) < 0)
		return r;
	return cgroup_write_u64(dir, "cpu.cfs_quota_us", quota_us);
}

/* One direction's cap on one disk, in its own file; 0 is no cap, and writes nothing. */
static int v1_throttle(const char *dir, const char *file, unsigned major, unsigned minor,
		       uint64_t bps)
{
	char v[64];

	if (!bps)
		return 0;
	snprintf(v, sizeof(v), "%u:%u %" PRIu64, major, minor, bps);
	return cgroup_write(dir, file, v);
}

static int v1_set_io_device(const char *dir, unsigned major, unsigned minor, uint64_t read_bps,
			    uint64_t write_bps)
{
	int r = v1_throttle(dir, "blkio.throttle.read_bps_device", major, minor, read_bps);

	if (r < 0)
		return r;
	return v1_throttle(dir, "blkio.throttle.write_bps_device", major, minor, write_bps);
}

static int v1_memory_peak(const char *dir, uint64_t *ret)
{
	return cgroup_read_u64(dir, "memory.max_usage_in_bytes", ret);
}

const struct cgroup_backend cgroup_v1_backend = {
	.name = "v1",
	.set_memory = v1_set_memory,
	.set_pids = cgroup_set_pids,
	.set_cpu = v1_set_cpu,
	.set_io_device = v1_set_io_device,
	.memory_peak = v1_memory_peak,
};
