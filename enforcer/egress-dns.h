/*
 * The DNS gate: one dnsmasq per sandbox, in the gate's netns, on the gate's side of the sandbox's
 * link. It answers the policy's host names only, asking the configured upstream for exactly those
 * names (never a subdomain of one: no DNS tunnelling through an allowed name), refuses everything
 * else without forwarding it, and puts each answer's addresses into the sandbox's nft sets for
 * that rule, from which the gate opens the rule's ports.
 */
#ifndef FB_EGRESS_DNS_H
#define FB_EGRESS_DNS_H

#include <sys/types.h>

#include "config.h"

struct policy;

#define DNSMASQ_BIN "/usr/sbin/dnsmasq"
/* How long an answer's addresses stay open without being asked for again. */
#define EGRESS_DNS_SET_TIMEOUT "10m"

struct gate_keeper;

/*
 * Starts the sandbox's dnsmasq (pid file and query log in its state dir) if its policy names
 * hosts, and returns while it starts: egress_dns_wait says whether it listens. 0 (also when there
 * is nothing to start) or -errno (printed).
 */
int egress_dns_start(const struct config *cfg, const char *name, unsigned k, const struct policy *p,
		     struct gate_keeper *keeper);

/* 0 once the DNS gate egress_dns_start started listens (or none was started), or -errno
 * (printed). */
int egress_dns_wait(const char *name, struct gate_keeper *keeper);

/* Stops it (by the pid it recorded, if that is still a dnsmasq); quiet if none runs. */
void egress_dns_stop(const struct config *cfg, const char *name);

#endif
