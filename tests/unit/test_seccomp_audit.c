/*
 * The AUDIT_SECCOMP record parser (collectors/seccomp/seccomp-audit.h): real records as the kernel
 * writes them, names the kernel hex-encodes, and records that must be refused rather than
 * half-read.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "collectors/seccomp/seccomp-audit.h"

static int parse(const char *text, struct seccomp_denial *d)
{
	return seccomp_audit_parse(text, strlen(text), d);
}

static void test_parses_a_kernel_record(void **state)
{
	struct seccomp_denial d;

	assert_int_equal(parse("audit(1795993303.245:1916): auid=4294967295 uid=420000 gid=420000 "
			       "ses=4294967295 pid=13505 comm=\"python3.11\" "
			       "exe=\"/usr/bin/python3.11\" sig=0 arch=c000003e syscall=101 "
			       "compat=0 ip=0x7f5edf03d829 code=0x50000",
			       &d),
			 0);
	assert_int_equal(d.ts, 1795993303245000000LL);
	assert_int_equal(d.serial, 1916);
	assert_int_equal(d.pid, 13505);
	assert_int_equal(d.uid, 420000);
	assert_string_equal(d.comm, "python3.11");
	assert_string_equal(d.exe, "/usr/bin/python3.11");
	assert_int_equal(d.arch, 0xc000003e);
	assert_int_equal(d.syscall, 101);
	assert_int_equal(d.code, 0x50000);
	assert_int_equal(d.sig, 0);
	assert_string_equal(seccomp_action_name(d.code), "errno");
}

static void test_decodes_hex_names_and_does_not_confuse_auid_with_uid(void **state)
{
	struct seccomp_denial d;

	/* "a b" and "/tmp/x y": names with spaces arrive hex-encoded and unquoted. */
	assert_int_equal(
		parse("audit(1.002:3): auid=7 uid=9 pid=4 comm=612062 exe=2F746D702F782079 "
		      "sig=31 arch=40000003 syscall=26 compat=1 ip=0x1 code=0x80000000",
		      &d),
		0);
	assert_int_equal(d.uid, 9);
	assert_string_equal(d.comm, "a b");
	assert_string_equal(d.exe, "/tmp/x y");
	assert_int_equal(d.sig, 31);
	assert_int_equal(d.ts, 1002000000LL);
	assert_string_equal(seccomp_action_name(d.code), "kill_process");
}

static void test_ignores_the_padding_after_the_text(void **state)
{
	/* As the kernel hands it over: the text, its NUL, then padding that is not the record's
	 * (here it would supply the pid the record lacks). */
	static const char rec[] = "audit(5.006:7): uid=0 comm=\"c\" sig=0 arch=c000003e "
				  "syscall=110 compat=0 code=0x50000\0 pid=77";
	struct seccomp_denial d;

	assert_int_equal(seccomp_audit_parse(rec, sizeof(rec) - 1, &d), -EINVAL);
}

static void test_refuses_records_missing_what_attribution_needs(void **state)
{
	struct seccomp_denial d;

	assert_int_equal(parse("", &d), -EINVAL);
	assert_int_equal(parse("uid=0 pid=1 sig=0 arch=c000003e syscall=1 code=0x0", &d), -EINVAL);
	assert_int_equal(parse("audit(1.0:1): uid=0 sig=0 arch=c000003e syscall=1 code=0x0", &d),
			 -EINVAL);
	assert_int_equal(
		parse("audit(1.0:1): uid=0 pid=12x sig=0 arch=c000003e syscall=1 code=0", &d),
		-EINVAL);
	assert_int_equal(parse("audit(1.0:1): uid=0 pid=1 sig=0 arch=c000003e syscall= code=0", &d),
			 -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parses_a_kernel_record),
		cmocka_unit_test(test_decodes_hex_names_and_does_not_confuse_auid_with_uid),
		cmocka_unit_test(test_ignores_the_padding_after_the_text),
		cmocka_unit_test(test_refuses_records_missing_what_attribution_needs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
