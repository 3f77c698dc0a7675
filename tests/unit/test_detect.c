/*
 * The detectors (detectors/detect.h) as pure functions: each rule fires on its pattern and not on
 * the honest neighbour of it, bursts are reported once per window, and the same events in the
 * same order give the same verdicts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "detectors/detect.h"
#include "fixtures.h"
#include "policy/policy.h"

static const char policy_text[] = "{\"version\": 1, \"name\": \"t\", \"sandbox\": {},"
				  " \"egress\": {\"allow\": [{\"name\": \"reg\", \"host\": "
				  "\"registry.test\", \"ports\": [443]}]},"
				  " \"tools\": {"
				  "  \"install_deps\": {\"egress\": [\"reg\"], \"commands\": "
				  "[{\"program\": \"/usr/bin/pip\", \"operands\": \"any\"}]},"
				  "  \"run_tests\": {\"commands\": [{\"program\": "
				  "\"/usr/bin/python3\", \"operands\": \"any\"}]}}}";

static const char behavior_policy[] =
	"{\"version\": 1, \"name\": \"b\", \"sandbox\": {},"
	" \"detectors\": {\"actions\": {\"high\": \"kill\"}%s},"
	" \"tools\": {"
	"  \"run_tests\": {\"children\": [\"/usr/bin/python3*\"], \"commands\": [{\"program\": "
	"\"/usr/bin/python3\", \"operands\": \"any\"}]},"
	"  \"shell_readonly\": {\"commands\": [{\"program\": \"/usr/bin/grep\", \"operands\": "
	"\"any\"}]},"
	"  \"grep\": {\"single_process\": true, \"commands\": [{\"program\": \"/usr/bin/grep\", "
	"\"operands\": \"any\"}]}}}";

static struct detect_state *behavior_state(const char *extra)
{
	struct detect_config c;
	struct detect_state *st = NULL;
	struct policy *p;
	char text[2048];

	snprintf(text, sizeof(text), behavior_policy, extra);
	detect_config_defaults(&c);
	p = fixture_policy("b.json", text);
	assert_int_equal(detect_state_new(p, &c, &st), 0);
	policy_free(p);
	return st;
}

static struct detect_state *new_state(int with_policy)
{
	struct detect_config c;
	struct detect_state *st = NULL;
	struct policy *p = with_policy ? fixture_policy("t.json", policy_text) : NULL;

	detect_config_defaults(&c);
	assert_int_equal(detect_state_new(p, &c, &st), 0);
	policy_free(p);
	return st;
}

/* Feeds one event; returns the verdict count and the first verdict's rule (or ""). */
static size_t feed(struct detect_state *st, int64_t id, int64_t ts, const char *tool,
		   const char *kind, const char *fields, struct detect_verdict *v)
{
	struct event ev;
	size_t n;

	event_init(&ev);
	ev.id = id;
	ev.ts = ts;
	ev.step = 3;
	strcpy(ev.sandbox, "s");
	strcpy(ev.tool, tool);
	strcpy(ev.kind, kind);
	ev.source = EVENT_SOURCE_EBPF;
	ev.fields = (char *)fields;
	ev.fields_len = strlen(fields);
	n = detect_event(st, &ev, v, 4);
	ev.fields = NULL;
	return n;
}

#define SEC 1000000000LL
static const char refused[] =
	"{\"family\":\"inet\",\"type\":1,\"protocol\":6,\"cgroup_id\":5,\"dst\":\"203.0.113.%d\","
	"\"port\":443,\"egress_hook\":\"refused\",\"errno\":1}";

static void test_metadata_is_critical_anywhere(void **state)
{
	struct detect_state *st = new_state(0);
	struct detect_verdict v[4];

	assert_int_equal(
		feed(st, 1, SEC, "fetch", "net.connect",
		     "{\"dst\":\"169.254.169.254\",\"port\":80,\"egress_hook\":\"passed\"}", v),
		1);
	assert_string_equal(v[0].rule, "net.metadata");
	assert_int_equal(v[0].severity, DETECT_CRITICAL);
	assert_int_equal(v[0].event_ids[0], 1);
	assert_int_equal(feed(st, 2, SEC, "fetch", "net.denied",
			      "{\"packets\":3,\"src\":\"10.199.0.2\",\"dst\":\"fd00:ec2::254\"}",
			      v),
			 1);
	assert_int_equal(feed(st, 3, SEC, "fetch", "net.connect",
			      "{\"dst\":\"198.51.100.7\",\"port\":443,\"egress_hook\":\"passed\"}",
			      v),
			 0);
	detect_state_free(st);
}

static void test_burst_fires_once_per_window(void **state)
{
	struct detect_state *st = new_state(0);
	struct detect_verdict v[4];
	char f[300];
	size_t total = 0;

	snprintf(f, sizeof(f), refused, 66);
	for (int i = 0; i < 4; i++)
		assert_int_equal(feed(st, i + 1, SEC + i, "t", "net.connect", f, v), 0);
	assert_int_equal(feed(st, 5, SEC + 4, "t", "net.connect", f, v), 1);
	assert_string_equal(v[0].rule, "net.deny-burst");
	assert_int_equal(v[0].n_ids, 5);
	assert_int_equal(v[0].event_ids[0], 1);
	assert_int_equal(v[0].event_ids[4], 5);
	for (int i = 0; i < 20; i++) /* the same window: quiet */
		total += feed(st, 6 + i, SEC + 5 + i, "t", "net.connect", f, v);
	assert_int_equal(total, 0);
	/* Spread out (one per 3 s), never five within 10 s: no burst. */
	detect_state_free(st);
	st = new_state(0);
	for (int i = 0; i < 10; i++)
		total += feed(st, i + 1, SEC + i * 3 * SEC, "t", "net.connect", f, v);
	assert_int_equal(total, 0);
	detect_state_free(st);
}

static void test_scan_counts_distinct_destinations(void **state)
{
	struct detect_state *st = new_state(0);
	struct detect_verdict v[4];
	char f[300];

	for (int i = 0; i < 2; i++) {
		snprintf(f, sizeof(f), refused, i);
		assert_int_equal(feed(st, i + 1, SEC + i, "t", "net.connect", f, v), 0);
	}
	snprintf(f, sizeof(f), refused, 2);
	assert_int_equal(feed(st, 3, SEC + 2, "t", "net.connect", f, v), 1);
	assert_string_equal(v[0].rule, "net.deny-scan");
	detect_state_free(st);
}

/*
 * A tool with no egress is flagged for what reaches beyond the sandbox, or what the egress hook
 * refused; not for a socket alone, nor for talking to its own loopback (pip's IPv6 probe, a
 * test's local server). Without the policy, nothing.
 */
static void test_network_out_of_scope_is_what_leaves_and_needs_the_policy(void **state)
{
	struct detect_state *st = new_state(1), *none = new_state(0);
	struct detect_verdict v[4];
	const char *inet = "{\"family\":\"inet\",\"type\":1,\"protocol\":0,\"cgroup_id\":5}";
	const char *out = "{\"family\":\"inet\",\"dst\":\"192.0.2.1\",\"port\":80,"
			  "\"egress_hook\":\"passed\"}";
	const char *lo = "{\"family\":\"inet\",\"dst\":\"127.0.0.1\",\"port\":8000,"
			 "\"egress_hook\":\"passed\"}";
	const char *lo6 = "{\"family\":\"inet6\",\"dst\":\"::1\",\"port\":8000,"
			  "\"egress_hook\":\"passed\"}";
	const char *lo_refused = "{\"family\":\"inet\",\"dst\":\"127.0.0.1\",\"port\":1,"
				 "\"egress_hook\":\"refused\",\"errno\":1}";

	assert_int_equal(feed(st, 1, SEC, "run_tests", "net.socket", inet, v), 0);
	assert_int_equal(feed(st, 2, SEC, "run_tests", "net.connect", lo, v), 0);
	assert_int_equal(feed(st, 3, SEC, "run_tests", "net.connect", lo6, v), 0);
	assert_int_equal(feed(st, 4, SEC, "run_tests", "net.sendmsg", lo, v), 0);
	assert_int_equal(feed(st, 5, SEC, "run_tests", "net.connect", out, v), 1);
	assert_string_equal(v[0].rule, "tool.network-out-of-scope");
	assert_int_equal(v[0].severity, DETECT_HIGH);
	assert_int_equal(feed(st, 6, SEC, "run_tests", "net.connect", lo_refused, v), 1);
	assert_string_equal(v[0].rule, "tool.network-out-of-scope");
	assert_int_equal(feed(st, 7, SEC, "install_deps", "net.connect", out, v), 0);
	assert_int_equal(feed(none, 8, SEC, "run_tests", "net.connect", out, v), 0);
	detect_state_free(st);
	detect_state_free(none);
}

static void test_escape_class_seccomp_and_resources(void **state)
{
	struct detect_state *st = new_state(0);
	struct detect_verdict v[4];
	struct event ev;

	assert_int_equal(feed(st, 1, SEC, "t", "seccomp.denied",
			      "{\"syscall\":101,\"name\":\"ptrace\",\"action\":\"errno\"}", v),
			 1);
	assert_string_equal(v[0].rule, "escape.seccomp");
	assert_int_equal(v[0].severity, DETECT_CRITICAL);
	assert_int_equal(feed(st, 2, SEC, "t", "seccomp.denied",
			      "{\"syscall\":39,\"name\":\"getpid\",\"action\":\"errno\"}", v),
			 0);
	/* cgroup.stats of the sandbox's own cgroup (no step): a rise fires, a repeat does not. */
	event_init(&ev);
	ev.id = 3;
	strcpy(ev.kind, "cgroup.stats");
	ev.fields =
		(char *)"{\"cgroup\":\"firebreak/s\",\"memory_oom_kill\":1,\"pids_max_hits\":0}";
	assert_int_equal(detect_event(st, &ev, v, 4), 1);
	assert_string_equal(v[0].rule, "resource.oom-kill");
	assert_int_equal(detect_event(st, &ev, v, 4), 0);
	/* Near the memory cap: once at 90%, again only after falling below 80%. */
	ev.fields = (char *)"{\"memory_current\":95,\"memory_max\":100,\"memory_oom_kill\":1}";
	assert_int_equal(detect_event(st, &ev, v, 4), 1);
	assert_string_equal(v[0].rule, "resource.memory-near-cap");
	assert_int_equal(detect_event(st, &ev, v, 4), 0);
	ev.fields = (char *)"{\"memory_current\":85,\"memory_max\":100,\"memory_oom_kill\":1}";
	assert_int_equal(detect_event(st, &ev, v, 4), 0);
	ev.fields = (char *)"{\"memory_current\":70,\"memory_max\":100,\"memory_oom_kill\":1}";
	assert_int_equal(detect_event(st, &ev, v, 4), 0);
	ev.fields = (char *)"{\"memory_current\":91,\"memory_max\":100,\"memory_oom_kill\":1}";
	assert_int_equal(detect_event(st, &ev, v, 4), 1);
	ev.fields = (char *)"{\"memory_current\":99,\"memory_oom_kill\":1}"; /* no cap: no rule */
	assert_int_equal(detect_event(st, &ev, v, 4), 0);
	/* The workspace, likewise. */
	ev.fields = (char *)"{\"workspace_used\":92,\"workspace_size\":100,\"memory_oom_kill\":1}";
	assert_int_equal(detect_event(st, &ev, v, 4), 1);
	assert_string_equal(v[0].rule, "resource.workspace-full");
	assert_int_equal(detect_event(st, &ev, v, 4), 0);
	ev.fields = NULL;
	detect_state_free(st);
}

/* Replay's promise: the same stream gives the same verdicts, field by field. */
static void test_same_events_same_verdicts(void **state)
{
	struct detect_verdict a[64], b[64];
	size_t na = 0, nb = 0;

	for (int round = 0; round < 2; round++) {
		struct detect_state *st = new_state(1);
		struct detect_verdict *out = round ? b : a;
		size_t *n = round ? &nb : &na;
		char f[300];

		for (int i = 0; i < 40; i++) {
			snprintf(f, sizeof(f), refused, i % 4);
			*n += feed(st, i + 1, SEC + (int64_t)i * SEC / 3, "run_tests",
				   "net.connect", f, out + *n);
		}
		detect_state_free(st);
	}
	assert_true(na > 2);
	assert_int_equal(na, nb);
	for (size_t i = 0; i < na; i++) {
		assert_string_equal(a[i].rule, b[i].rule);
		assert_int_equal(a[i].ts, b[i].ts);
		assert_int_equal(a[i].n_ids, b[i].n_ids);
		assert_memory_equal(a[i].event_ids, b[i].event_ids, sizeof(a[i].event_ids));
		assert_string_equal(a[i].reason, b[i].reason);
	}
}

static void test_behavior_rules_judge_by_the_tool_scope(void **state)
{
	struct detect_state *st = behavior_state("");
	struct detect_verdict v[4];

	/* run_tests declares its children: python is one, git is not (the lesson). */
	assert_int_equal(feed(st, 1, SEC, "run_tests", "proc.exec",
			      "{\"path\":\"/usr/bin/python3.11\",\"argv\":[\"python3\"]}", v),
			 0);
	assert_int_equal(
		feed(st, 2, SEC, "run_tests", "proc.exec", "{\"path\":\"/usr/bin/git\"}", v), 1);
	assert_string_equal(v[0].rule, "behavior.exec-out-of-scope");
	/* shell_readonly declares none: only interpreters are findings. */
	assert_int_equal(
		feed(st, 3, SEC, "shell_readonly", "proc.exec", "{\"path\":\"/usr/bin/cat\"}", v),
		0);
	assert_int_equal(feed(st, 4, SEC, "shell_readonly", "proc.exec",
			      "{\"path\":\"/usr/bin/python3\"}", v),
			 1);
	assert_string_equal(v[0].rule, "behavior.interpreter");
	assert_int_equal(
		feed(st, 5, SEC, "shell_readonly", "proc.exec", "{\"path\":\"/bin/dash\"}", v), 1);
	/* A single-process tool forking; another tool's fork is nobody's business. */
	assert_int_equal(feed(st, 6, SEC, "grep", "proc.fork", "{\"cgroup_id\":1}", v), 1);
	assert_string_equal(v[0].rule, "behavior.fork");
	assert_int_equal(feed(st, 7, SEC, "run_tests", "proc.fork", "{\"cgroup_id\":1}", v), 0);
	/* The enforcer had to kill what a step left behind. */
	assert_int_equal(feed(st, 8, SEC, "run_tests", "step.end",
			      "{\"exit_code\":0,\"leftover_killed\":true}", v),
			 1);
	assert_string_equal(v[0].rule, "behavior.step-outlived");
	assert_int_equal(feed(st, 9, SEC, "run_tests", "step.end",
			      "{\"exit_code\":0,\"leftover_killed\":false}", v),
			 0);
	/* The policy's actions: high kills here. */
	assert_int_equal(detect_action(st, DETECT_HIGH), POLICY_ACTION_KILL);
	assert_int_equal(detect_action(st, DETECT_MEDIUM), POLICY_ACTION_ALERT);
	detect_state_free(st);
}

static void test_rules_the_policy_switches_off_stay_quiet(void **state)
{
	struct detect_state *st = behavior_state(", \"off\": [\"behavior.interpreter\"]");
	struct detect_verdict v[4];

	assert_int_equal(feed(st, 1, SEC, "shell_readonly", "proc.exec",
			      "{\"path\":\"/usr/bin/python3\"}", v),
			 0);
	assert_int_equal(feed(st, 2, SEC, "grep", "proc.fork", "{\"cgroup_id\":1}", v), 1);
	detect_state_free(st);
}

/* The escape hooks' events: each fires critical; the sandbox's own unix socket and a path that
 * merely mentions the flag's name inside its (escaped) text do not. */
static void test_escape_indicators(void **state)
{
	struct detect_state *st = new_state(0);
	struct detect_verdict v[4];

	assert_int_equal(feed(st, 1, SEC, "t", "seccomp.denied",
			      "{\"syscall\":105,\"name\":\"setuid\",\"action\":\"errno\"}", v),
			 1);
	assert_string_equal(v[0].rule, "escape.seccomp");
	assert_int_equal(
		feed(st, 2, SEC, "t", "host.sysctl",
		     "{\"name\":\"kernel/core_pattern\",\"value\":\"|/x\",\"hook\":\"refused\"}",
		     v),
		1);
	assert_string_equal(v[0].rule, "escape.sysctl-write");
	assert_int_equal(v[0].severity, DETECT_CRITICAL);
	assert_non_null(strstr(v[0].reason, "kernel/core_pattern"));
	assert_int_equal(feed(st, 3, SEC, "t", "host.cgroup",
			      "{\"op\":\"mkdir\",\"path\":\"/firebreak/s/x\"}", v),
			 1);
	assert_string_equal(v[0].rule, "escape.cgroup-write");
	assert_int_equal(
		feed(st, 4, SEC, "t", "net.unix",
		     "{\"op\":\"connect\",\"path\":\"/tmp/own.sock\",\"monitor_path\":false}", v),
		0);
	assert_int_equal(feed(st, 5, SEC, "t", "net.unix",
			      "{\"op\":\"connect\",\"path\":\"/"
			      "x\\\",\\\"monitor_path\\\":true\",\"monitor_path\":false}",
			      v),
			 0);
	assert_int_equal(feed(st, 6, SEC, "t", "net.unix",
			      "{\"op\":\"connect\",\"path\":\"/run/firebreak/"
			      "control.sock\",\"monitor_path\":true}",
			      v),
			 1);
	assert_string_equal(v[0].rule, "escape.monitor-socket");
	detect_state_free(st);
}

/* The file rules: each fires on its attacker's event and not on the honest one beside it. */
static void test_file_rules(void **state)
{
	struct detect_state *st = new_state(0);
	struct detect_verdict v[4];

	(void)state;
	/* The step's first event dates its start. */
	assert_int_equal(feed(st, 1, 10 * SEC, "t", "proc.exec", "{\"path\":\"/usr/bin/sh\"}", v),
			 0);
	/* Another process's environ; its own is anyone's business (no target_pid then). */
	assert_int_equal(feed(st, 2, 11 * SEC, "t", "file.open",
			      "{\"path\":\"/proc/7/environ\",\"write\":false,\"target_pid\":7}", v),
			 1);
	assert_string_equal(v[0].rule, "file.sensitive-read");
	assert_int_equal(v[0].severity, DETECT_HIGH);
	assert_int_equal(feed(st, 3, 11 * SEC, "t", "file.open",
			      "{\"path\":\"/proc/9/environ\",\"write\":false}", v),
			 0);
	assert_int_equal(feed(st, 4, 11 * SEC, "t", "file.open", "{\"path\":\"/proc/kcore\"}", v),
			 1);
	/* Persistence: .bashrc, a .pth in /tmp, a git hook; not a .pth in site-packages, not a
	 * hook's sample. */
	assert_int_equal(feed(st, 5, 12 * SEC, "t", "file.write",
			      "{\"path\":\"/home/agent/.bashrc\",\"size\":9}", v),
			 1);
	assert_string_equal(v[0].rule, "file.persistence");
	assert_int_equal(feed(st, 6, 12 * SEC, "t", "file.write", "{\"path\":\"/tmp/x.pth\"}", v),
			 1);
	assert_int_equal(
		feed(st, 7, 12 * SEC, "t", "file.write",
		     "{\"path\":\"/tmp/v/lib/python3.11/site-packages/distutils-precedence.pth\"}",
		     v),
		0);
	assert_int_equal(feed(st, 8, 12 * SEC, "t", "file.write",
			      "{\"path\":\"/workspace/r/.git/hooks/pre-commit.sample\"}", v),
			 0);
	assert_int_equal(feed(st, 9, 12 * SEC, "t", "file.rename",
			      "{\"from\":\"/tmp/a\",\"to\":\"/workspace/r/.git/hooks/pre-commit\"}",
			      v),
			 1);
	/* Anti-forensics: history removed or emptied; an old file's mtime set back, not a fresh
	 * one's (tar x). */
	assert_int_equal(feed(st, 10, 13 * SEC, "t", "file.unlink",
			      "{\"path\":\"/home/agent/.bash_history\"}", v),
			 1);
	assert_string_equal(v[0].rule, "file.anti-forensics");
	assert_int_equal(feed(st, 11, 13 * SEC, "t", "file.write",
			      "{\"path\":\"/home/agent/.bash_history\",\"size\":0}", v),
			 1);
	assert_int_equal(feed(st, 12, 13 * SEC, "t", "file.write",
			      "{\"path\":\"/home/agent/.bash_history\",\"size\":40}", v),
			 0);
	assert_int_equal(feed(st, 13, 13 * SEC, "t", "file.utimes",
			      "{\"path\":\"/workspace/n\",\"born\":12000000000,\"mtime\":1}", v),
			 0);
	assert_int_equal(feed(st, 14, 13 * SEC, "t", "file.utimes",
			      "{\"path\":\"/workspace/o\",\"born\":9000000000,\"mtime\":1}", v),
			 1);
	assert_int_equal(v[0].severity, DETECT_MEDIUM);
	/* setuid anywhere, setgid on a file only. */
	assert_int_equal(feed(st, 15, 14 * SEC, "t", "file.attrib",
			      "{\"path\":\"/workspace/p\",\"setuid\":true,\"setgid\":false}", v),
			 1);
	assert_string_equal(v[0].rule, "file.setuid");
	assert_int_equal(
		feed(st, 16, 14 * SEC, "t", "file.create",
		     "{\"path\":\"/workspace/d\",\"dir\":true,\"setuid\":false,\"setgid\":true}",
		     v),
		0);
	assert_int_equal(feed(st, 17, 14 * SEC, "t", "file.attrib",
			      "{\"path\":\"/workspace/p\",\"setuid\":false,\"mode\":\"0755\"}", v),
			 0);
	detect_state_free(st);
}

/* Credential hunting: files in three directories, or five, in one step; one verdict a step; a
 * vendored CA bundle is none. */
static void test_file_credential_hunt(void **state)
{
	static const char *const paths[] = {
		"/tmp/v/lib/python3.11/site-packages/pip/_vendor/certifi/cacert.pem",
		"/workspace/.ssh/id_ed25519",
		"/workspace/.aws/credentials",
		"/tmp/.netrc",
		"/tmp/.git-credentials",
	};
	static const size_t fires[] = { 0, 0, 0, 1, 0 };
	struct detect_state *st = new_state(0);
	struct detect_verdict v[4];
	char f[128];

	(void)state;
	for (size_t i = 0; i < 5; i++) {
		snprintf(f, sizeof(f), "{\"path\":\"%s\"}", paths[i]);
		assert_int_equal(feed(st, (int64_t)i + 1, SEC, "t", "file.open", f, v), fires[i]);
		if (fires[i]) {
			assert_string_equal(v[0].rule, "file.credential-hunt");
			assert_int_equal(v[0].severity, DETECT_HIGH);
		}
	}
	detect_state_free(st);
}

/*
 * Every rule of the catalogue (policy/policy.h) has its own name, a policy can switch it off by
 * that name, and docs/detectors.md's table has a row for it: the three never drift apart.
 */
static void test_every_rule_is_named_once_known_to_the_policy_and_documented(void **state)
{
	char path[PATH_MAX], *doc = NULL;
	size_t len = 0;
	FILE *f;

	fixture_repo_path("docs/detectors.md", path, sizeof(path));
	assert_non_null(f = fopen(path, "r"));
	assert_true(getdelim(&doc, &len, '\0', f) > 0);
	fclose(f);
	for (int r = 0; r < _RULE_MAX; r++) {
		const char *name = policy_rule_name((enum policy_rule)r);
		char row[96];

		assert_int_equal(policy_rule_from_name(name), r);
		snprintf(row, sizeof(row), "| `%s` |", name);
		if (!strstr(doc, row))
			fail_msg("docs/detectors.md has no row for rule %s", name);
	}
	assert_int_equal(policy_rule_from_name("net.no-such-rule"), -EINVAL);
	free(doc);
}

/* Throttled 75% of a 10 s window: saturated, once; a calm window re-arms it. */
static void test_cpu_saturation_over_a_window(void **state)
{
	struct detect_state *st = new_state(0);
	struct detect_verdict v[4];
	struct event ev;
	char f[128];
	size_t n = 0;
	/* (seconds, throttled seconds): busy 0-10 s and 10-20 s, calm 20-30 s, busy 30-40 s */
	static const int64_t samples[][2] = { { 0, 0 },	  { 5, 4 },   { 10, 8 },
					      { 20, 16 }, { 30, 17 }, { 40, 25 } };
	int fired[6] = { 0 };

	event_init(&ev);
	strcpy(ev.kind, "cgroup.stats");
	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		snprintf(f, sizeof(f), "{\"cpu_usage_us\":1,\"cpu_throttled_us\":%lld}",
			 (long long)samples[i][1] * 1000000);
		ev.id = (int64_t)i + 1;
		ev.ts = SEC + samples[i][0] * SEC;
		ev.fields = f;
		fired[i] = (int)detect_event(st, &ev, v, 4);
		if (fired[i])
			assert_string_equal(v[0].rule, "resource.cpu-saturated");
		n += (size_t)fired[i];
	}
	ev.fields = NULL;
	/* At 10 s (80% of the first window), not at 20 s (still saturated), again at 40 s. */
	assert_int_equal(fired[2], 1);
	assert_int_equal(fired[3], 0);
	assert_int_equal(fired[5], 1);
	assert_int_equal(n, 2);
	detect_state_free(st);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_metadata_is_critical_anywhere),
		cmocka_unit_test(test_burst_fires_once_per_window),
		cmocka_unit_test(test_scan_counts_distinct_destinations),
		cmocka_unit_test(test_network_out_of_scope_is_what_leaves_and_needs_the_policy),
		cmocka_unit_test(test_escape_class_seccomp_and_resources),
		cmocka_unit_test(test_same_events_same_verdicts),
		cmocka_unit_test(test_behavior_rules_judge_by_the_tool_scope),
		cmocka_unit_test(test_rules_the_policy_switches_off_stay_quiet),
		cmocka_unit_test(test_every_rule_is_named_once_known_to_the_policy_and_documented),
		cmocka_unit_test(test_cpu_saturation_over_a_window),
		cmocka_unit_test(test_escape_indicators),
		cmocka_unit_test(test_file_rules),
		cmocka_unit_test(test_file_credential_hunt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
