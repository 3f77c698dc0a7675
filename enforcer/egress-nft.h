/*
 * Applying nftables rulesets. Through Debian's `nft -f -`, one atomic transaction per call: the
 * same code as libnftables, which Debian ships without a static archive, and the enforcer is
 * linked static so that `firebreak exec` starts fast; only create and destroy pay for this fork.
 */
#ifndef FB_EGRESS_NFT_H
#define FB_EGRESS_NFT_H

#include <stddef.h>

#define NFT_BIN "/usr/sbin/nft"

/*
 * Applies ruleset text in the network namespace nsfd (the caller's own if nsfd < 0, which needs
 * no CAP_SYS_ADMIN). Returns 0, or -EINVAL with nft's first error line in err, or -errno.
 */
int nft_apply(int nsfd, const char *text, char *err, size_t errlen);

#endif
