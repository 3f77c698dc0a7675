/*
 * What every collector is given, and the one thing they all need to know: which sandbox, step and
 * tool a cgroup is. A collector registers its sources with the loop, emits its events to the sink
 * (the store's writer, watched by the detector stage) and its counters to the registry; it
 * includes nothing of the daemon's wiring (docs/architecture.md).
 */
#ifndef FB_COLLECTOR_H
#define FB_COLLECTOR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct config;
struct counters;
struct loop;
struct registry;
struct sink;
struct store_sandbox;

struct collector_env {
	struct loop *loop;
	struct sink *sink;	   /* every event goes here (store/sink.h) */
	struct registry *registry; /* the sandboxes and their steps' cgroups */
	const struct config *cfg;
	struct counters *counters; /* each collector's counters are registered here */
};

/*
 * Which sandbox, step and tool the cgroup with id cgid is: the registry's answer, else a look
 * under firebreak/ (a cgroup's id is its directory's inode), remembered in the registry. 1 and
 * the fields (owned by the registry), or 0 if it is no sandbox's.
 */
int collector_resolve(struct registry *r, uint64_t cgid, const char **ret_sandbox,
		      int64_t *ret_step, const char **ret_tool);

/*
 * The enforcer's init of sandbox sb (its root, /proc/PID/root, shows the sandbox's file system):
 * from the sandbox's state.json; 0 and *ret, or -errno (an adopted cgroup has none: -ENOENT).
 * Check it with collector_sandbox_init_alive before each use: the pid may be reused.
 */
int collector_sandbox_init(const struct config *cfg, const struct store_sandbox *sb, pid_t *ret);

/* 1 if pid is still in sandbox sb's own cgroup (so still its init), else 0. */
int collector_sandbox_init_alive(const struct store_sandbox *sb, pid_t pid);

/*
 * A loss no sandbox can be named for (the source does not say whose records it dropped): stores
 * a monitor.loss ({"stage": stage, count_key: count, "unattributed": true}) for every live
 * sandbox, since each could have produced it, and each is then judged blind (fail closed).
 * Returns how many were queued.
 */
size_t collector_loss_everywhere(const struct collector_env *env, const char *stage,
				 const char *count_key, uint64_t count);

#endif
