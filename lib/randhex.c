#include "randhex.h"

#include <errno.h>
#include <stdio.h>
#include <sys/random.h>

int random_hex(char *ret, size_t len)
{
	unsigned char b[64];

	if (len % 2 || len / 2 > sizeof(b) || getrandom(b, len / 2, 0) != (ssize_t)(len / 2))
		return -EIO;
	for (size_t i = 0; i < len / 2; i++)
		snprintf(ret + 2 * i, 3, "%02x", b[i]);
	ret[len] = '\0';
	return 0;
}
