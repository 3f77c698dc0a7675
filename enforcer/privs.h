/* Giving up privilege for good: capabilities (all sets), uid and gid. Internal to enforcer/. */
#ifndef FB_SANDBOX_PRIVS_H
#define FB_SANDBOX_PRIVS_H

#include <sys/types.h>

/* Empties the bounding, ambient, inheritable, permitted and effective sets; 0 or -errno. */
int privs_drop_all_caps(void);

/*
 * Becomes uid:gid with no supplementary groups and no capabilities in any set, with the
 * securebits locked so no setuid-root program can give them back. 0 or -errno.
 */
int privs_become(uid_t uid, gid_t gid);

#endif
