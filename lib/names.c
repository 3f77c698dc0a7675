/* Names both halves agree on (names.h). */
#include "names.h"

#include <arpa/inet.h>
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
