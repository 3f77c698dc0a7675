/*
 * The DNS gate's jail (egress-dns-jail.h): gate-jail.c's, with dnsmasq's files and filter.
 */
#include "egress-dns-jail.h"

#include <errno.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include "egress-dns-wire.h"
#include "gate-jail.h"
#include "macro.h"

static int allow_narrowed(scmp_filter_ctx ctx)
{
	int r = gate_jail_allow_inet_fork(ctx);

	/* Netlink for the routing family only (dnsmasq's interface list). Never
	 * NETLINK_NETFILTER: nft is the keeper's. */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 2,
				     SCMP_A0(SCMP_CMP_EQ, AF_NETLINK),
				     SCMP_A2(SCMP_CMP_EQ, NETLINK_ROUTE));
	/* Naming itself and asking about its own state; no capability or securebits changes. */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1,
				     SCMP_A0(SCMP_CMP_EQ, PR_SET_NAME));
	/* The shim's own filter on top (no more execve); a filter only ever narrows. */
	if (r == 0)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(seccomp), 1,
				     SCMP_A0(SCMP_CMP_EQ, SECCOMP_SET_MODE_FILTER));
	return r;
}

/* Default deny with EPERM rather than a kill: one dnsmasq serves a sandbox's every lookup, and a
 * rare path's refused call is an error it logs and survives. */
static int dns_seccomp(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	int r = ctx ? 0 : -ENOMEM;

	if (r == 0)
		r = gate_jail_allow_common(ctx);
	if (r == 0)
		r = allow_narrowed(ctx);
	if (r == 0)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	return r;
}

pid_t egress_dns_jail_spawn(const struct dns_jail *j, char *const *argv)
{
	static char preload[] = "LD_PRELOAD=" DNS_WIRE_SHIM_JAIL_PATH;
	static char path[] = "PATH=/usr/sbin:/usr/bin";
	static char *envp[] = { path, preload, NULL };
	const struct gate_jail_file files[] = {
		{ .host = j->log, .jail = DNS_JAIL_LOG, .writable = 1 },
		{ .host = j->sock, .jail = DNS_WIRE_SOCK_JAIL_PATH, .writable = 1 },
		{ .host = j->shim, .jail = DNS_WIRE_SHIM_JAIL_PATH, .exec = 1 },
	};
	const struct gate_jail g = {
		.who = "DNS jail",
		.uid = j->uid,
		.files = files,
		.n_files = ARRAY_SIZE(files),
		.envp = envp,
		.seccomp = dns_seccomp,
	};

	return gate_jail_spawn(&g, argv);
}
