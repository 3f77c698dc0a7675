/*
 * A tool call's own Landlock domain: the wall between one step's processes and another's, and
 * between a process and its siblings' memory. Internal to enforcer/.
 */
#ifndef FB_STEP_LANDLOCK_H
#define FB_STEP_LANDLOCK_H

#include <sys/types.h>

/* The Landlock ABI this kernel speaks (1 or more), or -errno (-EOPNOTSUPP: Landlock is off). */
int step_landlock_abi(void);

/*
 * The ruleset a step of the sandbox whose init is init enters: writing files is granted everywhere
 * in the sandbox's tree but under /proc (/proc/sys and the pid 1 stand-in excepted, never a
 * process's own directory); signals and abstract unix sockets are scoped to the step where the
 * kernel can (ABI 6). Built by the parent through /proc/INIT/root, so the
 * child only enters it. abi: step_landlock_abi()'s. Returns the ruleset's fd or -errno.
 */
int step_landlock_ruleset(pid_t init, int abi);

/* In the child: the calling process enters the ruleset's domain for good. 0 or -errno. */
int step_landlock_enter(int ruleset_fd, int abi);

#endif
