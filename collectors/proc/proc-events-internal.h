/* What proc-events.c shares with proc-scope.c, proc-exec.c and proc-senses.c; nothing outside
 * this folder sees it. */
#ifndef FB_PROC_EVENTS_INTERNAL_H
#define FB_PROC_EVENTS_INTERNAL_H

#include <jansson.h>

#include "proc-trace.h"

struct config;
struct proc_events;
struct proc_tracer;
struct registry;
struct store_sandbox;

/* The collector's tracer (never NULL: a collector exists only with one). */
struct proc_tracer *proc_events_tracer(struct proc_events *pe);

/* The devices of each sandbox's writable mounts, remembered (proc-exec.c). */
struct proc_mounts;
int proc_mounts_new(struct proc_mounts **ret);
void proc_mounts_free(struct proc_mounts *m);

/* Adds an exec record's environment, exe_origin, stdio_socket and parent_exe to f. */
void proc_exec_fields(json_t *f, struct proc_mounts *m, const struct config *cfg,
		      const struct store_sandbox *sb, const struct proc_trace_event *e);

/*
 * The fields of a bind, listen, accept, signal or rename record (proc-senses.c), or NULL. A
 * signal's target is placed with the registry: same-step, other-step, sandbox or outside.
 */
json_t *proc_senses_fields(struct registry *reg, const struct proc_trace_event *e, int64_t step);

#endif
