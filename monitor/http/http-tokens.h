/*
 * The HTTP API's bearer tokens: a read token and an action token, each in a file only root can
 * read. firebreakd makes a missing one (random) at start; the HTTP child reads both while it is
 * still root, before it drops every privilege.
 */
#ifndef FB_HTTP_TOKENS_H
#define FB_HTTP_TOKENS_H

#include <stddef.h>

#define HTTP_TOKEN_MAX 256
#define HTTP_TOKEN_MIN 16

/* Creates path with a new random token (64 hex digits, mode 0600) if it does not exist; 0 or
 * -errno (logged). */
int http_token_ensure(const char *path);

/*
 * Reads the token in path into buf (HTTP_TOKEN_MAX + 1 bytes), refusing a file that is not a
 * regular file of root's readable by root only, or a token shorter than HTTP_TOKEN_MIN or with
 * anything but visible ASCII; 0 or -errno (logged with the reason).
 */
int http_token_load(const char *path, char *buf);

/* Whether the n bytes at a equal the token t, in time independent of where they differ. */
int http_token_equal(const char *t, const char *a, size_t n);

#endif
