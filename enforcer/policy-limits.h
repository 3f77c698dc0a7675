/* From a policy file to what the sandbox runtime applies. Internal to enforcer/. */
#ifndef FB_SANDBOX_LIMITS_H
#define FB_SANDBOX_LIMITS_H

#include "sandbox.h"

struct policy;

/*
 * Loads the policy at path (printing FILE:LINE:COL: message on error) into *ret_policy (free with
 * policy_free) and the sandbox-wide limits into *ret. Returns 0 or -errno.
 */
int sandbox_load_policy(const char *path, struct policy **ret_policy, struct sandbox_limits *ret);

#endif
