/* Resource caps through cgroup v2 controllers, where the host enables them in v2. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cgroup-backend.h"
#include "macro.h"

static int v2_set_memory(const char *dir, uint64_t bytes, int no_swap)
{
	int r;

	if ((r = cgroup_write_u64(dir, "memory.max", bytes)) < 0)
		return r;
	/* memory.swap.max exists only with swap accounting; without it there is no swap to cap. */
	if (no_swap && (r = cgroup_write(dir, "memory.swap.max", "0")) < 0 && r != -ENOENT)
		return r;
	return 0;
}

static int v2_set_cpu(const char *dir, uint64_t quota_us, uint64_t period_us)
{
	char v[64];

	snprintf(v, sizeof(v), "%" PRIu64 " %" PRIu64, quota_us, period_us);
	return cgroup_write(dir, "cpu.max", v);
}

/* Both directions' caps on one disk, in one line of io.max. */
static int v2_set_io_device(const char *dir, unsigned major, unsigned minor, uint64_t read_bps,
			    uint64_t write_bps)
{
	char v[96];
	int n = snprintf(v, sizeof(v), "%u:%u", major, minor);

	if (read_bps)
		n += snprintf(v + n, sizeof(v) - (size_t)n, " rbps=%" PRIu64, read_bps);
	if (write_bps)
		snprintf(v + n, sizeof(v) - (size_t)n, " wbps=%" PRIu64, write_bps);
	return cgroup_write(dir, "io.max", v);
}

static int v2_memory_peak(const char *dir, uint64_t *ret)
{
	return cgroup_read_u64(dir, "memory.peak", ret);
}

const struct cgroup_backend cgroup_v2_backend = {
	.name = "v2",
	.set_memory = v2_set_memory,
	.set_pids = cgroup_set_pids,
	.set_cpu = v2_set_cpu,
	.set_io_device = v2_set_io_device,
	.memory_peak = v2_memory_peak,
};
