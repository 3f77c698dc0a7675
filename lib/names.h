/*
 * What Firebreak names on a host and both halves must agree on (DESIGN.md, "Naming on the
 * machine"): the enforcer creates these, the monitor finds them.
 */
#ifndef FB_NAMES_H
#define FB_NAMES_H

#include <stddef.h>
#include <stdint.h>

/* Named network namespaces, where iproute2 keeps them (so `ip netns` shows ours). */
#define NETNS_DIR "/run/netns"

/* The gate's network namespace: every sandbox's only link leads there (enforcer/egress.h). */
#define EGRESS_GATE_NETNS "firebreak-gate"

/*
 * The sandboxes' links: sandbox k's is the /26 number k of EGRESS_NET4 (the gate .1 of it, the
 * sandbox .2, its tools from .3) and EGRESS_NET6:k::/64 (gate ::1). The detectors know the DNS
 * gate by these: port 53 to it is resolving, not reaching out.
 */
#define EGRESS_NET4 "10.199."
#define EGRESS_NET6 "fd66:6272:fb:"

/* Whether address (text, as inet_ntop writes it) is a sandbox link's gate. */
int egress_gate_address(const char *address);

/* Tool t's source addresses on link k ("10.199.x.y", "fd66:6272:fb:k::1tt"). */
void egress_tool_addrs(unsigned k, unsigned t, char *ret4, size_t size4, char *ret6, size_t size6);

/*
 * Which of n tools of link k has the source address addr (family AF_INET or AF_INET6, 4 or 16
 * bytes): its index, or -1 (another link's, the sandbox's own .2, or no tool's). The inverse of
 * egress_tool_addrs, computed by it, so the two cannot disagree.
 */
int egress_tool_of_address(unsigned k, size_t n, int family, const uint8_t *addr);

#endif
