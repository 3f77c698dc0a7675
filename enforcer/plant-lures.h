/*
 * Plants the lures (lib/lures.h) in a sandbox's tree while its init builds it: the home with the
 * decoys, and the tripwires bound over the kernel tunables, cgroup control files and device nodes
 * an escape would reach for. The monitor watches them (collectors/lure/).
 */
#ifndef FB_PLANT_LURES_H
#define FB_PLANT_LURES_H

#include "mounts.h"

/* Fills marker (LURE_MARKER_LEN + 1 bytes) with a fresh random one; 0 or -errno. */
int sandbox_lures_marker(char *marker);

/*
 * Plants them under m->root (the new root, before the pivot; /dev and /proc mounted): 0, or
 * -errno with what failed in err.
 */
int sandbox_lures_plant(const struct sandbox_mounts *m, char *err, size_t errlen);

#endif
