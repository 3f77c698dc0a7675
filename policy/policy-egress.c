/*
 * The policy's "egress" section: the task's allowlist, which the gate enforces (CIDR + ports +
 * protocol, or a host name resolved only by the gate's DNS). Ranges no policy may open are
 * refused here, at load time, so `firebreak policy check` already says no.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "macro.h"
#include "policy-internal.h"

/*
 * Cloud metadata endpoints (they hand out credentials) and the gate's own networks: always closed,
 * whatever a policy says. AWS/GCP/Azure/OpenStack 169.254.169.254 (all of link-local with it),
 * Alibaba 100.100.100.200, Oracle 192.0.0.192, AWS IPv6 fd00:ec2::254, GCP IPv6 fd20:ce::254,
 * IPv6 link-local; the gate's sandbox links and its outside link.
 */
static const char *const never_open[] = {
	"169.254.0.0/16",   "100.100.100.200/32", "192.0.0.192/32",
	"fe80::/10",	    "fd00:ec2::254/128",  "fd20:ce::254/128",
	POLICY_GATE_LINKS4, POLICY_GATE_OUTSIDE4, POLICY_GATE_LINKS6,
};

const char *const *policy_egress_never_open(size_t *ret_n)
{
	*ret_n = ARRAY_SIZE(never_open);
	return never_open;
}

int policy_cidr_parse(const char *s, int *ret_family, unsigned char ret_addr[16],
		      unsigned *ret_prefix)
{
	char buf[INET6_ADDRSTRLEN + 8], *slash, *end;
	unsigned char addr[16] = { 0 };
	int family;
	unsigned long prefix;

	if (strscpy(buf, sizeof(buf), s) < 0)
		return -EINVAL;
	slash = strchr(buf, '/');
	if (slash)
		*slash = '\0';
	family = strchr(buf, ':') ? AF_INET6 : AF_INET;
	if (inet_pton(family, buf, addr) != 1)
		return -EINVAL;
	prefix = family == AF_INET ? 32 : 128;
	if (slash) {
		if (!isdigit((unsigned char)slash[1]))
			return -EINVAL;
		prefix = strtoul(slash + 1, &end, 10);
		if (*end || prefix > (family == AF_INET ? 32UL : 128UL))
			return -EINVAL;
	}
	/* Host bits must be zero: "10.0.0.1/8" is more likely a mistake than a wish. */
	for (unsigned bit = (unsigned)prefix; bit < (family == AF_INET ? 32u : 128u); bit++)
		if (addr[bit / 8] & (0x80 >> (bit % 8)))
			return -EINVAL;
	*ret_family = family;
	memcpy(ret_addr, addr, 16);
	*ret_prefix = (unsigned)prefix;
	return 0;
}

/* Whether two CIDRs share any address. */
static int overlaps(int fa, const unsigned char *a, unsigned pa, int fb, const unsigned char *b,
		    unsigned pb)
{
	unsigned p = pa < pb ? pa : pb;

	if (fa != fb)
		return 0;
	for (unsigned bit = 0; bit < p; bit++)
		if ((a[bit / 8] ^ b[bit / 8]) & (0x80 >> (bit % 8)))
			return 0;
	return 1;
}

const char *policy_cidr_forbidden(int family, const unsigned char addr[16], unsigned prefix)
{
	for (size_t i = 0; i < ARRAY_SIZE(never_open); i++) {
		unsigned char b[16];
		unsigned pb;
		int fb;

		if (policy_cidr_parse(never_open[i], &fb, b, &pb) == 0 &&
		    overlaps(family, addr, prefix, fb, b, pb))
			return never_open[i];
	}
	return NULL;
}

static int rule_name_valid(const char *s)
{
	size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_-");

	return n > 0 && n <= 32 && s[n] == '\0';
}

/* A DNS name the gate's DNS may answer: labels of [a-z0-9-], no wildcard, at most 253 bytes. */
static int host_valid(const char *s)
{
	size_t n = strlen(s), label = 0;

	if (n == 0 || n > 253 || s[0] == '.' || s[n - 1] == '.')
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '.') {
			if (label == 0)
				return 0;
			label = 0;
			continue;
		}
		if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) ||
		      s[i] == '-') ||
		    ++label > 63)
			return 0;
	}
	return 1;
}

/* The rule's shape, its typed members, and its name. */
static int rule_members(struct policy_parse *ctx, json_t *obj, const char *path,
			struct policy_egress_internal *e, char **protocol)
{
	static const char *const known[] = { "name",  "description", "host", "cidr",
					     "ports", "protocol",    "http" };
	_cleanup_free_ char *description = NULL;
	char vpath[JSON_POS_PATH_MAX + 1];
	int r;

	if (!json_is_object(obj))
		return policy_fail(ctx, path, 0, "an egress rule must be an object, not %s",
				   policy_type_name(obj));
	if ((r = policy_check_keys(ctx, obj, path, known, ARRAY_SIZE(known))) < 0 ||
	    (r = policy_get_string(ctx, obj, path, "name", 1, &e->name)) < 0 ||
	    (r = policy_get_string(ctx, obj, path, "description", 0, &description)) < 0 ||
	    (r = policy_get_string(ctx, obj, path, "host", 0, &e->host)) < 0 ||
	    (r = policy_get_string(ctx, obj, path, "cidr", 0, &e->cidr)) < 0 ||
	    (r = policy_get_string(ctx, obj, path, "protocol", 0, protocol)) < 0)
		return r;
	policy_path(vpath, path, "name");
	if (!rule_name_valid(e->name))
		return policy_fail(ctx, vpath, 0, "\"name\" must be 1-32 of [a-z0-9_-]");
	return 0;
}

/* Exactly one of a host name for the gate's DNS or a CIDR outside what is always closed. */
static int rule_destination(struct policy_parse *ctx, const char *path,
			    struct policy_egress_internal *e)
{
	char vpath[JSON_POS_PATH_MAX + 1];
	const char *bad;

	if (!e->host == !e->cidr)
		return policy_fail(ctx, path, 0,
				   "an egress rule names exactly one of \"host\" or "
				   "\"cidr\"");
	if (e->host) {
		policy_path(vpath, path, "host");
		if (!host_valid(e->host))
			return policy_fail(
				ctx, vpath, 0,
				"\"host\" must be a DNS name of [a-z0-9.-] (no wildcard)");
		return 0;
	}
	policy_path(vpath, path, "cidr");
	if (policy_cidr_parse(e->cidr, &e->pub.family, e->pub.addr, &e->pub.prefix) < 0)
		return policy_fail(ctx, vpath, 0,
				   "\"cidr\" must be an IPv4 or IPv6 address or ADDRESS/PREFIX "
				   "with no host bits set");
	bad = policy_cidr_forbidden(e->pub.family, e->pub.addr, e->pub.prefix);
	if (bad)
		return policy_fail(ctx, vpath, 0,
				   "\"cidr\" %s overlaps %s, which is always closed (cloud "
				   "metadata or the gate's own network); no policy may open it",
				   e->cidr, bad);
	return 0;
}

static int rule_protocol(struct policy_parse *ctx, const char *path, const char *protocol,
			 struct policy_egress_internal *e)
{
	char vpath[JSON_POS_PATH_MAX + 1];

	e->pub.protocol = IPPROTO_TCP;
	if (!protocol)
		return 0;
	policy_path(vpath, path, "protocol");
	if (strcmp(protocol, "udp") == 0)
		e->pub.protocol = IPPROTO_UDP;
	else if (strcmp(protocol, "tcp") != 0)
		return policy_fail(ctx, vpath, 0, "\"protocol\" must be \"tcp\" or \"udp\"");
	return 0;
}

static int rule_ports(struct policy_parse *ctx, json_t *obj, const char *path,
		      struct policy_egress_internal *e)
{
	char vpath[JSON_POS_PATH_MAX + 1], ppath[JSON_POS_PATH_MAX + 1];
	json_t *ports = json_object_get(obj, "ports");

	policy_path(vpath, path, "ports");
	if (!ports)
		return policy_fail(ctx, path, 0, "missing \"ports\" (a list of 1-%d ports)",
				   POLICY_PORTS_MAX);
	if (!json_is_array(ports) || json_array_size(ports) == 0 ||
	    json_array_size(ports) > POLICY_PORTS_MAX)
		return policy_fail(ctx, vpath, 0, "\"ports\" must be a list of 1-%d ports",
				   POLICY_PORTS_MAX);
	e->ports = calloc(json_array_size(ports), sizeof(*e->ports));
	if (!e->ports)
		return -ENOMEM;
	for (size_t i = 0; i < json_array_size(ports); i++) {
		json_t *p = json_array_get(ports, i);

		policy_path_index(ppath, vpath, i);
		if (!json_is_integer(p) || json_integer_value(p) < 1 ||
		    json_integer_value(p) > 65535)
			return policy_fail(ctx, ppath, 0,
					   "a port must be an integer from 1 to 65535");
		e->ports[i] = (uint16_t)json_integer_value(p);
	}
	e->pub.n_ports = json_array_size(ports);
	return 0;
}

static int parse_rule(struct policy_parse *ctx, json_t *obj, const char *path,
		      struct policy_egress_internal *e)
{
	_cleanup_free_ char *protocol = NULL;
	int r;

	if ((r = rule_members(ctx, obj, path, e, &protocol)) < 0 ||
	    (r = rule_destination(ctx, path, e)) < 0 ||
	    (r = rule_protocol(ctx, path, protocol, e)) < 0 ||
	    (r = rule_ports(ctx, obj, path, e)) < 0 ||
	    (r = policy_parse_http(ctx, obj, path, e)) < 0)
		return r;
	e->pub.name = e->name;
	e->pub.host = e->host;
	e->pub.cidr = e->cidr;
	e->pub.ports = e->ports;
	e->pub.http = e->http ? &e->http->pub : NULL;
	return 0;
}

int policy_parse_egress(struct policy_parse *ctx, json_t *obj)
{
	static const char *const known[] = { "allow", "description" };
	struct policy *p = ctx->policy;
	_cleanup_free_ char *description = NULL;
	json_t *allow;
	int r;

	if ((r = policy_check_keys(ctx, obj, "/egress", known, ARRAY_SIZE(known))) < 0 ||
	    (r = policy_get_string(ctx, obj, "/egress", "description", 0, &description)) < 0)
		return r;
	allow = json_object_get(obj, "allow");
	if (!allow)
		return 0;
	if (!json_is_array(allow) || json_array_size(allow) > POLICY_EGRESS_MAX)
		return policy_fail(ctx, "/egress/allow", 0,
				   "\"allow\" must be a list of at most %d rules",
				   POLICY_EGRESS_MAX);
	p->egress = calloc(json_array_size(allow) + 1, sizeof(*p->egress));
	if (!p->egress)
		return -ENOMEM;
	for (size_t i = 0; i < json_array_size(allow); i++) {
		char path[JSON_POS_PATH_MAX + 1];

		policy_path_index(path, "/egress/allow", i);
		p->n_egress = i + 1;
		if ((r = parse_rule(ctx, json_array_get(allow, i), path, &p->egress[i])) < 0)
			return r;
		for (size_t j = 0; j < i; j++)
			if (strcmp(p->egress[j].name, p->egress[i].name) == 0) {
				policy_path(path, path, "name");
				return policy_fail(ctx, path, 0,
						   "egress rule \"%s\" is named twice",
						   p->egress[i].name);
			}
	}
	return 0;
}

void policy_egress_free(struct policy *p)
{
	for (size_t i = 0; i < p->n_egress; i++) {
		free(p->egress[i].name);
		free(p->egress[i].host);
		free(p->egress[i].cidr);
		free(p->egress[i].ports);
		policy_http_free(p->egress[i].http);
	}
	free(p->egress);
}

size_t policy_egress_count(const struct policy *p)
{
	return p->n_egress;
}

const struct policy_egress_rule *policy_egress(const struct policy *p, size_t i)
{
	return i < p->n_egress ? &p->egress[i].pub : NULL;
}
