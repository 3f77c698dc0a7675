/*
 * Moving one thread of a multi-threaded daemon into another network namespace and back: sockets
 * made there stay there (the gate's NFLOG reader, its links' ioctls), while the daemon's other
 * threads never move.
 */
#ifndef FB_NETNS_THREAD_H
#define FB_NETNS_THREAD_H

#include <sys/types.h>

/*
 * Moves the calling thread into the network namespace at path (its inode in *ret_ino if not
 * NULL); returns an fd of the thread's own namespace, for netns_leave, or -errno.
 */
int netns_enter(const char *path, ino_t *ret_ino);

/* Back to the namespace home (from netns_enter), and closes it. Aborts if it cannot: a thread of
 * the daemon must never stay in another namespace. */
void netns_leave(int home);

#endif
