#include "policy-limits.h"

#include <stdio.h>

#include "log.h"
#include "policy/policy.h"

/* The cpu controller's period; the quota is the policy's cores times it. */
#define CPU_PERIOD_US 100000

int sandbox_load_policy(const char *path, struct policy **ret_policy, struct sandbox_limits *ret)
{
	const struct policy_sandbox *sb;
	struct policy *p;
	char err[512];
	int r = policy_load(path, &p, err, sizeof(err));

	if (r < 0)
		return log_error("%s", err), r;
	sb = policy_sandbox(p);
	*ret = (struct sandbox_limits){
		.uid = sb->uid,
		.gid = sb->gid,
		.caps = {
			.memory_bytes = sb->memory_bytes,
			.no_swap = !sb->swap,
			.pids = sb->pids,
			.cpu_quota_us = sb->cpu > 0 ? (uint64_t)(sb->cpu * CPU_PERIOD_US) : 0,
			.cpu_period_us = CPU_PERIOD_US,
			.io_read_bps = sb->io_read_bps,
			.io_write_bps = sb->io_write_bps,
		},
		.workspace_bytes = sb->workspace_bytes,
		.tmp_bytes = sb->tmp_bytes,
		.home_bytes = sb->home_bytes,
		.open_files = sb->open_files,
		.wall_clock_ns = sb->wall_clock_ns,
	};
	*ret_policy = p;
	return 0;
}
