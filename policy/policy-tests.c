/* The "tests" section: argv (or environment) vectors with the decision the gate must reach. */
#include "gate.h"
#include "macro.h"
#include "policy-internal.h"

void policy_tests_free(struct policy *p)
{
	for (size_t i = 0; i < p->n_tests; i++) {
		struct policy_test_internal *t = &p->tests[i];

		free(t->tool);
		policy_strv_free(t->argv);
		free(t->env);
		free(t->rule);
	}
	free(p->tests);
	p->tests = NULL;
	p->n_tests = 0;
}

static int parse_test(struct policy_parse *ctx, json_t *obj, const char *path,
		      struct policy_test_internal *t)
{
	static const char *const known[] = {
		"tool", "argv", "env", "expect", "rule", "description"
	};
	char vpath[JSON_POS_PATH_MAX + 1];
	_cleanup_free_ char *expect = NULL, *description = NULL;
	struct json_pos_loc loc;
	size_t argc = 0;
	int r;

	if (json_pos_lookup(ctx->pos, path, &loc) == 0) {
		t->pub.line = loc.line;
		t->pub.col = loc.col;
	}
	if (!json_is_object(obj))
		return policy_fail(ctx, path, 0, "a test must be an object");
	if ((r = policy_check_keys(ctx, obj, path, known, ARRAY_SIZE(known))) < 0 ||
	    (r = policy_get_string(ctx, obj, path, "tool", 1, &t->tool)) < 0 ||
	    (r = policy_get_string(ctx, obj, path, "expect", 1, &expect)) < 0 ||
	    (r = policy_get_string(ctx, obj, path, "rule", 0, &t->rule)) < 0 ||
	    (r = policy_get_string(ctx, obj, path, "env", 0, &t->env)) < 0 ||
	    (r = policy_get_string(ctx, obj, path, "description", 0, &description)) < 0 ||
	    (r = policy_get_strings(ctx, obj, path, "argv", POLICY_TEST_ARGC_MAX, NULL, NULL,
				    &t->argv, &argc)) < 0)
		return r;
	if (!t->argv == !t->env)
		return policy_fail(ctx, path, 0, "a test has either \"argv\" or \"env\", not %s",
				   t->argv ? "both" : "neither");
	if (t->argv && argc == 0) {
		policy_path(vpath, path, "argv");
		return policy_fail(ctx, vpath, 0, "\"argv\" needs at least the program");
	}
	policy_path(vpath, path, "expect");
	if (strcmp(expect, "allow") == 0)
		t->pub.expect_allow = 1;
	else if (strcmp(expect, "deny") != 0)
		return policy_fail(ctx, vpath, 0, "\"expect\" must be \"allow\" or \"deny\"");
	if (t->rule) {
		policy_path(vpath, path, "rule");
		if (t->pub.expect_allow)
			return policy_fail(
				ctx, vpath, 0,
				"\"rule\" names why a call is refused; this test expects "
				"\"allow\"");
		if (!gate_rule_known(t->rule))
			return policy_fail(
				ctx, vpath, 0,
				"\"%.64s\" is not a gate rule (docs/policy.md lists them)",
				t->rule);
	}
	t->pub.tool = t->tool;
	t->pub.argv = (const char *const *)t->argv;
	t->pub.env = t->env;
	t->pub.rule = t->rule;
	return 0;
}

int policy_parse_tests(struct policy_parse *ctx, json_t *arr)
{
	struct policy *p = ctx->policy;
	char path[JSON_POS_PATH_MAX + 1];
	json_t *e;
	size_t i;
	int r;

	if (json_array_size(arr) > POLICY_TESTS_MAX)
		return policy_fail(ctx, "/tests", 0, "\"tests\" has more than %d entries",
				   POLICY_TESTS_MAX);
	p->tests = calloc(json_array_size(arr) + 1, sizeof(*p->tests));
	if (!p->tests)
		return -ENOMEM;
	json_array_foreach (arr, i, e) {
		policy_path_index(path, "/tests", i);
		p->n_tests++;
		if ((r = parse_test(ctx, e, path, &p->tests[i])) < 0)
			return r;
	}
	return 0;
}
