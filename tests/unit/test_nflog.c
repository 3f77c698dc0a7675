/*
 * The DLT_NFLOG frame parser (collectors/nflog/nflog-pcap.h): prefix and IPv4/IPv6 five-tuple from
 * the TLVs as the kernel lays them out, and refusal of truncated or zero-length TLVs (what a short
 * read buffer once produced) rather than a half-read packet.
 */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "collectors/nflog/nflog-pcap.h"

/* Appends a TLV (host-order length and type, value padded to 4); returns the new length. */
static size_t tlv(uint8_t *f, size_t off, uint16_t type, const void *v, uint16_t len)
{
	uint16_t tlen = (uint16_t)(len + 4);

	memcpy(f + off, &tlen, 2);
	memcpy(f + off + 2, &type, 2);
	memcpy(f + off + 4, v, len);
	return off + ((tlen + 3u) & ~3u);
}

static size_t frame(uint8_t *f, const char *prefix, const uint8_t *ip, uint16_t iplen)
{
	static const uint8_t hdr[4] = { 0x08, 0x00, 0, 0 };
	size_t off = 4;

	memset(f, 0, 512);
	f[0] = 2;
	off = tlv(f, off, 1, hdr, sizeof(hdr));
	off = tlv(f, off, 10, prefix, (uint16_t)(strlen(prefix) + 1));
	return tlv(f, off, 9, ip, iplen);
}

static void test_ipv4_udp(void **state)
{
	uint8_t ip[28] = { 0x45, 0, 0,	 28, 0,	  0,  0,    0,	  64,	IPPROTO_UDP, 0, 0, 10, 199,
			   0,	 3, 203, 0,  113, 66, 0x9c, 0x40, 0x11, 0x5c,	     0, 8, 0,  0 };
	uint8_t f[512];
	struct nflog_packet p;
	size_t n = frame(f, "firebreak:dp1 ", ip, sizeof(ip));

	assert_int_equal(nflog_parse(f, n, &p), 0);
	assert_string_equal(p.prefix, "firebreak:dp1 ");
	assert_int_equal(p.family, AF_INET);
	assert_int_equal(p.proto, IPPROTO_UDP);
	assert_memory_equal(p.src, ((uint8_t[]){ 10, 199, 0, 3 }), 4);
	assert_memory_equal(p.dst, ((uint8_t[]){ 203, 0, 113, 66 }), 4);
	assert_int_equal(p.sport, 40000);
	assert_int_equal(p.dport, 4444);
}

static void test_ipv6_tcp(void **state)
{
	uint8_t ip[60] = { 0x60, 0, 0, 0, 0, 20, IPPROTO_TCP, 64 };
	uint8_t f[512];
	struct nflog_packet p;
	size_t n;

	ip[8] = 0xfd;
	ip[24] = 0xfd;
	ip[25] = 0x00;
	ip[39] = 0x54;
	ip[42] = 0;
	ip[43] = 80;
	n = frame(f, "firebreak:x ", ip, sizeof(ip));
	assert_int_equal(nflog_parse(f, n, &p), 0);
	assert_int_equal(p.family, AF_INET6);
	assert_int_equal(p.proto, IPPROTO_TCP);
	assert_int_equal(p.dst[15], 0x54);
	assert_int_equal(p.dport, 80);
}

static void test_refuses_truncated_and_zero_length_tlvs(void **state)
{
	uint8_t ip[28] = { 0x45, 0, 0, 28, 0, 0, 0, 0, 64, IPPROTO_UDP };
	uint8_t f[512];
	struct nflog_packet p;
	size_t n = frame(f, "firebreak:dp1 ", ip, sizeof(ip));

	assert_int_equal(nflog_parse(f, n - 8, &p), -EINVAL); /* payload cut short */
	assert_int_equal(nflog_parse(f, 3, &p), -EINVAL);
	memset(f + 12, 0, 4); /* a zero-length TLV */
	assert_int_equal(nflog_parse(f, n, &p), -EINVAL);
	n = frame(f, "firebreak:dp1 ", ip, 0); /* no IP header at all */
	assert_int_equal(nflog_parse(f, n, &p), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipv4_udp),
		cmocka_unit_test(test_ipv6_tcp),
		cmocka_unit_test(test_refuses_truncated_and_zero_length_tlvs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
