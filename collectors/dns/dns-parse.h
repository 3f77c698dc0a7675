/*
 * A bounds-checked reader of DNS messages (RFC 1035) as a sandbox sends and receives them: the
 * header, the first question's name and type, and the answers' addresses. It reads untrusted
 * bytes: every offset is checked before it is read, compression pointers must point strictly
 * before every place the name has visited (so a loop cannot be followed), and a name's wire form
 * is capped at 255 bytes. Nothing here allocates.
 */
#ifndef FB_DNS_PARSE_H
#define FB_DNS_PARSE_H

#include <stddef.h>
#include <stdint.h>

#define DNS_HEADER_SIZE 12
#define DNS_WIRE_NAME_MAX 255 /* a name's wire form, its length bytes and the root included */
/* A name's text: each wire byte is at most four characters ("\DDD" for the unprintable). */
#define DNS_NAME_TEXT_MAX (4 * DNS_WIRE_NAME_MAX + 1)
#define DNS_ADDRS_MAX 8		/* answer addresses a message's reading keeps */
#define DNS_POINTER_HOPS_MAX 64 /* compression pointers one name may follow */

#define DNS_TYPE_A 1
#define DNS_TYPE_NULL 10
#define DNS_TYPE_TXT 16
#define DNS_TYPE_AAAA 28
#define DNS_RCODE_NXDOMAIN 3
#define DNS_RCODE_REFUSED 5

struct dns_message {
	uint16_t id;
	int response; /* QR: an answer */
	unsigned opcode, rcode;
	int tc; /* the sender cut it (TC): the client will ask again over TCP */
	uint16_t qdcount, ancount, nscount, arcount;
	char name[DNS_NAME_TEXT_MAX]; /* the first question's, "." for the root */
	uint16_t qtype, qclass;
	unsigned labels, longest_label; /* of that name */
	unsigned n_addrs;		/* A and AAAA answers kept (at most DNS_ADDRS_MAX) */
	char addrs[DNS_ADDRS_MAX][46];
	unsigned answers; /* answer records read whole */
	int partial; /* the bytes ran out after the question (a cut capture): the rest unread */
};

/*
 * Reads the len bytes at buf into *ret. With cut set, the bytes are a message's first len only
 * (the capture's bound): running out after the question sets ret->partial instead of failing.
 * 0, or -EBADMSG with *ret_why saying what is wrong (a static string).
 */
int dns_parse(const uint8_t *buf, size_t len, int cut, struct dns_message *ret,
	      const char **ret_why);

/* A record type's name ("A", "TXT"...), else "TYPEn" in buf (16 bytes); returns the name. */
const char *dns_type_name(uint16_t type, char *buf);

/* A response code's name ("NOERROR", "NXDOMAIN"...), else "RCODEn" in buf (16 bytes). */
const char *dns_rcode_name(unsigned rcode, char *buf);

#endif
