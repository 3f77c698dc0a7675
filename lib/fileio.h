/*
 * Whole-file moves the enforcer makes while it builds a sandbox and its gate (certificate
 * bundles into jails and trust stores).
 */
#ifndef FB_FILEIO_H
#define FB_FILEIO_H

/* Copies what is left of in to out, retrying short writes and EINTR: 0 or -errno. */
int fd_copy(int in, int out);

#endif
