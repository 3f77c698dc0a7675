/* What the HTTP API's routes (http-routes.c) and handlers (http-api.c) share. */
#ifndef FB_HTTP_API_H
#define FB_HTTP_API_H

#include <microhttpd.h>
#include <stddef.h>
#include <stdint.h>

#include "bounds.h"
#include "http-query.h"

struct http_child;
struct web_file;

/* The bodies a request may carry (413 beyond). */
#define ACTION_BODY_MAX 4096
#define TRACE_BODY_MAX (4 << 20)
#define REPLAY_BODY_MAX (64 << 10) /* a policy */

enum auth { AUTH_NONE, AUTH_READ, AUTH_ACTION };

/* One request as it arrives: its body so far, and whether it was refused already. */
struct request {
	char *body;
	size_t len, cap, max;
	int too_large;
	int answered; /* refused at its first call, before its body */
};

/* What the path said: the sandbox, the incident or the action it names. */
struct match {
	const struct route *route; /* NULL: no such resource (http-routes.c) */
	char name[FB_NAME_MAX + 1];
	char action[8];
	int64_t id;
	const char *bad; /* 404 with this: a name or id that cannot exist */
};

typedef enum MHD_Result (*route_fn)(struct http_child *hc, struct MHD_Connection *conn,
				    const struct match *m, const struct request *rq);

/* The handlers, one per route; m holds what the path named. */
enum MHD_Result http_route_healthz(struct http_child *hc, struct MHD_Connection *conn,
				   const struct match *m, const struct request *rq);
enum MHD_Result http_route_metrics(struct http_child *hc, struct MHD_Connection *conn,
				   const struct match *m, const struct request *rq);
enum MHD_Result http_route_sandboxes(struct http_child *hc, struct MHD_Connection *conn,
				     const struct match *m, const struct request *rq);
enum MHD_Result http_route_sandbox(struct http_child *hc, struct MHD_Connection *conn,
				   const struct match *m, const struct request *rq);
enum MHD_Result http_route_timeline(struct http_child *hc, struct MHD_Connection *conn,
				    const struct match *m, const struct request *rq);
enum MHD_Result http_route_sandbox_otlp(struct http_child *hc, struct MHD_Connection *conn,
					const struct match *m, const struct request *rq);
enum MHD_Result http_route_action(struct http_child *hc, struct MHD_Connection *conn,
				  const struct match *m, const struct request *rq);
enum MHD_Result http_route_incidents(struct http_child *hc, struct MHD_Connection *conn,
				     const struct match *m, const struct request *rq);
enum MHD_Result http_route_incident(struct http_child *hc, struct MHD_Connection *conn,
				    const struct match *m, const struct request *rq);
enum MHD_Result http_route_incident_otlp(struct http_child *hc, struct MHD_Connection *conn,
					 const struct match *m, const struct request *rq);
enum MHD_Result http_route_bundle(struct http_child *hc, struct MHD_Connection *conn,
				  const struct match *m, const struct request *rq);
enum MHD_Result http_route_replay(struct http_child *hc, struct MHD_Connection *conn,
				  const struct match *m, const struct request *rq);
enum MHD_Result http_route_trace(struct http_child *hc, struct MHD_Connection *conn,
				 const struct match *m, const struct request *rq);
enum MHD_Result http_route_stream(struct http_child *hc, struct MHD_Connection *conn,
				  const struct match *m, const struct request *rq);

/* Answers {"ok":false,"error":msg} with status. */
enum MHD_Result http_fail(struct http_child *hc, struct MHD_Connection *conn, unsigned status,
			  const char *msg);

/* Which token the request carries: none, the read token, or the action token. */
enum auth http_authorize(struct http_child *hc, struct MHD_Connection *conn);

/* conn's query arguments and headers, for the parsers of http-query.h. */
struct http_args http_conn_args(struct MHD_Connection *conn);

/* Serves one file of the web page. */
enum MHD_Result http_get_web(struct http_child *hc, struct MHD_Connection *conn,
			     const struct web_file *f);

#endif
