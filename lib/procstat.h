/*
 * A process as /proc/PID/stat tells it: enough to know a pid still names the process it named
 * (pids get reused), for the enforcer's sandboxes and gate servers and the monitor's checks of
 * them.
 */
#ifndef FB_PROCSTAT_H
#define FB_PROCSTAT_H

#include <stdint.h>
#include <sys/types.h>

/* The start time of pid (clock ticks since boot), or 0 if it is gone or a zombie (whose
 * namespaces are gone already). */
uint64_t proc_start_time(pid_t pid);

#endif
