/*
 * What the enforcer (egress-icap.c), the proxy's squid (egress-proxy-conf.c) and the c-icap
 * service module (icap-service/firebreak-icap.c, loaded into the jailed c-icap) agree on: where
 * the module's files are in the jail, the one ICAP header squid reads back, and the secrets file.
 * The module includes nothing else of the project's.
 *
 * The secrets file (EGRESS_ICAP_JAIL_SECRETS, mode 0600, the proxy's uid's), one item a line,
 * fields separated by one space, none holding a space (proxy-credentials.c refuses such values):
 *   marker HEX        the sandbox's decoy marker (LURE_MARKER_LEN lower-case hex digits)
 *   verdict TOKEN     what the module puts in EGRESS_ICAP_VERDICT_HEADER of a refusal, so that
 *                     squid tells its own refusal from an upstream's header of the same name
 *   swap DECOY REAL   a credential: REAL, seen in a response, becomes DECOY
 */
#ifndef FB_EGRESS_ICAP_WIRE_H
#define FB_EGRESS_ICAP_WIRE_H

/* On the sandbox's gate4 address (unique per link), so one port serves every sandbox. */
#define EGRESS_ICAP_PORT 1344
#define EGRESS_ICAP_SERVICE "firebreak"

/* In the jail. */
#define EGRESS_ICAP_JAIL_DIR "/icap"
#define EGRESS_ICAP_JAIL_CONF EGRESS_ICAP_JAIL_DIR "/c-icap.conf"
#define EGRESS_ICAP_JAIL_SECRETS EGRESS_ICAP_JAIL_DIR "/secrets"
#define EGRESS_ICAP_JAIL_MODULE "/firebreak-icap.so"
#define EGRESS_ICAP_JAIL_LOG "/icap.log"
#define EGRESS_ICAP_MODULE_FILE "firebreak-icap.so" /* beside the firebreak binary */

/* The refusal's HTTP header (removed before the client sees it): "decoy-TOKEN". */
#define EGRESS_ICAP_VERDICT_HEADER "X-Firebreak-Verdict"
#define EGRESS_ICAP_VERDICT_LEN 32 /* TOKEN: hex digits */

/* Caps on what the module takes from outside: the request body it holds until its verdict (a
 * larger one is refused: nothing of it has left), and the secrets file's items. */
#define EGRESS_ICAP_BODY_MAX (32 << 20)
#define EGRESS_ICAP_SWAPS_MAX 16
#define EGRESS_ICAP_VALUE_MAX 8192
#define EGRESS_ICAP_PREVIEW 4096

#endif
