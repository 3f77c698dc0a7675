/*
 * A host rule's "http" object: what the gate's L7 proxy lets a tool send on the rule's ports 80
 * and 443 (methods, path prefixes or globs, body and response sizes), and whether its TLS is
 * intercepted (the default) or passed through with only its SNI checked. The limits become squid
 * ACLs (enforcer/egress-proxy-conf.c), so what is accepted here is only what that text can hold
 * without quoting: upper-case method tokens, paths of URL characters.
 */
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "policy-internal.h"

#define POLICY_HTTP_METHODS_MAX 16
#define POLICY_HTTP_PATHS_MAX 32
#define POLICY_HTTP_PATH_LEN 256

static int method_valid(const char *s)
{
	size_t n = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ");

	return n > 0 && n <= 16 && s[n] == '\0';
}

/* An absolute path of RFC 3986 path characters ('*' is the glob's), no '%', no dot segment. */
static int path_valid(const char *s)
{
	static const char allowed[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				      "0123456789/-._~!$&'()*+,;=:@";
	size_t n = strlen(s);

	return s[0] == '/' && n <= POLICY_HTTP_PATH_LEN && strspn(s, allowed) == n &&
	       !strstr(s, "/../") && !strstr(s, "/./") &&
	       !(n >= 3 && strcmp(s + n - 3, "/..") == 0);
}

static int has_web_port(const struct policy_egress_internal *e)
{
	for (size_t i = 0; i < e->pub.n_ports; i++)
		if (e->ports[i] == 80 || e->ports[i] == 443)
			return 1;
	return 0;
}

static int http_sizes(struct policy_parse *ctx, json_t *obj, const char *path,
		      struct policy_http_internal *h)
{
	uint64_t v;
	int r;

	h->pub.max_request_body = -1;
	h->pub.max_response = -1;
	if ((r = policy_get_size(ctx, obj, path, "max_request_body", 0, &v)) < 0)
		return r;
	if (json_object_get(obj, "max_request_body"))
		h->pub.max_request_body = (int64_t)(v > INT64_MAX ? INT64_MAX : v);
	if ((r = policy_get_size(ctx, obj, path, "max_response", 0, &v)) < 0)
		return r;
	if (json_object_get(obj, "max_response"))
		h->pub.max_response = (int64_t)(v > INT64_MAX ? INT64_MAX : v);
	return 0;
}

static int http_tls(struct policy_parse *ctx, json_t *obj, const char *path,
		    struct policy_http_internal *h)
{
	_cleanup_free_ char *tls = NULL;
	char vpath[JSON_POS_PATH_MAX + 1];
	int r;

	if ((r = policy_get_string(ctx, obj, path, "tls", 0, &tls)) < 0 || !tls)
		return r;
	policy_path(vpath, path, "tls");
	if (strcmp(tls, "passthrough") == 0)
		h->pub.passthrough = 1;
	else if (strcmp(tls, "intercept") != 0)
		return policy_fail(ctx, vpath, 0,
				   "\"tls\" must be \"intercept\" or \"passthrough\"");
	if (h->pub.passthrough && (h->n_methods_set || h->n_paths_set ||
				   h->pub.max_request_body >= 0 || h->pub.max_response >= 0))
		return policy_fail(
			ctx, vpath, 0,
			"a \"passthrough\" rule's requests are encrypted end to end: the "
			"proxy cannot check their methods, paths or sizes; drop those "
			"limits or intercept");
	return 0;
}

int policy_parse_http(struct policy_parse *ctx, json_t *obj, const char *path,
		      struct policy_egress_internal *e)
{
	static const char *const known[] = { "methods",	     "paths", "max_request_body",
					     "max_response", "tls",   "description" };
	_cleanup_free_ char *description = NULL;
	char hpath[JSON_POS_PATH_MAX + 1];
	json_t *http = json_object_get(obj, "http");
	struct policy_http_internal *h;
	int r;

	if (!http)
		return 0;
	policy_path(hpath, path, "http");
	if (!e->host || e->pub.protocol != IPPROTO_TCP)
		return policy_fail(
			ctx, hpath, 0,
			"\"http\" limits apply to TCP host rules only (the proxy judges a "
			"request by its host name)");
	if (!has_web_port(e))
		return policy_fail(ctx, hpath, 0,
				   "\"http\" limits apply to ports 80 and 443, and this rule has "
				   "neither");
	if (!json_is_object(http))
		return policy_fail(ctx, hpath, 0, "\"http\" must be an object, not %s",
				   policy_type_name(http));
	if (!(h = calloc(1, sizeof(*h))))
		return -ENOMEM;
	e->http = h;
	if ((r = policy_check_keys(ctx, http, hpath, known, ARRAY_SIZE(known))) < 0 ||
	    (r = policy_get_string(ctx, http, hpath, "description", 0, &description)) < 0 ||
	    (r = policy_get_strings(ctx, http, hpath, "methods", POLICY_HTTP_METHODS_MAX,
				    method_valid, "a method is 1-16 upper-case letters",
				    &h->methods, &h->pub.n_methods)) < 0 ||
	    (r = policy_get_strings(ctx, http, hpath, "paths", POLICY_HTTP_PATHS_MAX, path_valid,
				    "a path starts with '/' and holds URL path characters only "
				    "('*' as a glob; no '%', no dot segments)",
				    &h->paths, &h->pub.n_paths)) < 0 ||
	    (r = http_sizes(ctx, http, hpath, h)) < 0)
		return r;
	h->n_methods_set = json_object_get(http, "methods") != NULL;
	h->n_paths_set = json_object_get(http, "paths") != NULL;
	if ((h->n_methods_set && h->pub.n_methods == 0) || (h->n_paths_set && h->pub.n_paths == 0))
		return policy_fail(ctx, hpath, 0,
				   "an empty \"methods\" or \"paths\" would refuse every request; "
				   "leave it out for no limit");
	h->pub.methods = h->methods;
	h->pub.paths = h->paths;
	return http_tls(ctx, http, hpath, h);
}

void policy_http_free(struct policy_http_internal *h)
{
	if (!h)
		return;
	policy_strv_free(h->methods);
	policy_strv_free(h->paths);
	free(h);
}
