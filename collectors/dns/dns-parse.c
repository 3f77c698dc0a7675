#include "dns-parse.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Where a name's reading is: the message, the text so far, what it has seen. */
struct name_reader {
	const uint8_t *m;
	size_t len;
	char *out; /* DNS_NAME_TEXT_MAX bytes */
	size_t o, wire;
	unsigned labels, longest;
};

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* Appends one label's text; bytes that would be ambiguous or unprintable as "\DDD" (as dig). */
static void append_label(struct name_reader *r, const uint8_t *label, unsigned n)
{
	if (r->o)
		r->out[r->o++] = '.';
	for (unsigned i = 0; i < n; i++) {
		uint8_t c = label[i];

		if (c > 0x20 && c < 0x7f && c != '.' && c != '\\')
			r->out[r->o++] = (char)c;
		else
			r->o += (size_t)snprintf(r->out + r->o, 5, "\\%03u", c);
	}
	r->out[r->o] = '\0';
}

/*
 * Reads the name at *pos; *pos moves past it (past its first pointer, if any). The wire cap keeps
 * the text within DNS_NAME_TEXT_MAX; pointers must go strictly backwards past every place
 * visited, so the walk ends. 0, or -EBADMSG with *why.
 */
static int read_name(struct name_reader *r, size_t *pos, const char **why)
{
	size_t p = *pos, lowest = *pos, end = 0;
	unsigned hops = 0;

	r->o = r->wire = r->labels = r->longest = 0;
	r->out[0] = '\0';
	for (;;) {
		uint8_t c;

		if (p >= r->len)
			return *why = "a name runs past the message", -EBADMSG;
		c = r->m[p];
		if ((c & 0xc0) == 0xc0) {
			size_t to;

			if (p + 1 >= r->len)
				return *why = "a compression pointer runs past the message",
				       -EBADMSG;
			to = (size_t)(c & 0x3f) << 8 | r->m[p + 1];
			if (!end)
				end = p + 2;
			if (to >= lowest || ++hops > DNS_POINTER_HOPS_MAX)
				return *why = "a compression pointer loops or points forward",
				       -EBADMSG;
			p = lowest = to;
			continue;
		}
		if (c & 0xc0)
			return *why = "a label of an unknown type", -EBADMSG;
		if (c == 0)
			break;
		if (p + 1 + c > r->len)
			return *why = "a label runs past the message", -EBADMSG;
		r->wire += 1u + c;
		if (r->wire + 1 > DNS_WIRE_NAME_MAX)
			return *why = "a name longer than 255 bytes", -EBADMSG;
		append_label(r, r->m + p + 1, c);
		r->labels++;
		r->longest = c > r->longest ? c : r->longest;
		p += 1u + c;
	}
	if (!r->o)
		strcpy(r->out, ".");
	*pos = end ? end : p + 1;
	return 0;
}

/* Reads one resource record at *pos; an answer's A or AAAA address is kept in d. */
static int read_record(struct name_reader *r, size_t *pos, int answer, struct dns_message *d,
		       const char **why)
{
	uint16_t type, rdlen;
	int ret;

	if ((ret = read_name(r, pos, why)) < 0)
		return ret;
	if (*pos + 10 > r->len)
		return *why = "a record runs past the message", -EBADMSG;
	type = be16(r->m + *pos);
	rdlen = be16(r->m + *pos + 8);
	*pos += 10;
	if (*pos + rdlen > r->len)
		return *why = "a record's data runs past the message", -EBADMSG;
	if (answer && d->n_addrs < DNS_ADDRS_MAX &&
	    ((type == DNS_TYPE_A && rdlen == 4) || (type == DNS_TYPE_AAAA && rdlen == 16)))
		inet_ntop(type == DNS_TYPE_A ? AF_INET : AF_INET6, r->m + *pos,
			  d->addrs[d->n_addrs++], sizeof(d->addrs[0]));
	*pos += rdlen;
	if (answer)
		d->answers++;
	return 0;
}

static void read_header(const uint8_t *m, struct dns_message *d)
{
	d->id = be16(m);
	d->response = m[2] >> 7;
	d->opcode = (m[2] >> 3) & 0xf;
	d->tc = (m[2] >> 1) & 1;
	d->rcode = m[3] & 0xf;
	d->qdcount = be16(m + 4);
	d->ancount = be16(m + 6);
	d->nscount = be16(m + 8);
	d->arcount = be16(m + 10);
}

/* The records after the question; a cut message may run out (partial), a whole one may not. */
static int read_records(struct name_reader *r, size_t pos, int cut, struct dns_message *d,
			const char **why)
{
	unsigned n = (unsigned)d->ancount + d->nscount + d->arcount;
	char scratch[DNS_NAME_TEXT_MAX];
	struct name_reader rr = *r;
	int ret;

	rr.out = scratch;
	for (unsigned i = 0; i < n; i++) {
		if ((ret = read_record(&rr, &pos, i < d->ancount, d, why)) < 0) {
			/* A cut capture ends mid-record: no fault of the message, the rest unread.
			 */
			if (cut) {
				d->partial = 1;
				return 0;
			}
			return ret;
		}
	}
	return 0;
}

int dns_parse(const uint8_t *buf, size_t len, int cut, struct dns_message *ret,
	      const char **ret_why)
{
	struct name_reader r = { .m = buf, .len = len, .out = ret->name };
	size_t pos = DNS_HEADER_SIZE;
	int e;

	memset(ret, 0, sizeof(*ret));
	if (len < DNS_HEADER_SIZE)
		return *ret_why = "shorter than a DNS header", -EBADMSG;
	read_header(buf, ret);
	if (ret->qdcount == 0)
		return *ret_why = "no question", -EBADMSG;
	if ((e = read_name(&r, &pos, ret_why)) < 0)
		return e;
	if (pos + 4 > len)
		return *ret_why = "the question runs past the message", -EBADMSG;
	ret->qtype = be16(buf + pos);
	ret->qclass = be16(buf + pos + 2);
	ret->labels = r.labels;
	ret->longest_label = r.longest;
	pos += 4;
	/* Further questions (no server answers them) are skipped over like records. */
	for (unsigned i = 1; i < ret->qdcount; i++) {
		char scratch[DNS_NAME_TEXT_MAX];
		struct name_reader q = r;

		q.out = scratch;
		if ((e = read_name(&q, &pos, ret_why)) < 0 || (pos += 4) > len)
			return e < 0 ? e
				     : (*ret_why = "a question runs past the message", -EBADMSG);
	}
	return read_records(&r, pos, cut, ret, ret_why);
}

const char *dns_type_name(uint16_t type, char *buf)
{
	static const struct {
		uint16_t type;
		const char *name;
	} names[] = {
		{ 1, "A" },	 { 2, "NS" },	 { 5, "CNAME" }, { 6, "SOA" },	  { 10, "NULL" },
		{ 12, "PTR" },	 { 15, "MX" },	 { 16, "TXT" },	 { 28, "AAAA" },  { 33, "SRV" },
		{ 35, "NAPTR" }, { 41, "OPT" },	 { 64, "SVCB" }, { 65, "HTTPS" }, { 99, "SPF" },
		{ 252, "AXFR" }, { 255, "ANY" }, { 257, "CAA" },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].type == type)
			return names[i].name;
	snprintf(buf, 16, "TYPE%u", type);
	return buf;
}

const char *dns_rcode_name(unsigned rcode, char *buf)
{
	static const char *const names[] = { "NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN",
					     "NOTIMP",	"REFUSED", "YXDOMAIN", "YXRRSET",
					     "NXRRSET", "NOTAUTH", "NOTZONE" };

	if (rcode < sizeof(names) / sizeof(names[0]))
		return names[rcode];
	snprintf(buf, 16, "RCODE%u", rcode);
	return buf;
}
