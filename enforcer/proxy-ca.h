/*
 * The L7 proxy's certificates (docs/egress.md, "TLS interception: the deployment CA"). One root
 * per deployment, kept in the runtime dir (root's, 0700) and never given to a proxy; per
 * sandbox, a signing CA issued by it (path length 0), valid for the sandbox's wall clock. A
 * proxy taken over holds that signing key only, which nothing but sandboxes trusts, and has no
 * way onto another sandbox's path to use it. No name constraints: squid copies the upstream
 * certificate's names into the one it mints, so a constrained CA fails every server whose
 * certificate names more hosts than the policy. Made with libcrypto (OpenSSL 3).
 */
#ifndef FB_PROXY_CA_H
#define FB_PROXY_CA_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"

#define PROXY_CA_DIR "proxy-ca" /* in the runtime dir: ca.pem (0644), ca.key (0600) */

/*
 * The deployment's root CA, made on first use (EC P-256, CA:TRUE, keyCertSign and cRLSign,
 * 10 years) under a lock, written atomically: two creates racing end with one root. 0, or
 * -errno with err filled.
 */
int proxy_ca_ensure(const struct config *cfg, char *err, size_t errlen);

/*
 * Issues a sandbox's signing CA (pathlen 0, valid from 5 minutes ago to lifetime_ns plus a day
 * from now) into dir/EGRESS_PROXY_SIGNING (certificate then key, 0600, owned by uid and gid),
 * and writes dir/EGRESS_PROXY_BUNDLE (0644): the host's CA bundle and the root, what the
 * sandbox trusts. 0, or -errno with err filled.
 */
int proxy_ca_issue_sandbox(const struct config *cfg, int64_t lifetime_ns, const char *dir,
			   uid_t uid, gid_t gid, char *err, size_t errlen);

/*
 * The CAs in gate_proxy_upstream_ca as a hashed directory (OpenSSL's capath: one PEM file per
 * certificate, named by its subject's hash), named by the bundle's content under
 * <runtime_dir>/proxy-ca/upstream/, made on first use and never changed after; its path into dir.
 * 0, or -errno with err filled.
 */
int proxy_upstream_ca_dir(const struct config *cfg, char *dir, size_t size, char *err,
			  size_t errlen);

#endif
