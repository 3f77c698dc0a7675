/*
 * The nftables text of a sandbox's own table in the gate: the ranges it never reaches, those
 * closed unless its policy opens them, each tool's share of the allowlist (by the tool's own
 * source address), and the log-and-drop verdict for everything else.
 */
#include "egress-rules.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress.h"
#include "egress-dns.h"
#include "egress-hook.h"
#include "egress-icap.h"
#include "egress-proxy.h"
#include "macro.h"
#include "policy/policy.h"

/* Private, loopback, CGNAT and other special ranges: closed unless a policy names a CIDR in them.
 */
static const char closed4[] = "0.0.0.0/8, 10.0.0.0/8, 100.64.0.0/10, 127.0.0.0/8, 172.16.0.0/12, "
			      "192.0.0.0/24, 192.168.0.0/16, 198.18.0.0/15, 224.0.0.0/4, "
			      "240.0.0.0/4";
static const char closed6[] = "::/128, ::1/128, fc00::/7, ff00::/8";

/* Appends the host's own addresses (from its netns, where we run) as nft set elements. */
static void host_addresses(FILE *f4, FILE *f6)
{
	struct ifaddrs *ifa, *i;
	char buf[INET6_ADDRSTRLEN];

	if (getifaddrs(&ifa) < 0)
		return;
	for (i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr)
			continue;
		if (i->ifa_addr->sa_family == AF_INET &&
		    inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, buf,
			      sizeof(buf)))
			fprintf(f4, ", %s", buf);
		else if (i->ifa_addr->sa_family == AF_INET6 &&
			 inet_ntop(AF_INET6, &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, buf,
				   sizeof(buf)))
			fprintf(f6, ", %s", buf);
	}
	freeifaddrs(ifa);
}

/* The never-open ranges, the host's own addresses among them, as nft set elements. */
static int never_elements(char **ret4, char **ret6)
{
	char *never4 = NULL, *never6 = NULL;
	size_t n4 = 0, n6 = 0, count;
	const char *const *never = policy_egress_never_open(&count);
	FILE *f4 = open_memstream(&never4, &n4), *f6 = open_memstream(&never6, &n6);

	if (!f4 || !f6) {
		if (f4)
			fclose(f4);
		free(never4);
		return -ENOMEM;
	}
	fputs("127.0.0.1", f4);
	fputs("::1", f6);
	for (size_t i = 0; i < count; i++)
		fprintf(strchr(never[i], ':') ? f6 : f4, ", %s", never[i]);
	host_addresses(f4, f6);
	fclose(f4);
	fclose(f6);
	*ret4 = never4;
	*ret6 = never6;
	return 0;
}

/* Appends "ADDR/PREFIX . tcp . PORT" elements of one rule to f; first tracks the separator. */
static void rule_elements(FILE *f, const struct policy_egress_rule *e, int *first)
{
	for (size_t j = 0; j < e->n_ports; j++) {
		fprintf(f, "%s%s . %s . %u", *first ? "" : ", ", e->cidr,
			e->protocol == IPPROTO_UDP ? "udp" : "tcp", e->ports[j]);
		*first = 0;
	}
}

/* Whether CIDR rule e lies inside one of the closed ranges (so it must be opened explicitly). */
static int in_closed(const struct policy_egress_rule *e)
{
	static const char *const ranges[] = { "0.0.0.0/8",	"10.0.0.0/8",	 "100.64.0.0/10",
					      "127.0.0.0/8",	"172.16.0.0/12", "192.0.0.0/24",
					      "192.168.0.0/16", "198.18.0.0/15", "224.0.0.0/4",
					      "240.0.0.0/4",	"::/128",	 "::1/128",
					      "fc00::/7",	"ff00::/8" };

	for (size_t i = 0; i < ARRAY_SIZE(ranges); i++) {
		unsigned char a[16];
		unsigned p;
		int fam;

		if (policy_cidr_parse(ranges[i], &fam, a, &p) < 0 || fam != e->family ||
		    e->prefix < p)
			continue;
		int inside = 1;
		for (unsigned bit = 0; bit < p; bit++)
			if ((a[bit / 8] ^ e->addr[bit / 8]) & (0x80 >> (bit % 8)))
				inside = 0;
		if (inside)
			return 1;
	}
	return 0;
}

/* The sandbox's table opens with the ranges it never reaches and those closed unless opened. */
static void ruleset_fixed_sets(FILE *f, unsigned k, const char *never4, const char *never6)
{
	fprintf(f,
		"table inet " EGRESS_TABLE "_%u {\n"
		"  set never4 { type ipv4_addr; flags interval; auto-merge; elements = { %s } }\n"
		"  set never6 { type ipv6_addr; flags interval; auto-merge; elements = { %s } }\n"
		"  set closed4 { type ipv4_addr; flags interval; elements = { %s } }\n"
		"  set closed6 { type ipv6_addr; flags interval; elements = { %s } }\n",
		k, never4, never6, closed4, closed6);
}

/* Tool t's set of one family (4 or 6): the entries of the CIDR rules in mine, its rules. */
static void ruleset_allow_set(FILE *f, const struct policy *p, size_t t, uint64_t mine, int fam)
{
	int want = fam == 4 ? AF_INET : AF_INET6, first = 1;

	fprintf(f,
		"  set allow%d_t%zu { type ipv%d_addr . inet_proto . inet_service; flags interval;",
		fam, t, fam);
	for (size_t i = 0; i < policy_egress_count(p); i++) {
		const struct policy_egress_rule *e = policy_egress(p, i);

		if (e->cidr && e->family == want && (mine & (1ULL << i))) {
			fprintf(f, "%s", first ? " elements = { " : "");
			rule_elements(f, e, &first);
		}
	}
	fprintf(f, "%s }\n", first ? "" : " }");
}

/* The CIDR rules inside the closed ranges, of one family (4 or 6): the ranges they open. */
static void ruleset_open_set(FILE *f, const struct policy *p, int fam)
{
	int want = fam == 4 ? AF_INET : AF_INET6, first = 1;

	fprintf(f, "  set open%d { type ipv%d_addr; flags interval;", fam, fam);
	for (size_t i = 0; i < policy_egress_count(p); i++) {
		const struct policy_egress_rule *e = policy_egress(p, i);

		if (e->cidr && e->family == want && in_closed(e)) {
			fprintf(f, "%s%s", first ? " elements = { " : ", ", e->cidr);
			first = 0;
		}
	}
	fprintf(f, "%s }\n", first ? "" : " }");
}

/* Host rules: sets the gate's DNS fills with each answer's addresses, for the answer's TTL. */
static void ruleset_dns_sets(FILE *f, const struct policy *p)
{
	for (size_t i = 0; i < policy_egress_count(p); i++)
		if (policy_egress(p, i)->host)
			fprintf(f,
				"  set dns4_%zu { type ipv4_addr; flags timeout; timeout %s; }\n"
				"  set dns6_%zu { type ipv6_addr; flags timeout; timeout %s; }\n",
				i, EGRESS_DNS_SET_TIMEOUT, i, EGRESS_DNS_SET_TIMEOUT);
}

/*
 * The L7 proxy: a tool's TCP connections to a proxied rule's addresses (those the gate's DNS
 * gave for the rule's host) on port 80 or 443 go to the proxy's port for it on the gate's
 * address instead (egress-proxy.h), before the filter below judges them. Only the first packet
 * of a connection passes a nat chain; conntrack carries the rest, and squid reads the original
 * destination back from it. The filter then accepts what was redirected ("ct status dnat"):
 * a connection made to the gate's proxy ports directly is not, and is dropped as the gate's own.
 */
static void ruleset_proxy_redirect(FILE *f, const struct policy *p, unsigned k, size_t tools,
				   const struct egress_link *l)
{
	fprintf(f,
		"  chain proxy_redirect { type nat hook prerouting priority dstnat; policy "
		"accept;\n"
		"    iifname != \"%s\" accept\n",
		l->gate_if);
	for (size_t t = 0; t < tools; t++) {
		char src4[32], src6[64];

		egress_tool_addrs(k, (unsigned)t, src4, sizeof(src4), src6, sizeof(src6));
		for (size_t i = 0; i < policy_egress_count(p); i++) {
			const struct policy_egress_rule *e = policy_egress(p, i);

			if (!(policy_tool_egress(p, t) & (1ULL << i)))
				continue;
			for (unsigned web = 0; web < 2; web++) {
				unsigned port = web ? 443 : 80;
				unsigned to =
					web ? EGRESS_PROXY_PORT_HTTPS : EGRESS_PROXY_PORT_HTTP;

				if (!egress_proxy_port_of(e, (uint16_t)port))
					continue;
				fprintf(f,
					"    ip saddr %s ip daddr @dns4_%zu tcp dport %u redirect "
					"to "
					":%u\n"
					"    ip6 saddr %s ip6 daddr @dns6_%zu tcp dport %u "
					"redirect to "
					":%u\n",
					src4, i, port, to, src6, i, port, to);
			}
		}
	}
	fputs("  }\n", f);
}

/*
 * What the sandbox's proxy (its own uid) may send: answers on its connections, questions to the
 * sandbox's DNS gate, connections to its own ICAP service (squid to c-icap, on the sandbox's gate4
 * address: no other sandbox's) and to its rules' addresses on their proxied ports; anything
 * else is logged as the sandbox's and dropped, so a squid taken over is no way out of the gate.
 */
static void ruleset_proxy_output(FILE *f, const struct config *cfg, const struct policy *p,
				 unsigned k, const struct egress_link *l, const char *log)
{
	/* A jump on the uid, not "skuid != uid accept": a packet with no socket (the kernel's
	 * neighbour discovery, its resets) matches neither, and must pass. */
	fprintf(f,
		"  chain proxy_output { type filter hook output priority filter; policy accept;\n"
		"    meta skuid %u jump proxy_uid\n"
		"  }\n"
		"  chain proxy_uid {\n"
		"    ct state established,related accept\n"
		"    ip daddr %s meta l4proto { udp, tcp } th dport 53 accept\n"
		"    ip daddr %s tcp dport %u accept\n"
		/* Loopback of the gate's netns, where nothing listens: glibc's resolver there
		 * when a jail has no resolv.conf (a helper looking up a host name). Dropped
		 * unlogged: it is no attempt of the sandbox's, and a logged drop would count
		 * toward the sandbox's deny-scan and deny-burst rules. */
		"    ip daddr 127.0.0.0/8 drop\n"
		"    ip6 daddr ::1 drop\n"
		"    ip daddr @never4 %s drop\n"
		"    ip6 daddr @never6 %s drop\n",
		(unsigned)egress_proxy_uid(cfg, k), l->gate4, l->gate4, EGRESS_ICAP_PORT, log, log);
	for (size_t i = 0; i < policy_egress_count(p); i++) {
		const struct policy_egress_rule *e = policy_egress(p, i);

		for (unsigned port = 80; port <= 443; port += 363)
			if (egress_proxy_port_of(e, (uint16_t)port))
				fprintf(f,
					"    ip daddr @dns4_%zu tcp dport %u accept\n"
					"    ip6 daddr @dns6_%zu tcp dport %u accept\n",
					i, port, i, port);
	}
	fprintf(f, "    %s drop\n  }\n", log);
}

/*
 * Prerouting, not forward: a packet must be judged, and a denial logged, even where the gate has
 * no route for it (an offline gate drops everything at routing, unlogged, otherwise). Neighbour
 * discovery on the link (hop limit 255: it cannot have been routed) lets IPv6 work at all, so IPv6
 * attempts reach this chain and are judged and logged like IPv4 ones; the kernel's own multicast
 * listener reports and router solicitations are dropped unlogged (noise, not attempts). DNS to
 * the gate's own address comes before the never-open ranges, which hold the gate's networks.
 */
static void ruleset_prerouting(FILE *f, const struct egress_link *l, const char *log)
{
	fprintf(f,
		"  chain prerouting { type filter hook prerouting priority filter; policy accept;\n"
		"    iifname != \"%s\" accept\n"
		"    ct state established,related accept\n"
		"    icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert } ip6 hoplimit 255 "
		"accept\n"
		"    icmpv6 type { mld2-listener-report, mld-listener-report, nd-router-solicit } "
		"drop\n"
		"    ip daddr %s meta l4proto { udp, tcp } th dport 53 accept\n"
		"    ip6 daddr %s meta l4proto { udp, tcp } th dport 53 accept\n"
		"    ct status dnat ip daddr %s tcp dport %u-%u accept\n"
		"    ct status dnat ip6 daddr %s tcp dport %u-%u accept\n"
		"    ip daddr @never4 %s drop\n"
		"    ip6 daddr @never6 %s drop\n"
		"    ip daddr @closed4 ip daddr != @open4 %s drop\n"
		"    ip6 daddr @closed6 ip6 daddr != @open6 %s drop\n",
		l->gate_if, l->gate4, l->gate6, l->gate4, EGRESS_PROXY_PORT_HTTP,
		EGRESS_PROXY_PORT_HTTPS, l->gate6, EGRESS_PROXY_PORT_HTTP, EGRESS_PROXY_PORT_HTTPS,
		log, log, log, log);
}

/* From a tool's source addresses to those the gate's DNS gave for host rule e (number i). */
static void ruleset_host_rule(FILE *f, const struct policy_egress_rule *e, size_t i,
			      const char *src4, const char *src6)
{
	for (int fam = 4; fam <= 6; fam += 2) {
		fprintf(f, "    ip%s saddr %s ip%s daddr @dns%d_%zu meta l4proto %s th dport { ",
			fam == 4 ? "" : "6", fam == 4 ? src4 : src6, fam == 4 ? "" : "6", fam, i,
			e->protocol == IPPROTO_UDP ? "udp" : "tcp");
		for (size_t j = 0; j < e->n_ports; j++)
			fprintf(f, "%s%u", j ? ", " : "", e->ports[j]);
		fprintf(f, " } accept\n");
	}
}

/* Each tool from its own source address, to its own share of the allowlist. */
static void ruleset_tool_rules(FILE *f, const struct policy *p, unsigned k, size_t tools)
{
	for (size_t t = 0; t < tools; t++) {
		uint64_t mine = policy_tool_egress(p, t);
		char src4[32], src6[64];

		if (!mine)
			continue;
		egress_tool_addrs(k, (unsigned)t, src4, sizeof(src4), src6, sizeof(src6));
		fprintf(f,
			"    ip saddr %s ip daddr . meta l4proto . th dport @allow4_t%zu accept\n"
			"    ip6 saddr %s ip6 daddr . meta l4proto . th dport @allow6_t%zu "
			"accept\n",
			src4, t, src6, t);
		for (size_t i = 0; i < policy_egress_count(p); i++) {
			const struct policy_egress_rule *e = policy_egress(p, i);

			if (e->host && (mine & (1ULL << i)))
				ruleset_host_rule(f, e, i, src4, src6);
		}
	}
}

int egress_ruleset(const struct config *cfg, const char *name, unsigned k, const struct policy *p,
		   char **ret)
{
	_cleanup_free_ char *never4 = NULL, *never6 = NULL;
	struct egress_link l;
	char *text = NULL, log[160];
	size_t n = 0, tools = policy_tool_count(p);
	FILE *f;

	if (tools > EGRESS_HOOK_TOOLS_MAX)
		tools = EGRESS_HOOK_TOOLS_MAX; /* the rest have no source address: no egress */
	if (never_elements(&never4, &never6) < 0 || !(f = open_memstream(&text, &n)))
		return -ENOMEM;
	egress_link_of(k, &l);
	snprintf(log, sizeof(log), "log prefix \"firebreak:%s \" group %u", name,
		 cfg->gate_nflog_group);
	ruleset_fixed_sets(f, k, never4, never6);
	/* Per tool: the (address, protocol, port) entries of the CIDR rules it may reach. */
	for (size_t t = 0; t < tools; t++) {
		ruleset_allow_set(f, p, t, policy_tool_egress(p, t), 4);
		ruleset_allow_set(f, p, t, policy_tool_egress(p, t), 6);
	}
	ruleset_open_set(f, p, 4);
	ruleset_open_set(f, p, 6);
	ruleset_dns_sets(f, p);
	if (egress_proxy_needed(p)) {
		ruleset_proxy_redirect(f, p, k, tools, &l);
		ruleset_proxy_output(f, cfg, p, k, &l, log);
	}
	ruleset_prerouting(f, &l, log);
	ruleset_tool_rules(f, p, k, tools);
	/* What no rule accepted is dropped, and logged. */
	fprintf(f,
		"    %s drop\n"
		"  }\n"
		"}\n"
		"add element inet " EGRESS_TABLE " links { \"%s\" }\n",
		log, l.gate_if);
	fclose(f);
	*ret = text;
	return 0;
}
