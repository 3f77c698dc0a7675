/*
 * What the jailed dnsmasq's nft shim (dns-shim/nftset-relay.c, preloaded into dnsmasq) and the
 * gate's keeper (egress-dns-relay.c) say to each other over a SOCK_SEQPACKET unix socket, the one
 * file of the jail's that is the keeper's (dnsmasq closes every fd it inherits): one fixed-size
 * request per answer address, one byte back. The keeper trusts none of it: it names the table
 * itself and takes only a rule's index, a family and an address from the request.
 */
#ifndef FB_EGRESS_DNS_WIRE_H
#define FB_EGRESS_DNS_WIRE_H

#include <stdint.h>

/* Where the keeper's socket and the shim are in the jail. */
#define DNS_WIRE_SOCK_JAIL_PATH "/firebreak-relay.sock"
#define DNS_WIRE_SHIM_JAIL_PATH "/firebreak-nftset.so"
#define DNS_WIRE_SHIM_FILE "firebreak-nftset.so" /* beside the firebreak binary */

#define DNS_WIRE_ADD 1

struct dns_wire_request {
	uint8_t op;	  /* DNS_WIRE_ADD */
	uint8_t family;	  /* 4 or 6: which of the rule's sets (dns4_RULE, dns6_RULE) */
	uint16_t rule;	  /* the policy's egress rule index */
	uint8_t addr[16]; /* IPv4 in the first 4 bytes */
};

/* The keeper's answer: DNS_WIRE_OK once the address is in the set. */
#define DNS_WIRE_OK 0
#define DNS_WIRE_REFUSED 1

#endif
