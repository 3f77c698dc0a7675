/*
 * The argv gate (policy/gate.c): gate_check() on the repository's own policies with a fuzzed
 * tool and argv, then the environment gate with the same strings as the caller's environment.
 * Input: one byte choosing the policy, then NUL-separated strings: the tool, then argv.
 */
#include <glob.h>
#include <libgen.h>
#include <limits.h>

#include "fuzz.h"
#include "policy/gate.h"
#include "policy/policy.h"

#define POLICIES_MAX 32
#define STRINGS_MAX 256

static struct policy *policies[POLICIES_MAX];
static size_t n_policies;

static void load(const char *path)
{
	char err[512];

	if (n_policies < POLICIES_MAX &&
	    policy_load(path, &policies[n_policies], err, sizeof(err)) == 0)
		n_policies++;
}

/* The policies of examples/ and tests/policies/, found from the binary (build/fuzz/NAME). */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char self[PATH_MAX], top[PATH_MAX + 16], pattern[PATH_MAX + 64];
	glob_t g;

	if (!realpath((*argv)[0], self))
		fuzz_die("%s: %s", (*argv)[0], strerror(errno));
	snprintf(top, sizeof(top), "%s/../..", dirname(self));
	snprintf(pattern, sizeof(pattern), "%s/examples/policy.json", top);
	load(pattern);
	snprintf(pattern, sizeof(pattern), "%s/tests/policies/*.json", top);
	if (glob(pattern, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++)
			load(g.gl_pathv[i]);
		globfree(&g);
	}
	if (n_policies < 2)
		fuzz_die("the repository's policies are not beside %s", self);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *strings[STRINGS_MAX + 1];
	const struct policy *p;
	struct gate_decision d;
	struct gate_env *env = NULL;
	size_t n = 0;
	char *text, *s, why[256];

	if (size < 1)
		return 0;
	p = policies[data[0] % n_policies];
	text = fuzz_strndup(data + 1, size - 1);
	/* The strings as the CLI gets them from its argv: each NUL-terminated. */
	for (s = text; s <= text + size - 1 && n < STRINGS_MAX; s += strlen(s) + 1)
		strings[n++] = s;
	strings[n] = NULL;
	if (n >= 2) {
		if (gate_check(p, strings[0], strings + 1, GATE_RESOLVE_BY_NAME, &d) == 0 &&
		    d.allowed && !d.program[0])
			fuzz_die("allowed with no program: %s", d.message);
		if (gate_check(p, strings[0], strings + 1, 0, &d) == 0 && d.allowed &&
		    d.program[0] != '/')
			fuzz_die("allowed a program that is not absolute: %s", d.program);
		if (gate_build_env(p, strings[0], strings + 1, &env) == 0)
			(void)gate_env_vector(env);
		gate_env_free(env);
		(void)gate_env_allowed(p, strings[0], strings[1], why, sizeof(why));
		(void)gate_env_may_start(p, strings[0], strings[1]);
	}
	free(text);
	return 0;
}
