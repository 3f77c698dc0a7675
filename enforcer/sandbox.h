/*
 * Sandboxes: create, exec (the per-tool command gate, then the tool call in its own step
 * cgroup), destroy and gc. This is the namespaces + cgroups + seccomp backend, the one every
 * other backend (gVisor next) also needs around it.
 */
#ifndef FB_SANDBOX_H
#define FB_SANDBOX_H

#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"
#include "config.h"

/* The exit status of a refused tool call (as a shell's "found but not executable"). */
#define SANDBOX_EXIT_REFUSED 126

/* The exit status of a tool call the sandbox was frozen under: it is held, unfinished. */
#define SANDBOX_EXIT_FROZEN 125

/* What a policy sets for a whole sandbox. */
struct sandbox_limits {
	uid_t uid;
	gid_t gid;
	struct cgroup_caps caps;
	uint64_t workspace_bytes;
	uint64_t tmp_bytes;
	uint64_t home_bytes;
	uint64_t open_files;
	int64_t wall_clock_ns; /* 0: none */
};

enum {
	SANDBOX_CREATE_UNWATCHED = 1 << 0, /* no monitor needed (testing the enforcer alone) */
	SANDBOX_CREATE_TIMINGS = 1 << 1,   /* each phase's time on stderr */
};

/*
 * Builds sandbox name from the policy at policy_path and registers it with the monitor; without a
 * monitor it refuses unless flags has SANDBOX_CREATE_UNWATCHED. Returns 0, or -errno after
 * printing one line.
 */
int sandbox_create(const struct config *cfg, const char *name, const char *policy_path,
		   unsigned flags);

struct sandbox_exec_request {
	const char *name;
	const char *tool;
	int64_t step;	     /* < 0: the next number */
	const char *call_id; /* NULL if none */
	char **argv;
};

/* Runs one tool call; returns its exit status (0-255; 126 refused, 125 frozen under it, 128+N
 * killed by signal N), or -errno after printing one line. */
int sandbox_exec(const struct config *cfg, const struct sandbox_exec_request *req);

/* Kills whatever is left and removes the sandbox's cgroups, namespaces, mounts and state. */
int sandbox_destroy(const struct config *cfg, const char *name);

/* Removes what crashed runs left: sandboxes whose init is gone, cgroups without a sandbox.
 * Returns how many it removed, or -errno. */
int sandbox_gc(const struct config *cfg);

/* The init's side of create (enforcer/init.c): never returns. */
struct sandbox_init_args;
_Noreturn void sandbox_init_main(const struct sandbox_init_args *a);

#endif
