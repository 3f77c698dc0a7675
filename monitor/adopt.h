/*
 * Adopted cgroups: `firebreak watch CGROUP --name NAME` makes a cgroup the enforcer did not create
 * (a container's, a VM jailer's) a sandbox for the collectors and, later, the kill switch, without
 * the enforcer's layers. Also the start-up scan that re-adopts the enforcer's own sandboxes.
 */
#ifndef FB_ADOPT_H
#define FB_ADOPT_H

#include <jansson.h>
#include <stdint.h>

struct daemon;
struct lineserver;

/* {"op":"watch","sandbox":NAME,"cgroup":REL[,"policy_hash":H]} (root only). */
void adopt_op_watch(struct daemon *d, struct lineserver *ls, uint64_t token, uint64_t lineno,
		    json_t *req);

/* {"op":"unwatch","sandbox":NAME} (root only): stops watching an adopted cgroup. */
void adopt_op_unwatch(struct daemon *d, struct lineserver *ls, uint64_t token, uint64_t lineno,
		      json_t *req);

/* Marks adopted sandboxes whose cgroup has gone (the container ended) as destroyed. */
void adopt_reap(struct daemon *d);

/*
 * At start-up: every cgroup under firebreak/ the store does not know as running (the monitor's
 * store was replaced, or a registration was lost with a crash) is registered and watched again,
 * and running sandboxes whose cgroup is gone are marked destroyed. Returns how many changed.
 */
int adopt_scan(struct daemon *d);

struct store;

/*
 * At start-up, before the writer owns the store: the enforcer's steps still running (a
 * step.start, no step.end, the step's cgroup still there with the same id) are known again, with
 * their tools, so their events keep their step and tool. 0 or -errno.
 */
int adopt_load_steps(struct daemon *d, struct store *s);

/* Once the process tracer runs: the steps loaded above are confined again where their tool
 * declares children (a restart must not lift the in-kernel exec rule). */
void adopt_resume_steps(struct daemon *d);

/* Forgets the steps loaded above without confining them (the tracer never started). */
void adopt_forget_steps(struct daemon *d);

#endif
