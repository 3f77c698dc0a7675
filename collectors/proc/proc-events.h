/*
 * The process collector: the eBPF process tracer's records (exec, fork, exit, sockets, escape
 * indicators) as events, each tied to its sandbox, step and tool; its losses as monitor.loss
 * events of the sandbox they happened in; and the in-kernel exec scope of confined steps.
 */
#ifndef FB_PROC_EVENTS_H
#define FB_PROC_EVENTS_H

#include <stddef.h>
#include <stdint.h>

struct collector_env;
struct proc_events;
struct store_sandbox;

/*
 * Loads the tracer, watches every live sandbox, drains into the loop and registers its counters
 * ("proc_trace"); 0 and *ret, or -errno (logged by the tracer).
 */
int proc_events_new(const struct collector_env *env, struct proc_events **ret);

/* Drains what is left, detaches and frees; accepts NULL. */
void proc_events_free(struct proc_events *pe);

/* How deep a watched cgroup may sit (its level below the v2 root). */
unsigned proc_events_level_max(void);

/* Watches sandbox sb from now on (its cgroup must exist); 0 (also with no tracer) or -errno. */
int proc_events_watch(struct proc_events *pe, const struct store_sandbox *sb);

/* Stops watching sandbox sb (destroyed): drains first, so nothing of it is left unreported. */
void proc_events_unwatch(struct proc_events *pe, const struct store_sandbox *sb);

/*
 * The cgroup id the kernel last saw process pid in (proc_tracer_task_cgroup), for a collector
 * whose source names only a pid: data is the struct proc_events (NULL: no tracer, -ENOENT).
 */
int proc_events_task_cgroup(void *data, int32_t pid, uint64_t *ret_cgid);

/* Drains what is waiting (the loop's timer and the ring buffer's fd call it); accepts NULL. */
void proc_events_drain(struct proc_events *pe);

/*
 * Stops polling the ring buffer while the writer's queue is full, and polls it again once it is
 * not (called after each drain and when the writer completes a batch). Accepts NULL.
 */
void proc_events_backpressure(struct proc_events *pe);

/* One step's exec scope in the kernel (proc-scope.c). */
struct proc_scope;

/*
 * Confines the step whose cgroup has id cgid to the files it may execute: program (may be NULL),
 * programs[] and the files matching globs[] (symlinks followed, each file once). Any other exec
 * there is killed in the kernel before the new image runs. 0 and *ret (with *ret_files, how
 * many files), or -errno (nothing left in the kernel).
 */
int proc_scope_confine(struct proc_events *pe, uint64_t cgid, const char *program,
		       char *const *programs, size_t n_programs, char *const *globs, size_t n_globs,
		       struct proc_scope **ret, size_t *ret_files);

/* Lifts the confinement and frees it; accepts NULL. */
void proc_scope_lift(struct proc_events *pe, struct proc_scope *s);

/* Frees s without touching the kernel (the tracer is going anyway); accepts NULL. */
void proc_scope_free(struct proc_scope *s);

#endif
