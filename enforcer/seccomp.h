/*
 * The sandbox's seccomp filter (libseccomp). Built once at `firebreak create` and saved as raw
 * BPF in the sandbox's state dir, so each `firebreak exec` loads it with one prctl instead of
 * compiling it again (compiling took longer than the rest of an exec).
 */
#ifndef FB_SANDBOX_SECCOMP_H
#define FB_SANDBOX_SECCOMP_H

#include <linux/filter.h>
#include <stddef.h>
#include <stdint.h>

/* The largest filter we accept from the state dir, in BPF instructions (BPF_MAXINSNS). */
#define SANDBOX_SECCOMP_MAX_INSNS 4096

/* Compiles the filter and writes its raw BPF to path (mode 0600); 0 or -errno. */
int sandbox_seccomp_build(const char *path);

/* A filter read from the state dir, ready to install. */
struct sandbox_seccomp {
	struct sock_filter insns[SANDBOX_SECCOMP_MAX_INSNS];
	unsigned short len;
};

/*
 * Reads the raw BPF filter saved at path (before entering the sandbox, where path is gone) and
 * checks it against hash ("sha256:..." recorded at create); -EBADMSG if they differ.
 */
int sandbox_seccomp_read(const char *path, struct sandbox_seccomp *ret, const char *hash);

/* The hash of the filter file at path, as recorded at create. */
int sandbox_seccomp_hash(const char *path, char ret[72]);

/*
 * Installs f in the calling thread, setting no_new_privs first. The caller runs untrusted code
 * next: any failure must be fatal. Returns 0 or -errno.
 */
int sandbox_seccomp_apply(const struct sandbox_seccomp *f);

/*
 * The second filter, stacked after the first: any change of user or group id away from uid and
 * gid (the tool's own; -1 keeps one) is refused with EPERM, and setgroups always (seccomp-ids.c).
 * 0 or -errno.
 */
int sandbox_seccomp_ids_build(uint32_t uid, uint32_t gid, struct sandbox_seccomp *ret);

/* Calls fn for each syscall the filter refuses, with the errno it returns; for docs and tests. */
void sandbox_seccomp_each_refused(void (*fn)(const char *name, int err, void *data), void *data);

#endif
