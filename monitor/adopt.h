/*
 * Adopted cgroups: `firebreak watch CGROUP --name NAME` makes a cgroup the enforcer did not create
 * (a container's, a VM jailer's) a sandbox for the collectors and, later, the kill switch, without
 * the enforcer's layers. Also the start-up scan that re-adopts the enforcer's own sandboxes.
 */
#ifndef FB_ADOPT_H
#define FB_ADOPT_H

#include <stddef.h>
#include <stdint.h>

struct daemon;
struct store_sandbox;

/* What `firebreak watch` asks for (op watch; the control socket checks it comes from root). */
struct adopt_watch {
	const char *name;	 /* the sandbox's name */
	const char *cgroup;	 /* the cgroup, relative to the v2 hierarchy's root */
	const char *policy_hash; /* NULL: none */
	const char *policy;	 /* its text, or NULL */
};

/*
 * Watches w->cgroup as sandbox w->name (or finds it watched already, unchanged): 0 and *ret, or
 * -errno with *ret_why saying why (a static text, or the policy loader's message in err).
 */
int adopt_watch(struct daemon *d, const struct adopt_watch *w, struct store_sandbox **ret,
		const char **ret_why, char *err, size_t errlen);

/*
 * Tells every collector that sandbox sb is watched from now on: the process tracer first (its
 * failure is returned and no other collector is told), then the lures, DNS and files (each
 * does nothing where it has nothing to watch, e.g. an adopted cgroup's lures). 0 or -errno.
 */
int adopt_collectors_watch(struct daemon *d, const struct store_sandbox *sb);

/* Follows sb's L7 proxy log (a no-op without a gate link), naming its tools by its policy. */
void adopt_http_watch(struct daemon *d, const struct store_sandbox *sb);

/* Tells the proxy log's follower of the steps found running at start-up. */
void adopt_http_steps(struct daemon *d);

/* Tells every collector that sb is no longer watched, the syscall recorder included. */
void adopt_collectors_unwatch(struct daemon *d, const struct store_sandbox *sb);

/* Stops watching adopted sandbox name: 0 and *ret, or -errno and *ret_why. */
int adopt_unwatch(struct daemon *d, const char *name, struct store_sandbox **ret,
		  const char **ret_why);

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
