/*
 * The eBPF process tracer's user side: exec, fork and exit of the watched sandboxes' tasks, read
 * from a ring buffer. Wraps the libbpf skeleton (no one else includes it).
 */
#ifndef FB_PROC_TRACER_H
#define FB_PROC_TRACER_H

#include <stdint.h>

#include "proc-trace.h"

struct proc_tracer;

/*
 * Loads and attaches the tracer with a ring buffer of ring_size bytes (a power of two, a page at
 * least), each watched sandbox's share of it refilled at share_rate bytes a second (0: no
 * shares); 0 and *ret, or -errno (logged).
 */
int proc_tracer_new(uint64_t ring_size, uint64_t share_rate, struct proc_tracer **ret);

/* Detaches and frees it; accepts NULL. */
void proc_tracer_free(struct proc_tracer *t);

/* An fd that becomes readable when the ring buffer has passed its wake-up watermark. */
int proc_tracer_fd(struct proc_tracer *t);

/* How many cgroups it watches now. */
uint64_t proc_tracer_watched(const struct proc_tracer *t);

/*
 * Starts (on) or stops watching the sandbox whose cgroup has id sandbox_cgid and sits at level
 * (1..PROC_TRACE_LEVEL_MAX; the same on and off); with cgroup_dir (its v2 directory), its sockets
 * too. Watched cgroups must not nest. 0 or -errno.
 */
int proc_tracer_watch(struct proc_tracer *t, uint64_t sandbox_cgid, unsigned level,
		      const char *cgroup_dir, int on);

/*
 * Calls fn for each waiting record until fn returns non-zero (that record is taken; the rest
 * wait for the next drain). Returns how many were taken (or 0 when fn stopped early), or -errno.
 */
int proc_tracer_drain(struct proc_tracer *t,
		      int (*fn)(const struct proc_trace_event *e, void *data), void *data);

/* A record kind's short name ("exec", "connect", "sysctl"...), for counters; "?" if unknown. */
const char *proc_tracer_kind_name(unsigned kind);

/* Records the kernel could not reserve room for, per kind, since the tracer started. */
void proc_tracer_lost(struct proc_tracer *t, uint64_t ret[PROC_TRACE_KINDS]);

/* Calls fn with each watched sandbox's cgroup id and its entry: lost records per kind so far, and
 * how many of them went past its share. */
void proc_tracer_lost_each(struct proc_tracer *t,
			   void (*fn)(uint64_t cgid, const struct proc_trace_watch *w, void *data),
			   void *data);

/*
 * The cgroup id of process tgid as the kernel last saw it (at its fork, exec or cgroup move; also
 * after it exited, until the entry is recycled): 0 and *ret_cgid, or -ENOENT if it is no watched
 * sandbox's process the tracer saw.
 */
int proc_tracer_task_cgroup(struct proc_tracer *t, uint32_t tgid, uint64_t *ret_cgid);

/* Allows (on) or forbids again the file of key k to its step; 0 or -errno. */
int proc_tracer_scope_allow(struct proc_tracer *t, const struct proc_trace_scope_key *k, int on);

/*
 * Confines (on) the step whose cgroup has id step_cgid to the files allowed to it: any other
 * exec there is killed in the kernel. Off lifts it. Allow the files first. 0 or -errno.
 */
int proc_tracer_scope(struct proc_tracer *t, uint64_t step_cgid, int on);

#endif
