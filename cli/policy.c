/*
 * firebreak policy check FILE: loads a policy strictly, prints its hash and warnings, and runs its
 * embedded test vectors through the same gate the enforcer uses. Exit 0 when valid and every
 * vector passes, 1 otherwise, 2 on a usage error.
 */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "policy/gate.h"
#include "macro.h"
#include "policy/policy.h"

static const char usage_text[] =
	"Usage: firebreak policy check [--quiet] [--host-only] FILE\n"
	"Validates a policy (docs/policy.md), prints its content hash and any warnings, and runs\n"
	"its embedded test vectors, printing one line per failure. Exits 0 if the policy is valid\n"
	"and every vector passes, 1 otherwise, 2 on a usage error.\n"
	"  --quiet      print failures and errors only\n"
	"  --host-only  resolve programs only as the enforcer does, on this host's files (by\n"
	"               default a pinned program missing here is matched by its name, so a\n"
	"               policy can be checked away from the sandbox host)\n";

/* The vector's argv (or env name) as one line of JSON. */
static char *describe(const struct policy_test *t)
{
	json_t *v = t->env ? json_pack("{s:s}", "env", t->env) : json_array();
	char *s;

	if (!v)
		return NULL;
	for (const char *const *a = t->argv; a && *a; a++)
		json_array_append_new(v, json_string(*a));
	s = json_dumps(v, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(v);
	return s;
}

static int check(const char *file, int quiet, unsigned flags)
{
	struct policy *p = NULL;
	size_t passed = 0, n;
	char err[1024];
	int r;

	r = policy_load(file, &p, err, sizeof(err));
	if (r == -ENOMEM)
		return cli_fail("policy", "out of memory");
	if (r < 0) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	if (!quiet)
		printf("%s: policy \"%s\" %s\n", file, policy_name(p), policy_hash(p));
	for (size_t i = 0; i < policy_warning_count(p); i++)
		fprintf(stderr, "%s\n", policy_warning(p, i));
	n = policy_test_count(p);
	for (size_t i = 0; i < n; i++) {
		const struct policy_test *t = policy_test(p, i);
		struct gate_decision d;
		_cleanup_free_ char *what = NULL;

		r = gate_run_test(p, t, flags, &d);
		if (r < 0) {
			policy_free(p);
			return cli_fail("policy", "test %zu: %s", i, strerror(-r));
		}
		if (r == 1) {
			passed++;
			continue;
		}
		what = describe(t);
		printf("%s:%u:%u: test %zu failed: tool %s %s: expected %s%s%s%s, got %s\n", file,
		       t->line, t->col, i, t->tool, what ? what : "?",
		       t->expect_allow ? "allow" : "deny", t->rule ? " (" : "",
		       t->rule ? t->rule : "", t->rule ? ")" : "", d.message);
	}
	if (!quiet || passed < n)
		printf("%s: %zu tests, %zu passed, %zu failed\n", file, n, passed, n - passed);
	policy_free(p);
	return passed == n ? 0 : 1;
}

int cli_policy(struct cli *cli, int argc, char **argv)
{
	enum { OPT_HOST_ONLY = 256 };
	static const struct option opts[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ "host-only", no_argument, NULL, OPT_HOST_ONLY },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	unsigned flags = GATE_RESOLVE_BY_NAME;
	int quiet = 0, c;

	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
		return cli_usage(stdout, usage_text);
	if (argc < 2 || strcmp(argv[1], "check") != 0)
		return cli_usage(stderr, usage_text);
	argc--;
	argv++;
	while ((c = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
		switch (c) {
		case 'q':
			quiet = 1;
			break;
		case OPT_HOST_ONLY:
			flags &= ~(unsigned)GATE_RESOLVE_BY_NAME;
			break;
		case 'h':
			return cli_usage(stdout, usage_text);
		default:
			return cli_usage(stderr, usage_text);
		}
	}
	if (optind != argc - 1)
		return cli_usage(stderr, usage_text);
	return check(argv[optind], quiet, flags);
}
