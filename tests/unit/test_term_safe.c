/*
 * The terminal-safe escaping of sandbox text (lib/term-safe.h): control, escape and C1 bytes and
 * invalid UTF-8 become \xNN, a backslash \\, valid UTF-8 and printable ASCII pass unchanged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "term-safe.h"

static void expect(const char *in, const char *want)
{
	char buf[256];
	char *dup = term_safe_dup(in);

	assert_non_null(dup);
	assert_string_equal(term_safe(in, buf, sizeof(buf)), want);
	assert_string_equal(dup, want);
	free(dup);
}

static void test_printable_ascii_and_utf8_pass(void **state)
{
	expect("", "");
	expect("pytest -q /workspace/a b.py", "pytest -q /workspace/a b.py");
	expect("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5",
	       "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5");
	expect("\xc2\xa0nbsp", "\xc2\xa0nbsp"); /* U+00A0, the first after the C1 block */
}

static void test_control_and_escape_bytes_are_hex(void **state)
{
	expect("\033]0;pwned\007", "\\x1b]0;pwned\\x07");
	expect("\033[2J", "\\x1b[2J");
	expect("a\nb\tc\rd", "a\\x0ab\\x09c\\x0dd");
	expect("\x01\x1f\x7f", "\\x01\\x1f\\x7f");
	expect("back\\slash", "back\\\\slash");
	/* An escaped backslash cannot be mistaken for an escape the tool made. */
	expect("\\x1b", "\\\\x1b");
}

static void test_c1_and_invalid_utf8_are_hex(void **state)
{
	expect("\x9b"
	       "31m",
	       "\\x9b31m"); /* a lone C1 byte (8-bit CSI) */
	expect("\xc2\x9b"
	       "31m",
	       "\\xc2\\x9b31m");			    /* U+009B, CSI in UTF-8 */
	expect("\xc2\x85", "\\xc2\\x85");		    /* NEL */
	expect("\xc0\xaf", "\\xc0\\xaf");		    /* overlong '/' */
	expect("\xe0\x80\xaf", "\\xe0\\x80\\xaf");	    /* overlong, three bytes */
	expect("\xed\xa0\x80", "\\xed\\xa0\\x80");	    /* a surrogate */
	expect("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"); /* past U+10FFFF */
	expect("\xe2\x82", "\\xe2\\x82");		    /* cut short at the end */
	expect("\xe2\x82x", "\\xe2\\x82x");		    /* cut short by ASCII */
	expect("\xff\xfe", "\\xff\\xfe");
}

static void test_embedded_nul_is_hex_through_the_strbuf(void **state)
{
	struct strbuf b = { 0 };

	term_safe_add(&b, "a\0b", 3);
	assert_false(b.oom);
	assert_string_equal(b.p, "a\\x00b");
	free(b.p);
}

static void test_a_small_buffer_cuts_at_a_whole_escape(void **state)
{
	char buf[7];

	assert_string_equal(term_safe("ab\033[2J", buf, sizeof(buf)), "ab\\x1b");
	assert_string_equal(term_safe("abcd\033", buf, sizeof(buf)), "abcd");
	assert_string_equal(term_safe("abcde\xc3\xa9", buf, sizeof(buf)), "abcde");
	assert_string_equal(term_safe(NULL, buf, sizeof(buf)), "");
}

static void test_no_output_byte_is_a_control(void **state)
{
	unsigned char in[257];
	char *out;

	for (int i = 0; i < 256; i++)
		in[i] = (unsigned char)(i + 1); /* every byte but NUL once, in order */
	in[256] = 0;
	out = term_safe_dup((const char *)in);
	assert_non_null(out);
	for (const unsigned char *p = (const unsigned char *)out; *p; p++) {
		assert_false(*p < 0x20 || *p == 0x7f);
		/* A byte 0x80-0x9f survives only inside a valid sequence that is not C1. */
		if (*p >= 0x80 && *p <= 0x9f)
			assert_true(p > (const unsigned char *)out && p[-1] >= 0xa0);
	}
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_printable_ascii_and_utf8_pass),
		cmocka_unit_test(test_control_and_escape_bytes_are_hex),
		cmocka_unit_test(test_c1_and_invalid_utf8_are_hex),
		cmocka_unit_test(test_embedded_nul_is_hex_through_the_strbuf),
		cmocka_unit_test(test_a_small_buffer_cuts_at_a_whole_escape),
		cmocka_unit_test(test_no_output_byte_is_a_control),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
