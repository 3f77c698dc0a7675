/* The seccomp collector: refusals, from the audit stream, as events of their sandbox, step and
 * tool. */
#ifndef FB_SECCOMP_EVENTS_H
#define FB_SECCOMP_EVENTS_H

#include <stdint.h>

struct collector_env;
struct seccomp_events;

/*
 * Joins the audit read-log group, reads it in the loop and registers its counters ("seccomp").
 * Changes nothing of the host's audit configuration. A refusal is attributed by task_cgroup (the
 * cgroup id the kernel saw the pid in: proc_events_task_cgroup, called with task_data; NULL for
 * none), else by the process's /proc entry. 0 and *ret, or -errno.
 */
int seccomp_events_new(const struct collector_env *env,
		       int (*task_cgroup)(void *data, int32_t pid, uint64_t *ret_cgid),
		       void *task_data, struct seccomp_events **ret);

/* Stops reading; accepts NULL. */
void seccomp_events_free(struct seccomp_events *se);

#endif
