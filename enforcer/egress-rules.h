/* The nftables text of each sandbox's own table in the egress gate (enforcer/egress.h). */
#ifndef FB_EGRESS_RULES_H
#define FB_EGRESS_RULES_H

#include "config.h"

struct policy;

/*
 * The text that creates sandbox name's table for link k from its policy p and adds the link to
 * the gate's main table, for one nft transaction. 0 and *ret (the caller frees it), or -ENOMEM.
 */
int egress_ruleset(const struct config *cfg, const char *name, unsigned k, const struct policy *p,
		   char **ret);

#endif
