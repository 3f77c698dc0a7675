/* Names both halves agree on (names.h). */
#include "names.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

int egress_gate_address(const char *address)
{
	struct in6_addr a6;
	struct in_addr a4;

	if (inet_pton(AF_INET, address, &a4) == 1) {
		uint32_t h = ntohl(a4.s_addr);

		/* 10.199.0.0/16, the first host of a /26 */
		return (h >> 16) == ((10u << 8) | 199u) && (h & 0x3f) == 1;
	}
	if (inet_pton(AF_INET6, address, &a6) == 1) {
		static const uint8_t net[6] = { 0xfd, 0x66, 0x62, 0x72, 0x00, 0xfb };
		static const uint8_t host[8] = { 0, 0, 0, 0, 0, 0, 0, 1 };

		/* fd66:6272:fb:k::1 */
		return memcmp(a6.s6_addr, net, sizeof(net)) == 0 &&
		       memcmp(a6.s6_addr + 8, host, sizeof(host)) == 0;
	}
	return 0;
}

void egress_tool_addrs(unsigned k, unsigned t, char *ret4, size_t size4, char *ret6, size_t size6)
{
	unsigned base = (64 * k) & 0xffff;

	snprintf(ret4, size4, EGRESS_NET4 "%u.%u", (base >> 8) & 0xff,
		 (base & 0xc0) + 3 + (t & 0x3f));
	snprintf(ret6, size6, EGRESS_NET6 "%x::%x", k, 0x100 + t);
}

int egress_tool_of_address(unsigned k, size_t n, int family, const uint8_t *addr)
{
	/* A /26 holds 61 tools' addresses (.3 to .63): past that t would wrap onto another's. */
	for (size_t t = 0; t < n && t < 61; t++) {
		char a4[32], a6[64];
		uint8_t bin[16];

		egress_tool_addrs(k, (unsigned)t, a4, sizeof(a4), a6, sizeof(a6));
		if (inet_pton(family, family == AF_INET ? a4 : a6, bin) == 1 &&
		    !memcmp(bin, addr, family == AF_INET ? 4 : 16))
			return (int)t;
	}
	return -1;
}
