/*
 * The lure collector: what touched a sandbox's decoys and tripwires (lib/lures.h), through one
 * fanotify group with a mark on each lure's inode. A tripwire's open is held in the kernel until
 * this collector answers: it refuses writes (every open of a device) with EPERM and records the
 * attempt, `lure.tripwire`; a decoy's open is recorded, `lure.decoy`. Inode marks cost nothing
 * to any other file on the host.
 */
#ifndef FB_LURE_EVENTS_H
#define FB_LURE_EVENTS_H

struct collector_env;
struct lure_events;
struct store_sandbox;

/* Opens the fanotify group, marks every live sandbox's lures, registers "lure" counters. */
int lure_events_new(const struct collector_env *env, struct lure_events **ret);

/* Closes the group (its marks go with it); accepts NULL. */
void lure_events_free(struct lure_events *le);

/* Marks sandbox sb's lures (an adopted cgroup has none: 0); 0 or -errno. Accepts le NULL. */
int lure_events_watch(struct lure_events *le, const struct store_sandbox *sb);

/* Forgets sandbox sb's lures (destroyed). Accepts le NULL. */
void lure_events_unwatch(struct lure_events *le, const struct store_sandbox *sb);

#endif
