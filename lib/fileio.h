/*
 * Whole-file moves the enforcer makes while it builds a sandbox and its gate (certificate
 * bundles into jails and trust stores), whole files read at once (the web page's, a CA bundle),
 * and the fd hygiene of the processes it leaves running.
 */
#ifndef FB_FILEIO_H
#define FB_FILEIO_H

#include <stddef.h>

/* Copies what is left of in to out, retrying short writes and EINTR: 0 or -errno. */
int fd_copy(int in, int out);

/* Reads the regular file at path whole into a new buffer (NUL-terminated, the caller's to free)
 * and its length: 0, or -errno (-EINVAL: not a regular file or over max bytes). */
int file_read_all(const char *path, size_t max, char **ret, size_t *ret_len);

/* Writes text into path (created 0644 if missing, truncated) in one write: 0 or -errno. */
int file_write_text(const char *path, const char *text);

/* Closes every fd from 3 up but the n in keep: what a long-lived child must not hold of its
 * parent's. */
void fd_close_all_except(const int *keep, int n);

#endif
