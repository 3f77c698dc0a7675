/*
 * What the enforcer keeps about each sandbox between commands, in a root-only directory
 * <runtime_dir>/sandboxes/NAME: state.json (below), policy.json (the policy as it was at create,
 * so editing the original later changes nothing), seccomp.bpf, resolv.conf, root/ (where the init
 * builds the sandbox's tree, in its own mount namespace only) and a step counter.
 */
#ifndef FB_SANDBOX_STATE_H
#define FB_SANDBOX_STATE_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#include "bounds.h"
#include "config.h"
#include "lures.h"

#define SANDBOX_STATE_DIR FB_SANDBOX_STATE_DIR

struct sandbox_state {
	char name[FB_NAME_MAX + 1];
	pid_t init_pid;
	uint64_t init_start; /* the init's start time (/proc/PID/stat field 22): guards pid reuse */
	int64_t created_ts;
	uid_t uid;
	gid_t gid;
	uint64_t open_files;
	char policy_hash[72];
	int unwatched;
	unsigned link;	       /* its link to the egress gate (enforcer/egress.h); 0: none */
	char seccomp_hash[72]; /* sha256 of seccomp.bpf, checked before each exec loads it */
	char decoy_marker[LURE_MARKER_LEN + 1]; /* in every decoy (lures.h); the monitor reads it */
};

/*
 * Whether path (a directory or a file) and every directory above it are root's and writable by
 * no one else (sticky world-writable directories such as /tmp excepted): what the enforcer acts
 * on as root must be out of the agent's reach. 0, or -EPERM with the reason logged.
 */
int state_path_trusted(const char *path);

/* Writes the sandbox's state dir path into buf; 0 or -ENAMETOOLONG. */
int state_dir(const struct config *cfg, const char *name, char *buf, size_t size);

/* Writes the path of file in the sandbox's state dir into buf; 0 or -ENAMETOOLONG. */
int state_path(const struct config *cfg, const char *name, const char *file, char *buf,
	       size_t size);

/* Saves st as state.json (atomically: write then rename); 0 or -errno. */
int state_save(const struct config *cfg, const struct sandbox_state *st);

/* Loads state.json; 0, -ENOENT (no such sandbox), or -EBADMSG. */
int state_load(const struct config *cfg, const char *name, struct sandbox_state *ret);

/* Whether the sandbox's init still runs (the same process: pid and start time match). */
int state_init_alive(const struct sandbox_state *st);

/*
 * Ends the process whose pid the sandbox's state file pidfile holds, if it still is comm (pids
 * get reused), with sig, and waits (1 s at most) until it is gone or a zombie: nothing of a
 * sandbox outlives its destroy. Quiet if there is no such file or process.
 */
void state_stop_pidfile(const struct config *cfg, const char *name, const char *pidfile,
			const char *comm, int sig);

/* Takes the next step number (a counter under flock); 0 and *ret, or -errno. */
int state_next_step(const struct config *cfg, const char *name, int64_t *ret);

/*
 * Takes the sandboxes' lock, held while a create chooses its uid and link and until its state is
 * saved (so two creates never choose the same); returns its fd (close it to release) or -errno.
 */
int state_lock(const struct config *cfg);

/*
 * The lowest link index no sandbox here holds and busy(k) does not call taken (a sandbox of
 * another runtime dir, in the host-wide gate). Call it holding the lock. 0 or -errno.
 */
int state_alloc_link(const struct config *cfg, unsigned max, int (*busy)(unsigned k),
		     unsigned *ret);

/* Sandboxes whose policy sets no uid get one of their own from here on (and the same gid). */
#define SANDBOX_UID_BASE 420000
#define SANDBOX_UID_COUNT 65536

/*
 * The lowest uid in [SANDBOX_UID_BASE, +SANDBOX_UID_COUNT) no sandbox of this runtime dir holds
 * and no process on the host runs as. Call it holding the sandboxes' lock. 0 or -errno.
 */
int state_alloc_uid(const struct config *cfg, uid_t *ret);

/* Removes the sandbox's state dir and what is in it; 0, -ENOENT, or -errno. */
int state_remove(const struct config *cfg, const char *name);

/* Calls cb for each sandbox name with a state dir. */
int state_each(const struct config *cfg, int (*cb)(const char *name, void *data), void *data);

#endif
