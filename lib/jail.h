/*
 * The jail firebreakd's unprivileged helpers (the HTTP child, the exporter) enter once everything
 * they need is open: a chroot to an empty root-owned directory (RUNTIME_DIR/http-root), no
 * capability in any set, the configured unprivileged uid and gid with no groups, no_new_privs,
 * not dumpable, and a seccomp allowlist that kills on anything else.
 */
#ifndef FB_JAIL_H
#define FB_JAIL_H

#include <stddef.h>
#include <sys/types.h>

struct config;

/* Enters the jail; outbound also allows TCP connections out (the exporter). 0 or -errno. */
int jail_enter(const struct config *cfg, int outbound);

/*
 * The part of the jail that is not the HTTP child's alone (the DNS gate enters it too): no
 * capability in any set, uid and gid uid with no groups, no_new_privs, not dumpable, killed when
 * its parent dies. Must be called as root; 0 or -errno (logged, prefixed with who).
 */
int jail_drop(uid_t uid, const char *who);

/*
 * Allows each call in names (any arguments) in the libseccomp filter ctx (a scmp_filter_ctx);
 * a name this architecture lacks is skipped. 0 or libseccomp's -errno.
 */
int jail_allow_names(void *ctx, const char *const *names, size_t n);

#endif
