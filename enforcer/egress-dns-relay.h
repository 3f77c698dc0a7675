/*
 * The DNS gate's keeper: the one privileged process left of a sandbox's DNS gate. It made the
 * jail (egress-dns-jail.h) and waits on the socket the jailed dnsmasq's nft shim connects to, and
 * for each request (egress-dns-wire.h) puts one address into the set of one of the sandbox's host
 * rules, in the table it names itself; nothing else is asked of it, and it runs nothing dnsmasq
 * sends but that address.
 */
#ifndef FB_EGRESS_DNS_RELAY_H
#define FB_EGRESS_DNS_RELAY_H

#include <sys/types.h>

struct policy;

/*
 * Leaves the keeper (root, in the gate's netns, once the jail is built) only what nft needs:
 * CAP_NET_ADMIN, in its own and its bounding set, and no_new_privs. 0 or -errno.
 */
int egress_dns_relay_narrow(void);

/*
 * Serves the jailed dnsmasq (pid dnsmasq, whose uid must be uid) on the listening socket lfd,
 * writing into table EGRESS_TABLE_k of the gate (the caller's netns) the sets of p's host rules,
 * until dnsmasq exits; returns how many requests it refused (each logged).
 */
int egress_dns_relay_serve(int lfd, pid_t dnsmasq, uid_t uid, unsigned k, const struct policy *p);

#endif
