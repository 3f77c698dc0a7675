/*
 * The per-tool egress hooks' user side: loading them with a sandbox's rules onto its cgroup,
 * and telling them which tool each step is. Wraps the libbpf skeleton (no one else includes it).
 */
#ifndef FB_EGRESS_HOOK_USER_H
#define FB_EGRESS_HOOK_USER_H

#include <stdint.h>

struct policy;

/*
 * Loads the hooks with policy p's per-tool rules for link k and attaches them (connect4/6,
 * sendmsg4/6) to the v2 cgroup at cgroup_dir, where they stay until the cgroup goes. 0 or -errno.
 */
int egress_hook_install(const char *cgroup_dir, const struct policy *p, unsigned k);

/*
 * Registers step cgroup step_cgid as a call of tool (its index in the policy), or forgets it
 * when tool < 0, in the hooks attached to cgroup_dir. 0 or -errno.
 */
int egress_hook_step(const char *cgroup_dir, uint64_t step_cgid, int tool);

#endif
