/*
 * Whole-file moves the enforcer makes while it builds a sandbox and its gate (certificate
 * bundles into jails and trust stores), and the fd hygiene of the processes it leaves running.
 */
#ifndef FB_FILEIO_H
#define FB_FILEIO_H

/* Copies what is left of in to out, retrying short writes and EINTR: 0 or -errno. */
int fd_copy(int in, int out);

/* Writes text into path (created 0644 if missing, truncated) in one write: 0 or -errno. */
int file_write_text(const char *path, const char *text);

/* Closes every fd from 3 up but the n in keep: what a long-lived child must not hold of its
 * parent's. */
void fd_close_all_except(const int *keep, int n);

#endif
