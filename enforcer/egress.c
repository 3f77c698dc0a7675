#include "egress.h"

#include <dirent.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "egress-hook.h"
#include "egress-link.h"
#include "egress-nft.h"
#include "egress-rules.h"
#include "log.h"
#include "macro.h"
#include "names.h"
#include "netns.h"
#include "policy/policy.h"

void egress_link_of(unsigned k, struct egress_link *ret)
{
	unsigned base = (64 * k) & 0xffff; /* /26 number k inside 10.199.0.0/16 (k < 1024) */

	snprintf(ret->gate_if, sizeof(ret->gate_if), "fb-s%u", k);
	snprintf(ret->gate4, sizeof(ret->gate4), EGRESS_NET4 "%u.%u", (base >> 8) & 0xff,
		 (base & 0xc0) + 1);
	snprintf(ret->sandbox4, sizeof(ret->sandbox4), EGRESS_NET4 "%u.%u", (base >> 8) & 0xff,
		 (base & 0xc0) + 2);
	snprintf(ret->gate6, sizeof(ret->gate6), EGRESS_NET6 "%x::1", k);
	snprintf(ret->sandbox6, sizeof(ret->sandbox6), EGRESS_NET6 "%x::2", k);
}

/*
 * The gate's main table: whatever does not come from a known sandbox link (or belong to a flow it
 * opened) is dropped. Each sandbox's own table (egress-rules.c) judges its link's packets; a
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

/*
 * What the gate's own DNS servers (their uid, egress-dns-jail.h) may send: answers to what they
 * were asked, and questions to the configured upstream's port 53; nothing else, so a dnsmasq
 * taken over is no way out of the gate. The gate's other traffic (the kernel's own) is untouched.
 */
static int gate_dns_output(const struct config *cfg, char *buf, size_t size)
{
	char upstream[160] = "";
	int n;

	if (cfg->gate_dns_upstream[0])
		snprintf(upstream, sizeof(upstream),
			 "    meta skuid %u ip daddr %s meta l4proto { udp, tcp } th dport 53 "
			 "accept\n",
			 (unsigned)cfg->gate_dns_uid, cfg->gate_dns_upstream);
	n = snprintf(buf, size,
		     "table inet " EGRESS_TABLE " {\n"
		     "  chain output { type filter hook output priority filter; policy accept;\n"
		     "    meta skuid %u ct state established,related accept\n"
		     "%s"
		     "    meta skuid %u drop\n"
		     "  }\n"
		     "}\n",
		     (unsigned)cfg->gate_dns_uid, upstream, (unsigned)cfg->gate_dns_uid);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
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
	if ((r = link_veth_create(EGRESS_OUTSIDE_IF, EGRESS_OUTSIDE_PEER_IF, a->outside_nsfd)) <
		    0 ||
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
	char dns_out[512];
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
	if ((r = nft_apply(nsfd, base_ruleset, a.err, sizeof(a.err))) < 0 ||
	    (r = gate_dns_output(cfg, dns_out, sizeof(dns_out))) < 0 ||
	    (r = nft_apply(nsfd, dns_out, a.err, sizeof(a.err))) < 0) {
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
	if ((r = egress_ruleset(cfg, name, k, p, &rules)) < 0)
		goto out;
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
		/* A create that crashed half-way may have left the table without its set element
		 * (the transaction then fails as a whole): the table alone. Its own buffer:
		 * nft_apply clears err before it runs. */
		char retry[96];

		snprintf(retry, sizeof(retry), "delete table inet " EGRESS_TABLE "_%u\n", k);
		nft_apply(gate, retry, err, sizeof(err));
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
