/* The seccomp collector: refusals, from the audit stream, as events of their sandbox, step and
 * tool. */
#ifndef FB_SECCOMP_EVENTS_H
#define FB_SECCOMP_EVENTS_H

struct collector_env;
struct seccomp_events;

/*
 * Joins the audit read-log group, reads it in the loop and registers its counters ("seccomp").
 * Changes nothing of the host's audit configuration. 0 and *ret, or -errno.
 */
int seccomp_events_new(const struct collector_env *env, struct seccomp_events **ret);

/* Stops reading; accepts NULL. */
void seccomp_events_free(struct seccomp_events *se);

#endif
