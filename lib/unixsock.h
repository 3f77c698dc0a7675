/*
 * Unix sockets: stream for the control and trace channels, seqpacket for the exec launcher (one
 * message per request, with its fds). A path longer than sun_path is reached through its
 * directory (/proc/self/fd/N/NAME).
 */
#ifndef FB_UNIXSOCK_H
#define FB_UNIXSOCK_H

#include <sys/types.h>

/*
 * Binds and listens on path (an old socket file there is replaced), non-blocking and close-on-exec,
 * with the file's mode and group set before anyone can connect. gid (gid_t)-1 keeps root's group.
 * Returns the fd or -errno.
 */
int unixsock_listen(const char *path, mode_t mode, gid_t gid);

/* Connects to path (blocking, close-on-exec); returns the fd or -errno. */
int unixsock_connect(const char *path);

/* The same for SOCK_SEQPACKET; the listener is root's only (gid: none). */
int unixsock_listen_seqpacket(const char *path, mode_t mode);
int unixsock_connect_seqpacket(const char *path);

/* Whether the peer of fd is root, or runs with group gid (primary or supplementary): 1, 0, -errno.
 */
int unixsock_peer_trusted(int fd, gid_t gid);

#endif
