/*
 * The proxy's content checks: a c-icap (Debian's, 0.5.10) per sandbox beside its squid, in the
 * gate's netns on the sandbox's gate4 address, port EGRESS_ICAP_PORT, jailed like squid (the
 * proxy's uid, its own pid and mount namespaces, no capability, a seccomp allowlist), running
 * our service module (icap-service/firebreak-icap.c): squid sends it every request body
 * (REQMOD: the decoy marker in it is refused) and the responses of credential hosts (RESPMOD:
 * a real value in them becomes its decoy). squid's icap_service has bypass=off: without it,
 * those requests fail. docs/egress.md, "Bodies".
 */
#ifndef FB_EGRESS_ICAP_H
#define FB_EGRESS_ICAP_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "egress-icap-wire.h"

struct policy;

/* The files in the sandbox's state dir. */
#define EGRESS_ICAP_DIR "proxy-icap" /* c-icap.conf and secrets */
#define EGRESS_ICAP_LOG "proxy-icap.log"

/* A verdict token: EGRESS_ICAP_VERDICT_LEN hex digits, NUL-terminated, from getrandom. */
int egress_icap_verdict_new(char ret[EGRESS_ICAP_VERDICT_LEN + 1]);

/*
 * The service's files into dir: c-icap.conf (listening on gate4) and the secrets file (0600,
 * owned by uid): the marker, the verdict token, and each credential's decoy and real value (read
 * from its root-only file, wiped from this process's memory after). 0 or -errno (printed).
 */
int egress_icap_files(const char *dir, uid_t uid, const char *gate4, const struct policy *p,
		      const char *marker, const char *verdict);

/* squid's side: the two services, which requests and responses go to them, the refusal's note
 * (fb_decoy_note, defined before) and Accept-Encoding dropped towards credential hosts. */
void egress_icap_squid_conf(FILE *f, const struct policy *p, const char *gate4,
			    const char *verdict);

/*
 * Starts c-icap in the gate jail as uid with dir's files, the module beside this binary and
 * log; returns its pid (it dies with the caller) or -errno. The caller waits until it listens.
 */
pid_t egress_icap_spawn(const char *dir, const char *log, uid_t uid);

#endif
