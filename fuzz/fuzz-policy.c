/*
 * The policy parser (policy/): any bytes as a policy file. A policy that loads is read back through
 * every accessor and its embedded test vectors are run through the gate, as `firebreak policy
 * check` does.
 */
#include "fuzz.h"
#include "policy/gate.h"
#include "policy/policy.h"

static void walk(const struct policy *p)
{
	const struct policy_sandbox *sb = policy_sandbox(p);
	const struct policy_detectors *det = policy_detectors(p);
	struct gate_decision d;
	const char *programs[POLICY_COMMANDS_MAX];
	size_t n;

	(void)policy_hash(p);
	(void)policy_name(p);
	for (const char *const *e = sb->env; e && *e; e++)
		(void)strlen(*e);
	for (const char *const *o = det->off; o && *o; o++)
		(void)policy_rule_from_name(*o);
	for (size_t i = 0; i < policy_tool_count(p); i++) {
		const char *tool = policy_tool_name(p, i);
		int64_t ns;

		(void)policy_tool_index(p, tool);
		(void)policy_tool_egress(p, i);
		n = policy_tool_programs(p, i, programs, POLICY_COMMANDS_MAX);
		for (size_t j = 0; j < n; j++)
			(void)strlen(programs[j]);
		for (const char *const *c = policy_tool_children(p, i); c && *c; c++)
			(void)strlen(*c);
		(void)policy_tool_single_process(p, i);
		(void)policy_tool_timeout(p, tool, &ns);
	}
	for (size_t i = 0; i < policy_egress_count(p); i++)
		(void)policy_cidr_forbidden(policy_egress(p, i)->family, policy_egress(p, i)->addr,
					    policy_egress(p, i)->prefix);
	for (size_t i = 0; i < policy_warning_count(p); i++)
		(void)strlen(policy_warning(p, i));
	/* The vectors as `policy check` runs them: by name, whatever this host has installed. */
	for (size_t i = 0; i < policy_test_count(p) && i < 64; i++)
		(void)gate_run_test(p, policy_test(p, i), GATE_RESOLVE_BY_NAME, &d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct policy *p = NULL;
	char err[512];

	if (policy_load_text("fuzz.json", (const char *)data, size, &p, err, sizeof(err)) == 0)
		walk(p);
	else
		(void)strlen(err);
	policy_free(p);
	return 0;
}
