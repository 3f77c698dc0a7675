/*
 * SHA-256 (lib/sha256.h) against the FIPS 180-4 examples (NIST's "SHA256.pdf" and the one-million
 * 'a' vector), the padding edge cases at 55, 56, 63, 64 and 65 bytes (checked against coreutils
 * sha256sum), and incremental hashing split at every point giving the one-shot digest.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "macro.h"
#include "sha256.h"

static void expect_hex(const void *data, size_t len, const char *want_hex)
{
	char got[SHA256_PREFIXED_HEX_SIZE];

	sha256_prefixed_hex(data, len, got);
	assert_string_equal(got + 7, want_hex);
	assert_memory_equal(got, "sha256:", 7);
}

static void test_fips_180_4_one_block_abc(void **state)
{
	expect_hex("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void test_fips_180_4_two_block_448_bits(void **state)
{
	static const char m[] = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";

	expect_hex(m, strlen(m),
		   "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void test_fips_180_4_896_bits(void **state)
{
	static const char m[] = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmn"
				"hijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";

	expect_hex(m, strlen(m),
		   "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

static void test_empty_message(void **state)
{
	expect_hex("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

static void test_one_million_a_fed_in_uneven_pieces(void **state)
{
	static const char want[] =
		"cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0";
	static const char hex[] = "0123456789abcdef";
	struct sha256_ctx ctx;
	uint8_t d[SHA256_DIGEST_SIZE];
	char got[2 * SHA256_DIGEST_SIZE + 1];
	char piece[997];
	size_t left = 1000000;

	memset(piece, 'a', sizeof(piece));
	sha256_init(&ctx);
	while (left > 0) {
		size_t n = left < sizeof(piece) ? left : sizeof(piece);

		sha256_update(&ctx, piece, n);
		left -= n;
	}
	sha256_final(&ctx, d);
	for (int i = 0; i < SHA256_DIGEST_SIZE; i++) {
		got[2 * i] = hex[d[i] >> 4];
		got[2 * i + 1] = hex[d[i] & 0xf];
	}
	got[2 * SHA256_DIGEST_SIZE] = '\0';
	assert_string_equal(got, want);
}

static void test_padding_edges_around_one_block(void **state)
{
	static const struct {
		size_t len;
		const char *hex;
	} cases[] = {
		{ 55, "d5e285683cd4efc02d021a5c62014694958901005d6f71e89e0989fac77e4072" },
		{ 56, "04c26261370ee7541549d16dee320c723e3fd14671e66a099afe0a377c16888e" },
		{ 63, "75220b47218278e656f2013bb8f0c455a25eaf01e86c64924e9d48d89776d6f2" },
		{ 64, "7ce100971f64e7001e8fe5a51973ecdfe1ced42befe7ee8d5fd6219506b5393c" },
		{ 65, "9537c5fdf120482f7d58d25e9ed583f52c02b4e304ea814db1633ad565aed7e9" },
	};
	char buf[65];

	memset(buf, 'x', sizeof(buf));
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		expect_hex(buf, cases[i].len, cases[i].hex);
}

static void test_split_at_every_point_equals_one_shot(void **state)
{
	uint8_t msg[200], whole[SHA256_DIGEST_SIZE], parts[SHA256_DIGEST_SIZE];

	for (size_t i = 0; i < sizeof(msg); i++)
		msg[i] = (uint8_t)(i * 31 + 7);
	sha256_digest(msg, sizeof(msg), whole);
	for (size_t cut = 0; cut <= sizeof(msg); cut++) {
		struct sha256_ctx ctx;

		sha256_init(&ctx);
		sha256_update(&ctx, msg, cut);
		sha256_update(&ctx, msg + cut, sizeof(msg) - cut);
		sha256_final(&ctx, parts);
		assert_memory_equal(whole, parts, SHA256_DIGEST_SIZE);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fips_180_4_one_block_abc),
		cmocka_unit_test(test_fips_180_4_two_block_448_bits),
		cmocka_unit_test(test_fips_180_4_896_bits),
		cmocka_unit_test(test_empty_message),
		cmocka_unit_test(test_one_million_a_fed_in_uneven_pieces),
		cmocka_unit_test(test_padding_edges_around_one_block),
		cmocka_unit_test(test_split_at_every_point_equals_one_shot),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
