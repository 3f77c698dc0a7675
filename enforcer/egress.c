#include "egress.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress-dns.h"
#include "egress-hook.h"
#include "egress-link.h"
#include "egress-nft.h"
#include "log.h"
#include "macro.h"
#include "netns.h"
#include "policy/policy.h"

/* Private, loopback, CGNAT and other special ranges: closed unless a policy names a CIDR in them. */
static const char closed4[] = "0.0.0.0/8, 10.0.0.0/8, 100.64.0.0/10, 127.0.0.0/8, 172.16.0.0/12, "
			      "192.0.0.0/24, 192.168.0.0/16, 198.18.0.0/15, 224.0.0.0/4, "
			      "240.0.0.0/4";
static const char closed6[] = "::/128, ::1/128, fc00::/7, ff00::/8";

void egress_link_of(unsigned k, struct egress_link *ret)
{
	unsigned base = (64 * k) & 0xffff; /* /26 number k inside 10.199.0.0/16 (k < 1024) */

	snprintf(ret->gate_if, sizeof(ret->gate_if), "fb-s%u", k);
	snprintf(ret->gate4, sizeof(ret->gate4), "10.199.%u.%u", (base >> 8) & 0xff,
		 (base & 0xc0) + 1);
	snprintf(ret->sandbox4, sizeof(ret->sandbox4), "10.199.%u.%u", (base >> 8) & 0xff,
		 (base & 0xc0) + 2);
	snprintf(ret->gate6, sizeof(ret->gate6), "fd66:6272:fb:%x::1", k);
	snprintf(ret->sandbox6, sizeof(ret->sandbox6), "fd66:6272:fb:%x::2", k);
}

void egress_tool_addrs(unsigned k, unsigned t, char *ret4, size_t size4, char *ret6, size_t size6)
{
	unsigned base = (64 * k) & 0xffff;

	snprintf(ret4, size4, "10.199.%u.%u", (base >> 8) & 0xff, (base & 0xc0) + 3 + (t & 0x3f));
	snprintf(ret6, size6, "fd66:6272:fb:%x::%x", k, 0x100 + t);
}

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

/*
 * The gate's main table: whatever does not come from a known sandbox link (or belong to a flow it
 * opened) is dropped. Each sandbox's own table (sandbox_ruleset) judges its link's packets; a
 * packet must be accepted by both, and a drop in either is final.
 */
static const char base_ruleset[] =
	"table inet " EGRESS_TABLE " {\n"
	"  set links { type ifname; }\n"
	"  chain forward { type filter hook forward priority filter; policy drop;\n"
	"    ct state established,related accept\n"
	"    iifname @links accept\n"
	"  }\n"
	"  chain input { type filter hook input priority filter; policy drop;\n"
	"    iif lo accept\n"
	"    ct state established,related accept\n"
	"    iifname @links accept\n"
	"  }\n"
	"  chain postrouting { type nat hook postrouting priority srcnat; policy accept;\n"
	"    oifname \"" EGRESS_OUTSIDE_IF "\" masquerade\n"
	"  }\n"
	"}\n";

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

struct gate_up_args {
	const struct config *cfg;
	int outside_nsfd;
	char err[512];
};

static int gate_setup_inside(void *data)
{
	struct gate_up_args *a = data;
	int r;

	if ((r = link_sysctl("net/ipv4/ip_forward", "1")) < 0 ||
	    (r = link_sysctl("net/ipv6/conf/all/forwarding", "1")) < 0 || (r = link_up("lo")) < 0)
		return r;
	if (a->outside_nsfd < 0)
		return 0; /* offline: the gate routes nowhere */
	if ((r = link_veth_create(EGRESS_OUTSIDE_IF, EGRESS_OUTSIDE_PEER_IF, a->outside_nsfd)) < 0 ||
	    (r = link_add_address(EGRESS_OUTSIDE_IF, EGRESS_OUTSIDE_GATE "/30")) < 0 ||
	    (r = link_up(EGRESS_OUTSIDE_IF)) < 0 ||
	    (r = link_add_default_route(EGRESS_OUTSIDE_IF, EGRESS_OUTSIDE_PEER)) < 0)
		return r;
	return 0;
}

static int outside_setup(void *data)
{
	int r;

	(void)data;
	if ((r = link_add_address(EGRESS_OUTSIDE_PEER_IF, EGRESS_OUTSIDE_PEER "/30")) < 0 ||
	    (r = link_up(EGRESS_OUTSIDE_PEER_IF)) < 0)
		return r;
	return 0;
}

/*
 * The uplink (gate_uplink = IFACE): the gate's outside link ends in the host's own namespace,
 * which forwards what comes from it out of IFACE only, masqueraded, and answers it nothing
 * itself. The gate has already reduced that traffic to the sandboxes' allowlists. The host's
 * forwarding switch is turned on if it was off, and back off when the gate goes.
 */
#define UPLINK_TABLE "firebreak_uplink"
#define UPLINK_FORWARD_MARK "uplink-forwarding-was-off"

static int uplink_setup(const struct config *cfg, int host_nsfd)
{
	char rules[1024], err[512], mark[PATH_MAX + 64], was[4] = "";
	int fd, r;

	snprintf(rules, sizeof(rules),
		 "table inet " UPLINK_TABLE " {\n"
		 "  chain forward { type filter hook forward priority filter; policy accept;\n"
		 "    iifname \"" EGRESS_OUTSIDE_PEER_IF "\" oifname != \"%s\" drop\n"
		 "    oifname \"" EGRESS_OUTSIDE_PEER_IF "\" ct state established,related accept\n"
		 "    oifname \"" EGRESS_OUTSIDE_PEER_IF "\" drop\n"
		 "  }\n"
		 "  chain input { type filter hook input priority filter; policy accept;\n"
		 "    iifname \"" EGRESS_OUTSIDE_PEER_IF "\" ct state established,related accept\n"
		 "    iifname \"" EGRESS_OUTSIDE_PEER_IF "\" drop\n"
		 "  }\n"
		 "  chain postrouting { type nat hook postrouting priority srcnat; policy accept;\n"
		 "    iifname \"" EGRESS_OUTSIDE_PEER_IF "\" oifname \"%s\" masquerade\n"
		 "  }\n"
		 "}\n",
		 cfg->gate_uplink, cfg->gate_uplink);
	if ((r = nft_apply(host_nsfd, rules, err, sizeof(err))) < 0)
		return log_error("firebreak: the uplink's rules: %s", err), r;
	fd = open("/proc/sys/net/ipv4/ip_forward", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		(void)!read(fd, was, sizeof(was) - 1);
		close(fd);
	}
	if (was[0] == '0') {
		snprintf(mark, sizeof(mark), "%s/" UPLINK_FORWARD_MARK, cfg->runtime_dir);
		fd = open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		if (fd >= 0)
			close(fd);
		if ((r = link_sysctl("net/ipv4/ip_forward", "1")) < 0)
			return log_errno(r, "firebreak: turn on forwarding for the uplink");
	}
	return 0;
}

/* Undoes uplink_setup, if there is anything to undo (in the current, the host's, namespace). */
static void uplink_teardown(const struct config *cfg)
{
	char err[512], mark[PATH_MAX + 64];
	int host = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);

	if (host < 0)
		return;
	nft_apply(host, "delete table inet " UPLINK_TABLE "\n", err, sizeof(err));
	close(host);
	snprintf(mark, sizeof(mark), "%s/" UPLINK_FORWARD_MARK, cfg->runtime_dir);
	if (unlink(mark) == 0)
		link_sysctl("net/ipv4/ip_forward", "0");
}

static int delete_link(void *data);

/* Brings the gate up if it is not; returns an fd of its netns, or -errno. */
static int gate_up(const struct config *cfg)
{
	struct gate_up_args a = { .cfg = cfg, .outside_nsfd = -1 };
	int nsfd, r;

	nsfd = netns_open(EGRESS_GATE_NETNS);
	if (nsfd >= 0)
		return nsfd;
	if ((r = netns_create(EGRESS_GATE_NETNS)) < 0 && r != -EEXIST)
		return log_errno(r, "firebreak: create the gate netns");
	nsfd = netns_open(EGRESS_GATE_NETNS);
	if (nsfd < 0)
		return nsfd;
	if (cfg->gate_uplink[0]) {
		/* The outside link ends here, in the host's namespace. */
		a.outside_nsfd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		if (a.outside_nsfd < 0) {
			r = -errno;
			goto fail;
		}
	} else if (cfg->gate_outside_netns[0]) {
		a.outside_nsfd = netns_open(cfg->gate_outside_netns);
		if (a.outside_nsfd < 0) {
			r = log_errno(a.outside_nsfd, "firebreak: gate_outside_netns %s",
				      cfg->gate_outside_netns);
			goto fail;
		}
	}
	if ((r = netns_run(nsfd, gate_setup_inside, &a)) < 0) {
		log_errno(r, "firebreak: set up the gate");
		goto fail;
	}
	if (a.outside_nsfd >= 0 && (r = netns_run(a.outside_nsfd, outside_setup, NULL)) < 0) {
		log_errno(r, "firebreak: the gate's outside link in %s",
			  cfg->gate_uplink[0] ? "the host" : cfg->gate_outside_netns);
		goto fail;
	}
	if (cfg->gate_uplink[0] && (r = uplink_setup(cfg, a.outside_nsfd)) < 0)
		goto fail;
	if ((r = nft_apply(nsfd, base_ruleset, a.err, sizeof(a.err))) < 0) {
		log_error("firebreak: the gate's ruleset: %s", a.err);
		goto fail;
	}
	if (a.outside_nsfd >= 0)
		close(a.outside_nsfd);
	return nsfd;
fail:
	if (a.outside_nsfd >= 0)
		close(a.outside_nsfd);
	if (cfg->gate_uplink[0])
		uplink_teardown(cfg);
	netns_run(nsfd, delete_link, (void *)EGRESS_OUTSIDE_IF);
	close(nsfd);
	netns_delete(EGRESS_GATE_NETNS);
	return r;
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
	static const char *const ranges[] = { "0.0.0.0/8",     "10.0.0.0/8",	 "100.64.0.0/10",
					      "127.0.0.0/8",   "172.16.0.0/12", "192.0.0.0/24",
					      "192.168.0.0/16", "198.18.0.0/15", "224.0.0.0/4",
					      "240.0.0.0/4",   "::/128",	 "::1/128",
					      "fc00::/7",      "ff00::/8" };

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
		"    icmpv6 type { nd-neighbor-solicit, nd-neighbor-advert } ip6 hoplimit 255 accept\n"
		"    icmpv6 type { mld2-listener-report, mld-listener-report, nd-router-solicit } drop\n"
		"    ip daddr %s meta l4proto { udp, tcp } th dport 53 accept\n"
		"    ip6 daddr %s meta l4proto { udp, tcp } th dport 53 accept\n"
		"    ip daddr @never4 %s drop\n"
		"    ip6 daddr @never6 %s drop\n"
		"    ip daddr @closed4 ip daddr != @open4 %s drop\n"
		"    ip6 daddr @closed6 ip6 daddr != @open6 %s drop\n",
		l->gate_if, l->gate4, l->gate6, log, log, log, log);
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
			"    ip6 saddr %s ip6 daddr . meta l4proto . th dport @allow6_t%zu accept\n",
			src4, t, src6, t);
		for (size_t i = 0; i < policy_egress_count(p); i++) {
			const struct policy_egress_rule *e = policy_egress(p, i);

			if (e->host && (mine & (1ULL << i)))
				ruleset_host_rule(f, e, i, src4, src6);
		}
	}
}

/* The sandbox's own table, and its link in the main table's set: one transaction. */
static char *sandbox_ruleset(const struct config *cfg, const char *name, unsigned k,
			     const struct policy *p)
{
	_cleanup_free_ char *never4 = NULL, *never6 = NULL;
	struct egress_link l;
	char *text = NULL, log[160];
	size_t n = 0, tools = policy_tool_count(p);
	FILE *f;

	if (tools > EGRESS_HOOK_TOOLS_MAX)
		tools = EGRESS_HOOK_TOOLS_MAX; /* the rest have no source address: no egress */
	if (never_elements(&never4, &never6) < 0 || !(f = open_memstream(&text, &n)))
		return NULL;
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
	return text;
}

struct attach_args {
	const struct egress_link *l;
	unsigned k;
	size_t tools; /* tools with a source address of their own */
	int sandbox_nsfd;
};

static int attach_gate_side(void *data)
{
	struct attach_args *a = data;
	char cidr[96];
	int r;

	if ((r = link_veth_create(a->l->gate_if, "eth0", a->sandbox_nsfd)) < 0)
		return r;
	snprintf(cidr, sizeof(cidr), "%s/26", a->l->gate4);
	if ((r = link_add_address(a->l->gate_if, cidr)) < 0)
		return r;
	snprintf(cidr, sizeof(cidr), "%s/64", a->l->gate6);
	if ((r = link_add_address(a->l->gate_if, cidr)) < 0)
		return r;
	return link_up(a->l->gate_if);
}

static int attach_sandbox_side(void *data)
{
	struct attach_args *a = data;
	char cidr[96];
	int r;

	snprintf(cidr, sizeof(cidr), "%s/26", a->l->sandbox4);
	if ((r = link_add_address("eth0", cidr)) < 0)
		return r;
	for (size_t t = 0; t < a->tools; t++) {
		char src4[32], src6[64];

		egress_tool_addrs(a->k, (unsigned)t, src4, sizeof(src4), src6, sizeof(src6));
		snprintf(cidr, sizeof(cidr), "%s/26", src4);
		if ((r = link_add_address("eth0", cidr)) < 0)
			return r;
		snprintf(cidr, sizeof(cidr), "%s/64", src6);
		if ((r = link_add_address("eth0", cidr)) < 0)
			return r;
	}
	snprintf(cidr, sizeof(cidr), "%s/64", a->l->sandbox6);
	if ((r = link_add_address("eth0", cidr)) < 0 || (r = link_up("eth0")) < 0 ||
	    (r = link_add_default_route("eth0", a->l->gate4)) < 0 ||
	    (r = link_add_default_route("eth0", a->l->gate6)) < 0)
		return r;
	return 0;
}

int egress_attach(const struct config *cfg, const char *name, unsigned k, pid_t init_pid,
		  const struct policy *p)
{
	struct egress_link l;
	struct attach_args a = { .l = &l, .k = k, .sandbox_nsfd = -1 };
	_cleanup_free_ char *rules = NULL;
	char path[64], err[512];
	int gate, r;

	if (k == 0 || k > EGRESS_LINKS_MAX)
		return -EINVAL;
	egress_link_of(k, &l);
	a.tools = policy_tool_count(p) < EGRESS_HOOK_TOOLS_MAX ? policy_tool_count(p)
							      : EGRESS_HOOK_TOOLS_MAX;
	gate = gate_up(cfg);
	if (gate < 0)
		return gate;
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)init_pid);
	a.sandbox_nsfd = open(path, O_RDONLY | O_CLOEXEC);
	if (a.sandbox_nsfd < 0) {
		r = log_errno(-errno, "firebreak: the sandbox's netns");
		goto out;
	}
	if ((r = netns_run(gate, attach_gate_side, &a)) < 0) {
		log_errno(r, "firebreak: link %s in the gate", l.gate_if);
		goto out;
	}
	if ((r = netns_run(a.sandbox_nsfd, attach_sandbox_side, &a)) < 0) {
		log_errno(r, "firebreak: the sandbox's side of %s", l.gate_if);
		goto out;
	}
	rules = sandbox_ruleset(cfg, name, k, p);
	if (!rules) {
		r = -ENOMEM;
		goto out;
	}
	if ((r = nft_apply(gate, rules, err, sizeof(err))) < 0)
		log_error("firebreak: the gate's rules for %s: %s", name, err);
out:
	if (a.sandbox_nsfd >= 0)
		close(a.sandbox_nsfd);
	close(gate);
	return r;
}

static int delete_link(void *data)
{
	return link_delete(data);
}

int egress_detach(const struct config *cfg, const char *name, unsigned k)
{
	struct egress_link l;
	char *text = NULL, err[512];
	size_t n = 0;
	FILE *f;
	int gate = netns_open(EGRESS_GATE_NETNS), r = 0;

	(void)cfg;
	(void)name;
	if (gate < 0)
		return 0; /* no gate, nothing of ours in it */
	egress_link_of(k, &l);
	netns_run(gate, delete_link, l.gate_if);
	/* One transaction: the link leaves the main table's set and its table goes. */
	f = open_memstream(&text, &n);
	if (!f) {
		close(gate);
		return -ENOMEM;
	}
	fprintf(f,
		"delete element inet " EGRESS_TABLE " links { \"%s\" }\n"
		"delete table inet " EGRESS_TABLE "_%u\n",
		l.gate_if, k);
	fclose(f);
	if (nft_apply(gate, text, err, sizeof(err)) < 0) {
		/* A create that crashed half-way may have left one of the two: try each alone. */
		snprintf(err, sizeof(err), "delete table inet " EGRESS_TABLE "_%u\n", k);
		nft_apply(gate, err, err, sizeof(err));
	}
	free(text);
	close(gate);
	return r;
}

static int link_exists(void *data)
{
	return if_nametoindex(data) > 0;
}

int egress_link_busy(unsigned k)
{
	struct egress_link l;
	int gate = netns_open(EGRESS_GATE_NETNS), r;

	if (gate < 0)
		return 0;
	egress_link_of(k, &l);
	r = netns_run(gate, link_exists, l.gate_if);
	close(gate);
	return r > 0;
}

static int count_links(void *data)
{
	struct if_nameindex *ifs = if_nameindex(), *i;
	int n = 0;

	(void)data;
	if (!ifs)
		return -errno;
	for (i = ifs; i->if_index; i++)
		if (strncmp(i->if_name, "fb-s", 4) == 0)
			n++;
	if_freenameindex(ifs);
	return n;
}

void egress_gate_down_if_idle(const struct config *cfg)
{
	int gate = netns_open(EGRESS_GATE_NETNS), n;

	(void)cfg;
	if (gate < 0)
		return;
	n = netns_run(gate, count_links, NULL);
	if (n == 0)
		netns_run(gate, delete_link, (void *)EGRESS_OUTSIDE_IF);
	close(gate);
	if (n == 0) {
		netns_delete(EGRESS_GATE_NETNS);
		uplink_teardown(cfg);
	}
}
