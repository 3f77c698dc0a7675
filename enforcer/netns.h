/*
 * Named network namespaces (/run/netns/NAME, as iproute2 keeps them, so `ip netns` shows ours)
 * and running code inside one without changing the caller's own.
 */
#ifndef FB_NETNS_H
#define FB_NETNS_H

#include "names.h" /* NETNS_DIR */

/* Creates netns name (bind-mounted at /run/netns/NAME); 0, -EEXIST, or -errno. */
int netns_create(const char *name);

/* Opens /run/netns/NAME; returns the fd or -errno (-ENOENT: no such netns). */
int netns_open(const char *name);

/* Unmounts and removes /run/netns/NAME; 0, -ENOENT, or -errno. */
int netns_delete(const char *name);

/*
 * Runs fn(data) in a child process that has joined the network namespace nsfd, and returns what
 * fn returned (0 or -errno). The caller's own namespace never changes.
 */
int netns_run(int nsfd, int (*fn)(void *data), void *data);

#endif
