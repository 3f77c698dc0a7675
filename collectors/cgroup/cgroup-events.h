/*
 * The cgroup stats collector: every stats_period, what each running sandbox's cgroup and each of
 * its step cgroups used (cpu and throttling, memory and its limit hits and OOM kills, pids and
 * refused forks, io bytes, pressure), stored as a "cgroup.stats" event when it changed since the
 * last sample, on the step (and tool) it belongs to.
 */
#ifndef FB_CGROUP_STATS_COLLECTOR_H
#define FB_CGROUP_STATS_COLLECTOR_H

#include <stdint.h>

struct config;
struct registry;
struct writer;
struct cgroup_collector;

/*
 * Returns a new collector in *ret; cfg (kept, not copied) says where the enforcer keeps its
 * sandboxes' state (their inits, through whose root a sandbox's workspace use is read). 0 or
 * -ENOMEM.
 */
int cgroup_collector_new(const struct config *cfg, struct cgroup_collector **ret);

/* Frees it; accepts NULL. */
void cgroup_collector_free(struct cgroup_collector *c);

/* Samples every running sandbox in reg; queues one event per changed cgroup to w. Returns how
 * many it queued, or -errno. */
int cgroup_collector_sample(struct cgroup_collector *c, struct registry *reg, struct writer *w,
			    int64_t now_ns);

#endif
