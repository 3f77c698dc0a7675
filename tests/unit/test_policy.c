/*
 * The policy loader (policy/policy.h) and its position scanner (lib/json-pos.h): every way a policy
 * can be wrong is refused with the exact FILE:LINE:COL of the offending key or value; a minimal
 * policy gets every documented default; the hash is SHA-256 of the file's bytes; warnings name
 * what weakens a scope.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "fixtures.h"
#include "json-pos.h"
#include "policy/gate.h"
#include "macro.h"
#include "policy/policy.h"
#include "sha256.h"
#include "timeutil.h"

#define TOOLS "\"tools\": {\"t\": {\"commands\": [{\"program\": \"/usr/bin/ls\"}]}}"
#define MINIMAL "{\"version\": 1, \"name\": \"p\", " TOOLS "}"

static struct policy *load_ok(const char *text)
{
	return fixture_policy("p.json", text);
}

/* Expects text to be refused with exactly want ("p.json:LINE:COL: message..."), as a prefix. */
static void expect_error(const char *text, const char *want)
{
	char err[512] = "";

	fixture_policy_refused(text, want, err, sizeof(err));
	if (strncmp(err, want, strlen(want)) != 0)
		fail_msg("got  \"%s\"\nwant \"%s...\"", err, want);
}

static void test_unknown_top_level_key_points_at_the_key(void **state)
{
	expect_error("{\"version\": 1,\n \"name\": \"p\",\n  \"colour\": \"red\",\n " TOOLS "}",
		     "p.json:3:3: unknown key \"colour\"");
}

static void test_unknown_key_deep_in_a_command_points_at_the_key(void **state)
{
	expect_error("{\"version\": 1, \"name\": \"p\",\n"
		     "\"tools\": {\n"
		     "  \"t\": {\"commands\": [\n"
		     "    {\"program\": \"/usr/bin/ls\", \"flags\": {\"allow\": [\"-l\"], "
		     "\"alow\": []}}]}}}",
		     "p.json:4:59: unknown key \"alow\" (known here: allow, deny)");
}

static void test_first_unknown_key_in_the_text_is_reported(void **state)
{
	expect_error(
		"{\"version\": 1, \"name\": \"p\", \"sandbox\": {\"zz\": 1, \"aa\": 2},\n" TOOLS
		"}",
		"p.json:1:41: unknown key \"zz\"");
}

static void test_duplicate_key_points_at_the_repeat_not_the_first(void **state)
{
	expect_error("{\"version\": 1,\n \"name\": \"p\",\n " TOOLS ",\n   \"name\": \"q\"}",
		     "p.json:4:4: duplicate key \"name\"");
	expect_error("{\"version\": 1, \"name\": \"p\", \"sandbox\": {\n"
		     "\t\"pids\": 10,\n"
		     "\t\"pids\": 20}, " TOOLS "}",
		     "p.json:3:2: duplicate key \"pids\"");
}

/* A decoy variable is a variable name the policy gives no real value. */
static void test_decoy_env_names_no_real_variable(void **state)
{
	struct policy *p = load_ok("{\"version\": 1, \"name\": \"p\", \"sandbox\": {\"decoy_env\": "
				   "[\"AWS_SECRET_ACCESS_KEY\", \"GITHUB_TOKEN\"]}, " TOOLS "}");
	struct gate_env *e = NULL;
	char *const *v;
	int n = 0;

	assert_int_equal(gate_build_env(p, "t", NULL, &e), 0);
	assert_int_equal(gate_env_add_decoys(e, p, "0123456789abcdef0123"), 0);
	for (v = gate_env_vector(e); *v; v++) {
		n += strcmp(*v, "AWS_SECRET_ACCESS_KEY=0123456789abcdef01230123456789abcdef0123") ==
		     0;
		n += strcmp(*v, "GITHUB_TOKEN=ghp_0123456789abcdef01230123456789abcdef") == 0;
	}
	assert_int_equal(n, 2);
	gate_env_free(e);
	policy_free(p);
	expect_error(
		"{\"version\": 1, \"name\": \"p\", \"sandbox\": {\"decoy_env\": [\"HOME\"]}, " TOOLS
		"}",
		"p.json:1:55: \"HOME\" has a real value in the sandbox's environment");
	expect_error(
		"{\"version\": 1, \"name\": \"p\", \"sandbox\": {\"decoy_env\": [\"A-B\"]}, " TOOLS
		"}",
		"p.json:1:55: ");
}

static void test_wrong_types_point_at_the_value(void **state)
{
	expect_error("{\"version\": \"1\", \"name\": \"p\", " TOOLS "}",
		     "p.json:1:13: \"version\" must be an integer, not a string");
	expect_error("{\"version\": 1, \"name\": \"p\", \"sandbox\": {\"pids\": \"many\"}, " TOOLS
		     "}",
		     "p.json:1:49: \"pids\" must be an integer, not a string");
	expect_error("{\"version\": 1, \"name\": \"p\", \"sandbox\": {\"swap\": \"no\"}, " TOOLS
		     "}",
		     "p.json:1:49: \"swap\" must be true or false, not a string");
	expect_error(
		"{\"version\": 1, \"name\": \"p\", \"sandbox\": {\"memory\": 512}, " TOOLS "}",
		"p.json:1:51: \"memory\" must be a size string such as \"512M\", not an integer");
	expect_error("{\"version\": 1, \"name\": \"p\", \"tools\": []}",
		     "p.json:1:38: \"tools\" must be an object, not an array");
	expect_error("{\"version\": 1, \"name\": \"p\", \"tools\": {\"t\": {\"commands\": "
		     "[{\"program\": \"/usr/bin/ls\", \"flags\": {\"allow\": \"-l\"}}]}}}",
		     "p.json:1:104: \"allow\" must be an array of strings, not a string");
	expect_error("{\"version\": 1, \"name\": \"p\", \"tools\": {\"t\": {\"commands\": "
		     "[{\"program\": \"/usr/bin/ls\", \"prefix\": [\"x\", 2]}]}}}",
		     "p.json:1:101: \"prefix\" entries must be strings, not an integer");
	expect_error("{\"version\": 1, \"name\": \"p\", \"tests\": {}, " TOOLS "}",
		     "p.json:1:38: \"tests\" must be an array, not an object");
}

static void test_bad_values_point_at_the_value(void **state)
{
	static const struct {
		const char *sandbox, *want;
	} cases[] = {
		{ "\"memory\": \"lots\"",
		  "p.json:1:51: \"memory\" must be a size such as \"512M\"" },
		{ "\"memory\": \"1M\"", "p.json:1:51: \"memory\" must be a size such as \"512M\" "
					"(suffix K, M, G or T; at least 4M)" },
		{ "\"wall_clock\": \"forever\"", "p.json:1:55: \"wall_clock\" must be a duration" },
		{ "\"uid\": 0", "p.json:1:48: \"uid\" must be from 1 to 4294967294" },
		{ "\"gid\": -1", "p.json:1:48: \"gid\" must be from 1 to 4294967294" },
		{ "\"cpu\": 0", "p.json:1:48: \"cpu\" must be from 0.01 to 4096 cores" },
		{ "\"cpu\": \"1\"", "p.json:1:48: \"cpu\" must be a number of cores" },
		{ "\"pids\": 0", "p.json:1:49: \"pids\" must be from 1 to 4194304" },
		{ "\"path\": \"usr/bin\"",
		  "p.json:1:49: \"path\" entry \"usr/bin\" must be an absolute directory" },
		{ "\"path\": \"/usr/bin::/bin\"",
		  "p.json:1:49: \"path\" must be absolute directories" },
		{ "\"path\": \"/usr/bin:/workspace/bin\"",
		  "p.json:1:49: \"path\" entry \"/workspace/bin\" is writable inside the sandbox" },
		{ "\"path\": \"/usr/../tmp\"", "p.json:1:49: \"path\" entry \"/usr/../tmp\" must "
					       "be an absolute directory without . or .." },
		{ "\"env\": {\"PATH\": \"/x\"}",
		  "p.json:1:49: PATH is set by \"sandbox\".\"path\"" },
		{ "\"env\": {\"A-B\": \"x\"}", "p.json:1:49: \"A-B\" is not a variable name" },
		{ "\"io\": {\"read_bps\": \"fast\"}", "p.json:1:60: \"read_bps\" must be a size" },
	};
	char text[1024];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		snprintf(text, sizeof(text),
			 "{\"version\": 1, \"name\": \"p\", \"sandbox\": {%s}, " TOOLS "}",
			 cases[i].sandbox);
		expect_error(text, cases[i].want);
	}
	expect_error("{\"version\": 7, \"name\": \"p\", " TOOLS "}",
		     "p.json:1:13: unsupported version 7 (this build reads version 1)");
	expect_error("{\"version\": 1, \"name\": \"no spaces\", " TOOLS "}",
		     "p.json:1:24: \"name\" must be 1-63 of [A-Za-z0-9_.-]");
}

static void test_bad_commands_point_at_the_value(void **state)
{
	static const struct {
		const char *command, *want;
	} cases[] = {
		{ "{\"program\": \"ls\"}", "p.json:1:70: \"program\" must be an absolute path" },
		{ "{\"program\": \"/tmp/ls\"}", "p.json:1:70: \"program\" must be an absolute path "
						"without . or .., outside /workspace and /tmp" },
		{ "{\"program\": \"/workspace/bin/ls\"}", "p.json:1:70: \"program\" must be" },
		{ "{\"program\": \"/usr/bin/../bin/ls\"}", "p.json:1:70: \"program\" must be" },
		{ "{\"program\": \"/usr/bin/ls\", \"flags\": {\"allow\": [\"q\"]}}",
		  "p.json:1:105: \"q\": a flag is one or two dashes" },
		{ "{\"program\": \"/usr/bin/ls\", \"flags\": {\"allow\": [\"--a=b\"]}}",
		  "p.json:1:105: \"--a=b\": a flag" },
		{ "{\"program\": \"/usr/bin/ls\", \"flags\": {\"deny\": [\"-\"]}}",
		  "p.json:1:104: \"-\": a flag" },
		{ "{\"program\": \"/usr/bin/ls\", \"flags\": {\"allow\": [\"-l\", \"-a\", "
		  "\"-l\"]}}",
		  "p.json:1:117: \"-l\" is listed twice in \"allow\"" },
		{ "{\"program\": \"/usr/bin/ls\", \"operands\": \"some\"}",
		  "p.json:1:97: \"operands\" must be \"any\", \"none\" or a list of patterns" },
		{ "{\"program\": \"/usr/bin/ls\", \"operands\": [\"\"]}",
		  "p.json:1:98: \"\": an operand pattern is 1 to 256 bytes" },
		{ "{\"program\": \"/usr/bin/ls\", \"short_bundles\": 1}",
		  "p.json:1:102: \"short_bundles\" must be true or false" },
		{ "{\"prefix\": []}", "p.json:1:58: missing \"program\"" },
	};
	char text[1024];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		snprintf(text, sizeof(text),
			 "{\"version\": 1, \"name\": \"p\", \"tools\": {\"t\": {\"commands\": "
			 "[%s]}}}",
			 cases[i].command);
		expect_error(text, cases[i].want);
	}
}

static void test_bad_tools_point_at_the_key_or_value(void **state)
{
	expect_error("{\"version\": 1, \"name\": \"p\", \"tools\": {\"a b\": {}}}",
		     "p.json:1:39: tool name \"a b\" must be 1-63 of [A-Za-z0-9_.:-]");
	expect_error("{\"version\": 1, \"name\": \"p\", \"tools\": {}}",
		     "p.json:1:38: \"tools\" must name at least one tool");
	expect_error("{\"version\": 1, \"name\": \"p\", \"tools\": {\"t\": {\"commands\": []}}}",
		     "p.json:1:57: \"commands\" must be a non-empty array");
	expect_error("{\"version\": 1, \"name\": \"p\", \"tools\": {\"t\": {}}}",
		     "p.json:1:44: tool \"t\" is missing \"commands\"");
	expect_error(
		"{\"version\": 1, \"name\": \"p\", \"tools\": {\"t\": {\"wrappers\": [\"bash\", "
		"\"bassh\"], \"commands\": [{\"program\": \"/usr/bin/ls\"}]}}}",
		"p.json:1:66: \"bassh\": not a built-in wrapper");
	expect_error("{\"version\": 1, \"name\": \"p\", \"tools\": {\"t\": {\"unsafe_allow\": "
		     "[\"find -eggs\"], \"commands\": [{\"program\": \"/usr/bin/ls\"}]}}}",
		     "p.json:1:62: \"find -eggs\": not a built-in unsafe option");
	expect_error(
		"{\"version\": 1, \"name\": \"p\", \"tools\": {\"t\": {\"call_timeout\": \"1ms\", "
		"\"commands\": [{\"program\": \"/usr/bin/ls\"}]}}}",
		"p.json:1:61: \"call_timeout\" must be a duration such as \"30s\", \"5m\" or "
		"\"2h\" (at least 100ms)");
}

static void test_env_allow_may_not_name_a_fixed_variable(void **state)
{
	expect_error(
		"{\"version\": 1, \"name\": \"p\", \"tools\": {\"t\": {\"env_allow\": [\"TERM\", "
		"\"PATH\"], \"commands\": [{\"program\": \"/usr/bin/ls\"}]}}}",
		"p.json:1:67: \"PATH\" is fixed by the policy");
	expect_error("{\"version\": 1, \"name\": \"p\", \"sandbox\": {\"env\": {\"LANG\": \"C\"}}, "
		     "\"tools\": {\"t\": {\"env_allow\": [\"LANG\"], \"commands\": [{\"program\": "
		     "\"/usr/bin/ls\"}]}}}",
		     "p.json:1:94: \"LANG\" is fixed by the policy");
	expect_error(
		"{\"version\": 1, \"name\": \"p\", \"tools\": {\"t\": {\"env\": {\"X\": \"1\"}, "
		"\"env_allow\": [\"X\"], \"commands\": [{\"program\": \"/usr/bin/ls\"}]}}}",
		"p.json:1:78: \"X\" is fixed by the policy");
	expect_error(
		"{\"version\": 1, \"name\": \"p\", \"tools\": {\"t\": {\"env_allow\": [\"LC-*\"], "
		"\"commands\": [{\"program\": \"/usr/bin/ls\"}]}}}",
		"p.json:1:59: \"LC-*\": not a variable name");
}

static void test_bad_tests_point_at_the_value(void **state)
{
	expect_error("{\"version\": 1, \"name\": \"p\", " TOOLS ",\n"
		     "\"tests\": [{\"tool\": \"t\", \"argv\": [\"ls\"], \"expect\": \"maybe\"}]}",
		     "p.json:2:51: \"expect\" must be \"allow\" or \"deny\"");
	expect_error(
		"{\"version\": 1, \"name\": \"p\", " TOOLS ",\n"
		"\"tests\": [{\"tool\": \"t\", \"argv\": [\"ls\"], \"expect\": \"deny\", \"rule\": "
		"\"nope\"}]}",
		"p.json:2:67: \"nope\" is not a gate rule");
	expect_error("{\"version\": 1, \"name\": \"p\", " TOOLS ",\n"
		     "\"tests\": [{\"tool\": \"t\", \"argv\": [\"ls\"], \"expect\": \"allow\", "
		     "\"rule\": "
		     "\"operand\"}]}",
		     "p.json:2:68: \"rule\" names why a call is refused");
	expect_error("{\"version\": 1, \"name\": \"p\", " TOOLS ",\n"
		     "\"tests\": [{\"tool\": \"t\", \"argv\": [], \"expect\": \"deny\"}]}",
		     "p.json:2:33: \"argv\" needs at least the program");
	expect_error("{\"version\": 1, \"name\": \"p\", " TOOLS ",\n"
		     "\"tests\": [{\"tool\": \"t\", \"expect\": \"deny\"}]}",
		     "p.json:2:11: a test has either \"argv\" or \"env\", not neither");
	expect_error(
		"{\"version\": 1, \"name\": \"p\", " TOOLS ",\n"
		"\"tests\": [{\"tool\": \"t\", \"env\": \"X\", \"argv\": [\"ls\"], \"expect\": "
		"\"deny\"}]}",
		"p.json:2:11: a test has either \"argv\" or \"env\", not both");
}

static void test_missing_required_keys_point_at_the_object(void **state)
{
	expect_error("{\"name\": \"p\", " TOOLS "}",
		     "p.json:1:1: missing \"version\" (this build reads version 1)");
	expect_error("{\"version\": 1, " TOOLS "}", "p.json:1:1: missing \"name\"");
	expect_error("{\"version\": 1, \"name\": \"p\"}", "p.json:1:1: missing \"tools\"");
	expect_error("{\"version\": 1, \"name\": \"p\", " TOOLS
		     ",\n  \"tests\": [{\"argv\": [\"ls\"], "
		     "\"expect\": \"deny\"}]}",
		     "p.json:2:13: missing \"tool\"");
}

static void test_syntax_errors_carry_jansson_positions(void **state)
{
	expect_error("{\"version\": 1,\n \"name\": \"p\"\n \"tools\": {}}",
		     "p.json:3:8: '}' expected near '\"tools\"'");
	expect_error("", "p.json:1:1: '[' or '{' expected near end of file");
	expect_error("[1, 2]", "p.json:1:1: a policy must be a JSON object, not an array");
	expect_error(MINIMAL " x", "p.json:1:");
}

static void test_nesting_past_the_scanner_cap_is_refused_with_a_position(void **state)
{
	size_t depth = JSON_POS_DEPTH_MAX + 10, n = 0;
	char *text = malloc(2 * depth + 256);
	struct policy *p = NULL;
	char err[512];

	assert_non_null(text);
	n += (size_t)sprintf(text, "{\"version\": 1, \"name\": \"p\", " TOOLS
				   ", \"detectors\": {\"x\": ");
	for (size_t i = 0; i < depth; i++)
		text[n++] = '[';
	for (size_t i = 0; i < depth; i++)
		text[n++] = ']';
	strcpy(text + n, "}}");
	assert_int_equal(policy_load_text("p.json", text, strlen(text), &p, err, sizeof(err)),
			 -EINVAL);
	assert_null(p);
	assert_non_null(strstr(err, "nested deeper than 256"));
	assert_int_equal(strncmp(err, "p.json:1:", 9), 0);
	free(text);
}

static void test_minimal_policy_gets_every_default(void **state)
{
	struct policy *p = load_ok(MINIMAL);
	const struct policy_sandbox *sb = policy_sandbox(p);
	int64_t timeout = 0;

	/* Unset: the enforcer gives each sandbox its own uid and gid. */
	assert_int_equal(sb->uid, 0);
	assert_int_equal(sb->gid, 0);
	assert_int_equal(sb->memory_bytes, 512ULL << 20);
	assert_int_equal(sb->swap, 0);
	assert_int_equal(sb->pids, 256);
	assert_true(sb->cpu == 1.0);
	assert_int_equal(sb->io_read_bps, 0);
	assert_int_equal(sb->io_write_bps, 0);
	assert_int_equal(sb->workspace_bytes, 256ULL << 20);
	assert_int_equal(sb->tmp_bytes, 64ULL << 20);
	assert_int_equal(sb->open_files, 1024);
	assert_int_equal(sb->wall_clock_ns, 2 * 3600 * NSEC_PER_SEC);
	assert_string_equal(sb->path, "/usr/local/bin:/usr/bin:/bin");
	assert_string_equal(sb->env[0], "PATH=/usr/local/bin:/usr/bin:/bin");
	assert_string_equal(sb->env[1], "HOME=/home/agent");
	assert_string_equal(sb->env[2], "TMPDIR=/tmp");
	assert_null(sb->env[3]);
	assert_int_equal(policy_tool_timeout(p, "t", &timeout), 0);
	assert_int_equal(timeout, 5 * 60 * NSEC_PER_SEC);
	assert_int_equal(policy_tool_timeout(p, "nope", &timeout), -ENOENT);
	assert_true(policy_has_tool(p, "t"));
	assert_false(policy_has_tool(p, "T"));
	assert_int_equal(policy_test_count(p), 0);
	assert_null(policy_test(p, 0));
	assert_string_equal(policy_name(p), "p");
	assert_string_equal(policy_source(p), "p.json");
	policy_free(p);
}

static void test_every_sandbox_value_is_read(void **state)
{
	struct policy *p = load_ok(
		"{\"version\": 1, \"name\": \"p\", \"sandbox\": {\"uid\": 1000, \"gid\": 1001, "
		"\"memory\": \"2G\", \"swap\": true, \"pids\": 64, \"cpu\": 0.5, \"io\": "
		"{\"read_bps\": "
		"\"50M\", \"write_bps\": \"20M\"}, \"workspace\": \"1G\", \"tmp\": \"32M\", "
		"\"open_files\": 256, \"wall_clock\": \"30m\", \"path\": \"/usr/bin:/bin\", "
		"\"env\": "
		"{\"LANG\": \"C.UTF-8\", \"HOME\": \"/home/agent\"}}, \"tools\": {\"t\": {"
		"\"call_timeout\": \"90s\", \"commands\": [{\"program\": \"/usr/bin/ls\"}]}}}");
	const struct policy_sandbox *sb = policy_sandbox(p);
	int64_t timeout;

	assert_int_equal(sb->uid, 1000);
	assert_int_equal(sb->gid, 1001);
	assert_int_equal(sb->memory_bytes, 2ULL << 30);
	assert_int_equal(sb->swap, 1);
	assert_int_equal(sb->pids, 64);
	assert_true(sb->cpu == 0.5);
	assert_int_equal(sb->io_read_bps, 50ULL << 20);
	assert_int_equal(sb->io_write_bps, 20ULL << 20);
	assert_int_equal(sb->workspace_bytes, 1ULL << 30);
	assert_int_equal(sb->tmp_bytes, 32ULL << 20);
	assert_int_equal(sb->open_files, 256);
	assert_int_equal(sb->wall_clock_ns, 30 * 60 * NSEC_PER_SEC);
	/* sandbox.env replaces HOME in place and appends the rest after the fixed three. */
	assert_string_equal(sb->env[0], "PATH=/usr/bin:/bin");
	assert_string_equal(sb->env[1], "HOME=/home/agent");
	assert_string_equal(sb->env[2], "TMPDIR=/tmp");
	assert_string_equal(sb->env[3], "LANG=C.UTF-8");
	assert_null(sb->env[4]);
	assert_int_equal(policy_tool_timeout(p, "t", &timeout), 0);
	assert_int_equal(timeout, 90 * NSEC_PER_SEC);
	policy_free(p);
}

static void test_detectors_section_and_its_defaults(void **state)
{
	struct policy *p = load_ok("{\"version\": 1, \"name\": \"p\", \"egress\": {}, " TOOLS "}");
	const struct policy_detectors *d = policy_detectors(p);

	assert_int_equal(d->deny_burst_count, 5);
	assert_int_equal(d->deny_burst_window_ns, 10 * NSEC_PER_SEC);
	assert_int_equal(d->deny_distinct, 3);
	assert_int_equal(d->action[3], POLICY_ACTION_KILL);
	assert_int_equal(d->action[2], POLICY_ACTION_FREEZE);
	assert_int_equal(d->action[1], POLICY_ACTION_ALERT);
	assert_int_equal(d->action[0], POLICY_ACTION_RECORD);
	assert_int_equal(d->on_lost, POLICY_ACTION_FREEZE);
	assert_int_equal(d->http_upload_max, 8 << 20);
	assert_int_equal(d->http_upload_window_ns, 60 * NSEC_PER_SEC);
	assert_int_equal(d->http_beacon_count, 6);
	assert_int_equal(d->http_beacon_jitter, 10);
	assert_int_equal(d->http_beacon_window_ns, 600 * NSEC_PER_SEC);
	assert_null(d->off);
	policy_free(p);

	p = load_ok("{\"version\": 1, \"name\": \"p\", \"detectors\": {\"http_upload_max\": "
		    "\"64K\", \"http_upload_window\": \"5m\", \"http_beacon_count\": 16, "
		    "\"http_beacon_jitter\": 25, \"http_beacon_window\": \"1h\"}, " TOOLS "}");
	d = policy_detectors(p);
	assert_int_equal(d->http_upload_max, 64 << 10);
	assert_int_equal(d->http_upload_window_ns, 300 * NSEC_PER_SEC);
	assert_int_equal(d->http_beacon_count, 16);
	assert_int_equal(d->http_beacon_jitter, 25);
	assert_int_equal(d->http_beacon_window_ns, 3600 * NSEC_PER_SEC);
	policy_free(p);
	/* The detectors keep 16 check-ins a key: a count past that could never be met. */
	expect_error("{\"version\": 1, \"name\": \"p\", \"detectors\": {\"http_beacon_count\": "
		     "17}, " TOOLS "}",
		     "p.json:1:64: \"http_beacon_count\" must be from 4 to 16");
	expect_error("{\"version\": 1, \"name\": \"p\", \"detectors\": {\"http_beacon_jitter\": "
		     "0}, " TOOLS "}",
		     "p.json:1:65: \"http_beacon_jitter\" must be from 1 to 50");
	expect_error(
		"{\"version\": 1, \"name\": \"p\", \"detectors\": {\"http_upload_max\": "
		"\"100\"}, " TOOLS "}",
		"p.json:1:62: \"http_upload_max\" must be a size such as \"512M\" (suffix K, M, "
		"G or T; at least 1K)");
	expect_error(
		"{\"version\": 1, \"name\": \"p\", \"detectors\": {\"http_beacon_window\": "
		"\"2s\"}, " TOOLS "}",
		"p.json:1:65: \"http_beacon_window\" must be a duration such as \"30s\", \"5m\" "
		"or \"2h\" (at least 5000ms)");

	p = load_ok("{\"version\": 1, \"name\": \"p\", \"detectors\": {\"on_lost_events\": "
		    "\"kill\"}, " TOOLS "}");
	assert_int_equal(policy_detectors(p)->on_lost, POLICY_ACTION_KILL);
	policy_free(p);
	p = load_ok("{\"version\": 1, \"name\": \"p\", \"detectors\": {\"on_lost_events\": "
		    "\"alert\"}, " TOOLS "}");
	assert_int_equal(policy_detectors(p)->on_lost, POLICY_ACTION_ALERT);
	policy_free(p);
	/* Going on unwatched is not a choice. */
	expect_error("{\"version\": 1, \"name\": \"p\", \"detectors\": {\"on_lost_events\": "
		     "\"record\"}, " TOOLS "}",
		     "p.json:1:61: \"on_lost_events\" is \"freeze\", \"kill\" or \"alert\"");

	p = load_ok("{\"version\": 1, \"name\": \"p\", \"detectors\": {\"deny_burst_count\": 3, "
		    "\"deny_burst_window\": \"30s\", \"deny_distinct\": 2, \"actions\": "
		    "{\"high\": \"kill\", \"medium\": \"freeze\"}, \"off\": "
		    "[\"monitor.blind\"]}, " TOOLS "}");
	d = policy_detectors(p);
	assert_int_equal(d->deny_burst_count, 3);
	assert_int_equal(d->deny_burst_window_ns, 30 * NSEC_PER_SEC);
	assert_int_equal(d->deny_distinct, 2);
	assert_int_equal(d->action[2], POLICY_ACTION_KILL);
	assert_int_equal(d->action[1], POLICY_ACTION_FREEZE);
	assert_int_equal(d->action[3], POLICY_ACTION_KILL);
	assert_string_equal(d->off[0], "monitor.blind");
	assert_null(d->off[1]);
	assert_int_equal(policy_warning_count(p), 0);
	policy_free(p);

	expect_error("{\"version\": 1, \"name\": \"p\", \"detectors\": \"on\", " TOOLS "}",
		     "p.json:1:42: \"detectors\" must be an object, not a string");
	expect_error("{\"version\": 1, \"name\": \"p\", \"detectors\": {\"anything\": 1}, " TOOLS
		     "}",
		     "p.json:1:43: unknown key \"anything\"");
	expect_error("{\"version\": 1, \"name\": \"p\", \"detectors\": {\"actions\": {\"high\": "
		     "\"explode\"}}, " TOOLS "}",
		     "p.json:1:63: an action is \"record\", \"alert\", \"freeze\", \"quarantine\" "
		     "or \"kill\"");
	expect_error(
		"{\"version\": 1, \"name\": \"p\", \"detectors\": {\"off\": [\"net.nope\"]}, " TOOLS
		"}",
		"p.json:1:51: \"net.nope\": not a detector rule");
	expect_error(
		"{\"version\": 1, \"name\": \"p\", \"detectors\": {\"deny_burst_count\": 0}, " TOOLS
		"}",
		"p.json:1:63: \"deny_burst_count\" must be from 1 to 64");
}

static void test_tool_children_and_single_process(void **state)
{
	struct policy *p = load_ok(
		"{\"version\": 1, \"name\": \"p\", \"tools\": {\"t\": {\"children\": "
		"[\"/usr/bin/python3*\"], \"single_process\": true, \"commands\": [{\"program\": "
		"\"/usr/bin/true\"}]}, \"u\": {\"commands\": [{\"program\": "
		"\"/usr/bin/false\"}]}}}");
	const char *progs[4];

	assert_string_equal(policy_tool_children(p, 0)[0], "/usr/bin/python3*");
	assert_null(policy_tool_children(p, 0)[1]);
	assert_true(policy_tool_single_process(p, 0));
	assert_null(policy_tool_children(p, 1));
	assert_false(policy_tool_single_process(p, 1));
	assert_int_equal(policy_tool_programs(p, 1, progs, 4), 1);
	assert_string_equal(progs[0], "/usr/bin/false");
	policy_free(p);
	expect_error("{\"version\": 1, \"name\": \"p\", \"tools\": {\"t\": {\"children\": "
		     "[\"python3\"], \"commands\": [{\"program\": \"/usr/bin/true\"}]}}}",
		     "p.json:1:58: \"python3\": not an absolute program path");
}

static void test_warnings_name_what_weakens_a_scope(void **state)
{
	struct policy *p = load_ok(
		"{\"version\": 1, \"name\": \"p\", \"tools\": {\"t\": {\"env_allow\": "
		"[\"LD_PRELOAD\", "
		"\"TERM\"], \"wrappers\": [\"timeout\"], \"unsafe_allow\": [\"find -exec\"], "
		"\"commands\": [{\"program\": \"/usr/bin/ls\", \"flags\": {\"allow\": [\"-a\"], "
		"\"deny\": "
		"[\"-a\"]}}, {\"program\": \"/usr/bin/no-such-program\"}]}}}");
	const char *all[8] = { 0 };
	size_t n = policy_warning_count(p);

	assert_int_equal(n, 5);
	for (size_t i = 0; i < n; i++)
		all[i] = policy_warning(p, i);
	assert_null(policy_warning(p, n));
	assert_non_null(
		strstr(all[0], "p.json:1:59: warning: tool t: env_allow passes LD_PRELOAD"));
	assert_non_null(strstr(all[1], "warning: tool t may run the wrapper timeout"));
	assert_non_null(
		strstr(all[2], "warning: tool t turns off the built-in refusal of find -exec"));
	assert_non_null(strstr(all[3], "warning: \"-a\" is both allowed and denied: deny wins"));
	assert_non_null(
		strstr(all[4], "/usr/bin/no-such-program is not an executable on this host"));
	policy_free(p);
}

static void test_warnings_past_the_cap_are_counted_in_a_last_warning(void **state)
{
	/* 5 tools x 60 named wrappers: 300 warnings against a cap of 256. */
	char *text = malloc(64 * 1024), *w = text;
	struct policy *p;

	assert_non_null(text);
	w += sprintf(w, "{\"version\": 1, \"name\": \"p\", \"tools\": {");
	for (int t = 0; t < 5; t++) {
		w += sprintf(w, "%s\"t%d\": {\"wrappers\": [", t ? ", " : "", t);
		for (int i = 0; i < 60; i++)
			w += sprintf(w, "%s\"%s\"", i ? ", " : "",
				     (const char *[]){ "env", "xargs", "nice", "time" }[i % 4]);
		w += sprintf(w, "], \"commands\": [{\"program\": \"/usr/bin/ls\"}]}");
	}
	strcpy(w, "}}");
	p = load_ok(text);
	assert_int_equal(policy_warning_count(p), POLICY_WARNINGS_MAX + 1);
	assert_string_equal(policy_warning(p, POLICY_WARNINGS_MAX),
			    "p.json: warning: 44 more warnings not shown");
	policy_free(p);
	free(text);
}

static void test_tests_are_read_with_their_positions(void **state)
{
	struct policy *p =
		load_ok("{\"version\": 1, \"name\": \"p\", " TOOLS ",\n"
			"\"tests\": [\n"
			"  {\"tool\": \"t\", \"argv\": [\"ls\", \"-l\"], \"expect\": \"allow\"},\n"
			"  {\"tool\": \"u\", \"argv\": [\"ls\"], \"expect\": \"deny\", \"rule\": "
			"\"unknown-tool\"},\n"
			"  {\"tool\": \"t\", \"env\": \"LD_PRELOAD\", \"expect\": \"deny\"}]}");
	const struct policy_test *t;

	assert_int_equal(policy_test_count(p), 3);
	t = policy_test(p, 0);
	assert_string_equal(t->tool, "t");
	assert_string_equal(t->argv[0], "ls");
	assert_string_equal(t->argv[1], "-l");
	assert_null(t->argv[2]);
	assert_null(t->env);
	assert_int_equal(t->expect_allow, 1);
	assert_null(t->rule);
	assert_int_equal(t->line, 3);
	assert_int_equal(t->col, 3);
	t = policy_test(p, 1);
	assert_int_equal(t->expect_allow, 0);
	assert_string_equal(t->rule, "unknown-tool");
	assert_int_equal(t->line, 4);
	t = policy_test(p, 2);
	assert_null(t->argv);
	assert_string_equal(t->env, "LD_PRELOAD");
	policy_free(p);
}

static void test_hash_is_sha256_of_the_file_bytes(void **state)
{
	char path[] = "/tmp/fb-policy-XXXXXX", want[SHA256_PREFIXED_HEX_SIZE];
	char spaced[sizeof(MINIMAL) + 1];
	struct policy *p = NULL, *q = NULL;
	char err[256];
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, MINIMAL, strlen(MINIMAL)), (ssize_t)strlen(MINIMAL));
	close(fd);
	assert_int_equal(policy_load(path, &p, err, sizeof(err)), 0);
	sha256_prefixed_hex(MINIMAL, strlen(MINIMAL), want);
	assert_string_equal(policy_hash(p), want);
	assert_int_equal(strncmp(policy_hash(p), "sha256:", 7), 0);
	assert_int_equal(strlen(policy_hash(p)), 7 + 64);
	/* One more byte of whitespace: the same policy, another file, another hash. */
	snprintf(spaced, sizeof(spaced), "%s ", MINIMAL);
	assert_int_equal(policy_load_text("x", spaced, strlen(spaced), &q, err, sizeof(err)), 0);
	assert_string_not_equal(policy_hash(p), policy_hash(q));
	policy_free(p);
	policy_free(q);
	unlink(path);
}

static void test_files_that_are_missing_too_big_or_not_regular_are_refused(void **state)
{
	char path[] = "/tmp/fb-policy-XXXXXX", err[256];
	struct policy *p = NULL;
	int fd;

	assert_int_equal(policy_load("/nonexistent/policy.json", &p, err, sizeof(err)), -ENOENT);
	assert_string_equal(err, "/nonexistent/policy.json: No such file or directory");
	assert_int_equal(policy_load("/tmp", &p, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "/tmp: not a regular file");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, POLICY_FILE_MAX + 1), 0);
	close(fd);
	assert_int_equal(policy_load(path, &p, err, sizeof(err)), -EFBIG);
	assert_non_null(strstr(err, "larger than 1048576 bytes"));
	assert_null(p);
	unlink(path);
	assert_int_equal(
		policy_load_text("big", MINIMAL, POLICY_FILE_MAX + 1, &p, err, sizeof(err)),
		-EFBIG);
}

static void test_json_pos_records_keys_values_and_escaped_paths(void **state)
{
	static const char text[] = "{\"a\": {\"b/c\": [10,\n"
				   "  {\"t~x\": \"\xc3\xa9\xc3\xa9\", \"z\": null}]},\n"
				   " \"\xc3\xa9\": 1}";
	struct json_pos *pos = NULL;
	struct json_pos_loc loc;
	char path[64] = "";

	assert_int_equal(json_pos_scan(text, strlen(text), &pos, NULL), 0);
	assert_int_equal(json_pos_lookup(pos, "", &loc), 0);
	assert_int_equal(loc.line, 1);
	assert_int_equal(loc.col, 1);
	assert_int_equal(json_pos_lookup(pos, "/a/b~1c/0", &loc), 0);
	assert_int_equal(loc.line, 1);
	assert_int_equal(loc.col, 16);
	assert_int_equal(json_pos_lookup(pos, "/a/b~1c/1/t~0x", &loc), 0);
	assert_int_equal(loc.key_line, 2);
	assert_int_equal(loc.key_col, 4);
	assert_int_equal(loc.col, 11);
	/* Columns count characters: "éé" is two, though four bytes. */
	assert_int_equal(json_pos_lookup(pos, "/a/b~1c/1/z", &loc), 0);
	assert_int_equal(loc.key_col, 17);
	assert_int_equal(json_pos_lookup(pos, "/\xc3\xa9", &loc), 0);
	assert_int_equal(loc.line, 3);
	assert_int_equal(loc.key_col, 2);
	assert_int_equal(loc.col, 7);
	assert_int_equal(json_pos_lookup(pos, "/a/missing", &loc), -ENOENT);
	assert_int_equal(json_pos_lookup_nearest(pos, "/a/missing/deeper", &loc), 0);
	assert_int_equal(loc.col, 7);
	assert_int_equal(json_pos_duplicate(pos, &(const char *){ NULL }, &loc), -ENOENT);
	assert_int_equal(json_pos_path_push_key(path, sizeof(path), "b/c"), 0);
	assert_int_equal(json_pos_path_push_index(path, sizeof(path), 1), 0);
	assert_int_equal(json_pos_path_push_key(path, sizeof(path), "t~x"), 0);
	assert_string_equal(path, "/b~1c/1/t~0x");
	assert_int_equal(json_pos_path_push_key(path, 14, "long"), -ENAMETOOLONG);
	json_pos_free(pos);
}

static void test_json_pos_finds_the_first_repeated_key_and_refuses_junk(void **state)
{
	static const char dup[] = "{\"a\": 1, \"b\": {\"c\": 1,\n \"c\": 2}, \"a\": 3}";
	struct json_pos *pos = NULL;
	struct json_pos_loc loc;
	const char *path;

	assert_int_equal(json_pos_scan(dup, strlen(dup), &pos, NULL), 0);
	assert_int_equal(json_pos_duplicate(pos, &path, &loc), 0);
	assert_string_equal(path, "/b/c");
	assert_int_equal(loc.key_line, 2);
	assert_int_equal(loc.key_col, 2);
	json_pos_free(pos);
	pos = NULL;
	assert_int_equal(json_pos_scan("{\"a\": }", 7, &pos, &loc), -EINVAL);
	assert_null(pos);
	assert_int_equal(loc.col, 7);
	assert_int_equal(json_pos_scan("{\"a\": 1} x", 10, &pos, NULL), -EINVAL);
	assert_int_equal(json_pos_scan("{\"a\\u0000\": 1}", 14, &pos, NULL), -EINVAL);
	assert_int_equal(json_pos_scan("[1, \"open", 9, &pos, NULL), -EINVAL);
	json_pos_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unknown_top_level_key_points_at_the_key),
		cmocka_unit_test(test_unknown_key_deep_in_a_command_points_at_the_key),
		cmocka_unit_test(test_first_unknown_key_in_the_text_is_reported),
		cmocka_unit_test(test_duplicate_key_points_at_the_repeat_not_the_first),
		cmocka_unit_test(test_wrong_types_point_at_the_value),
		cmocka_unit_test(test_decoy_env_names_no_real_variable),
		cmocka_unit_test(test_bad_values_point_at_the_value),
		cmocka_unit_test(test_bad_commands_point_at_the_value),
		cmocka_unit_test(test_bad_tools_point_at_the_key_or_value),
		cmocka_unit_test(test_env_allow_may_not_name_a_fixed_variable),
		cmocka_unit_test(test_bad_tests_point_at_the_value),
		cmocka_unit_test(test_missing_required_keys_point_at_the_object),
		cmocka_unit_test(test_syntax_errors_carry_jansson_positions),
		cmocka_unit_test(test_nesting_past_the_scanner_cap_is_refused_with_a_position),
		cmocka_unit_test(test_minimal_policy_gets_every_default),
		cmocka_unit_test(test_every_sandbox_value_is_read),
		cmocka_unit_test(test_detectors_section_and_its_defaults),
		cmocka_unit_test(test_tool_children_and_single_process),
		cmocka_unit_test(test_warnings_name_what_weakens_a_scope),
		cmocka_unit_test(test_warnings_past_the_cap_are_counted_in_a_last_warning),
		cmocka_unit_test(test_tests_are_read_with_their_positions),
		cmocka_unit_test(test_hash_is_sha256_of_the_file_bytes),
		cmocka_unit_test(test_files_that_are_missing_too_big_or_not_regular_are_refused),
		cmocka_unit_test(test_json_pos_records_keys_values_and_escaped_paths),
		cmocka_unit_test(test_json_pos_finds_the_first_repeated_key_and_refuses_junk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
