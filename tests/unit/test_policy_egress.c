/*
 * The policy's "egress" section (policy/policy-egress.c): rules load with their ports and protocol;
 * a policy that tries to open cloud metadata or the gate's own networks is refused at the value
 * with the range it overlaps; malformed rules are refused with FILE:LINE:COL.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <cmocka.h>

#include "fixtures.h"
#include "policy/policy.h"

#define TOOLS "\"tools\": {\"t\": {\"commands\": [{\"program\": \"/usr/bin/ls\"}]}}"

static char *with_egress(const char *allow)
{
	static char buf[4096];

	snprintf(buf, sizeof(buf),
		 "{\"version\": 1, \"name\": \"p\",\n\"egress\": {\"allow\": [%s]},\n" TOOLS "}",
		 allow);
	return buf;
}

static void expect_refused(const char *allow, const char *want)
{
	char err[512] = "";

	fixture_policy_refused(with_egress(allow), want, err, sizeof(err));
	if (!strstr(err, want))
		fail_msg("got \"%s\", want \"%s\"", err, want);
}

static void test_rules_load_with_ports_protocol_and_addresses(void **state)
{
	const char *text = with_egress(
		"{\"name\": \"registry\", \"host\": \"registry.test\", \"ports\": [80, 443]},"
		"{\"name\": \"dns\", \"cidr\": \"198.51.100.0/28\", \"ports\": [53], \"protocol\": "
		"\"udp\"},"
		"{\"name\": \"v6\", \"cidr\": \"2001:db8::/32\", \"ports\": [443]}");
	struct policy *p = fixture_policy("p.json", text);
	const struct policy_egress_rule *e;
	unsigned char want[4];

	assert_int_equal(policy_egress_count(p), 3);
	e = policy_egress(p, 0);
	assert_string_equal(e->name, "registry");
	assert_string_equal(e->host, "registry.test");
	assert_null(e->cidr);
	assert_int_equal(e->protocol, IPPROTO_TCP);
	assert_int_equal(e->n_ports, 2);
	assert_int_equal(e->ports[1], 443);
	e = policy_egress(p, 1);
	assert_int_equal(e->protocol, IPPROTO_UDP);
	assert_int_equal(e->family, AF_INET);
	assert_int_equal(e->prefix, 28);
	inet_pton(AF_INET, "198.51.100.0", want);
	assert_memory_equal(e->addr, want, 4);
	assert_int_equal(policy_egress(p, 2)->family, AF_INET6);
	assert_null(policy_egress(p, 3));
	policy_free(p);
}

static void test_metadata_and_gate_ranges_can_never_be_opened(void **state)
{
	expect_refused("{\"name\": \"m\", \"cidr\": \"169.254.169.254\", \"ports\": [80]}",
		       "p.json:2:44: \"cidr\" 169.254.169.254 overlaps 169.254.0.0/16");
	/* A wider range that contains metadata is refused too. */
	expect_refused("{\"name\": \"m\", \"cidr\": \"0.0.0.0/0\", \"ports\": [80]}", "overlaps");
	expect_refused("{\"name\": \"m\", \"cidr\": \"100.100.100.200/32\", \"ports\": [80]}",
		       "overlaps 100.100.100.200/32");
	expect_refused("{\"name\": \"m\", \"cidr\": \"fd00:ec2::254\", \"ports\": [80]}",
		       "overlaps fd00:ec2::254/128");
	expect_refused("{\"name\": \"m\", \"cidr\": \"fe80::/64\", \"ports\": [80]}",
		       "overlaps fe80::/10");
	expect_refused("{\"name\": \"m\", \"cidr\": \"10.199.3.0/24\", \"ports\": [80]}",
		       "overlaps 10.199.0.0/16");
}

static void test_malformed_rules_are_refused_where_they_are_wrong(void **state)
{
	expect_refused(
		"{\"name\": \"a\", \"host\": \"x.test\", \"cidr\": \"1.2.3.4\", \"ports\": [1]}",
		"exactly one of \"host\" or \"cidr\"");
	expect_refused("{\"name\": \"a\", \"host\": \"*.test\", \"ports\": [1]}", "no wildcard");
	expect_refused("{\"name\": \"a\", \"host\": \"x.test\"}", "missing \"ports\"");
	expect_refused("{\"name\": \"a\", \"host\": \"x.test\", \"ports\": [0]}",
		       "from 1 to 65535");
	expect_refused(
		"{\"name\": \"a\", \"host\": \"x.test\", \"ports\": [80], \"protocol\": \"icmp\"}",
		"\"protocol\" must be \"tcp\" or \"udp\"");
	expect_refused("{\"name\": \"a\", \"cidr\": \"10.0.0.1/8\", \"ports\": [80]}",
		       "no host bits set");
	expect_refused("{\"name\": \"A b\", \"host\": \"x.test\", \"ports\": [80]}",
		       "1-32 of [a-z0-9_-]");
	expect_refused("{\"name\": \"a\", \"host\": \"x.test\", \"ports\": [80]},"
		       "{\"name\": \"a\", \"host\": \"y.test\", \"ports\": [80]}",
		       "named twice");
	expect_refused("{\"name\": \"a\", \"host\": \"x.test\", \"ports\": [80], \"via\": 1}",
		       "unknown key \"via\"");
}

static void test_http_limits_load_per_rule(void **state)
{
	const char *text = with_egress(
		"{\"name\": \"registry\", \"host\": \"registry.test\", \"ports\": [80, 443],"
		" \"http\": {\"methods\": [\"GET\", \"HEAD\"], \"paths\": [\"/simple/\","
		" \"/packages/*.tar.gz\"], \"max_request_body\": \"0\", \"max_response\": \"1M\"}},"
		"{\"name\": \"api\", \"host\": \"api.model.test\", \"ports\": [443],"
		" \"http\": {\"tls\": \"passthrough\"}},"
		"{\"name\": \"plain\", \"host\": \"docs.test\", \"ports\": [80]}");
	struct policy *p = fixture_policy("p.json", text);
	const struct policy_http *h = policy_egress(p, 0)->http;

	assert_non_null(h);
	assert_int_equal(h->n_methods, 2);
	assert_string_equal(h->methods[1], "HEAD");
	assert_int_equal(h->n_paths, 2);
	assert_string_equal(h->paths[1], "/packages/*.tar.gz");
	assert_int_equal(h->max_request_body, 0);
	assert_int_equal(h->max_response, 1 << 20);
	assert_false(h->passthrough);
	h = policy_egress(p, 1)->http;
	assert_true(h->passthrough);
	assert_int_equal(h->max_request_body, -1);
	assert_int_equal(h->n_methods, 0);
	assert_null(policy_egress(p, 2)->http);
	policy_free(p);
	(void)state;
}

static void test_http_limits_that_cannot_hold_are_refused(void **state)
{
	expect_refused("{\"name\": \"n\", \"cidr\": \"198.51.100.0/28\", \"ports\": [80], "
		       "\"http\": {}}",
		       "TCP host rules only");
	expect_refused("{\"name\": \"n\", \"host\": \"a.test\", \"ports\": [8080], "
		       "\"http\": {}}",
		       "ports 80 and 443");
	expect_refused("{\"name\": \"n\", \"host\": \"a.test\", \"ports\": [443], "
		       "\"http\": {\"tls\": \"passthrough\", \"methods\": [\"GET\"]}}",
		       "encrypted end to end");
	expect_refused("{\"name\": \"n\", \"host\": \"a.test\", \"ports\": [80], "
		       "\"http\": {\"methods\": [\"get\"]}}",
		       "upper-case");
	expect_refused("{\"name\": \"n\", \"host\": \"a.test\", \"ports\": [80], "
		       "\"http\": {\"paths\": [\"/a/../b\"]}}",
		       "no dot segments");
	expect_refused("{\"name\": \"n\", \"host\": \"a.test\", \"ports\": [80], "
		       "\"http\": {\"paths\": [\"/a b\"]}}",
		       "URL path characters");
	expect_refused("{\"name\": \"n\", \"host\": \"a.test\", \"ports\": [80], "
		       "\"http\": {\"paths\": []}}",
		       "would refuse every request");
	expect_refused("{\"name\": \"n\", \"host\": \"a.test\", \"ports\": [80], "
		       "\"http\": {\"tls\": \"maybe\"}}",
		       "\"intercept\" or \"passthrough\"");
	expect_refused("{\"name\": \"n\", \"host\": \"a.test\", \"ports\": [80], "
		       "\"http\": {\"verbs\": [\"GET\"]}}",
		       "verbs");
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rules_load_with_ports_protocol_and_addresses),
		cmocka_unit_test(test_metadata_and_gate_ranges_can_never_be_opened),
		cmocka_unit_test(test_malformed_rules_are_refused_where_they_are_wrong),
		cmocka_unit_test(test_http_limits_load_per_rule),
		cmocka_unit_test(test_http_limits_that_cannot_hold_are_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
