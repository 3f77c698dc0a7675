/*
 * The per-tool command gate (policy/gate.h): every injection form is refused under the rule that
 * names it, every legitimate form of the same command is allowed, the precedence is invariants >
 * deny > allow > default deny, and the environment is rebuilt from the allowlist only.
 *
 * The programs are a fixture of small executables and symlinks made next to this test binary, so
 * the result does not depend on what the host has installed; the example policy is checked last.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "fixtures.h"
#include "policy/gate.h"
#include "macro.h"
#include "policy/policy.h"

#define ARGV(...) ((char *const[]){ __VA_ARGS__, NULL })

static char root[PATH_MAX / 2]; /* the fixture: ROOT/bin holds the programs */

/* Programs: a regular file each, and symlinks to test both spellings of one file. */
static const char *const programs[] = {
	"python3.11", "pytest", "git", "find",	 "tar",	 "rsync", "curl", "perl",
	"ruby",	      "node",	"php", "lua5.4", "ls",	 "xz",	  "dash", "busybox",
	"timeout",    "prog",	"ssh", "scp",	 "sftp", "env",
};
static const char *const links[][2] = {
	{ "python3", "python3.11" }, /* /usr/bin/python3 -> python3.11 */
	{ "unxz", "xz" },	     /* a multi-call binary under another name */
	{ "runner", "dash" },	     /* an innocent name for a shell */
	{ "cat", "busybox" },	     /* busybox-style applet */
};

static void path_of(char *buf, const char *name)
{
	snprintf(buf, PATH_MAX, "%s/bin/%s", root, name);
}

static int fixture_up(void **state)
{
	char exe[PATH_MAX], path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return -1;
	exe[n] = '\0';
	*strrchr(exe, '/') = '\0';
	/* Not in /tmp, /var/tmp or the like: a policy may not pin programs where the sandbox can
	 * write. /run (root's) when we can, else next to the binary; the checkout itself may well
	 * lie under /tmp (CI clones anywhere). */
	if (strlen(exe) + 32 > sizeof(root))
		return -1;
	strcpy(root, "/run/firebreak-gate-fixture-XXXXXX");
	if (!mkdtemp(root)) {
		strcpy(root, exe);
		strcat(root, "/gate-fixture-XXXXXX");
		if (!mkdtemp(root))
			return -1;
	}
	snprintf(path, sizeof(path), "%s/bin", root);
	if (mkdir(path, 0755) < 0)
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(programs); i++) {
		FILE *f;

		path_of(path, programs[i]);
		f = fopen(path, "w");
		if (!f)
			return -1;
		fputs("#!/bin/sh\nexit 0\n", f);
		fclose(f);
		chmod(path, 0755);
	}
	for (size_t i = 0; i < ARRAY_SIZE(links); i++) {
		path_of(path, links[i][0]);
		if (symlink(links[i][1], path) < 0)
			return -1;
	}
	path_of(path, "noexec");
	fclose(fopen(path, "w"));
	chmod(path, 0644);
	return 0;
}

static int fixture_down(void **state)
{
	char path[PATH_MAX];

	for (size_t i = 0; i < ARRAY_SIZE(programs); i++) {
		path_of(path, programs[i]);
		unlink(path);
	}
	for (size_t i = 0; i < ARRAY_SIZE(links); i++) {
		path_of(path, links[i][0]);
		unlink(path);
	}
	path_of(path, "noexec");
	unlink(path);
	snprintf(path, sizeof(path), "%s/bin", root);
	rmdir(path);
	rmdir(root);
	return 0;
}

/* Loads tmpl with every "@" replaced by the fixture's root. */
static struct policy *load(const char *tmpl)
{
	size_t n = strlen(tmpl) + 64 * strlen(root) + 1, k = 0;
	char *text = malloc(n + 4096);
	struct policy *p;

	assert_non_null(text);
	for (const char *s = tmpl; *s; s++) {
		if (*s == '@') {
			memcpy(text + k, root, strlen(root));
			k += strlen(root);
		} else {
			text[k++] = *s;
		}
	}
	text[k] = '\0';
	p = fixture_policy("gate.json", text);
	free(text);
	return p;
}

#define PYTEST_FLAGS                                                                               \
	"\"flags\": {\"allow\": [\"-q\", \"-x\", \"-v\", \"--tb=\", \"-k=\", \"--maxfail=\", "     \
	"\"--color=\", \"--collect-only\", \"--co\", \"-p\"], \"deny\": [\"-p=\", \"--pdb\", "     \
	"\"--pdbcls=\", \"--trace\"]}"

static const char main_policy[] =
	"{\"version\": 1, \"name\": \"gate-test\",\n"
	" \"sandbox\": {\"path\": \"@/bin:@/missing\", \"env\": {\"LANG\": \"C.UTF-8\", \"HOME\": "
	"\"/workspace\"}},\n"
	" \"tools\": {\n"
	"  \"run_tests\": {\"env_allow\": [\"TERM\", \"LC_*\", \"PYTHON*\", \"GIT_*\", "
	"\"PYTHONSAFEPATH\"],\n"
	"   \"env\": {\"TOOL_FIXED\": \"1\", \"LANG\": \"C\"},\n"
	"   \"commands\": [\n"
	"    {\"program\": \"@/bin/python3\", \"prefix\": [\"-m\", \"pytest\"], " PYTEST_FLAGS ",\n"
	"     \"operands\": [\"tests\", \"tests/**\", \"test_*.py\", \"test_*.py::*\"]},\n"
	"    {\"program\": \"@/bin/pytest\", " PYTEST_FLAGS ",\n"
	"     \"operands\": [\"tests\", \"tests/**\", \"test_*.py\", \"test_*.py::*\"]},\n"
	"    {\"program\": \"@/missing/ghost\"}]},\n"
	"  \"flags\": {\"commands\": [\n"
	"    {\"program\": \"@/bin/prog\", \"prefix\": [\"run\"], \"flags\": {\"allow\": [\"-a\", "
	"\"-b\", "
	"\"-n=\", \"--max-alpha\", \"--max-beta\", \"--name=\", \"--both\", \"--quiet\"], "
	"\"deny\": "
	"[\"--both\", \"-z\", \"--zap=\"]}, \"operands\": \"any\"},\n"
	"    {\"program\": \"@/bin/prog\", \"prefix\": [\"exact\"], \"abbrev\": false, \"flags\": "
	"{\"allow\": [\"--max-time=\"], \"deny\": [\"--config=\"]}, \"operands\": \"none\"},\n"
	"    {\"program\": \"@/bin/prog\", \"prefix\": [\"words\"], \"short_bundles\": false, "
	"\"flags\": {\"allow\": [\"-name=\", \"-type=\", \"-print\", \"-a\", \"-b\"], \"deny\": "
	"[\"-p\"]}, \"operands\": \"any\"},\n"
	"    {\"program\": \"@/bin/prog\", \"prefix\": [\"urls\"], \"operands\": [\"https://**\", "
	"\"file-?.txt\", \"src/*.c\"]},\n"
	"    {\"program\": \"@/bin/xz\", \"flags\": {\"allow\": [\"-d\"]}, \"operands\": "
	"\"any\"}]},\n"
	"  \"open\": {\"wrappers\": [\"timeout\", \"ssh\", \"scp\", \"sftp\"], \"unsafe_allow\": "
	"[\"find -exec\"], \"commands\": [\n"
	"    {\"program\": \"@/bin/timeout\", \"operands\": \"any\"},\n"
	"    {\"program\": \"@/bin/find\", \"short_bundles\": false, \"abbrev\": false, \"flags\": "
	"{\"allow\": [\"-exec\", \"-execdir\", \"-name=\"]}, \"operands\": \"any\"},\n"
	"    {\"program\": \"@/bin/python3\", \"flags\": {\"allow\": [\"-c=\", \"-m=\", \"-I\"]}, "
	"\"operands\": \"any\"},\n"
	"    {\"program\": \"@/bin/runner\", \"operands\": \"any\"},\n"
	"    {\"program\": \"@/bin/git\", \"operands\": \"any\"},\n"
	"    {\"program\": \"@/bin/ls\", \"operands\": \"any\"}]}\n"
	" }}";

static struct policy *policy;

static int policy_up(void **state)
{
	if (fixture_up(state) < 0)
		return -1;
	policy = load(main_policy);
	return 0;
}

static int policy_down(void **state)
{
	policy_free(policy);
	return fixture_down(state);
}

static struct gate_decision check_flags(const char *tool, char *const argv[], unsigned flags)
{
	struct gate_decision d;

	memset(&d, 0x5a, sizeof(d));
	assert_int_equal(gate_check(policy, tool, argv, flags, &d), 0);
	assert_string_equal(d.policy_hash, policy_hash(policy));
	/* Every message is one line that starts with its rule. */
	assert_null(strchr(d.message, '\n'));
	assert_int_equal(strncmp(d.message, d.rule, strlen(d.rule)), 0);
	assert_int_equal(d.message[strlen(d.rule)], ':');
	return d;
}

static struct gate_decision check(const char *tool, char *const argv[])
{
	return check_flags(tool, argv, 0);
}

static const char *show(char *const argv[])
{
	static char buf[512];
	size_t n = 0;

	for (size_t i = 0; argv[i] && n < sizeof(buf) - 1; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? " " : "", argv[i]);
	return buf;
}

static void expect_allow(const char *tool, char *const argv[])
{
	struct gate_decision d = check(tool, argv);

	if (!d.allowed)
		fail_msg("%s: refused: %s", show(argv), d.message);
	assert_string_equal(d.rule, GATE_RULE_ALLOW);
	assert_int_equal(d.arg, -1);
	assert_true(d.command >= 0);
	assert_int_equal(d.program[0], '/');
}

/* Expects a refusal under rule, fired on argument arg, whose message quotes that argument. */
static void expect_deny_at(const char *tool, const char *rule, int arg, char *const argv[])
{
	struct gate_decision d = check(tool, argv);

	if (d.allowed || strcmp(d.rule, rule) != 0)
		fail_msg("%s: got %s, want %s", show(argv), d.message, rule);
	if (arg >= 0 && d.arg != arg)
		fail_msg("%s: fired on argument %d, want %d: %s", show(argv), d.arg, arg,
			 d.message);
	if (d.arg >= 0 && strlen(argv[d.arg]) < 60) {
		char quoted[128];

		snprintf(quoted, sizeof(quoted), "\"%s\"", argv[d.arg]);
		if (!strchr(argv[d.arg], '"') && !strstr(d.message, quoted))
			fail_msg("%s: message does not quote the argument: %s", show(argv),
				 d.message);
	}
}

static void expect_deny(const char *tool, const char *rule, char *const argv[])
{
	expect_deny_at(tool, rule, -1, argv);
}

/* The built-in invariants did not fire (the scope's own rules decided, either way). */
static void expect_no_invariant(const char *tool, char *const argv[])
{
	struct gate_decision d = check(tool, argv);

	if (!strcmp(d.rule, GATE_RULE_WRAPPER) || !strcmp(d.rule, GATE_RULE_INLINE_CODE) ||
	    !strcmp(d.rule, GATE_RULE_UNSAFE_OPTION) || !strcmp(d.rule, GATE_RULE_UNSAFE_OPERAND))
		fail_msg("%s: refused by a built-in invariant: %s", show(argv), d.message);
}

/* ---- programs and scopes ---- */

static void test_pinned_program_is_allowed_by_name_and_by_path(void **state)
{
	char pytest[PATH_MAX], python[PATH_MAX];
	struct gate_decision d;

	path_of(pytest, "pytest");
	path_of(python, "python3.11");
	d = check("run_tests", ARGV("pytest", "-q"));
	assert_true(d.allowed);
	assert_string_equal(d.program, pytest);
	assert_int_equal(d.command, 1);
	d = check("run_tests", ARGV(pytest, "-q"));
	assert_true(d.allowed);
	assert_string_equal(d.program, pytest);
	/* The resolved path is the real file, the one to exec. */
	d = check("run_tests", ARGV("python3", "-m", "pytest"));
	assert_true(d.allowed);
	assert_string_equal(d.program, python);
	assert_int_equal(d.command, 0);
}

static void test_symlinked_pin_matches_either_spelling(void **state)
{
	char python3[PATH_MAX], real[PATH_MAX];

	path_of(python3, "python3");
	path_of(real, "python3.11");
	expect_allow("run_tests", ARGV("python3", "-m", "pytest"));
	expect_allow("run_tests", ARGV("python3.11", "-m", "pytest"));
	expect_allow("run_tests", ARGV(python3, "-m", "pytest"));
	expect_allow("run_tests", ARGV(real, "-m", "pytest"));
}

static void test_unpinned_unfound_or_relative_programs_are_not_in_scope(void **state)
{
	char noexec[PATH_MAX];

	path_of(noexec, "noexec");
	expect_deny_at("run_tests", GATE_RULE_NOT_IN_SCOPE, 0, ARGV("git", "status"));
	expect_deny_at("run_tests", GATE_RULE_NOT_IN_SCOPE, 0, ARGV("no-such-program"));
	expect_deny_at("run_tests", GATE_RULE_NOT_IN_SCOPE, 0, ARGV("./pytest", "-q"));
	expect_deny_at("run_tests", GATE_RULE_NOT_IN_SCOPE, 0, ARGV("bin/pytest", "-q"));
	expect_deny_at("run_tests", GATE_RULE_NOT_IN_SCOPE, 0, ARGV(noexec));
	expect_deny_at("run_tests", GATE_RULE_NOT_IN_SCOPE, 0, ARGV("/usr/bin/../bin/pytest"));
	/* The same name in another tool's scope does not count. */
	expect_deny_at("flags", GATE_RULE_NOT_IN_SCOPE, 0, ARGV("pytest"));
}

static void test_multi_call_binary_under_another_name_is_not_in_scope(void **state)
{
	struct gate_decision d;

	expect_allow("flags", ARGV("xz", "-d", "f.xz"));
	/* unxz resolves to the pinned xz, but xz acts on argv[0]: it is not the program pinned. */
	d = check("flags", ARGV("unxz", "f.xz"));
	assert_false(d.allowed);
	assert_string_equal(d.rule, GATE_RULE_NOT_IN_SCOPE);
	assert_non_null(strstr(d.message, "under another name"));
}

static void test_prefix_mismatch_is_the_prefix_rule(void **state)
{
	/* The refusal fires on the argument where the prefix parts ways. */
	expect_deny_at("run_tests", GATE_RULE_PREFIX, 2, ARGV("python3", "-m", "pip", "install"));
	expect_deny_at("run_tests", GATE_RULE_PREFIX, 1, ARGV("python3", "-mpytest"));
	expect_deny_at("run_tests", GATE_RULE_PREFIX, -1, ARGV("python3", "-m"));
	expect_deny_at("run_tests", GATE_RULE_PREFIX, -1, ARGV("python3"));
	expect_deny_at("flags", GATE_RULE_PREFIX, 1, ARGV("prog", "walk"));
}

static void test_program_missing_on_this_host_resolves_by_name_only_when_asked(void **state)
{
	char ghost[PATH_MAX];
	struct gate_decision d;

	snprintf(ghost, sizeof(ghost), "%s/missing/ghost", root);
	d = check("run_tests", ARGV("ghost"));
	assert_false(d.allowed);
	assert_string_equal(d.rule, GATE_RULE_NOT_IN_SCOPE);
	d = check_flags("run_tests", ARGV("ghost"), GATE_RESOLVE_BY_NAME);
	assert_true(d.allowed);
	assert_string_equal(d.program, ghost);
	d = check_flags("run_tests", ARGV(ghost), GATE_RESOLVE_BY_NAME);
	assert_true(d.allowed);
	/* By name still means pinned by this tool: another missing name is not. */
	d = check_flags("run_tests", ARGV("phantom"), GATE_RESOLVE_BY_NAME);
	assert_string_equal(d.rule, GATE_RULE_NOT_IN_SCOPE);
}

static void test_unknown_tool_and_bad_argv_are_refused(void **state)
{
	char **many = calloc(GATE_ARGC_MAX + 2, sizeof(*many));
	char *huge = malloc(GATE_ARG_MAX + 2);

	assert_non_null(many);
	assert_non_null(huge);
	expect_deny("deploy", GATE_RULE_UNKNOWN_TOOL, ARGV("pytest"));
	expect_deny("", GATE_RULE_UNKNOWN_TOOL, ARGV("pytest"));
	expect_deny("run_tests", GATE_RULE_ARGV, (char *const[]){ NULL });
	expect_deny("run_tests", GATE_RULE_ARGV, ARGV(""));
	for (size_t i = 0; i < GATE_ARGC_MAX + 1; i++)
		many[i] = "-q";
	many[0] = "pytest";
	expect_deny("run_tests", GATE_RULE_ARGV, many);
	many[GATE_ARGC_MAX] = NULL;
	expect_allow("run_tests", many);
	memset(huge, 'a', GATE_ARG_MAX + 1);
	huge[GATE_ARG_MAX + 1] = '\0';
	expect_deny_at("run_tests", GATE_RULE_ARGV, 1, ARGV("pytest", huge));
	free(many);
	free(huge);
}

/* ---- flags ---- */

static void test_every_legitimate_flag_form_is_allowed(void **state)
{
	expect_allow("run_tests", ARGV("pytest", "-q"));
	expect_allow("run_tests", ARGV("pytest", "-qxv"));
	expect_allow("run_tests", ARGV("pytest", "--tb=short"));
	expect_allow("run_tests", ARGV("pytest", "--tb", "short"));
	expect_allow("run_tests", ARGV("pytest", "-k", "a and not b"));
	expect_allow("run_tests", ARGV("pytest", "-kslow"));
	expect_allow("run_tests", ARGV("pytest", "-qk", "slow"));
	expect_allow("run_tests", ARGV("pytest", "-qkslow"));
	expect_allow("run_tests", ARGV("pytest", "--maxf=3"));
	expect_allow("run_tests", ARGV("pytest", "--maxf", "3"));
	expect_allow("run_tests", ARGV("pytest", "--colo=yes"));
	expect_allow("run_tests", ARGV("pytest", "--co"));
	expect_allow("run_tests", ARGV("pytest", "--collect-only"));
	expect_allow("run_tests", ARGV("pytest", "-q", "--", "tests/test_a.py"));
	expect_allow("run_tests", ARGV("pytest", "tests/unit/test_a.py::TestX::test_y"));
	expect_allow("flags", ARGV("prog", "run", "-ab", "-n", "5", "-bn5", "--name", "x", "op"));
	/* A value-taking letter takes the rest of its bundle: "z" here is -n's value. */
	expect_allow("flags", ARGV("prog", "run", "-nz"));
	/* A flag's separate value is never judged as a flag. */
	expect_allow("flags", ARGV("prog", "run", "--name", "--zap"));
	expect_allow("flags", ARGV("prog", "run", "-n", "-z"));
}

static void test_every_denied_flag_form_is_denied(void **state)
{
	expect_deny_at("run_tests", GATE_RULE_FLAG_DENIED, 1, ARGV("pytest", "-p", "evil"));
	expect_deny_at("run_tests", GATE_RULE_FLAG_DENIED, 1, ARGV("pytest", "-pevil"));
	expect_deny_at("run_tests", GATE_RULE_FLAG_DENIED, 1, ARGV("pytest", "-qp", "evil"));
	expect_deny_at("run_tests", GATE_RULE_FLAG_DENIED, 1, ARGV("pytest", "-qpevil"));
	expect_deny_at("run_tests", GATE_RULE_FLAG_DENIED, 1, ARGV("pytest", "--pdb"));
	expect_deny_at("run_tests", GATE_RULE_FLAG_DENIED, 1, ARGV("pytest", "--pd"));
	expect_deny_at("run_tests", GATE_RULE_FLAG_DENIED, 1, ARGV("pytest", "--p"));
	expect_deny_at("run_tests", GATE_RULE_FLAG_DENIED, 1, ARGV("pytest", "--pdbcls=x:Y"));
	expect_deny_at("run_tests", GATE_RULE_FLAG_DENIED, 1, ARGV("pytest", "--pdbcls", "x:Y"));
	expect_deny_at("run_tests", GATE_RULE_FLAG_DENIED, 1, ARGV("pytest", "--pdbc=x:Y"));
	expect_deny_at("run_tests", GATE_RULE_FLAG_DENIED, 1, ARGV("pytest", "--tr"));
	expect_deny_at("flags", GATE_RULE_FLAG_DENIED, 2, ARGV("prog", "run", "-az"));
	expect_deny_at("flags", GATE_RULE_FLAG_DENIED, 2, ARGV("prog", "run", "--zap", "x"));
	expect_deny_at("flags", GATE_RULE_FLAG_DENIED, 2, ARGV("prog", "run", "--za=x"));
}

static void test_flag_both_allowed_and_denied_is_denied(void **state)
{
	/* "-p" is in run_tests' allow list and "-p=" in its deny list; "--both" in both of flags'.
	 */
	expect_deny_at("run_tests", GATE_RULE_FLAG_DENIED, 1, ARGV("pytest", "-p", "x"));
	expect_deny_at("flags", GATE_RULE_FLAG_DENIED, 2, ARGV("prog", "run", "--both"));
	expect_deny_at("flags", GATE_RULE_FLAG_DENIED, 2, ARGV("prog", "run", "--bo"));
}

static void test_a_denied_flag_outranks_an_earlier_unlisted_one(void **state)
{
	expect_deny_at("run_tests", GATE_RULE_FLAG_DENIED, 2,
		       ARGV("pytest", "--junitxml=x", "--pdb"));
	expect_deny_at("run_tests", GATE_RULE_FLAG_NOT_ALLOWED, 1,
		       ARGV("pytest", "--junitxml=x", "-q", "--lf"));
}

static void test_unlisted_flags_are_not_allowed(void **state)
{
	expect_deny_at("run_tests", GATE_RULE_FLAG_NOT_ALLOWED, 1, ARGV("pytest", "--lf"));
	expect_deny_at("run_tests", GATE_RULE_FLAG_NOT_ALLOWED, 1, ARGV("pytest", "-qr"));
	expect_deny_at("run_tests", GATE_RULE_FLAG_NOT_ALLOWED, 1, ARGV("pytest", "--junitxml=x"));
	expect_deny_at("flags", GATE_RULE_FLAG_NOT_ALLOWED, 2, ARGV("prog", "run", "-c"));
	expect_deny_at("flags", GATE_RULE_FLAG_NOT_ALLOWED, 2, ARGV("prog", "run", "--names=x"));
	/* An empty long name, which getopt_long would take as a prefix of every option. */
	expect_deny_at("flags", GATE_RULE_FLAG_NOT_ALLOWED, 2, ARGV("prog", "exact", "--=5"));
	expect_deny_at("run_tests", GATE_RULE_FLAG_NOT_ALLOWED, 1, ARGV("pytest", "--=short"));
}

static void test_ambiguous_abbreviation_is_refused(void **state)
{
	/* "--col" abbreviates both --color and --collect-only; "--co" is itself allowed. */
	expect_deny_at("run_tests", GATE_RULE_FLAG_AMBIGUOUS, 1, ARGV("pytest", "--col=yes"));
	expect_allow("run_tests", ARGV("pytest", "--co"));
	expect_deny_at("flags", GATE_RULE_FLAG_AMBIGUOUS, 2, ARGV("prog", "run", "--max"));
	expect_allow("flags", ARGV("prog", "run", "--max-a"));
	expect_allow("flags", ARGV("prog", "run", "--max-b"));
}

static void test_without_abbrev_only_exact_long_flags_count(void **state)
{
	expect_allow("flags", ARGV("prog", "exact", "--max-time", "5"));
	expect_allow("flags", ARGV("prog", "exact", "--max-time=5"));
	expect_deny_at("flags", GATE_RULE_FLAG_NOT_ALLOWED, 2, ARGV("prog", "exact", "--max-t=5"));
	expect_deny_at("flags", GATE_RULE_FLAG_DENIED, 2, ARGV("prog", "exact", "--config=x"));
	expect_deny_at("flags", GATE_RULE_OPERAND, 2, ARGV("prog", "exact", "file"));
}

static void test_flag_values_must_be_present_or_absent_as_declared(void **state)
{
	expect_deny_at("run_tests", GATE_RULE_FLAG_VALUE, 1, ARGV("pytest", "--tb"));
	expect_deny_at("run_tests", GATE_RULE_FLAG_VALUE, 1, ARGV("pytest", "-qk"));
	expect_deny_at("run_tests", GATE_RULE_FLAG_VALUE, 1, ARGV("pytest", "-k"));
	expect_deny_at("run_tests", GATE_RULE_FLAG_VALUE, 1, ARGV("pytest", "--co=1"));
}

static void test_after_double_dash_everything_is_an_operand(void **state)
{
	expect_allow("flags", ARGV("prog", "run", "--", "--zap", "-z"));
	expect_deny_at("run_tests", GATE_RULE_OPERAND, 2, ARGV("pytest", "--", "-p"));
	expect_deny_at("flags", GATE_RULE_OPERAND, 3, ARGV("prog", "exact", "--", "--max-time=1"));
}

static void test_without_bundles_a_word_must_be_declared(void **state)
{
	expect_allow("flags", ARGV("prog", "words", ".", "-name", "*.c", "-type", "f", "-print"));
	expect_allow("flags", ARGV("prog", "words", "-a", "-b"));
	expect_deny_at("flags", GATE_RULE_FLAG_NOT_ALLOWED, 2, ARGV("prog", "words", "-ab"));
	expect_deny_at("flags", GATE_RULE_FLAG_NOT_ALLOWED, 2, ARGV("prog", "words", "-names"));
	/* A word that a getopt program would read as -p with a joined value. */
	expect_deny_at("flags", GATE_RULE_FLAG_DENIED, 2, ARGV("prog", "words", "-pfoo"));
}

static void test_operand_patterns(void **state)
{
	expect_allow("run_tests", ARGV("pytest", "tests"));
	expect_allow("run_tests", ARGV("pytest", "tests/a/b/test_c.py"));
	expect_allow("run_tests", ARGV("pytest", "test_a.py::test_b"));
	expect_allow("flags", ARGV("prog", "urls", "https://docs.python.org/3/library/json.html"));
	expect_allow("flags", ARGV("prog", "urls", "file-1.txt", "src/main.c"));
	expect_deny_at("run_tests", GATE_RULE_OPERAND, 1, ARGV("pytest", "../../etc/passwd"));
	expect_deny_at("run_tests", GATE_RULE_OPERAND, 1, ARGV("pytest", "tests/../../etc"));
	expect_deny_at("run_tests", GATE_RULE_OPERAND, 1,
		       ARGV("pytest", "tests/.hidden/test_x.py"));
	expect_deny_at("run_tests", GATE_RULE_OPERAND, 1, ARGV("pytest", "/etc/passwd"));
	expect_deny_at("run_tests", GATE_RULE_OPERAND, 1, ARGV("pytest", "testsuite"));
	expect_deny_at("run_tests", GATE_RULE_OPERAND, 1, ARGV("pytest", "sub/test_a.py"));
	expect_deny_at("flags", GATE_RULE_OPERAND, 2, ARGV("prog", "urls", "http://x"));
	expect_deny_at("flags", GATE_RULE_OPERAND, 2, ARGV("prog", "urls", "file-10.txt"));
	expect_deny_at("flags", GATE_RULE_OPERAND, 2, ARGV("prog", "urls", "file-/.txt"));
	expect_deny_at("flags", GATE_RULE_OPERAND, 2, ARGV("prog", "urls", "src/lib/x.c"));
	expect_deny_at("flags", GATE_RULE_OPERAND, 2, ARGV("prog", "urls", "src/.x.c"));
	expect_deny_at("flags", GATE_RULE_OPERAND, 2, ARGV("prog", "urls", "-"));
}

static void test_operand_matching_is_capped(void **state)
{
	char *longer = malloc(GATE_OPERAND_MATCH_MAX + 16);
	char *many[600];
	struct gate_decision d;

	assert_non_null(longer);
	strcpy(longer, "https://");
	memset(longer + 8, 'a', GATE_OPERAND_MATCH_MAX);
	longer[GATE_OPERAND_MATCH_MAX + 8] = '\0';
	d = check("flags", ARGV("prog", "urls", longer));
	assert_string_equal(d.rule, GATE_RULE_OPERAND);
	assert_non_null(strstr(d.message, "longer than an operand pattern can match"));

	/* Many long operands that each match (the last pattern) exhaust the budget. */
	memcpy(longer, "src/", 4);
	memset(longer + 4, 'a', GATE_OPERAND_MATCH_MAX - 100);
	strcpy(longer + 4 + GATE_OPERAND_MATCH_MAX - 100, ".c");
	many[0] = "prog";
	many[1] = "urls";
	for (size_t i = 2; i < ARRAY_SIZE(many) - 1; i++)
		many[i] = longer;
	many[ARRAY_SIZE(many) - 1] = NULL;
	d = check("flags", ARGV("prog", "urls", longer, longer));
	assert_true(d.allowed);
	d = check("flags", many);
	assert_string_equal(d.rule, GATE_RULE_OPERAND);
	assert_non_null(strstr(d.message, "exceeds the work"));
	assert_true(d.arg > 2);
	free(longer);
}

/* ---- built-in invariants ---- */

static void test_every_wrapper_is_refused_by_its_argv0_name(void **state)
{
	static const char *const names[] = {
		"env",	  "xargs",  "timeout", "nice",	  "nohup",   "stdbuf",
		"setsid", "sudo",   "su",      "doas",	  "runuser", "setpriv",
		"capsh",  "chroot", "unshare", "nsenter", "ionice",  "taskset",
		"chrt",	  "strace", "ltrace",  "gdb",	  "script",  "watch",
		"flock",  "time",   "busybox", "sh",	  "bash",    "dash",
		"zsh",	  "ksh",    "fish",    "csh",	  "tcsh",    "awk",
		"gawk",	  "mawk",   "sed",     "ssh",	  "make",    "ld-linux-x86-64.so.2",
	};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		char path[64];

		expect_deny_at("run_tests", GATE_RULE_WRAPPER, 0, ARGV((char *)names[i], "pytest"));
		snprintf(path, sizeof(path), "/usr/bin/%s", names[i]);
		expect_deny_at("run_tests", GATE_RULE_WRAPPER, 0, ARGV(path, "-q"));
	}
}

static void test_wrapper_is_refused_by_its_resolved_name(void **state)
{
	struct gate_decision d;

	/* "runner" is pinned, but it is a symlink to a shell. */
	d = check("open", ARGV("runner", "-c", "id"));
	assert_string_equal(d.rule, GATE_RULE_WRAPPER);
	assert_non_null(strstr(d.message, "resolves to"));
	assert_non_null(strstr(d.message, "dash"));
	/* A busybox applet under an innocent name. */
	expect_deny_at("open", GATE_RULE_WRAPPER, 0, ARGV("cat", "/etc/passwd"));
}

static void test_wrapper_named_in_the_scope_is_allowed_and_only_that_one(void **state)
{
	expect_allow("open", ARGV("timeout", "5", "anything"));
	expect_deny("open", GATE_RULE_WRAPPER, ARGV("nice", "ls"));
	/* Named in "open", not in "run_tests". */
	expect_deny("run_tests", GATE_RULE_WRAPPER, ARGV("timeout", "5", "pytest"));
}

static void test_python_inline_code_in_every_form_is_refused(void **state)
{
	expect_deny_at("run_tests", GATE_RULE_INLINE_CODE, 1, ARGV("python3", "-c", "print(1)"));
	expect_deny_at("run_tests", GATE_RULE_INLINE_CODE, 1, ARGV("python3", "-cprint(1)"));
	expect_deny_at("run_tests", GATE_RULE_INLINE_CODE, 1, ARGV("python3", "-Ic", "print(1)"));
	expect_deny_at("run_tests", GATE_RULE_INLINE_CODE, 1, ARGV("python3", "-IBsc", "x"));
	expect_deny_at("run_tests", GATE_RULE_INLINE_CODE, 3,
		       ARGV("python3", "-W", "ignore", "-c", "x"));
	expect_deny_at("run_tests", GATE_RULE_INLINE_CODE, 2,
		       ARGV("python3", "-Wignore", "-c", "x"));
	expect_deny_at("run_tests", GATE_RULE_INLINE_CODE, 3,
		       ARGV("python3", "-X", "dev", "-c", "x"));
	expect_deny_at("run_tests", GATE_RULE_INLINE_CODE, 3,
		       ARGV("python3", "--check-hash-based-pycs", "never", "-c", "x"));
	expect_deny_at("run_tests", GATE_RULE_INLINE_CODE, 1, ARGV("python3", "-"));
	expect_deny_at("run_tests", GATE_RULE_INLINE_CODE, 1,
		       ARGV("python3", "-i", "-m", "pytest"));
	expect_deny_at("run_tests", GATE_RULE_INLINE_CODE, 1, ARGV("python3.11", "-c", "x"));
	expect_deny_at("run_tests", GATE_RULE_INLINE_CODE, 1, ARGV("/usr/bin/python2", "-c", "x"));
	expect_deny_at("run_tests", GATE_RULE_INLINE_CODE, 1, ARGV("pypy3", "-c", "x"));
	/* Even where the scope allows "-c": the invariant comes first. */
	expect_deny_at("open", GATE_RULE_INLINE_CODE, 1, ARGV("python3", "-c", "x"));
	expect_deny_at("open", GATE_RULE_INLINE_CODE, 2, ARGV("python3", "-I", "-c", "x"));
}

static void test_python_arguments_of_the_module_or_script_are_not_python_options(void **state)
{
	/* pytest's -c (a config file) and pip's -c (constraints) come after -m MODULE. */
	expect_no_invariant("open", ARGV("python3", "-m", "pytest", "-c", "pytest.ini"));
	expect_no_invariant("open", ARGV("python3", "-mpip", "install", "-c", "constraints.txt"));
	expect_no_invariant("open", ARGV("python3", "-I", "-m", "pytest", "-i"));
	expect_no_invariant("open", ARGV("python3", "script.py", "-c", "x"));
	expect_no_invariant("open", ARGV("python3", "--", "-c"));
	expect_no_invariant("open", ARGV("python3", "-W", "-c", "script.py"));
}

static void test_other_interpreters_inline_code_is_refused(void **state)
{
	static const char *const cases[][4] = {
		{ "perl", "-e", "system(1)", "" },
		{ "perl", "-lne", "print", "" },
		{ "perl", "-E", "say 1", "" },
		{ "perl", "-Mstrict;system(1)", "", "" },
		{ "perl", "-", "", "" },
		{ "perl5.36.0", "-e", "1", "" },
		{ "ruby", "-e", "exit", "" },
		{ "ruby", "-ne", "p", "" },
		{ "node", "-e", "1", "" },
		{ "node", "--eval=1", "", "" },
		{ "node", "--ev", "1", "" },
		{ "node", "-pe", "1", "" },
		{ "node", "--print", "1", "" },
		{ "nodejs", "-i", "", "" },
		{ "php", "-r", "system('id');", "" },
		{ "php", "-d", "auto_prepend_file=x", "" },
		{ "php8.2", "-B", "x", "" },
		{ "lua5.4", "-e", "os.execute()", "" },
		{ "luajit", "-", "", "" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *argv[4] = { (char *)cases[i][0], (char *)cases[i][1], NULL, NULL };

		if (cases[i][2][0])
			argv[2] = (char *)cases[i][2];
		expect_deny_at("run_tests", GATE_RULE_INLINE_CODE, 1, argv);
	}
	/* A joined path that happens to hold an 'e' is -I's value, not -e. */
	expect_no_invariant("open", ARGV("perl", "-I/usr/share/perl5", "script.pl"));
	expect_no_invariant("open", ARGV("ruby", "-rset", "script.rb"));
	expect_no_invariant("open", ARGV("lua5.4", "-lsocket", "script.lua"));
	expect_no_invariant("open", ARGV("node", "-r", "./setup.js", "app.js"));
}

static void test_find_actions_that_run_delete_or_write_are_refused(void **state)
{
	static const char *const actions[] = { "-exec",	   "-execdir", "-ok",
					       "-okdir",   "-delete",  "-fprint",
					       "-fprint0", "-fprintf", "-fls" };

	for (size_t i = 0; i < ARRAY_SIZE(actions); i++)
		expect_deny_at("run_tests", GATE_RULE_UNSAFE_OPTION, 4,
			       ARGV("find", ".", "-name", "x", (char *)actions[i], "y", ";"));
	expect_no_invariant("open", ARGV("find", ".", "-name", "-exec-notes.txt"));
}

static void test_unsafe_allow_turns_off_exactly_the_named_entry(void **state)
{
	expect_allow("open", ARGV("find", ".", "-exec", "ls", ";"));
	expect_deny_at("open", GATE_RULE_UNSAFE_OPTION, 2,
		       ARGV("find", ".", "-execdir", "ls", ";"));
	expect_deny_at("open", GATE_RULE_UNSAFE_OPTION, 2, ARGV("find", ".", "-delete"));
}

static void test_git_injection_forms_are_refused(void **state)
{
	static const struct {
		const char *rule;
		int arg;
		const char *argv[7];
	} cases[] = {
		{ GATE_RULE_UNSAFE_OPTION, 1, { "git", "-c", "core.pager=sh -c id", "log" } },
		{ GATE_RULE_UNSAFE_OPTION, 1, { "git", "-ccore.fsmonitor=x", "status" } },
		{ GATE_RULE_UNSAFE_OPTION, 3, { "git", "-C", "repo", "-c", "a=b", "log" } },
		{ GATE_RULE_UNSAFE_OPTION, 1, { "git", "--config-env=core.pager=X", "log" } },
		{ GATE_RULE_UNSAFE_OPTION, 1, { "git", "--exec-path=/workspace", "status" } },
		{ GATE_RULE_UNSAFE_OPTION, 1, { "git", "--exec-path" } },
		{ GATE_RULE_UNSAFE_OPTION, 2, { "git", "clone", "-c", "core.sshCommand=x", "u" } },
		{ GATE_RULE_UNSAFE_OPTION,
		  2,
		  { "git", "clone", "--config=core.sshCommand=x", "u" } },
		{ GATE_RULE_UNSAFE_OPTION,
		  2,
		  { "git", "fetch", "--upload-pack=touch x", "origin" } },
		{ GATE_RULE_UNSAFE_OPTION, 2, { "git", "fetch", "--upload-pa", "sh", "origin" } },
		{ GATE_RULE_UNSAFE_OPTION, 2, { "git", "ls-remote", "--upl=x", "origin" } },
		{ GATE_RULE_UNSAFE_OPTION, 2, { "git", "pull", "--upload-pack", "x" } },
		{ GATE_RULE_UNSAFE_OPTION, 2, { "git", "fetch", "-u", "x", "origin" } },
		{ GATE_RULE_UNSAFE_OPTION, 2, { "git", "clone", "-qu", "x", "origin" } },
		{ GATE_RULE_UNSAFE_OPTION, 2, { "git", "push", "--receive-pack=x", "origin" } },
		{ GATE_RULE_UNSAFE_OPTION, 2, { "git", "push", "--exec=x", "origin" } },
		{ GATE_RULE_UNSAFE_OPTION, 2, { "git", "rebase", "-x", "make", "main" } },
		{ GATE_RULE_UNSAFE_OPTION, 2, { "git", "rebase", "--exec=make", "main" } },
		{ GATE_RULE_UNSAFE_OPTION, 2, { "git", "grep", "-O", "x" } },
		{ GATE_RULE_UNSAFE_OPTION, 2, { "git", "difftool", "--extcmd=x" } },
		{ GATE_RULE_UNSAFE_OPERAND, 2, { "git", "clone", "ext::sh -c id", "x" } },
		{ GATE_RULE_UNSAFE_OPERAND, 2, { "git", "clone", "EXT::sh -c id", "x" } },
		{ GATE_RULE_UNSAFE_OPERAND, 3, { "git", "fetch", "--", "fd::3" } },
		{ GATE_RULE_UNSAFE_OPERAND, 2, { "git", "remote", "add", "o", "ext::sh" } },
		{ GATE_RULE_UNSAFE_OPERAND, 2, { "git", "clone", "--template=ext::x" } },
		{ GATE_RULE_WRAPPER, 2, { "git", "bisect", "run", "sh" } },
		{ GATE_RULE_WRAPPER, 2, { "git", "submodule", "foreach", "id" } },
		{ GATE_RULE_WRAPPER, 1, { "git", "filter-branch", "--tree-filter", "id" } },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct gate_decision d = check("open", (char *const *)cases[i].argv);
		int want_arg = cases[i].arg;

		/* "git remote add o ext::sh": the operand is argument 4. */
		if (!strcmp(cases[i].argv[1], "remote"))
			want_arg = 4;
		if (d.allowed || strcmp(d.rule, cases[i].rule) != 0 || d.arg != want_arg)
			fail_msg("%s: got %s (argument %d), want %s at %d",
				 show((char *const *)cases[i].argv), d.message, d.arg,
				 cases[i].rule, want_arg);
	}
}

static void test_git_legitimate_forms_pass_the_invariants(void **state)
{
	expect_allow("open", ARGV("git", "status"));
	expect_allow("open", ARGV("git", "bisect", "start"));
	expect_allow("open", ARGV("git", "log", "HEAD~3.."));
	expect_no_invariant("open", ARGV("git", "status", "--short"));
	expect_no_invariant("open", ARGV("git", "commit", "-c", "HEAD"));
	expect_no_invariant("open",
			    ARGV("git", "commit", "-m", "fix -c and --upload-pack handling"));
	expect_no_invariant("open", ARGV("git", "-C", "sub", "status"));
	expect_no_invariant("open", ARGV("git", "--git-dir", "x/.git", "log", "-u"));
	expect_no_invariant("open", ARGV("git", "status", "-uno"));
	expect_no_invariant("open", ARGV("git", "fetch", "--update-head-ok", "origin"));
	/* The value of -C is a directory, not the subcommand: "clone" here does not make -u
	 * --upload-pack. */
	expect_no_invariant("open", ARGV("git", "-C", "clone", "status", "-u"));
}

static void test_tar_rsync_ssh_and_curl_unsafe_options_are_refused(void **state)
{
	static const char *const cases[][4] = {
		{ "tar", "-I", "sh", "" },
		{ "tar", "-xIsh", "", "" },
		{ "tar", "xIf", "sh", "a.tar" },
		{ "tar", "--use-compress-program=sh", "", "" },
		{ "tar", "--use-compress=sh", "", "" },
		{ "tar", "--to-command=sh", "", "" },
		{ "tar", "--checkpoint-action=exec=sh", "", "" },
		{ "tar", "-F", "x.sh", "" },
		{ "tar", "--info-script=x", "", "" },
		{ "tar", "--new-volume-script=x", "", "" },
		{ "tar", "--rsh-command=x", "", "" },
		{ "rsync", "-e", "sh", "" },
		{ "rsync", "-avze", "sh", "" },
		{ "rsync", "--rsh=sh", "", "" },
		{ "rsync", "--rsync-path=x", "", "" },
		{ "curl", "-K", "cfg", "" },
		{ "curl", "-sSK", "cfg", "" },
		{ "curl", "--config", "cfg", "" },
		{ "curl", "--conf=cfg", "", "" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		char *argv[5] = { 0 };

		for (size_t k = 0; k < 4 && cases[i][k][0]; k++)
			argv[k] = (char *)cases[i][k];
		expect_deny_at("run_tests", GATE_RULE_UNSAFE_OPTION, 1, argv);
	}
	/* ssh, scp and sftp are wrappers; named, their command-running options still are not. */
	expect_deny_at("open", GATE_RULE_UNSAFE_OPTION, 1, ARGV("ssh", "-oProxyCommand=sh", "h"));
	expect_deny_at("open", GATE_RULE_UNSAFE_OPTION, 1, ARGV("ssh", "-F", "cfg", "h"));
	expect_deny_at("open", GATE_RULE_UNSAFE_OPTION, 1, ARGV("scp", "-S", "sh", "a", "h:b"));
	expect_deny_at("open", GATE_RULE_UNSAFE_OPTION, 1, ARGV("sftp", "-D", "sh", "h"));
	/* The legitimate forms: joined values that hold those letters are values. */
	expect_no_invariant("open", ARGV("tar", "-cfInbox.tar", "x"));
	expect_no_invariant("open", ARGV("tar", "-xf", "a.tar", "-C", "out"));
	expect_no_invariant("open", ARGV("curl", "-sSfL", "-o", "K", "https://x/"));
	expect_no_invariant("open", ARGV("curl", "-oK", "https://x/"));
	expect_no_invariant("open", ARGV("rsync", "-avz", "a", "b"));
}

static void test_invariants_come_before_scope_rules(void **state)
{
	/* find is not pinned in run_tests: the invariant still names what was tried. */
	expect_deny("run_tests", GATE_RULE_UNSAFE_OPTION, ARGV("find", ".", "-exec", "id", ";"));
	/* env is not pinned anywhere and does not resolve: refused as a wrapper all the same. */
	expect_deny("flags", GATE_RULE_WRAPPER, ARGV("env"));
}

/* ---- environment ---- */

static int has(char *const *v, const char *s)
{
	for (; *v; v++)
		if (strcmp(*v, s) == 0)
			return 1;
	return 0;
}

static size_t count(char *const *v)
{
	size_t n = 0;

	while (v[n])
		n++;
	return n;
}

/* What a caller (an agent's harness) might hand a tool call: the attacks and the honest. */
static char *const env_caller[] = {
	"LD_PRELOAD=/workspace/evil.so",
	"LD_LIBRARY_PATH=/workspace",
	"PYTHONPATH=/workspace/evil",
	"PYTHONSTARTUP=/workspace/x.py",
	"PYTHONHOME=/workspace",
	"GIT_SSH_COMMAND=sh -c id",
	"GIT_CONFIG_COUNT=1",
	"GIT_CONFIG_KEY_0=core.pager",
	"NODE_OPTIONS=--require /workspace/x.js",
	"JAVA_TOOL_OPTIONS=-javaagent:x",
	"_JAVA_OPTIONS=-Dx",
	"PYTEST_ADDOPTS=-p evil",
	"PYTEST_PLUGINS=evil",
	"BASH_ENV=/workspace/x",
	"BASH_FUNC_ls%%=() { id; }",
	"PERL5OPT=-Mx",
	"GLIBC_TUNABLES=x",
	"PATH=/workspace/bin",
	"HOME=/root",
	"LANG=evil",
	"TOOL_FIXED=0",
	"SECRET_TOKEN=hunter2",
	"TERM=xterm",
	"LC_ALL=C.UTF-8",
	"TERM=second",
	"noequals",
	"BAD-NAME=1",
	"=x",
	NULL,
};

static void test_build_env_passes_only_the_allowlist(void **state)
{
	static const char *const gone[] = { "LD_PRELOAD",	"PYTHONPATH",	"GIT_SSH_COMMAND",
					    "GIT_CONFIG_COUNT", "NODE_OPTIONS", "PYTEST_ADDOPTS",
					    "BASH_FUNC_ls%%",	"SECRET_TOKEN", "TERM",
					    "noequals" };
	struct gate_env *e = NULL;
	char *const *v, *const *dropped;

	assert_int_equal(gate_build_env(policy, "run_tests", env_caller, &e), 0);
	v = gate_env_vector(e);
	dropped = gate_env_dropped(e);
	/* Order: sandbox PATH, HOME, TMPDIR, sandbox.env; the tool's env (LANG replaced in place);
	 * then the caller's allowed ones in the caller's order. */
	{
		char path[2 * PATH_MAX];

		snprintf(path, sizeof(path), "PATH=%s/bin:%s/missing", root, root);
		assert_string_equal(v[0], path);
	}
	assert_string_equal(v[1], "HOME=/workspace");
	assert_string_equal(v[2], "TMPDIR=/tmp");
	assert_string_equal(v[3], "LANG=C");
	assert_string_equal(v[4], "TOOL_FIXED=1");
	assert_string_equal(v[5], "TERM=xterm");
	assert_string_equal(v[6], "LC_ALL=C.UTF-8");
	assert_null(v[7]);
	/* Everything else is dropped, and named. */
	assert_int_equal(count(dropped), ARRAY_SIZE(env_caller) - 1 - 2);
	for (size_t i = 0; i < ARRAY_SIZE(gone); i++)
		if (!has(dropped, gone[i]))
			fail_msg("%s was not dropped", gone[i]);
	gate_env_free(e);
}

static void test_env_allow_patterns_never_pass_a_never_pass_name(void **state)
{
	char why[256];

	/* "PYTHON*" and "GIT_*" are in env_allow: neither lets a never-pass name through ... */
	assert_int_equal(gate_env_allowed(policy, "run_tests", "PYTHONPATH", why, sizeof(why)), 0);
	assert_non_null(strstr(why, "env: PYTHONPATH is on the never-pass list"));
	assert_int_equal(gate_env_allowed(policy, "run_tests", "GIT_DIR", why, sizeof(why)), 0);
	/* ... but the exact name does. */
	assert_int_equal(gate_env_allowed(policy, "run_tests", "PYTHONSAFEPATH", why, sizeof(why)),
			 1);
	assert_int_equal(gate_env_allowed(policy, "run_tests", "LC_CTYPE", why, sizeof(why)), 1);
	assert_int_equal(gate_env_allowed(policy, "run_tests", "COLUMNS", why, sizeof(why)), 0);
	assert_non_null(strstr(why, "env: COLUMNS is not in tool run_tests's env_allow"));
	/* Names that make programs run commands or trust another CA are never-pass too. */
	assert_int_equal(gate_env_allowed(policy, "run_tests", "TERMINFO", why, sizeof(why)), 0);
	assert_non_null(strstr(why, "env: TERMINFO is on the never-pass list"));
	assert_int_equal(gate_env_allowed(policy, "run_tests", "TOOL_FIXED", why, sizeof(why)), 0);
	assert_non_null(strstr(why, "is fixed by the policy"));
	assert_int_equal(gate_env_allowed(policy, "nope", "TERM", why, sizeof(why)), -ENOENT);
}

static void test_never_pass_list_covers_the_documented_names(void **state)
{
	static const char *const names[] = {
		"LD_PRELOAD",
		"LD_LIBRARY_PATH",
		"LD_AUDIT",
		"PYTHONSTARTUP",
		"PYTHONPATH",
		"PYTHONHOME",
		"GIT_SSH_COMMAND",
		"GIT_CONFIG_COUNT",
		"GIT_EXEC_PATH",
		"NODE_OPTIONS",
		"JAVA_TOOL_OPTIONS",
		"_JAVA_OPTIONS",
		"PYTEST_ADDOPTS",
		"PYTEST_PLUGINS",
		"BASH_ENV",
		"ENV",
		"PERL5OPT",
		"PERL5LIB",
		"RUBYOPT",
		"RUBYLIB",
		"NODE_PATH",
		"PROMPT_COMMAND",
		"IFS",
		"SHELLOPTS",
		"BASHOPTS",
		"PS4",
		"GCONV_PATH",
		"LOCPATH",
		"MALLOC_CHECK_",
		"GLIBC_TUNABLES",
		"HOSTALIASES",
		"RES_OPTIONS",
		"LOCALDOMAIN",
		"NLSPATH",
		"EDITOR",
		"VISUAL",
		"PAGER",
		"GIT_PAGER",
		"MANPAGER",
		"SYSTEMD_PAGER",
		"LESS",
		"OPENSSL_CONF",
		"OPENSSL_MODULES",
		"SSL_CERT_FILE",
		"SSL_CERT_DIR",
		"GEM_PATH",
		"TERMINFO",
		"PERL_MB_OPT",
		"BROWSER",
	};

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!gate_env_never_pass(names[i]))
			fail_msg("%s is not on the never-pass list", names[i]);
	assert_false(gate_env_never_pass("TERM"));
	assert_false(gate_env_never_pass("LANG"));
	assert_false(gate_env_never_pass("OPTIONS_FILE"));
}

static void test_build_env_drops_long_values_and_refuses_too_many(void **state)
{
	char *big = malloc(GATE_ENV_VALUE_MAX + 16), **many;
	struct gate_env *e = NULL;

	assert_non_null(big);
	strcpy(big, "TERM=");
	memset(big + 5, 'x', GATE_ENV_VALUE_MAX + 1);
	big[GATE_ENV_VALUE_MAX + 6] = '\0';
	assert_int_equal(gate_build_env(policy, "run_tests", ARGV(big), &e), 0);
	assert_true(has(gate_env_dropped(e), "TERM"));
	assert_int_equal(count(gate_env_vector(e)), 5);
	gate_env_free(e);
	free(big);

	many = calloc(GATE_ENV_MAX + 2, sizeof(*many));
	assert_non_null(many);
	for (size_t i = 0; i < GATE_ENV_MAX + 1; i++)
		many[i] = "X=1";
	e = NULL;
	assert_int_equal(gate_build_env(policy, "run_tests", many, &e), -E2BIG);
	assert_null(e);
	many[GATE_ENV_MAX] = NULL;
	assert_int_equal(gate_build_env(policy, "run_tests", many, &e), 0);
	assert_int_equal(count(gate_env_dropped(e)), GATE_ENV_MAX);
	gate_env_free(e);
	free(many);
	assert_int_equal(gate_build_env(policy, "nope", ARGV("TERM=x"), &e), -ENOENT);
	gate_env_free(NULL);
}

/* ---- test vectors and the example ---- */

static void test_run_test_passes_and_fails_as_the_vector_says(void **state)
{
	struct policy *p = load(
		"{\"version\": 1, \"name\": \"v\", \"sandbox\": {\"path\": \"@/bin\"}, \"tools\": "
		"{\"t\": {\"env_allow\": [\"TERM\"], \"commands\": [{\"program\": \"@/bin/ls\", "
		"\"flags\": {\"allow\": [\"-l\"]}, \"operands\": \"any\"}]}},\n"
		"\"tests\": [\n"
		"{\"tool\": \"t\", \"argv\": [\"ls\", \"-l\"], \"expect\": \"allow\"},\n"
		"{\"tool\": \"t\", \"argv\": [\"ls\", \"-a\"], \"expect\": \"allow\"},\n"
		"{\"tool\": \"t\", \"argv\": [\"ls\", \"-a\"], \"expect\": \"deny\", \"rule\": "
		"\"flag-not-allowed\"},\n"
		"{\"tool\": \"t\", \"argv\": [\"ls\", \"-a\"], \"expect\": \"deny\", \"rule\": "
		"\"flag-denied\"},\n"
		"{\"tool\": \"t\", \"env\": \"TERM\", \"expect\": \"allow\"},\n"
		"{\"tool\": \"t\", \"env\": \"LD_PRELOAD\", \"expect\": \"deny\", \"rule\": "
		"\"env\"},\n"
		"{\"tool\": \"t\", \"env\": \"LD_PRELOAD\", \"expect\": \"allow\"},\n"
		"{\"tool\": \"x\", \"env\": \"TERM\", \"expect\": \"deny\", \"rule\": "
		"\"unknown-tool\"}]}");
	static const int want[] = { 1, 0, 1, 0, 1, 1, 0, 1 };
	struct gate_decision d;

	assert_int_equal(policy_test_count(p), ARRAY_SIZE(want));
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		int r = gate_run_test(p, policy_test(p, i), 0, &d);

		if (r != want[i])
			fail_msg("vector %zu: got %d, want %d (%s)", i, r, want[i], d.message);
		assert_string_equal(d.policy_hash, policy_hash(p));
	}
	policy_free(p);
}

static void test_example_policy_passes_its_own_vectors(void **state)
{
	char path[PATH_MAX], err[512];
	struct policy *p = NULL;
	struct gate_decision d;
	size_t tests;

	fixture_repo_path("examples/policy.json", path, sizeof(path));
	if (policy_load(path, &p, err, sizeof(err)) < 0)
		fail_msg("%s", err);
	tests = policy_test_count(p);
	assert_true(tests >= 25);
	for (size_t i = 0; i < tests; i++)
		if (gate_run_test(p, policy_test(p, i), GATE_RESOLVE_BY_NAME, &d) != 1)
			fail_msg("examples/policy.json:%u: vector %zu failed: %s",
				 policy_test(p, i)->line, i, d.message);
	policy_free(p);
}

static void test_rule_and_name_tables_answer_known_names_only(void **state)
{
	assert_true(gate_rule_known("flag-denied"));
	assert_true(gate_rule_known("program-not-in-scope"));
	assert_false(gate_rule_known("flag_denied"));
	assert_true(gate_wrapper_known("timeout"));
	assert_true(gate_wrapper_known("ld-linux*"));
	assert_false(gate_wrapper_known("ls"));
	assert_true(gate_unsafe_known("find -exec"));
	assert_true(gate_unsafe_known("git --upload-pack"));
	assert_false(gate_unsafe_known("find -name"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pinned_program_is_allowed_by_name_and_by_path),
		cmocka_unit_test(test_symlinked_pin_matches_either_spelling),
		cmocka_unit_test(test_unpinned_unfound_or_relative_programs_are_not_in_scope),
		cmocka_unit_test(test_multi_call_binary_under_another_name_is_not_in_scope),
		cmocka_unit_test(test_prefix_mismatch_is_the_prefix_rule),
		cmocka_unit_test(
			test_program_missing_on_this_host_resolves_by_name_only_when_asked),
		cmocka_unit_test(test_unknown_tool_and_bad_argv_are_refused),
		cmocka_unit_test(test_every_legitimate_flag_form_is_allowed),
		cmocka_unit_test(test_every_denied_flag_form_is_denied),
		cmocka_unit_test(test_flag_both_allowed_and_denied_is_denied),
		cmocka_unit_test(test_a_denied_flag_outranks_an_earlier_unlisted_one),
		cmocka_unit_test(test_unlisted_flags_are_not_allowed),
		cmocka_unit_test(test_ambiguous_abbreviation_is_refused),
		cmocka_unit_test(test_without_abbrev_only_exact_long_flags_count),
		cmocka_unit_test(test_flag_values_must_be_present_or_absent_as_declared),
		cmocka_unit_test(test_after_double_dash_everything_is_an_operand),
		cmocka_unit_test(test_without_bundles_a_word_must_be_declared),
		cmocka_unit_test(test_operand_patterns),
		cmocka_unit_test(test_operand_matching_is_capped),
		cmocka_unit_test(test_every_wrapper_is_refused_by_its_argv0_name),
		cmocka_unit_test(test_wrapper_is_refused_by_its_resolved_name),
		cmocka_unit_test(test_wrapper_named_in_the_scope_is_allowed_and_only_that_one),
		cmocka_unit_test(test_python_inline_code_in_every_form_is_refused),
		cmocka_unit_test(
			test_python_arguments_of_the_module_or_script_are_not_python_options),
		cmocka_unit_test(test_other_interpreters_inline_code_is_refused),
		cmocka_unit_test(test_find_actions_that_run_delete_or_write_are_refused),
		cmocka_unit_test(test_unsafe_allow_turns_off_exactly_the_named_entry),
		cmocka_unit_test(test_git_injection_forms_are_refused),
		cmocka_unit_test(test_git_legitimate_forms_pass_the_invariants),
		cmocka_unit_test(test_tar_rsync_ssh_and_curl_unsafe_options_are_refused),
		cmocka_unit_test(test_invariants_come_before_scope_rules),
		cmocka_unit_test(test_build_env_passes_only_the_allowlist),
		cmocka_unit_test(test_env_allow_patterns_never_pass_a_never_pass_name),
		cmocka_unit_test(test_never_pass_list_covers_the_documented_names),
		cmocka_unit_test(test_build_env_drops_long_values_and_refuses_too_many),
		cmocka_unit_test(test_run_test_passes_and_fails_as_the_vector_says),
		cmocka_unit_test(test_example_policy_passes_its_own_vectors),
		cmocka_unit_test(test_rule_and_name_tables_answer_known_names_only),
	};

	return cmocka_run_group_tests(tests, policy_up, policy_down);
}
