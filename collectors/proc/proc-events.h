/* The process tracer's records as events, each tied to its sandbox, step and tool. */
#ifndef FB_PROC_EVENTS_H
#define FB_PROC_EVENTS_H

#include <stdint.h>

struct daemon;
struct store_sandbox;

/*
 * Which sandbox, step and tool the cgroup with id cgid is (the registry, else a look under
 * firebreak/); 1 and the fields, or 0 if no sandbox's.
 */
int proc_events_resolve(struct daemon *d, uint64_t cgid, const char **sandbox, int64_t *step,
			const char **tool);

/* Boot-time ns (the kernel's timestamps) to wall-clock ns. */
int64_t proc_events_wall_ns(uint64_t boot_ns);

/* Loads the tracer, watches every running sandbox, and drains into the loop; 0 or -errno. */
int proc_events_start(struct daemon *d);

/* Watches sandbox sb from now on (its cgroup must exist); 0 or -errno. */
int proc_events_watch(struct daemon *d, const struct store_sandbox *sb);

/* Stops watching sandbox sb (destroyed): drains first, so nothing of it is left unreported. */
void proc_events_unwatch(struct daemon *d, const struct store_sandbox *sb);

/* Drains what is waiting (the loop's timer and the ring buffer's fd call it). */
void proc_events_drain(struct daemon *d);

void proc_events_stop(struct daemon *d);

/*
 * Stops polling the ring buffer while the writer's queue is full, and polls it again once it is
 * not (called after each drain and when the writer completes a batch).
 */
void proc_events_backpressure(struct daemon *d);

#endif
