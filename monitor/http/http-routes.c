/*
 * The HTTP API's routes (docs/api.md): one table, each line a method, a path, the token it needs,
 * the body it may take and its handler (http-api.c). Every request is routed first (404, 405),
 * then authorised (401, 403), then judged (400, 413): a bad one gets its status and a JSON
 * reason and costs nothing else.
 */
#include <stdlib.h>
#include <string.h>

#include "event.h"
#include "http-api.h"
#include "http-child.h"
#include "macro.h"

/*
 * A route: its method, its path ("{name}" a sandbox's name, "{id}" an incident's, "{action}"
 * freeze, thaw or kill), the token it needs, the body it may take, and its handler.
 */
struct route {
	const char *method;
	const char *path;
	enum auth need;
	size_t body_max;
	route_fn fn;
};

/* Every route of the API (docs/api.md): a new one is a line here and its handler. */
static const struct route routes[] = {
	{ "GET", "/healthz", AUTH_NONE, 0, http_route_healthz },
	{ "GET", "/metrics", AUTH_READ, 0, http_route_metrics },
	{ "GET", "/api/v1/sandboxes", AUTH_READ, 0, http_route_sandboxes },
	{ "GET", "/api/v1/sandboxes/{name}", AUTH_READ, 0, http_route_sandbox },
	{ "GET", "/api/v1/sandboxes/{name}/timeline", AUTH_READ, 0, http_route_timeline },
	{ "GET", "/api/v1/sandboxes/{name}/otlp", AUTH_READ, 0, http_route_sandbox_otlp },
	{ "POST", "/api/v1/sandboxes/{name}/{action}", AUTH_ACTION, ACTION_BODY_MAX,
	  http_route_action },
	{ "GET", "/api/v1/incidents", AUTH_READ, 0, http_route_incidents },
	{ "GET", "/api/v1/incidents/{id}", AUTH_READ, 0, http_route_incident },
	{ "GET", "/api/v1/incidents/{id}/otlp", AUTH_READ, 0, http_route_incident_otlp },
	{ "GET", "/api/v1/incidents/{id}/bundle", AUTH_READ, 0, http_route_bundle },
	/* It only reads: the read token will do. */
	{ "POST", "/api/v1/incidents/{id}/replay", AUTH_READ, REPLAY_BODY_MAX, http_route_replay },
	{ "GET", "/api/v1/events/stream", AUTH_READ, 0, http_route_stream },
	{ "POST", "/api/v1/trace", AUTH_ACTION, TRACE_BODY_MAX, http_route_trace },
};

#define API_PREFIX "/api/v1/"

/* Whether one segment of a path is what the pattern's segment asks for; fills m. */
static int segment_matches(const char *pat, size_t plen, const char *seg, struct match *m)
{
	if (plen == 6 && memcmp(pat, "{name}", 6) == 0) {
		if (!event_sandbox_name_valid(seg))
			m->bad = "no such sandbox";
		else
			strscpy(m->name, sizeof(m->name), seg);
		return 1;
	}
	if (plen == 4 && memcmp(pat, "{id}", 4) == 0) {
		if (http_parse_i64(seg, &m->id) < 0 || m->id == 0)
			m->bad = "no such incident";
		return 1;
	}
	if (plen == 8 && memcmp(pat, "{action}", 8) == 0) {
		if (strcmp(seg, "freeze") != 0 && strcmp(seg, "thaw") != 0 &&
		    strcmp(seg, "kill") != 0)
			return 0;
		strscpy(m->action, sizeof(m->action), seg);
		return 1;
	}
	return strlen(seg) == plen && memcmp(pat, seg, plen) == 0;
}

/* Whether url is route r's path; the API's paths are read by segments ("//" counts as "/"). */
static int path_matches(const struct route *r, const char *url, struct match *m)
{
	const char *pat = r->path + strlen(API_PREFIX);
	char path[512], *seg, *save = NULL;

	memset(m, 0, sizeof(*m));
	if (strncmp(r->path, API_PREFIX, strlen(API_PREFIX)) != 0)
		return strcmp(url, r->path) == 0;
	if (strlen(url) >= sizeof(path) || strncmp(url, API_PREFIX, strlen(API_PREFIX)) != 0)
		return 0;
	strcpy(path, url + strlen(API_PREFIX));
	for (seg = strtok_r(path, "/", &save); seg; seg = strtok_r(NULL, "/", &save)) {
		size_t plen = strcspn(pat, "/");

		if (plen == 0 || !segment_matches(pat, plen, seg, m))
			return 0;
		pat += plen + (pat[plen] == '/');
	}
	return *pat == '\0';
}

/* The route for url and method: the one of that path and method, else one of that path. */
static void match(const char *url, const char *method, struct match *ret)
{
	struct match m;

	memset(ret, 0, sizeof(*ret));
	for (size_t i = 0; i < ARRAY_SIZE(routes); i++) {
		if (!path_matches(&routes[i], url, &m))
			continue;
		if (!ret->route || strcmp(routes[i].method, method) == 0) {
			*ret = m;
			ret->route = &routes[i];
		}
		if (strcmp(routes[i].method, method) == 0)
			return;
	}
}

/*
 * Route, method, token and declared size, judged before any of a body is read (the first call
 * for a request): a request that will be refused costs no memory. 1 and the answer queued, or 0.
 */
static int refuse_early(struct http_child *hc, struct MHD_Connection *conn, const char *url,
			const char *method, const struct request *rq, enum MHD_Result *ret)
{
	struct match m;
	enum auth a;

	match(url, method, &m);
	if (!m.route && strcmp(method, "GET") == 0 && http_web_find(hc, url))
		return 0;
	if (!m.route && strcmp(method, "OPTIONS") == 0 && hc->cfg->http_cors_origin[0])
		return 0; /* a CORS preflight, answered in dispatch */
	if (!m.route)
		return *ret = http_fail(hc, conn, 404, "no such resource"), 1;
	if (strcmp(method, m.route->method) != 0 &&
	    !(strcmp(method, "OPTIONS") == 0 && hc->cfg->http_cors_origin[0]))
		return *ret = http_fail(hc, conn, 405, "method not allowed here"), 1;
	if (strcmp(method, "OPTIONS") == 0)
		return 0;
	a = http_authorize(hc, conn);
	if (m.route->need != AUTH_NONE && a == AUTH_NONE)
		return *ret = http_fail(hc, conn, 401,
					"a bearer token is needed (Authorization: Bearer TOKEN)"),
		       1;
	if (m.route->need == AUTH_ACTION && a != AUTH_ACTION)
		return *ret = http_fail(hc, conn, 403, "this needs the action token"), 1;
	if (rq->too_large)
		return *ret = http_fail(hc, conn, 413, "the body is too large"), 1;
	return 0;
}

/* A CORS preflight from the configured origin: what the API takes. */
static enum MHD_Result preflight(struct http_child *hc, struct MHD_Connection *conn)
{
	struct MHD_Response *resp =
		MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
	const char *origin = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Origin");
	enum MHD_Result r;

	if (!resp)
		return MHD_NO;
	if (origin && strcmp(origin, hc->cfg->http_cors_origin) == 0) {
		MHD_add_response_header(resp, "Access-Control-Allow-Origin", origin);
		MHD_add_response_header(resp, "Access-Control-Allow-Methods", "GET, POST");
		MHD_add_response_header(resp, "Access-Control-Allow-Headers",
					"Authorization, Content-Type, Last-Event-ID");
		MHD_add_response_header(resp, "Access-Control-Max-Age", "600");
		MHD_add_response_header(resp, "Vary", "Origin");
	}
	atomic_fetch_add(&hc->by_code[2], 1);
	r = MHD_queue_response(conn, 204, resp);
	MHD_destroy_response(resp);
	return r;
}

static enum MHD_Result dispatch(struct http_child *hc, struct MHD_Connection *conn, const char *url,
				const char *method, const struct request *rq)
{
	struct match m;
	enum MHD_Result early;

	match(url, method, &m);
	if (!m.route && strcmp(method, "GET") == 0 && http_web_find(hc, url))
		return http_get_web(hc, conn, http_web_find(hc, url));
	if (strcmp(method, "OPTIONS") == 0 && hc->cfg->http_cors_origin[0])
		return preflight(hc, conn);
	if (refuse_early(hc, conn, url, method, rq, &early))
		return early;
	if (m.bad)
		return http_fail(hc, conn, 404, m.bad);
	if (rq->len && strcmp(m.route->method, "GET") == 0)
		return http_fail(hc, conn, 400, "a GET takes no body");
	return m.route->fn(hc, conn, &m, rq);
}

/* The body a request may carry: its route's cap, or an action's for a path that is none. */
static size_t body_max(const char *url, const char *method)
{
	struct match m;

	match(url, method, &m);
	return m.route && m.route->body_max ? m.route->body_max : ACTION_BODY_MAX;
}

enum MHD_Result http_api_handle(void *cls, struct MHD_Connection *conn, const char *url,
				const char *method, const char *version, const char *upload_data,
				size_t *upload_data_size, void **con_cls)
{
	struct http_child *hc = cls;
	struct request *rq = *con_cls;

	if (!rq) {
		const char *cl =
			MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Content-Length");
		int64_t declared = 0;

		if (!(rq = calloc(1, sizeof(*rq))))
			return MHD_NO;
		rq->max = body_max(url, method);
		*con_cls = rq;
		/* Too large by its own account: refused before a byte of it is read; so is a
		 * request with no token, a wrong one, or no such route. */
		if (cl && http_parse_i64(cl, &declared) == 0 && (uint64_t)declared > rq->max)
			rq->too_large = 1;
		enum MHD_Result early;
		if (refuse_early(hc, conn, url, method, rq, &early)) {
			rq->answered = 1;
			return early;
		}
		return MHD_YES;
	}
	if (rq->answered) {
		*upload_data_size = 0; /* refused already: the rest is not kept */
		return MHD_YES;
	}
	if (*upload_data_size) {
		size_t n = *upload_data_size;

		*upload_data_size = 0;
		if (rq->too_large || rq->len + n > rq->max) {
			rq->too_large = 1; /* the rest is read and dropped */
			return MHD_YES;
		}
		if (rq->len + n > rq->cap) {
			size_t cap = rq->cap ? rq->cap : 4096;
			char *b;

			while (cap < rq->len + n)
				cap *= 2;
			if (!(b = realloc(rq->body, cap)))
				return MHD_NO;
			rq->body = b;
			rq->cap = cap;
		}
		memcpy(rq->body + rq->len, upload_data, n);
		rq->len += n;
		return MHD_YES;
	}
	return dispatch(hc, conn, url, method, rq);
}

void http_api_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			 enum MHD_ConnectionNotificationCode code)
{
	struct http_child *hc = cls;

	if (code == MHD_CONNECTION_NOTIFY_STARTED)
		atomic_fetch_add(&hc->connections, 1);
	else if (code == MHD_CONNECTION_NOTIFY_CLOSED)
		atomic_fetch_sub(&hc->connections, 1);
}

void http_api_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			enum MHD_RequestTerminationCode toe)
{
	struct http_child *hc = cls;
	struct request *rq = *con_cls;

	if (toe == MHD_REQUEST_TERMINATED_TIMEOUT_REACHED)
		atomic_fetch_add(&hc->closed_timeout, 1);
	if (rq) {
		free(rq->body);
		free(rq);
	}
	*con_cls = NULL;
}
