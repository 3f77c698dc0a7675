/*
 * The DNS collector's message reader (collectors/dns/dns-parse.c) on what a sandbox may send:
 * real queries and answers (compression, A and AAAA answers, TXT), cut captures, and hostile
 * bytes (pointer loops, forward pointers, overlong names, truncations at every length, random
 * garbage and random mutations of a valid answer): each is read or refused with a reason, never
 * read out of bounds (run under ASan/valgrind to see it), never looping.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "collectors/dns/dns-parse.h"

/* registry.test A? id 0x1234 */
static const uint8_t query[] = { 0x12, 0x34, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
				 0x00, 8,    'r',  'e',	 'g',  'i',  's',  't',	 'r',  'y',  4,
				 't',  'e',  's',  't',	 0,    0x00, 0x01, 0x00, 0x01 };

/* Its answer: two A records (the second's name a pointer to the question's), one AAAA. */
static const uint8_t answer[] = {
	0x12, 0x34, 0x81, 0x80, 0x00, 0x01, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 8,
	'r',  'e',  'g',  'i',	's',  't',  'r',  'y',	4,    't',  'e',  's',	't',
	0,    0x00, 0x01, 0x00, 0x01, 0xc0, 0x0c, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00,
	0x01, 0x2c, 0x00, 0x04, 198,  51,   100,  7,	0xc0, 0x0c, 0x00, 0x01, 0x00,
	0x01, 0x00, 0x00, 0x01, 0x2c, 0x00, 0x04, 198,	51,   100,  8,	  0xc0, 0x0c,
	0x00, 0x1c, 0x00, 0x01, 0x00, 0x00, 0x01, 0x2c, 0x00, 0x10, 0xfd, 0x00, 0,
	0,    0,    0,	  0,	0,    0,    0,	  0,	0,    0,    0,	  0,	1,
};

static void test_a_query_and_its_answer(void **state)
{
	struct dns_message m;
	const char *why = NULL;
	char b[16];

	assert_int_equal(dns_parse(query, sizeof(query), 0, &m, &why), 0);
	assert_int_equal(m.id, 0x1234);
	assert_false(m.response);
	assert_string_equal(m.name, "registry.test");
	assert_string_equal(dns_type_name(m.qtype, b), "A");
	assert_int_equal(m.labels, 2);
	assert_int_equal(m.longest_label, 8);
	assert_int_equal(dns_parse(answer, sizeof(answer), 0, &m, &why), 0);
	assert_true(m.response);
	assert_string_equal(dns_rcode_name(m.rcode, b), "NOERROR");
	assert_int_equal(m.answers, 3);
	assert_int_equal(m.n_addrs, 3);
	assert_string_equal(m.addrs[0], "198.51.100.7");
	assert_string_equal(m.addrs[1], "198.51.100.8");
	assert_string_equal(m.addrs[2], "fd00::1");
	assert_false(m.partial);
	assert_string_equal(dns_type_name(16, b), "TXT");
	assert_string_equal(dns_type_name(4242, b), "TYPE4242");
	assert_string_equal(dns_rcode_name(3, b), "NXDOMAIN");
}

/* Every prefix of the answer: refused with a reason while the question is incomplete; with the
 * question whole, refused as a whole message, read as partial as a cut capture. */
static void test_truncated_at_every_length(void **state)
{
	struct dns_message m;
	const char *why;

	for (size_t n = 0; n < sizeof(answer); n++) {
		why = NULL;
		if (n < sizeof(query)) {
			assert_int_equal(dns_parse(answer, n, 1, &m, &why), -EBADMSG);
			assert_non_null(why);
			continue;
		}
		assert_int_equal(dns_parse(answer, n, 0, &m, &why), -EBADMSG);
		assert_non_null(why);
		assert_int_equal(dns_parse(answer, n, 1, &m, &why), 0);
		assert_string_equal(m.name, "registry.test");
		assert_true(m.partial || n == sizeof(answer));
	}
}

static void test_hostile_names(void **state)
{
	uint8_t b[600];
	struct dns_message m;
	const char *why;
	size_t n;

	/* A pointer to itself, a pointer forward, a label type of EDNS0's, a pointer cut short. */
	static const uint8_t self[] = {
		0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 0x0c, 0, 1, 0, 1
	};
	static const uint8_t fwd[] = { 0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 0x10, 0, 1, 0, 1 };
	static const uint8_t ext[] = { 0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0x41, 0, 0, 1, 0, 1 };
	static const uint8_t cut[] = { 0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0 };
	static const uint8_t none[] = { 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0 };

	assert_int_equal(dns_parse(self, sizeof(self), 0, &m, &why), -EBADMSG);
	assert_string_equal(why, "a compression pointer loops or points forward");
	assert_int_equal(dns_parse(fwd, sizeof(fwd), 0, &m, &why), -EBADMSG);
	assert_int_equal(dns_parse(ext, sizeof(ext), 0, &m, &why), -EBADMSG);
	assert_string_equal(why, "a label of an unknown type");
	assert_int_equal(dns_parse(cut, sizeof(cut), 0, &m, &why), -EBADMSG);
	assert_int_equal(dns_parse(none, sizeof(none), 0, &m, &why), -EBADMSG);
	assert_string_equal(why, "no question");

	/* An answer's name pointing forward, into the next record: refused. */
	memcpy(b, answer, sizeof(answer));
	b[31] = 0xc0, b[32] = 0x30; /* the first answer's name points at the second's */
	assert_int_equal(dns_parse(b, sizeof(answer), 0, &m, &why), -EBADMSG);

	/* Labels of 63 bytes until the name passes 255: refused, the text never overflows. */
	memset(b, 0, sizeof(b));
	b[2] = 1, b[5] = 1;
	n = 12;
	for (int i = 0; i < 5; i++) {
		b[n++] = 63;
		memset(b + n, i == 0 ? '.' : 0x01, 63); /* escaped: 4 characters a byte */
		n += 63;
	}
	b[n++] = 0;
	n += 4;
	assert_int_equal(dns_parse(b, n, 0, &m, &why), -EBADMSG);
	assert_string_equal(why, "a name longer than 255 bytes");
	/* Three such labels fit (3 * 64 + 1 bytes): the text is escaped, \046 for a dot in a label.
	 */
	b[12 + 3 * 64] = 0;
	memset(b + 12 + 3 * 64 + 1, 0, 4);
	b[12 + 3 * 64 + 2] = 16;
	assert_int_equal(dns_parse(b, 12 + 3 * 64 + 5, 0, &m, &why), 0);
	assert_int_equal(strncmp(m.name, "\\046\\046", 8), 0);
	assert_int_equal(strlen(m.name), 3 * 63 * 4 + 2);
	assert_int_equal(m.longest_label, 63);
	assert_int_equal(m.qtype, 16);
}

/* A little fuzzing: random bytes and random mutations of the answer, read or refused. */
static void test_fuzz(void **state)
{
	uint8_t b[512];
	struct dns_message m;
	const char *why;
	unsigned read = 0, refused = 0;

	srand(16);
	for (int i = 0; i < 200000; i++) {
		size_t n = (size_t)rand() % sizeof(b);

		if (i % 2) {
			for (size_t k = 0; k < n; k++)
				b[k] = (uint8_t)rand();
			if (n > 5)
				b[5] = 1; /* one question, so the reading goes past the header */
		} else {
			n = sizeof(answer);
			memcpy(b, answer, n);
			for (int k = rand() % 4; k >= 0; k--)
				b[rand() % n] = (uint8_t)rand();
		}
		why = NULL;
		if (dns_parse(b, n, i % 3 == 0, &m, &why) == 0) {
			read++;
			assert_true(strlen(m.name) < DNS_NAME_TEXT_MAX);
			assert_true(m.n_addrs <= DNS_ADDRS_MAX);
		} else {
			refused++;
			assert_non_null(why);
		}
	}
	assert_true(read > 1000 && refused > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_a_query_and_its_answer),
		cmocka_unit_test(test_truncated_at_every_length),
		cmocka_unit_test(test_hostile_names),
		cmocka_unit_test(test_fuzz),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
