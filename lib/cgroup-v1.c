/* Resource caps through cgroup v1 controllers, for hosts (like ours) that keep them there. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cgroup-backend.h"
#include "macro.h"

static int v1_set_memory(const char *dir, uint64_t bytes, int no_swap)
{
	char v[32];
	int r;

	snprintf(v, sizeof(v), "%" PRIu64, bytes);
	if ((r = cgroup_write(dir, "memory.limit_in_bytes", v)) < 0)
		return r;
	/* memsw exists only with swap accounting (it must be set after limit_in_bytes). */
	if (no_swap && (r = cgroup_write(dir, "memory.memsw.limit_in_bytes", v)) < 0 && r != -ENOENT)
		return r;
	/* 0: never swap this cgroup's pages, even where the host has swap. */
	if (no_swap && (r = cgroup_write(dir, "memory.swappiness", "0")) < 0 && r != -ENOENT)
		return r;
	return 0;
}

static int v1_set_pids(const char *dir, uint64_t max)
{
	char v[32];

	snprintf(v, sizeof(v), "%" PRIu64, max);
	return cgroup_write(dir, "pids.max", v);
}

static int v1_set_cpu(const char *dir, uint64_t quota_us, uint64_t period_us)
{
	char v[32];
	int r;

	snprintf(v, sizeof(v), "%" PRIu64, period_us);
	if ((r = cgroup_write(dir, "cpu.cfs_period_us", v)) < 0)
		return r;
	snprintf(v, sizeof(v), "%" PRIu64, quota_us);
	return cgroup_write(dir, "cpu.cfs_quota_us", v);
}

struct io_limits {
	const char *dir;
	uint64_t rbps, wbps;
};

static int v1_io_one(unsigned major, unsigned minor, void *data)
{
	struct io_limits *l = data;
	char v[64];
	int r;

	if (l->rbps) {
		snprintf(v, sizeof(v), "%u:%u %" PRIu64, major, minor, l->rbps);
		if ((r = cgroup_write(l->dir, "blkio.throttle.read_bps_device", v)) < 0)
			return r;
	}
	if (l->wbps) {
		snprintf(v, sizeof(v), "%u:%u %" PRIu64, major, minor, l->wbps);
		if ((r = cgroup_write(l->dir, "blkio.throttle.write_bps_device", v)) < 0)
			return r;
	}
	return 0;
}

static int v1_set_io(const char *dir, uint64_t read_bps, uint64_t write_bps)
{
	struct io_limits l = { dir, read_bps, write_bps };

	return cgroup_each_disk(v1_io_one, &l);
}

static int v1_memory_peak(const char *dir, uint64_t *ret)
{
	return cgroup_read_u64(dir, "memory.max_usage_in_bytes", ret);
}

const struct cgroup_backend cgroup_v1_backend = {
	.name = "v1",
	.set_memory = v1_set_memory,
	.set_pids = v1_set_pids,
	.set_cpu = v1_set_cpu,
	.set_io = v1_set_io,
	.memory_peak = v1_memory_peak,
};
