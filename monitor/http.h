/*
 * The HTTP API, privilege-separated in the OpenSSH manner. firebreakd (the core) binds the TCP
 * socket, then re-executes itself as the HTTP child, which drops to an unprivileged uid with no
 * capabilities, a chroot, no_new_privs and a seccomp allowlist, and serves libmicrohttpd with the
 * store opened read-only. The few things the child may ask of the core travel over a socketpair
 * as typed, length-capped lines checked against one dispatch table (http-privsep.c): anything
 * else is refused, counted and logged. A child that dies is started again; the core keeps
 * watching. docs/api.md.
 */
#ifndef FB_HTTP_H
#define FB_HTTP_H

#include <jansson.h>
#include <stdint.h>

#include "monitor/http/http-main.h"

struct config;
struct daemon;

/* The API's state, before anything else of it (the channel counts into it); 0 or -ENOMEM. */
int http_init(struct daemon *d);

/* Frees what http_init made (after http_stop); accepts a daemon without it. */
void http_free(struct daemon *d);

/* Channel requests the dispatch table refused; counting one more (http-privsep.c) says whether
 * to log it (rate-limited). */
uint64_t http_channel_refused(struct daemon *d);
int http_count_refused(struct daemon *d);

/* Binds the configured address (unless listen = off), makes missing tokens, and starts the child.
 * 0 or -errno (logged). */
int http_start(struct daemon *d);

/* Starts the child again once it is due (after it died; backoff while it keeps dying). */
void http_tick(struct daemon *d);

/* Stops the child (SIGTERM, then SIGKILL after a second) and closes the socket. */
void http_stop(struct daemon *d);

/* Registers the API's part of the stats and its counters (restarts, channel refusals). */
int http_add_counters(struct daemon *d);

/* The channel's protocol in the core (http-privsep.c). */
extern const struct lineserver_ops http_privsep_ops;

#endif
