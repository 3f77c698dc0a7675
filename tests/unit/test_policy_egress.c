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

/* The "credentials" section beside an intercepted API rule, a passthrough one and a clear one. */
static char *with_credentials(const char *creds)
{
	static char buf[4096];

	snprintf(buf, sizeof(buf),
		 "{\"version\": 1, \"name\": \"p\",\n\"egress\": {\"allow\": ["
		 "{\"name\": \"api\", \"host\": \"api.example\", \"ports\": [443]},"
		 "{\"name\": \"pt\", \"host\": \"pt.example\", \"ports\": [443],"
		 " \"http\": {\"tls\": \"passthrough\"}},"
		 "{\"name\": \"web\", \"host\": \"web.example\", \"ports\": [80]}]},\n"
		 "\"sandbox\": {\"decoy_env\": [\"OPENAI_API_KEY\"]},\n"
		 "\"credentials\": {%s},\n" TOOLS "}",
		 creds);
	return buf;
}

static void test_credentials_load_by_reference(void **state)
{
	struct policy *p = fixture_policy(
		"p.json",
		with_credentials(
			"\"model\": {\"from\": \"/etc/k\", \"hosts\": [\"api.example\"], "
			"\"scheme\": "
			"\"Bearer\", \"env\": \"MODEL_KEY\"},"
			"\"gh\": {\"from\": \"/etc/g\", \"hosts\": [\"api.example\"], \"header\": "
			"\"X-Token\", \"file\": \"/home/agent/.config/gh/token\"}"));
	const struct policy_credential *c;

	(void)state;
	assert_int_equal(policy_credential_count(p), 2);
	c = policy_credential(p, 0);
	assert_string_equal(c->name, "model");
	assert_string_equal(c->from, "/etc/k");
	assert_string_equal(c->header, "Authorization"); /* the default */
	assert_string_equal(c->scheme, "Bearer");
	assert_string_equal(c->env, "MODEL_KEY");
	assert_null(c->file);
	assert_int_equal(c->n_hosts, 1);
	assert_string_equal(c->hosts[0], "api.example");
	c = policy_credential(p, 1);
	assert_string_equal(c->header, "X-Token");
	assert_null(c->scheme);
	assert_null(c->env);
	assert_string_equal(c->file, "/home/agent/.config/gh/token");
	assert_null(policy_credential(p, 2));
	policy_free(p);
}

static void test_credentials_that_could_leak_are_refused(void **state)
{
	static const struct {
		const char *creds, *want;
	} cases[] = {
		/* A real value never crosses the wire unencrypted or unseen. */
		{ "\"c\": {\"from\": \"/k\", \"hosts\": [\"web.example\"], \"env\": \"K\"}",
		  "whose TLS the proxy intercepts" },
		{ "\"c\": {\"from\": \"/k\", \"hosts\": [\"pt.example\"], \"env\": \"K\"}",
		  "whose TLS the proxy intercepts" },
		{ "\"c\": {\"from\": \"/k\", \"hosts\": [\"other.example\"], \"env\": \"K\"}",
		  "not the host of an egress rule" },
		{ "\"c\": {\"from\": \"/k\", \"env\": \"K\"}", "missing \"hosts\"" },
		{ "\"c\": {\"from\": \"/k\", \"hosts\": [], \"env\": \"K\"}", "bound to no host" },
		{ "\"c\": {\"from\": \"/k\", \"hosts\": [\"api.example\"]}", "\"env\", \"file\"" },
		{ "\"c\": {\"from\": \"k\", \"hosts\": [\"api.example\"], \"env\": \"K\"}",
		  "absolute path" },
		{ "\"c\": {\"hosts\": [\"api.example\"], \"env\": \"K\"}", "\"from\"" },
		/* The decoy's variable is its own: not a real value, not another decoy. */
		{ "\"c\": {\"from\": \"/k\", \"hosts\": [\"api.example\"], \"env\": \"PATH\"}",
		  "has a real value" },
		{ "\"c\": {\"from\": \"/k\", \"hosts\": [\"api.example\"], \"env\": "
		  "\"OPENAI_API_KEY\"}",
		  "decoy_env too" },
		{ "\"c\": {\"from\": \"/k\", \"hosts\": [\"api.example\"], \"env\": \"K\"},"
		  "\"d\": {\"from\": \"/k\", \"hosts\": [\"api.example\"], \"env\": \"K\"}",
		  "credential c has \"K\" already" },
		{ "\"c\": {\"from\": \"/k\", \"hosts\": [\"api.example\"], \"file\": "
		  "\"/workspace/k\"}",
		  "a file under /home/agent" },
		{ "\"c\": {\"from\": \"/k\", \"hosts\": [\"api.example\"], \"file\": "
		  "\"/home/agent/../etc/k\"}",
		  "a file under /home/agent" },
		{ "\"c\": {\"from\": \"/k\", \"hosts\": [\"api.example\"], \"env\": \"K\", "
		  "\"header\": \"Bad Header\"}",
		  "not a header name" },
		{ "\"c\": {\"from\": \"/k\", \"hosts\": [\"api.example\"], \"env\": \"K\", "
		  "\"scheme\": \"Bearer x\"}",
		  "a scheme is 1-16 letters" },
		{ "\"Bad\": {\"from\": \"/k\", \"hosts\": [\"api.example\"], \"env\": \"K\"}",
		  "a name is 1-32 of [a-z0-9_-]" },
		{ "\"c\": {\"from\": \"/k\", \"hosts\": [\"api.example\"], \"env\": \"K\", "
		  "\"value\": \"x\"}",
		  "value" },
	};
	char err[512];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		fixture_policy_refused(with_credentials(cases[i].creds), cases[i].want, err,
				       sizeof(err));
		if (!strstr(err, cases[i].want))
			fail_msg("case %zu: got \"%s\", want \"%s\"", i, err, cases[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rules_load_with_ports_protocol_and_addresses),
		cmocka_unit_test(test_metadata_and_gate_ranges_can_never_be_opened),
		cmocka_unit_test(test_malformed_rules_are_refused_where_they_are_wrong),
		cmocka_unit_test(test_http_limits_load_per_rule),
		cmocka_unit_test(test_http_limits_that_cannot_hold_are_refused),
		cmocka_unit_test(test_credentials_load_by_reference),
		cmocka_unit_test(test_credentials_that_could_leak_are_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
