/*
 * The DNS gate's jail: where each sandbox's dnsmasq runs once it is started. A pid namespace of
 * its own (it is pid 1 there and sees no host process), a mount namespace whose root is a small
 * read-only tmpfs holding /usr and the /lib links read-only, /dev/null and /dev/urandom, its
 * query log, the keeper's socket and the nft shim, nothing else (no /proc, /etc, /run, /var);
 * then lib/jail.c's drop (an unprivileged uid and gid, no capability in any set, no_new_privs,
 * not dumpable) and a seccomp allowlist. It stays in the gate's network namespace, where it binds
 * port 53 without privilege (the gate's ip_unprivileged_port_start is 0).
 */
#ifndef FB_EGRESS_DNS_JAIL_H
#define FB_EGRESS_DNS_JAIL_H

#include <sys/types.h>

/* The host's files a jail is given; each becomes one file at the jail's root. */
struct dns_jail {
	uid_t uid;	  /* and gid */
	const char *log;  /* the query log, made by the caller and writable by uid: /dns.log */
	const char *sock; /* the keeper's listening socket: DNS_WIRE_SOCK_JAIL_PATH */
	const char *shim; /* the nft shim, preloaded into argv[0]: DNS_WIRE_SHIM_JAIL_PATH */
};

#define DNS_JAIL_LOG "/dns.log"

/*
 * Starts argv (argv[0] an absolute path under /usr) in a new jail; the child dies with the
 * caller. Returns its pid (as the caller's pid namespace sees it), or -errno; a failure inside
 * the jail before exec makes the child exit 126.
 */
pid_t egress_dns_jail_spawn(const struct dns_jail *j, char *const *argv);

#endif
