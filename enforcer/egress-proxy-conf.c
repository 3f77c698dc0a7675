/*
 * The text of a sandbox's squid.conf (egress-proxy.h). Everything squid decides is here, in the
 * order squid reads it: the ports, the ACLs, the access rules, the TLS steps, the sizes, the log.
 *
 * The access rules, first match wins:
 * 1. a decoy marker in the URL or a credential-carrying header: refused, noted "decoy";
 * 2. the intercepted TLS's own CONNECT (the first of its connection), from a tool with a rule on
 *    443: allowed (the SNI is judged by ssl_bump: a name no rule of the tool's names is cut off
 *    there); any other CONNECT (one inside the TLS: a tunnel) is refused;
 * 3. per rule, a request on its port (80 or 443) from one of its tools, whose Host is the rule's
 *    host and, over TLS, whose SNI is too (no domain fronting), within its methods, paths and
 *    body size: allowed, noted "rule:NAME". squid's host verification (strict) refuses a Host
 *    that does not resolve to the address the tool connected to (a rule's name on another
 *    rule's server);
 * 4. anything else: refused, with the page of the rule whose host the request named (what it
 *    allows), noted "refused:NAME", or a plain refusal, noted "nohost".
 */
#include "egress-proxy.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "egress-hook.h"
#include "egress-icap.h"
#include "egress.h"
#include "lures.h"
#include "macro.h"
#include "policy/policy.h"
#include "proxy-logformat.h"

/* Headers a client puts credentials in; a decoy marker in any of them is refused. The URL (host,
 * path and query) is checked whole. */
static const char *const credential_headers[] = {
	"Authorization", "Proxy-Authorization", "Cookie",	  "X-Api-Key",
	"Api-Key",	 "X-Auth-Token",	"X-Goog-Api-Key", "X-Amz-Security-Token",
	"Private-Token", "X-Access-Token",
};

int egress_proxy_port_of(const struct policy_egress_rule *e, uint16_t port)
{
	if (!e->host || e->protocol != IPPROTO_TCP)
		return 0;
	for (size_t j = 0; j < e->n_ports; j++)
		if (e->ports[j] == port)
			return 1;
	return 0;
}

static int rule_proxied(const struct policy_egress_rule *e)
{
	return egress_proxy_port_of(e, 80) || egress_proxy_port_of(e, 443);
}

int egress_proxy_needed(const struct policy *p)
{
	for (size_t t = 0; t < policy_tool_count(p); t++)
		for (size_t i = 0; i < policy_egress_count(p); i++)
			if ((policy_tool_egress(p, t) & (1ULL << i)) &&
			    rule_proxied(policy_egress(p, i)))
				return 1;
	return 0;
}

size_t egress_proxy_intercepted_hosts(const struct policy *p, const char **hosts, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < policy_egress_count(p); i++) {
		const struct policy_egress_rule *e = policy_egress(p, i);

		if (egress_proxy_port_of(e, 443) && !(e->http && e->http->passthrough) &&
		    egress_proxy_needed(p)) {
			if (n < max)
				hosts[n] = e->host;
			n++;
		}
	}
	return n;
}

int egress_proxy_intercepts(const struct policy *p)
{
	return egress_proxy_intercepted_hosts(p, NULL, 0) > 0;
}

uid_t egress_proxy_uid(const struct config *cfg, unsigned k)
{
	return (uid_t)(cfg->gate_proxy_uid_base + k);
}

/* The daemon's fixed part: no cache, no helpers but the certificate generator, no identity. */
static void conf_fixed(FILE *f, const struct config *cfg, const struct egress_link *l)
{
	fprintf(f,
		"# firebreak: this sandbox's L7 gate (generated at create; docs/egress.md)\n"
		"pid_filename none\n"
		"coredump_dir none\n"
		"netdb_filename none\n"
		"cache deny all\n"
		"cache_mem 0\n"
		"memory_pools off\n"
		"client_db off\n"
		"pinger_enable off\n"
		"logfile_rotate 0\n"
		"buffered_logs off\n" /* the monitor follows the log line by line */
		"shutdown_lifetime 0 seconds\n"
		"visible_hostname firebreak-gate\n"
		"httpd_suppress_version_string on\n"
		"via off\n"
		/* c-icap adds its own Via (with its version) to what it adapts: neither the
		 * sandbox nor the upstream learns what the gate runs. */
		"request_header_access Via deny all\n"
		"reply_header_access Via deny all\n"
		"forwarded_for delete\n"
		"hosts_file none\n"
		"host_verify_strict on\n"
		"dns_nameservers %s\n"
		"error_directory " EGRESS_PROXY_JAIL_DIR "/errors\n"
		"cache_log stdio:" EGRESS_PROXY_JAIL_CACHE "\n"
		"sslcrtd_program /usr/lib/squid/security_file_certgen\n"
		"sslcrtd_children 2 startup=1 idle=1\n"
		/* The upstream is verified against gate_proxy_upstream_ca and nothing else (squid
		 * would add the system's CAs: default-ca=on), from its hashed directory: squid
		 * parses a cafile= bundle whole at every start (~30 ms for the host's ~150 CAs),
		 * a capath= CA only when a chain needs it. */
		"tls_outgoing_options capath=" EGRESS_PROXY_JAIL_UPSTREAM_CA " default-ca=off\n"
		"sslproxy_cert_error deny all\n"
		"on_unsupported_protocol respond all\n",
		l->gate4);
	(void)cfg;
}

/* The redirect's two ports on both of the link's gate addresses, where some rule needs them. */
static void conf_ports(FILE *f, const struct policy *p, const struct egress_link *l)
{
	int web[2] = { 0, 0 };

	for (size_t i = 0; i < policy_egress_count(p); i++) {
		web[0] |= egress_proxy_port_of(policy_egress(p, i), 80);
		web[1] |= egress_proxy_port_of(policy_egress(p, i), 443);
	}
	/* squid wants one plain forward-proxy port (its own pages' URLs name it); on the link's
	 * gate address, unreachable from the sandbox (only redirected connections pass the gate's
	 * filter), and no rule allows anything there. */
	fprintf(f, "http_port %s:%u name=fwd\n", l->gate4, EGRESS_PROXY_PORT_OWN);
	if (web[0])
		fprintf(f,
			"http_port %s:%u intercept name=h4\n"
			"http_port [%s]:%u intercept name=h6\n",
			l->gate4, EGRESS_PROXY_PORT_HTTP, l->gate6, EGRESS_PROXY_PORT_HTTP);
	if (web[1])
		fprintf(f,
			"https_port %s:%u intercept ssl-bump name=s4 %s\n"
			"https_port [%s]:%u intercept ssl-bump name=s6 %s\n",
			l->gate4, EGRESS_PROXY_PORT_HTTPS, EGRESS_PROXY_TLS_OPTIONS, l->gate6,
			EGRESS_PROXY_PORT_HTTPS, EGRESS_PROXY_TLS_OPTIONS);
	fputs("acl fb_http myportname h4 h6\nacl fb_tls myportname s4 s6\n", f);
}

/* POSIX regular expressions matching the decimal numbers above max (leading zeros allowed). */
static void regex_above(FILE *f, int64_t max)
{
	char d[24];
	int n = snprintf(d, sizeof(d), "%lld", (long long)max);

	fprintf(f, " ^0*[1-9][0-9]{%d,}$", n); /* more digits */
	for (int i = 0; i < n; i++) {
		if (d[i] == '9')
			continue;
		/* The same digits up to i, a greater one at i, any after. */
		fprintf(f, " ^0*%.*s[%c-9][0-9]{%d}$", i, d, d[i] + 1, n - 1 - i);
	}
}

static void quoted_glob(FILE *f, const char *path)
{
	/* A path is of URL characters (policy-http.c); those that mean something to a regex are
	 * escaped, '*' becomes ".*". */
	for (const char *c = path; *c; c++) {
		if (*c == '*')
			fputs(".*", f);
		else if (strchr(".+()$&'!,;=:@~", *c))
			fprintf(f, "[%c]", *c);
		else
			fputc(*c, f);
	}
}

/* Rule i's ACLs: its ports, tools, host, SNI, and the limits it has (methods, paths, body). */
static void conf_rule_acls(FILE *f, const struct policy *p, unsigned k, size_t i)
{
	const struct policy_egress_rule *e = policy_egress(p, i);
	const struct policy_http *h = e->http;

	fprintf(f, "# rule %s: %s\n", e->name, e->host);
	fprintf(f, "acl fb_t%zu src", i);
	for (size_t t = 0; t < policy_tool_count(p) && t < EGRESS_HOOK_TOOLS_MAX; t++) {
		char src4[32], src6[64];

		if (policy_tool_egress(p, t) & (1ULL << i)) {
			egress_tool_addrs(k, (unsigned)t, src4, sizeof(src4), src6, sizeof(src6));
			fprintf(f, " %s/32 %s/128", src4, src6);
		}
	}
	fprintf(f, "\nacl fb_h%zu dstdomain -n %s\n", i, e->host);
	fprintf(f, "acl fb_sni%zu ssl::server_name --client-requested %s\n", i, e->host);
	if (h && h->n_methods) {
		fprintf(f, "acl fb_m%zu method", i);
		for (size_t j = 0; j < h->n_methods; j++)
			fprintf(f, " %s", h->methods[j]);
		fputc('\n', f);
	}
	if (h && h->n_paths) {
		fprintf(f, "acl fb_path%zu urlpath_regex", i);
		for (size_t j = 0; j < h->n_paths; j++) {
			fputs(" ^", f);
			quoted_glob(f, h->paths[j]);
			/* A glob names whole paths (a query may follow); a prefix, what starts so.
			 */
			fputs(strchr(h->paths[j], '*') ? "([?].*)?$" : "", f);
		}
		fputc('\n', f);
	}
	if (h && h->max_request_body >= 0) {
		fprintf(f, "acl fb_big%zu req_header Content-Length", i);
		regex_above(f, h->max_request_body);
		fputc('\n', f);
	}
	fprintf(f,
		"acl fb_ok%zu annotate_transaction firebreak+=rule:%s\n"
		"acl fb_no%zu annotate_transaction firebreak+=refused:%s\n",
		i, e->name, i, e->name);
}

/* The conditions rule i puts on a request besides port, tool and host ("" for none). */
static void rule_limits(FILE *f, const struct policy_egress_rule *e, size_t i)
{
	const struct policy_http *h = e->http;

	if (h && h->n_methods)
		fprintf(f, " fb_m%zu", i);
	if (h && h->n_paths)
		fprintf(f, " fb_path%zu", i);
	/* A body's size is known only from its Content-Length: chunked ones are refused where
	 * there is a limit. */
	if (h && h->max_request_body >= 0)
		fprintf(f, " !fb_big%zu !fb_chunked", i);
}

/* The headers checked for the marker: the usual ones, then any other a credential travels in.
 * Returns how many, up to max, into names. */
static size_t decoy_headers(const struct policy *p, const char **names, size_t max)
{
	size_t n = 0;

	for (size_t j = 0; j < ARRAY_SIZE(credential_headers) && n < max; j++)
		names[n++] = credential_headers[j];
	for (size_t i = 0; i < policy_credential_count(p) && n < max; i++) {
		const char *h = policy_credential(p, i)->header;
		size_t j = 0;

		while (j < n && strcasecmp(names[j], h) != 0)
			j++;
		if (j == n)
			names[n++] = h;
	}
	return n;
}

/*
 * Credential i's swap: acl fb_c<i> is "a request over TLS to one of its hosts whose header is the
 * decoy, whole" (the scheme, spaces, the decoy: a decoy with anything around it is a leak,
 * refused as one; a real value never crosses the wire in the clear). The header of such a request
 * is dropped and the real one added (the real value is in credentials.conf, the proxy's to read
 * only: squid.conf holds no secret).
 */
static void conf_credentials(FILE *f, const struct policy *p, const char *marker)
{
	for (size_t i = 0; i < policy_credential_count(p); i++) {
		const struct policy_credential *c = policy_credential(p, i);
		char decoy[128];

		if (lure_credential_decoy(c->name, c->env, marker, decoy, sizeof(decoy)) < 0)
			continue; /* cannot be: a marker is 20 characters */
		fprintf(f, "# credential %s\nacl fb_c%zu_h dstdomain -n", c->name, i);
		for (size_t j = 0; j < c->n_hosts; j++)
			fprintf(f, " %s", c->hosts[j]);
		fprintf(f, "\nacl fb_c%zu_v req_header %s -i ^%s%s%s$\n", i, c->header,
			c->scheme ? c->scheme : "", c->scheme ? "[[:blank:]]+" : "", decoy);
		fprintf(f,
			"acl fb_c%zu_note annotate_transaction firebreak+=credential:%s\n"
			"acl fb_c%zu all-of fb_tls fb_c%zu_h fb_c%zu_v\n"
			"request_header_access %s deny fb_c%zu\n",
			i, c->name, i, i, i, c->header, i);
	}
}

/* Whether some credential travels in header h. */
static int header_swapped(const struct policy *p, const char *h)
{
	for (size_t i = 0; i < policy_credential_count(p); i++)
		if (strcasecmp(policy_credential(p, i)->header, h) == 0)
			return 1;
	return 0;
}

static void conf_decoys(FILE *f, const struct policy *p, const char *marker)
{
	const char *headers[ARRAY_SIZE(credential_headers) + POLICY_CREDENTIALS_MAX];
	size_t n = decoy_headers(p, headers, ARRAY_SIZE(headers));

	fprintf(f, "acl fb_decoy_url url_regex -i %s\n", marker);
	for (size_t j = 0; j < n; j++) {
		fprintf(f, "acl fb_decoy_h%zu req_header %s -i %s\n", j, headers[j], marker);
		if (!header_swapped(p, headers[j]))
			continue;
		/* The decoy, whole, in the header its credential travels in, to a bound host: the
		 * one place the marker may go (it is swapped there). */
		fprintf(f, "acl fb_swap_h%zu any-of", j);
		for (size_t i = 0; i < policy_credential_count(p); i++)
			if (strcasecmp(policy_credential(p, i)->header, headers[j]) == 0)
				fprintf(f, " fb_c%zu", i);
		fputc('\n', f);
	}
	fprintf(f, "acl fb_decoy_note annotate_transaction firebreak+=decoy:marker\n");
}

/* A request with the marker in a header is refused, unless it is a swap (above). */
static void conf_decoy_access(FILE *f, const struct policy *p)
{
	const char *headers[ARRAY_SIZE(credential_headers) + POLICY_CREDENTIALS_MAX];
	size_t n = decoy_headers(p, headers, ARRAY_SIZE(headers));

	for (size_t j = 0; j < n; j++) {
		if (header_swapped(p, headers[j]))
			fprintf(f, "http_access deny fb_decoy_h%zu !fb_swap_h%zu fb_decoy_note\n",
				j, j);
		else
			fprintf(f, "http_access deny fb_decoy_h%zu fb_decoy_note\n", j);
	}
}

/* Tool addresses, as one src ACL named name, of every tool with a rule proxied on port. */
static void conf_tools_on(FILE *f, const struct policy *p, unsigned k, uint16_t port,
			  const char *name)
{
	fprintf(f, "acl %s src", name);
	for (size_t t = 0; t < policy_tool_count(p) && t < EGRESS_HOOK_TOOLS_MAX; t++) {
		char src4[32], src6[64];
		int any = 0;

		for (size_t i = 0; i < policy_egress_count(p); i++)
			any |= (policy_tool_egress(p, t) & (1ULL << i)) &&
			       egress_proxy_port_of(policy_egress(p, i), port);
		if (!any)
			continue;
		egress_tool_addrs(k, (unsigned)t, src4, sizeof(src4), src6, sizeof(src6));
		fprintf(f, " %s/32 %s/128", src4, src6);
	}
	fputs(" 255.255.255.255/32\n", f); /* an ACL must not be empty; no client has this */
}

/* Rule i's allow line for one of its ports (80: fb_http, 443: fb_tls and its SNI). */
static void rule_allow(FILE *f, const struct policy_egress_rule *e, size_t i, uint16_t port)
{
	if (!egress_proxy_port_of(e, port))
		return;
	fprintf(f, "http_access allow %s fb_t%zu fb_h%zu", port == 80 ? "fb_http" : "fb_tls", i, i);
	if (port == 443)
		fprintf(f, " fb_sni%zu", i);
	rule_limits(f, e, i);
	fprintf(f, " fb_ok%zu\n", i);
}

/* The access rules (the order the file header gives). */
static void conf_access(FILE *f, const struct policy *p, unsigned k)
{
	conf_tools_on(f, p, k, 443, "fb_tools_tls");
	fputs("acl fb_connect method CONNECT\n"
	      "acl fb_step1 at_step SslBump1\n"
	      "acl fb_chunked req_header Transfer-Encoding .\n"
	      "acl fb_sni_no annotate_transaction firebreak+=nosni\n"
	      "acl fb_host_no annotate_transaction firebreak+=nohost\n"
	      /* The connection's first CONNECT marks it; a later one is a tunnel inside it. */
	      "acl fb_conn_seen note fb_conn seen\n"
	      "acl fb_conn_mark annotate_client fb_conn=seen\n"
	      "http_access deny fb_decoy_url fb_decoy_note\n",
	      f);
	conf_decoy_access(f, p);
	fputs("deny_info 403:ERR_FB_DECOY fb_decoy_note\n"
	      "http_access deny fb_connect fb_conn_seen\n"
	      "http_access allow fb_connect fb_tls fb_tools_tls fb_conn_mark\n"
	      "http_access deny fb_connect\n",
	      f);
	for (size_t i = 0; i < policy_egress_count(p); i++) {
		const struct policy_egress_rule *e = policy_egress(p, i);

		if (!rule_proxied(e))
			continue;
		rule_allow(f, e, i, 80);
		rule_allow(f, e, i, 443);
	}
	/* Refused: the page of the rule whose host was asked for, else a plain one. */
	for (size_t i = 0; i < policy_egress_count(p); i++)
		if (rule_proxied(policy_egress(p, i)))
			fprintf(f,
				"http_access deny fb_h%zu fb_no%zu\n"
				"deny_info 403:ERR_FB_R%zu fb_no%zu\n",
				i, i, i, i);
	fputs("http_access deny all fb_host_no\n"
	      "deny_info 403:ERR_FB_HOST fb_host_no\n",
	      f);
}

/* TLS: peek at the ClientHello; intercept or splice when the SNI is the host of a rule of the
 * tool's on 443; otherwise cut the connection (no certificate for a name not allowed). */
static void conf_tls(FILE *f, const struct policy *p)
{
	fputs("ssl_bump peek fb_step1\n", f);
	for (size_t i = 0; i < policy_egress_count(p); i++) {
		const struct policy_egress_rule *e = policy_egress(p, i);

		if (egress_proxy_port_of(e, 443))
			fprintf(f, "ssl_bump %s fb_t%zu fb_sni%zu\n",
				e->http && e->http->passthrough ? "splice" : "bump", i, i);
	}
	fputs("ssl_bump terminate fb_sni_no\n", f);
}

static void conf_sizes(FILE *f, const struct policy *p)
{
	for (size_t i = 0; i < policy_egress_count(p); i++) {
		const struct policy_egress_rule *e = policy_egress(p, i);

		if (rule_proxied(e) && e->http && e->http->max_response >= 0)
			fprintf(f, "reply_body_max_size %lld bytes fb_t%zu fb_h%zu\n",
				(long long)e->http->max_response, i, i);
	}
}

int egress_proxy_conf(const struct config *cfg, const char *name, unsigned k,
		      const struct policy *p, const char *marker, const char *verdict, char **ret)
{
	struct egress_link l;
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);

	if (!f)
		return -ENOMEM;
	egress_link_of(k, &l);
	fprintf(f, "# sandbox %s, link %u\n", name, k);
	conf_fixed(f, cfg, &l);
	conf_ports(f, p, &l);
	for (size_t i = 0; i < policy_egress_count(p); i++)
		if (rule_proxied(policy_egress(p, i)))
			conf_rule_acls(f, p, k, i);
	conf_credentials(f, p, marker);
	conf_decoys(f, p, marker);
	conf_access(f, p, k);
	egress_icap_squid_conf(f, p, l.gate4, verdict);
	conf_tls(f, p);
	conf_sizes(f, p);
	if (policy_credential_count(p))
		fputs("include " EGRESS_PROXY_JAIL_DIR "/" EGRESS_PROXY_CREDENTIALS "\n", f);
	fputs("logformat firebreak " FIREBREAK_PROXY_LOGFORMAT "\n"
	      "access_log stdio:" EGRESS_PROXY_JAIL_LOG " logformat=firebreak\n",
	      f);
	if (fclose(f) != 0) {
		free(text);
		return -ENOMEM;
	}
	*ret = text;
	return 0;
}
