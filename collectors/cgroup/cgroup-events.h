/*
 * The cgroup stats collector: every stats_period, what each running sandbox's cgroup and each of
 * its step cgroups used (cpu and throttling, memory and its limit hits and OOM kills, pids and
 * refused forks, io bytes, pressure), stored as a "cgroup.stats" event when it changed since the
 * last sample, on the step (and tool) it belongs to. A sandbox's workspace use is read through
 * its init's root (where the enforcer keeps its state says which init).
 */
#ifndef FB_CGROUP_EVENTS_H
#define FB_CGROUP_EVENTS_H

struct collector_env;
struct cgroup_collector;

/*
 * Starts sampling every cfg->stats_period_ns (none if 0) and registers its counter; 0 and *ret,
 * or -errno.
 */
int cgroup_collector_new(const struct collector_env *env, struct cgroup_collector **ret);

/* Stops and frees it; accepts NULL. */
void cgroup_collector_free(struct cgroup_collector *c);

#endif
