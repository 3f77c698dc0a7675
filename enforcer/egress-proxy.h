/*
 * The gate's L7 proxy: one squid per sandbox whose policy has host rules on port 80 or 443,
 * in the gate's network namespace, jailed like the DNS gate (its own uid, pid and mount
 * namespaces, no capability, a seccomp allowlist). The sandbox's table in the gate redirects a
 * tool's connections to such a rule's addresses on port 80 or 443 into squid (egress-rules.c);
 * squid knows the tool from the source address (set by the kernel hooks), the rule from the Host
 * and the TLS name, which must agree with each other and with the address the tool aimed at
 * (squid's host verification, against the DNS gate). squid intercepts TLS with a signing CA of the
 * sandbox's own (enforcer/proxy-ca.h), checks each request against the rule's "http" limits,
 * refuses decoys leaving, and logs every transaction for the monitor (collectors/http/).
 * docs/egress.md, "The L7 proxy".
 */
#ifndef FB_EGRESS_PROXY_H
#define FB_EGRESS_PROXY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "config.h"

struct policy;
struct policy_egress_rule;

/* The proxy's ports on the gate's link addresses: what the gate redirects HTTP (80) and TLS
 * (443) to, and the plain forward port squid insists on having (no one reaches it). */
#define EGRESS_PROXY_PORT_HTTP 3200
#define EGRESS_PROXY_PORT_HTTPS 3201
#define EGRESS_PROXY_PORT_OWN 3199

/* Where the jail sees its files (the sandbox's state dir's proxy/ and its two logs). */
#define EGRESS_PROXY_JAIL_DIR "/proxy"
#define EGRESS_PROXY_JAIL_LOG "/access.log"
#define EGRESS_PROXY_JAIL_CACHE "/cache.log"
#define EGRESS_PROXY_JAIL_UPSTREAM_CA "/upstream-ca" /* proxy_upstream_ca_dir's, read-only */

/* Each HTTPS port's TLS: certificates minted per host by the sandbox's signing CA. */
#define EGRESS_PROXY_TLS_OPTIONS                                                                   \
	"tls-cert=" EGRESS_PROXY_JAIL_DIR "/" EGRESS_PROXY_SIGNING                                 \
	" generate-host-certificates=on "                                                          \
	"dynamic_cert_mem_cache_size=1MB"

/* The files in the sandbox's state dir. */
#define EGRESS_PROXY_DIR "proxy"
#define EGRESS_PROXY_ACCESS_LOG "proxy-access.log"
#define EGRESS_PROXY_CACHE_LOG "proxy-cache.log"
#define EGRESS_PROXY_PID "proxy.pid"
#define EGRESS_PROXY_SIGNING "proxy-signing.pem"    /* in EGRESS_PROXY_DIR */
#define EGRESS_PROXY_BUNDLE "ca-bundle.crt"	    /* in EGRESS_PROXY_DIR: the sandbox's trust */
#define EGRESS_PROXY_CREDENTIALS "credentials.conf" /* in EGRESS_PROXY_DIR: the real values */

/* Whether rule e goes through the proxy on port (80 or 443): a TCP host rule that opens it. */
int egress_proxy_port_of(const struct policy_egress_rule *e, uint16_t port);

/* Whether policy p needs a proxy at all (some tool reaches a proxied rule). */
int egress_proxy_needed(const struct policy *p);

/* The hosts of the rules whose TLS the proxy intercepts, up to max into hosts; returns how many
 * there are (egress_proxy_intercepts: whether there is one, so a signing CA is needed). */
size_t egress_proxy_intercepted_hosts(const struct policy *p, const char **hosts, size_t max);
int egress_proxy_intercepts(const struct policy *p);

/* The uid (and gid) sandbox link k's proxy runs as: gate_proxy_uid_base + k. */
uid_t egress_proxy_uid(const struct config *cfg, unsigned k);

/*
 * squid.conf for sandbox name on link k: every listening port, ACL, access rule, error page
 * name, ICAP service and log line format; marker is the sandbox's decoy marker, verdict the
 * token of its ICAP service's refusals (egress-icap.h). 0 with *ret malloc'd, or -errno.
 */
int egress_proxy_conf(const struct config *cfg, const char *name, unsigned k,
		      const struct policy *p, const char *marker, const char *verdict, char **ret);

/*
 * The error pages of the sandbox's proxy into dir (squid's own templates, and one page per
 * proxied rule saying what the rule allows): 0 or -errno.
 */
int egress_proxy_pages(const struct policy *p, const char *dir);

/* The longest real value a credential file may hold (bytes). */
#define EGRESS_PROXY_CREDENTIAL_MAX 8192

struct policy_credential;

/* Reads c's real value from its root-only file into buf (NUL-terminated, one trailing newline
 * dropped; printable ASCII, no spaces, quotes or backslashes); its length or -errno, printed.
 * The caller wipes buf. */
int egress_proxy_credential_read(const struct policy_credential *c, char *buf, size_t size);

/* A file for real values at path (created or emptied, mode 0600, owned by uid), unbuffered so
 * no copy of a value stays in stdio's buffer: 0 with *ret to fclose, or -errno (printed). */
int egress_proxy_secret_open(const char *path, uid_t uid, FILE **ret);

/*
 * The real values of p's credentials, read from their root-only files, as squid lines that add
 * each to the requests its swap ACL (egress-proxy-conf.c) matches, into path (0600, owned by
 * uid). The values pass through this process's memory only, wiped after. 0 or -errno (printed:
 * which credential, what is wrong with its file).
 */
int egress_proxy_credentials(const struct policy *p, const char *path, uid_t uid);

struct gate_keeper;

/*
 * Starts sandbox name's proxy (link k) in the gate, jailed, and returns while it starts:
 * egress_proxy_wait says whether it listens. Its pid goes to proxy.pid in the state dir. Nothing
 * to do (0) if the policy needs none. The signing CA must be in the state dir's proxy/ already
 * (EGRESS_PROXY_SIGNING). 0 or -errno (printed).
 */
int egress_proxy_start(const struct config *cfg, const char *name, unsigned k,
		       const struct policy *p, const char *marker, struct gate_keeper *keeper);

/* 0 once the proxy egress_proxy_start started listens (or none was started), or -errno, printed
 * with the last lines of its logs. */
int egress_proxy_wait(const struct config *cfg, const char *name, struct gate_keeper *keeper);

/* Ends sandbox name's proxy if it runs; quiet if it is gone. */
void egress_proxy_stop(const struct config *cfg, const char *name);

#endif
