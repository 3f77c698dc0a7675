/*
 * Inside the HTTP child (monitor/http.h): what its parts share. The child holds no privilege; all
 * it has is the listening socket, the store opened read-only, and the channel to the core.
 */
#ifndef FB_HTTP_CHILD_H
#define FB_HTTP_CHILD_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "http-tokens.h"

#include <microhttpd.h>

struct store;

/* Read-only store connections, one per request being served at once (opened while root). */
#define HTTP_STORES 8

struct store_pool {
	struct store *s[HTTP_STORES];
	int busy[HTTP_STORES];
	pthread_mutex_t lock;
	pthread_cond_t freed;
};

/* Takes a store from the pool (waits for one); give it back with store_pool_put. */
struct store *store_pool_get(struct store_pool *p);
void store_pool_put(struct store_pool *p, struct store *s);

/* The channel to the core (http-channel.c): typed request lines, replies in order. */
struct channel;

int channel_new(int fd, struct channel **ret);
/* Stops the reader; pending calls fail with -EPIPE. */
void channel_free(struct channel *c);
/* Whether the core closed the channel (the child then exits; the core starts a new one). */
int channel_dead(struct channel *c);
/*
 * Sends n requests "TYPE PAYLOAD" (payloads[i] of lens[i] bytes, no newline) in one run and
 * waits for their replies (malloc'd, in ret[i]); 0, -EPIPE (the core went away: some replies may
 * be missing, NULL), or -ETIMEDOUT.
 */
int channel_call(struct channel *c, const char *type, const char *const *payloads,
		 const size_t *lens, size_t n, char **ret);

/* The live event stream's hub (http-sse.c). */
struct sse_hub;

/* Starts the poller on own (a connection of its own); clients catch up through pool. */
int sse_hub_new(struct store_pool *pool, struct store *own, struct sse_hub **ret);
/* Ends every stream (their connections then close) and stops the poller. */
void sse_hub_stop(struct sse_hub *h);
void sse_hub_free(struct sse_hub *h);

/* One file of the web page (dashboards/web), read before the jail. */
struct web_file {
	const char *path; /* "/", "/app.js", "/style.css" */
	const char *name; /* in the web dir */
	const char *type;
	char *data;
	size_t len;
};

#define WEB_FILES 3

struct http_child {
	struct web_file web[WEB_FILES];
	const struct config *cfg;
	char read_token[HTTP_TOKEN_MAX + 1];
	char action_token[HTTP_TOKEN_MAX + 1];
	struct store_pool pool;
	struct channel *chan;
	struct sse_hub *hub;
	atomic_uint_fast64_t by_code[6]; /* responses by class: 1xx..5xx (index 1..5) */
	atomic_uint_fast64_t sse_clients;
	atomic_uint_fast64_t connections;    /* open now */
	atomic_uint_fast64_t closed_timeout; /* closed for http_idle_timeout without a byte moved */
};

/* The libmicrohttpd access handler (http-api.c); cls is the struct http_child. */
enum MHD_Result http_api_handle(void *cls, struct MHD_Connection *conn, const char *url,
				const char *method, const char *version, const char *upload_data,
				size_t *upload_data_size, void **con_cls);
/* Frees a request's state when its connection is done with it. */
void http_api_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			enum MHD_RequestTerminationCode toe);

/* Counts connections as they open and close (MHD_OPTION_NOTIFY_CONNECTION); cls is hc. */
void http_api_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			 enum MHD_ConnectionNotificationCode code);

/* GET /api/v1/events/stream (http-sse.c): the response, or NULL with *ret_error set for a bad
 * request (400), or NULL alone when out of memory (500). */
struct MHD_Response *sse_response(struct http_child *hc, struct MHD_Connection *conn,
				  const char **ret_error);

/* GET /metrics (http-metrics.c): the text, or NULL with *ret_status set. */
char *http_metrics_text(struct http_child *hc, unsigned *ret_status);

/* The web page (http-web.c): read its files (before the jail); the one at url, or NULL. */
void http_web_load(struct http_child *hc);
const struct web_file *http_web_find(const struct http_child *hc, const char *url);

#endif
