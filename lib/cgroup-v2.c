/* Resource caps through cgroup v2 controllers, where the host enables them in v2. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cgroup-backend.h"
#include "macro.h"

static int v2_set_memory(const char *dir, uint64_t bytes, int no_swap)
{
	char v[32];
	int r;

	snprintf(v, sizeof(v), "%" PRIu64, bytes);
	if ((r = cgroup_write(dir, "memory.max", v)) < 0)
		return r;
	/* memory.swap.max exists only with swap accounting; without it there is no swap to cap. */
	if (no_swap && (r = cgroup_write(dir, "memory.swap.max", "0")) < 0 && r != -ENOENT)
		return r;
	return 0;
}

static int v2_set_pids(const char *dir, uint64_t max)
{
	char v[32];

	snprintf(v, sizeof(v), "%" PRIu64, max);
	return cgroup_write(dir, "pids.max", v);
}

static int v2_set_cpu(const char *dir, uint64_t quota_us, uint64_t period_us)
{
	char v[64];

	snprintf(v, sizeof(v), "%" PRIu64 " %" PRIu64, quota_us, period_us);
	return cgroup_write(dir, "cpu.max", v);
}

struct io_limits {
	const char *dir;
	uint64_t rbps, wbps;
};

static int v2_io_one(unsigned major, unsigned minor, void *data)
{
	struct io_limits *l = data;
	char v[96];
	int n = snprintf(v, sizeof(v), "%u:%u", major, minor);

	if (l->rbps)
		n += snprintf(v + n, sizeof(v) - (size_t)n, " rbps=%" PRIu64, l->rbps);
	if (l->wbps)
		snprintf(v + n, sizeof(v) - (size_t)n, " wbps=%" PRIu64, l->wbps);
	return cgroup_write(l->dir, "io.max", v);
}

static int v2_set_io(const char *dir, uint64_t read_bps, uint64_t write_bps)
{
	struct io_limits l = { dir, read_bps, write_bps };

	return cgroup_each_disk(v2_io_one, &l);
}

static int v2_memory_peak(const char *dir, uint64_t *ret)
{
	return cgroup_read_u64(dir, "memory.peak", ret);
}

const struct cgroup_backend cgroup_v2_backend = {
	.name = "v2",
	.set_memory = v2_set_memory,
	.set_pids = v2_set_pids,
	.set_cpu = v2_set_cpu,
	.set_io = v2_set_io,
	.memory_peak = v2_memory_peak,
};
