/* The sandbox's init: pid 1 of its pid namespace, holder of its namespaces. Internal to enforcer/.
 */
#ifndef FB_SANDBOX_INIT_H
#define FB_SANDBOX_INIT_H

#include <stdint.h>

#include "mounts.h"

struct sandbox_init_args {
	int go_fd;     /* one byte arrives once the parent put us into the sandbox's cgroups */
	int report_fd; /* we write "ok\n" when ready, or one line saying what failed */
	int kill_fd;   /* the sandbox cgroup's cgroup.kill, for the wall clock */
	struct sandbox_mounts mounts;
	const char *hostname;
	int64_t wall_clock_ns;
};

#endif
