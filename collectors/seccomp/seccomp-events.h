/* Seccomp refusals (from the audit stream) as events, each tied to its sandbox, step and tool. */
#ifndef FB_SECCOMP_EVENTS_H
#define FB_SECCOMP_EVENTS_H

struct daemon;

/* Joins the audit read-log group and reads it in the loop; 0 or -errno. Changes nothing. */
int seccomp_events_start(struct daemon *d);

void seccomp_events_stop(struct daemon *d);

#endif
