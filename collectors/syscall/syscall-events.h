/*
 * The syscall flight recorder, per sandbox, switched on and off by the control op
 * "trace-syscalls" (firebreak trace-syscalls NAME on|off). Its records are "sys.enter" events of
 * the sandbox, step and tool; its losses are "monitor.loss" events of the sandbox.
 */
#ifndef FB_SYSCALL_EVENTS_H
#define FB_SYSCALL_EVENTS_H

struct collector_env;
struct store_sandbox;
struct syscall_events;

/* No recorder on yet; registers its counters ("syscall_recorder"). 0 and *ret, or -ENOMEM. */
int syscall_events_new(const struct collector_env *env, struct syscall_events **ret);

/* Starts (on) or stops recording sandbox sb's syscalls; 0 or -errno. */
int syscall_events_set(struct syscall_events *se, const struct store_sandbox *sb, int on);

/* Drains every recorder (the loop's timer and the recorders' fds call it); accepts NULL. */
void syscall_events_drain(struct syscall_events *se);

/* Stops every recorder and frees; accepts NULL. */
void syscall_events_free(struct syscall_events *se);

#endif
