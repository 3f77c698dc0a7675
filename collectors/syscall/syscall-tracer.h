/* The syscall flight recorder of one sandbox (collectors/syscall/syscall-trace.bpf.c), user side.
 */
#ifndef FB_SYSCALL_TRACER_H
#define FB_SYSCALL_TRACER_H

#include <stdint.h>

#include "syscall-trace.h"

struct syscall_tracer;

/*
 * Loads and attaches a recorder for the sandbox whose cgroup has id cgid and sits at level
 * (cgroup_level()); 0 and *ret, or -errno.
 */
int syscall_tracer_new(uint64_t cgid, unsigned level, struct syscall_tracer **ret);

/* Detaches and frees it (the host's syscalls leave the slow path); accepts NULL. */
void syscall_tracer_free(struct syscall_tracer *t);

int syscall_tracer_fd(struct syscall_tracer *t);

/* Calls fn for each waiting record; returns how many, or -errno. */
int syscall_tracer_drain(struct syscall_tracer *t,
			 void (*fn)(const struct syscall_trace_event *e, void *data), void *data);

/* Records the kernel could not reserve room for, so far. */
uint64_t syscall_tracer_lost(struct syscall_tracer *t);

#endif
