/*
 * The "credentials" section: secrets a sandbox needs to call a service but must never hold. Each
 * names where the real value lives on the host (a root-only file, read at create), the hosts it
 * is bound to and the header it travels in; the sandbox gets a decoy unique to it (in a variable,
 * a file in its home, or both), and the gate's L7 proxy swaps decoy for real only on a request to
 * a bound host that carries the decoy, whole, in that header (docs/egress.md, "Credentials").
 * Everything accepted here ends up in squid ACLs, so names are tokens that need no quoting.
 */
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "lures.h"
#include "macro.h"
#include "policy-internal.h"

#define POLICY_CREDENTIAL_HOSTS_MAX 8
#define CREDENTIAL_NAME_MAX 32
#define HEADER_NAME_MAX 64

static int name_valid(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-");

	return n > 0 && n <= CREDENTIAL_NAME_MAX && s[n] == '\0';
}

/* An HTTP field name (RFC 9110 token), letters, digits and '-' only. */
static int header_valid(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-");

	return n > 0 && n <= HEADER_NAME_MAX && s[n] == '\0';
}

static int scheme_valid(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ");

	return n > 0 && n <= 16 && s[n] == '\0';
}

/* A file in the sandbox's home, named plainly: the enforcer plants the decoy there. */
static int file_valid(const char *s)
{
	static const char allowed[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				      "0123456789/-._";
	size_t home = strlen(LURE_HOME), n = strlen(s);

	return strncmp(s, LURE_HOME "/", home + 1) == 0 && n > home + 1 && n <= 200 &&
	       strspn(s, allowed) == n && !strstr(s, "/./") && !strstr(s, "/../") &&
	       !strstr(s, "//") && s[n - 1] != '/' && strcmp(s + n - 2, "/.") != 0 &&
	       strcmp(s + n - 3, "/..") != 0;
}

/* Whether some egress rule for host has its TLS on 443 intercepted by the proxy: only there can
 * the proxy see a header to swap, and a real value never crosses the wire in the clear. */
static int host_swappable(const struct policy *p, const char *host)
{
	for (size_t i = 0; i < p->n_egress; i++) {
		const struct policy_egress_rule *e = &p->egress[i].pub;
		int web443 = 0;

		if (!e->host || strcmp(e->host, host) != 0 || e->protocol != IPPROTO_TCP)
			continue;
		for (size_t j = 0; j < e->n_ports; j++)
			web443 |= e->ports[j] == 443;
		if (web443 && !(e->http && e->http->passthrough))
			return 1;
	}
	return 0;
}

/* The variable must be the credential's own: not a real value of the policy's, not a decoy of
 * sandbox.decoy_env, not another credential's. */
static int env_own(struct policy_parse *ctx, const char *path, const char *env, size_t upto)
{
	struct policy *p = ctx->policy;
	size_t n = strlen(env);

	for (char **v = p->fixed_env; v && *v; v++)
		if (strncmp(*v, env, n) == 0 && (*v)[n] == '=')
			return policy_fail(ctx, path, 0,
					   "\"%s\" has a real value in the sandbox's environment",
					   env);
	for (size_t i = 0; i < p->n_decoy_env; i++)
		if (strcmp(p->decoy_env[i], env) == 0)
			return policy_fail(ctx, path, 0, "\"%s\" is in sandbox.decoy_env too", env);
	for (size_t i = 0; i < upto; i++)
		if (p->credentials[i].env && strcmp(p->credentials[i].env, env) == 0)
			return policy_fail(ctx, path, 0, "credential %s has \"%s\" already",
					   p->credentials[i].name, env);
	return 0;
}

static int credential_where(struct policy_parse *ctx, json_t *obj, const char *path,
			    struct policy_credential_internal *c, size_t index)
{
	char vpath[JSON_POS_PATH_MAX + 1];
	int r;

	if ((r = policy_get_string(ctx, obj, path, "env", 0, &c->env)) < 0 ||
	    (r = policy_get_string(ctx, obj, path, "file", 0, &c->file)) < 0)
		return r;
	if (!c->env && !c->file)
		return policy_fail(ctx, path, 0,
				   "credential %s: give the sandbox its decoy in \"env\", \"file\" "
				   "or both",
				   c->name);
	policy_path(vpath, path, "env");
	if (c->env && !policy_env_name_valid(c->env))
		return policy_fail(ctx, vpath, 0, "\"%.200s\": not a variable name", c->env);
	if (c->env && (r = env_own(ctx, vpath, c->env, index)) < 0)
		return r;
	policy_path(vpath, path, "file");
	if (c->file && !file_valid(c->file))
		return policy_fail(ctx, vpath, 0,
				   "\"%.200s\": a file under " LURE_HOME
				   " of letters, digits and -._ (no dot or empty segment)",
				   c->file);
	if (c->file && lure_find(c->file))
		return policy_fail(ctx, vpath, 0, "\"%s\" is a lure's path", c->file);
	return 0;
}

static int credential_hosts(struct policy_parse *ctx, json_t *obj, const char *path,
			    struct policy_credential_internal *c)
{
	char vpath[JSON_POS_PATH_MAX + 1];
	int r;

	if (!json_object_get(obj, "hosts"))
		return policy_fail(ctx, path, 0, "credential %s: missing \"hosts\"", c->name);
	if ((r = policy_get_strings(ctx, obj, path, "hosts", POLICY_CREDENTIAL_HOSTS_MAX, NULL,
				    NULL, &c->hosts, &c->pub.n_hosts)) < 0)
		return r;
	policy_path(vpath, path, "hosts");
	if (c->pub.n_hosts == 0)
		return policy_fail(ctx, vpath, 0, "credential %s is bound to no host", c->name);
	for (size_t i = 0; i < c->pub.n_hosts; i++)
		if (!host_swappable(ctx->policy, c->hosts[i]))
			return policy_fail(ctx, vpath, 0,
					   "credential %s: \"%.200s\" is not the host of an egress "
					   "rule whose TLS the proxy intercepts (TCP port 443, "
					   "not \"passthrough\")",
					   c->name, c->hosts[i]);
	return 0;
}

static int parse_credential(struct policy_parse *ctx, const char *name, json_t *obj,
			    const char *path, struct policy_credential_internal *c, size_t index)
{
	static const char *const known[] = { "from", "hosts", "header", "scheme", "env", "file" };
	char vpath[JSON_POS_PATH_MAX + 1];
	int r;

	if (!json_is_object(obj))
		return policy_fail(ctx, path, 0, "credential %s must be an object, not %s", name,
				   policy_type_name(obj));
	if ((r = policy_check_keys(ctx, obj, path, known, ARRAY_SIZE(known))) < 0)
		return r;
	if (!name_valid(name))
		return policy_fail(ctx, path, 1,
				   "credential \"%.64s\": a name is 1-%d of [a-z0-9_-]", name,
				   CREDENTIAL_NAME_MAX);
	if (!(c->name = strdup(name)))
		return -ENOMEM;
	if ((r = policy_get_string(ctx, obj, path, "from", 1, &c->from)) < 0 ||
	    (r = policy_get_string(ctx, obj, path, "header", 0, &c->header)) < 0 ||
	    (r = policy_get_string(ctx, obj, path, "scheme", 0, &c->scheme)) < 0)
		return r;
	policy_path(vpath, path, "from");
	if (c->from[0] != '/')
		return policy_fail(ctx, vpath, 0, "\"from\" must be an absolute path on the host");
	if (!c->header && !(c->header = strdup("Authorization")))
		return -ENOMEM;
	policy_path(vpath, path, "header");
	if (!header_valid(c->header))
		return policy_fail(ctx, vpath, 0, "\"%.200s\": not a header name", c->header);
	policy_path(vpath, path, "scheme");
	if (c->scheme && !scheme_valid(c->scheme))
		return policy_fail(ctx, vpath, 0, "\"%.200s\": a scheme is 1-16 letters",
				   c->scheme);
	if ((r = credential_hosts(ctx, obj, path, c)) < 0 ||
	    (r = credential_where(ctx, obj, path, c, index)) < 0)
		return r;
	c->pub = (struct policy_credential){
		.name = c->name,
		.from = c->from,
		.hosts = (const char *const *)c->hosts,
		.n_hosts = c->pub.n_hosts,
		.header = c->header,
		.scheme = c->scheme,
		.env = c->env,
		.file = c->file,
	};
	return 0;
}

int policy_parse_credentials(struct policy_parse *ctx, json_t *obj)
{
	struct policy *p = ctx->policy;
	char path[JSON_POS_PATH_MAX + 1];
	const char *name;
	json_t *v;
	int r;

	if (json_object_size(obj) > POLICY_CREDENTIALS_MAX)
		return policy_fail(ctx, "/credentials", 0, "more than %d credentials",
				   POLICY_CREDENTIALS_MAX);
	p->credentials = calloc(json_object_size(obj) + 1, sizeof(*p->credentials));
	if (!p->credentials)
		return -ENOMEM;
	json_object_foreach (obj, name, v) {
		policy_path(path, "/credentials", name);
		r = parse_credential(ctx, name, v, path, &p->credentials[p->n_credentials],
				     p->n_credentials);
		p->n_credentials++; /* freed whole, also when it failed half made */
		if (r < 0)
			return r;
	}
	return 0;
}

void policy_credentials_free(struct policy *p)
{
	for (size_t i = 0; i < p->n_credentials; i++) {
		struct policy_credential_internal *c = &p->credentials[i];

		free(c->name);
		free(c->from);
		free(c->header);
		free(c->scheme);
		free(c->env);
		free(c->file);
		policy_strv_free(c->hosts);
	}
	free(p->credentials);
}

size_t policy_credential_count(const struct policy *p)
{
	return p->n_credentials;
}

const struct policy_credential *policy_credential(const struct policy *p, size_t i)
{
	return i < p->n_credentials ? &p->credentials[i].pub : NULL;
}
