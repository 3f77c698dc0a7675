/*
 * The file system a sandbox sees, built inside its new mount namespace by its init before anything
 * else runs: the host's programs and libraries read-only, a private /tmp, a size-capped writable
 * /workspace, a minimal /dev, a /proc of its own pid namespace. Everything else of the host (/root,
 * /home, /run, /var, /srv, the store, container runtime sockets, credentials) is simply absent:
 * the tree is an allowlist of what to show, not a list of what to hide.
 */
#ifndef FB_SANDBOX_MOUNTS_H
#define FB_SANDBOX_MOUNTS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "macro.h"

struct sandbox_mounts {
	const char *root;	  /* an empty directory to build the new root on */
	uint64_t workspace_bytes; /* size cap of /workspace */
	uint64_t tmp_bytes;	  /* size cap of /tmp */
	uint64_t home_bytes;	  /* size cap of the home (LURE_HOME) */
	const char *marker;	  /* the decoys' marker (lures.h) */
	const char *trust; /* the L7 proxy's CA bundle for the trust store; NULL: the host's */
	uid_t uid;	   /* owner of /workspace */
	gid_t gid;
};

/*
 * Builds the tree and pivots into it. Must run as root in a fresh mount namespace, and in the new
 * pid namespace (for /proc). On failure the caller must not go on: returns -errno with what
 * failed in err.
 */
int sandbox_mounts_setup(const struct sandbox_mounts *m, char *err, size_t errlen);

/* Writes "WHAT: strerror(-r)" into err (errlen bytes) and returns r, the error of a step. */
_printf_(4, 5) int mounts_fail(int r, char *err, size_t errlen, const char *fmt, ...);

#endif
