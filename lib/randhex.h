/*
 * Unguessable names: a sandbox's decoy marker, the proxy's per-sandbox verdict token. From the
 * kernel's random pool, as lower-case hex.
 */
#ifndef FB_RANDHEX_H
#define FB_RANDHEX_H

#include <stddef.h>

/* len (even) random lower-case hex characters and a NUL into ret (len + 1 bytes); 0 or -EIO. */
int random_hex(char *ret, size_t len);

#endif
