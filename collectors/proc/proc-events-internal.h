/* What proc-events.c shares with proc-scope.c, and nothing outside this folder sees. */
#ifndef FB_PROC_EVENTS_INTERNAL_H
#define FB_PROC_EVENTS_INTERNAL_H

struct proc_events;
struct proc_tracer;

/* The collector's tracer (never NULL: a collector exists only with one). */
struct proc_tracer *proc_events_tracer(struct proc_events *pe);

#endif
