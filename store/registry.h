/*
 * The sandboxes firebreakd knows, by name, in memory. The daemon is the store's only writer, so it
 * assigns sandbox ids itself and never waits on the store to learn one.
 */
#ifndef FB_REGISTRY_H
#define FB_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

struct registry;

/* Returns a new empty registry; 0 or -ENOMEM. */
int registry_new(struct registry **ret);

/* Frees the registry and its sandboxes; accepts NULL. */
void registry_free(struct registry *r);

/* Loads every sandbox in the store (at start-up, before the writer owns the store). */
int registry_load(struct registry *r, struct store *s);

/* Returns the sandbox named name, or NULL. The pointer stays valid while the registry lives. */
struct store_sandbox *registry_find(struct registry *r, const char *name);

/* Adds a sandbox with the next id, state "registered"; returns 0 and *ret, or -errno. */
int registry_add(struct registry *r, const char *name, int64_t now_ns, struct store_sandbox **ret);

size_t registry_count(struct registry *r);

/* Iterates the sandboxes: start with *pos = 0; returns the next one or NULL at the end. */
struct store_sandbox *registry_next(struct registry *r, size_t *pos);

/*
 * Remembers that step of sandbox runs tool in the cgroup with id cgid (0 if unknown), from the
 * enforcer's step.start; 0 or -ENOMEM.
 */
int registry_step_start(struct registry *r, const char *sandbox, int64_t step, const char *tool,
			uint64_t cgid);

/* Remembers which sandbox, step and tool a cgroup id is (step -1: the sandbox's own). */
int registry_cgroup_put(struct registry *r, uint64_t cgid, const char *sandbox, int64_t step,
			const char *tool);

/* Looks a cgroup id up; 1 and the fields (pointers owned by the registry; the tool NULL if not
 * known), or 0 if unknown. */
int registry_cgroup_get(struct registry *r, uint64_t cgid, const char **ret_sandbox,
			int64_t *ret_step, const char **ret_tool);

/*
 * Changes whenever a cgroup entry is forgotten or replaced: pointers from registry_cgroup_get()
 * taken under an older generation may be stale.
 */
uint64_t registry_generation(struct registry *r);

/* Forgets it and its cgroup (step.end). */
void registry_step_end(struct registry *r, const char *sandbox, int64_t step);

/*
 * The one step of sandbox that runs now: 1 and its step and tool (owned by the registry), or 0
 * if none or several run (a record of a process already gone is then the sandbox's, no step's).
 */
int registry_sole_step(struct registry *r, const char *sandbox, int64_t *ret_step,
		       const char **ret_tool);

/* The tool a running step of sandbox belongs to, or NULL. */
const char *registry_step_tool(struct registry *r, const char *sandbox, int64_t step);

/* Whether sb is live: running, or frozen (which a thaw makes running again). */
int registry_live(const struct store_sandbox *sb);

/*
 * Whether sb is a cgroup `firebreak watch` adopted (a container's, a VM jailer's) rather than
 * one the enforcer made under firebreak/: it has no steps and none of the enforcer's layers.
 */
int registry_adopted(const struct store_sandbox *sb);

/* The running adopted sandbox whose cgroup is rel or an ancestor of it, or NULL. */
struct store_sandbox *registry_adopted_holding(struct registry *r, const char *rel);

/* The running adopted sandbox whose cgroup is rel, above it or below it, or NULL. */
struct store_sandbox *registry_adopted_overlapping(struct registry *r, const char *rel);

/* Remembers that sandbox name is watched as cgroup cgid at level; 0 or -ENOMEM. */
int registry_watch_put(struct registry *r, const char *name, uint64_t cgid, unsigned level);

/* Whether sandbox name is watched (its collectors hold it): 1 or 0. */
int registry_watched(struct registry *r, const char *name);

/* Forgets it: 1 and what was remembered, or 0 if name is not watched. */
int registry_watch_take(struct registry *r, const char *name, uint64_t *ret_cgid,
			unsigned *ret_level);

#endif
