/*
 * The egress gate: one network namespace shared by every sandbox, which the sandboxes cannot
 * configure (they hold no capability, and their netns has only a veth into it). Each sandbox's
 * only route leads there. The gate's nftables table denies everything by default, IPv4, IPv6 and
 * every protocol, logs each denied packet to NFLOG with a prefix naming the sandbox, always closes
 * cloud metadata and its own networks, keeps private ranges closed unless a policy names a CIDR in
 * them, and opens only the policy's allowlist. docs/egress.md.
 */
#ifndef FB_EGRESS_H
#define FB_EGRESS_H

#include <stddef.h>
#include <sys/types.h>

#include "config.h"
#include "names.h" /* EGRESS_GATE_NETNS */

struct policy;

#define EGRESS_TABLE "firebreak_gate"
/*
 * Sandbox links: a /26 each out of 10.199.0.0/16, index 1..EGRESS_LINKS_MAX: the gate .1, the
 * sandbox .2, and tool t's own source address .3+t (the kernel hooks bind each tool's sockets to
 * it, so the gate can hold each tool to its own rules). IPv6 alike in fd66:6272:fb:<k>::/64.
 */
#define EGRESS_LINKS_MAX 1023
#define EGRESS_OUTSIDE_GATE "10.198.255.253"
#define EGRESS_OUTSIDE_PEER "10.198.255.254"
#define EGRESS_OUTSIDE_IF "fb-gate-in"
#define EGRESS_OUTSIDE_PEER_IF "fb-gate-out"

/* The addresses of link k. */
struct egress_link {
	char gate_if[16];  /* "fb-s<k>" in the gate */
	char gate4[24];	   /* 10.199.x.y+1 */
	char sandbox4[24]; /* 10.199.x.y+2 */
	char gate6[48];	   /* fd66:6272:fb:<k>::1 */
	char sandbox6[48]; /* fd66:6272:fb:<k>::2 */
};

void egress_link_of(unsigned k, struct egress_link *ret);

/* egress_tool_addrs (tool t's source addresses on link k) is in names.h: the monitor reads them
 * back from the L7 proxy's log. */

/*
 * Connects sandbox name (the netns of init_pid) to the gate as link k and opens its policy's
 * allowlist there, bringing the gate up first if it is down. 0 or -errno (printed).
 */
int egress_attach(const struct config *cfg, const char *name, unsigned k, pid_t init_pid,
		  const struct policy *p);

/* Removes link k and sandbox name's rules from the gate; quiet about parts already gone. */
int egress_detach(const struct config *cfg, const char *name, unsigned k);

/* Whether link k exists in the gate already (another runtime dir's sandbox may hold it). */
int egress_link_busy(unsigned k);

/* Takes the gate down (its outside link, its netns) if no sandbox link is left in it. */
void egress_gate_down_if_idle(const struct config *cfg);

#endif
