/*
 * The syscall flight recorder, per sandbox, switched on and off by the control op
 * "trace-syscalls" (firebreak trace-syscalls NAME on|off). Its records are "sys.enter" events of
 * the sandbox, step and tool; its losses are "monitor.loss" events of the sandbox.
 */
#ifndef FB_SYSCALL_EVENTS_H
#define FB_SYSCALL_EVENTS_H

struct daemon;
struct store_sandbox;

/* Starts (on) or stops recording sandbox sb's syscalls; 0 or -errno. */
int syscall_events_set(struct daemon *d, const struct store_sandbox *sb, int on);

/* Drains every recorder (the loop's timer and the recorders' fds call it). */
void syscall_events_drain(struct daemon *d);

/* Stops every recorder. */
void syscall_events_stop(struct daemon *d);

#endif
