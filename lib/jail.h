/*
 * The jail firebreakd's unprivileged helpers (the HTTP child, the exporter) enter once everything
 * they need is open: a chroot to an empty root-owned directory (RUNTIME_DIR/http-root), no
 * capability in any set, the configured unprivileged uid and gid with no groups, no_new_privs,
 * not dumpable, and a seccomp allowlist that kills on anything else.
 */
#ifndef FB_JAIL_H
#define FB_JAIL_H

struct config;

/* Enters the jail; outbound also allows TCP connections out (the exporter). 0 or -errno. */
int jail_enter(const struct config *cfg, int outbound);

#endif
