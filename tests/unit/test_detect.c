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
	/* A refused kill is one aimed at init (critical), a logged one kill(-1) (high); a logged
	 * prlimit64 is a record, and a refused kill with no step (init's own) is not judged. */
	assert_int_equal(feed(st, 10, SEC, "t", "seccomp.denied",
			      "{\"syscall\":62,\"name\":\"kill\",\"action\":\"errno\"}", v),
			 1);
	assert_string_equal(v[0].rule, "signal.beyond-step");
	assert_int_equal(v[0].severity, DETECT_CRITICAL);
	assert_int_equal(feed(st, 11, SEC, "t", "seccomp.logged",
			      "{\"syscall\":62,\"name\":\"kill\",\"action\":\"log\"}", v),
			 1);
	assert_string_equal(v[0].rule, "signal.beyond-step");
	assert_int_equal(v[0].severity, DETECT_HIGH);
	assert_int_equal(feed(st, 12, SEC, "t", "seccomp.logged",
			      "{\"syscall\":302,\"name\":\"prlimit64\",\"action\":\"log\"}", v),
			 0);
	assert_int_equal(feed(st, 13, SEC, "t", "seccomp.logged",
			      "{\"syscall\":200,\"name\":\"tkill\",\"action\":\"log\"}", v),
			 0);
	assert_int_equal(feed(st, 14, SEC, "t", "seccomp.denied",
			      "{\"syscall\":161,\"name\":\"chroot\",\"action\":\"errno\"}", v),
			 1);
	assert_string_equal(v[0].rule, "escape.seccomp");
	assert_int_equal(feed(st, 15, SEC, "t", "seccomp.denied",
			      "{\"syscall\":133,\"name\":\"mknod\",\"action\":\"errno\"}", v),
			 1);
	assert_string_equal(v[0].rule, "escape.seccomp");
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

/* Feeds one event of process pid (parent ppid, comm) on step; returns the verdict count. */
static size_t feed_as(struct detect_state *st, int64_t id, int64_t ts, int64_t step, int pid,
		      int ppid, const char *comm, const char *tool, const char *kind,
		      const char *fields, struct detect_verdict *v)
{
	struct event ev;
	size_t n;

	event_init(&ev);
	ev.id = id;
	ev.ts = ts;
	ev.step = step;
	ev.pid = pid;
	ev.ppid = ppid;
	strcpy(ev.comm, comm);
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

/* signal.beyond-step: other steps and the sandbox high, outside critical; the own step and the
 * sandbox's init (no step) are not judged. */
#define SIGNAL_SENT                                                                                \
	"{\"signal\":15,\"signal_name\":\"SIGTERM\",\"target_pid\":9,\"target_comm\":\"sleep\","   \
	"\"where\":\"%s\",\"result\":\"delivered\"}"
static void test_signal_beyond_step(void **state)
{
	struct detect_state *st = new_state(0);
	struct detect_verdict v[4];
	char buf[256];

	snprintf(buf, sizeof(buf), SIGNAL_SENT, "same-step");
	assert_int_equal(feed_as(st, 1, SEC, 3, 5, 1, "bash", "t", "signal.sent", buf, v), 0);
	snprintf(buf, sizeof(buf), SIGNAL_SENT, "other-step");
	assert_int_equal(feed_as(st, 2, SEC, 3, 5, 1, "bash", "t", "signal.sent", buf, v), 1);
	assert_string_equal(v[0].rule, "signal.beyond-step");
	assert_int_equal(v[0].severity, DETECT_HIGH);
	assert_int_equal(
		feed_as(st, 3, SEC, EVENT_STEP_NONE, 5, 1, "init", "", "signal.sent", buf, v), 0);
	snprintf(buf, sizeof(buf), SIGNAL_SENT, "sandbox");
	assert_int_equal(feed_as(st, 4, SEC, 3, 5, 1, "bash", "t", "signal.sent", buf, v), 1);
	assert_int_equal(v[0].severity, DETECT_HIGH);
	snprintf(buf, sizeof(buf), SIGNAL_SENT, "outside");
	assert_int_equal(feed_as(st, 5, SEC, 3, 5, 1, "bash", "t", "signal.sent", buf, v), 1);
	assert_int_equal(v[0].severity, DETECT_CRITICAL);
	detect_state_free(st);
}

/* net.unexpected-listener: an accept from beyond loopback; a listen on 0.0.0.0 is no verdict. */
static void test_unexpected_listener(void **state)
{
	struct detect_state *st = new_state(0);
	struct detect_verdict v[4];

	assert_int_equal(feed(st, 1, SEC, "t", "net.listen",
			      "{\"family\":\"inet\",\"address\":\"0.0.0.0\",\"port\":8000}", v),
			 0);
	assert_int_equal(feed(st, 2, SEC, "t", "net.accept",
			      "{\"address\":\"127.0.0.1\",\"port\":8000,\"peer_address\":"
			      "\"127.0.0.1\",\"peer_port\":4000}",
			      v),
			 0);
	assert_int_equal(feed(st, 3, SEC, "t", "net.accept",
			      "{\"address\":\"::1\",\"port\":8000,\"peer_address\":\"::1\"}", v),
			 0);
	assert_int_equal(feed(st, 4, SEC, "t", "net.accept",
			      "{\"address\":\"10.199.0.2\",\"port\":8000,\"peer_address\":"
			      "\"203.0.113.5\",\"peer_port\":4000}",
			      v),
			 1);
	assert_string_equal(v[0].rule, "net.unexpected-listener");
	assert_int_equal(v[0].severity, DETECT_HIGH);
	detect_state_free(st);
}

/* net.reverse-shell: a shell or interpreter on an inet socket; a shell by the process (or its
 * child) whose connect beyond loopback was refused, within 10 s. */
static void test_reverse_shell(void **state)
{
	struct detect_state *st = new_state(0);
	struct detect_verdict v[4];
	const char *out = "{\"family\":\"inet\",\"dst\":\"203.0.113.9\",\"port\":4444,"
			  "\"egress_hook\":\"refused\",\"errno\":1}";
	const char *lo = "{\"family\":\"inet\",\"dst\":\"127.0.0.1\",\"port\":4444,"
			 "\"egress_hook\":\"refused\",\"errno\":1}";

	assert_int_equal(feed_as(st, 1, SEC, 3, 20, 10, "bash", "t", "proc.exec",
				 "{\"path\":\"/bin/bash\",\"stdio_socket\":\"stdin,stdout\"}", v),
			 1);
	assert_string_equal(v[0].rule, "net.reverse-shell");
	assert_int_equal(v[0].severity, DETECT_CRITICAL);
	assert_int_equal(feed_as(st, 2, SEC, 3, 21, 10, "python3", "t", "proc.exec",
				 "{\"path\":\"/usr/bin/python3.11\",\"stdio_socket\":\"stdin\"}",
				 v),
			 1);
	assert_int_equal(feed_as(st, 3, SEC, 3, 22, 10, "nc", "t", "proc.exec",
				 "{\"path\":\"/usr/bin/nc\",\"stdio_socket\":\"stdin\"}", v),
			 0);
	assert_int_equal(feed_as(st, 4, SEC, 3, 23, 10, "bash", "t", "proc.exec",
				 "{\"path\":\"/bin/bash\"}", v),
			 0);
	/* A shell after a refused connect: its own pid (a re-exec) or a child of it. */
	assert_int_equal(feed_as(st, 5, 2 * SEC, 3, 50, 10, "python3", "t", "net.connect", out, v),
			 0);
	assert_int_equal(feed_as(st, 6, 3 * SEC, 3, 51, 50, "sh", "t", "proc.exec",
				 "{\"path\":\"/bin/sh\"}", v),
			 1);
	assert_string_equal(v[0].rule, "net.reverse-shell");
	assert_int_equal(v[0].n_ids, 2);
	assert_int_equal(v[0].event_ids[0], 5);
	/* Once per refusal; too late; a refused loopback connect; an unrelated process. */
	assert_int_equal(feed_as(st, 7, 3 * SEC, 3, 52, 50, "sh", "t", "proc.exec",
				 "{\"path\":\"/bin/sh\"}", v),
			 0);
	assert_int_equal(feed_as(st, 8, 4 * SEC, 3, 60, 10, "python3", "t", "net.connect", out, v),
			 0);
	assert_int_equal(feed_as(st, 9, 20 * SEC, 3, 60, 10, "sh", "t", "proc.exec",
				 "{\"path\":\"/bin/sh\"}", v),
			 0);
	assert_int_equal(feed_as(st, 10, 21 * SEC, 3, 70, 10, "python3", "t", "net.connect", lo, v),
			 0);
	assert_int_equal(feed_as(st, 11, 21 * SEC, 3, 70, 10, "sh", "t", "proc.exec",
				 "{\"path\":\"/bin/sh\"}", v),
			 0);
	assert_int_equal(
		feed_as(st, 12, 22 * SEC, 3, 80, 10, "python3", "t", "net.connect", out, v), 0);
	assert_int_equal(feed_as(st, 13, 22 * SEC, 3, 81, 10, "sh", "t", "proc.exec",
				 "{\"path\":\"/bin/sh\"}", v),
			 0);
	detect_state_free(st);
}

/* exec.drift: memfd and deleted critical, the sandbox's /tmp and /dev/shm high, the workspace
 * (an honest build's output) and the host nothing. */
static void test_exec_drift(void **state)
{
	static const struct {
		const char *origin;
		size_t n;
		enum detect_severity sev;
	} cases[] = {
		{ "memfd", 1, DETECT_CRITICAL },
		{ "deleted", 1, DETECT_CRITICAL },
		{ "tmp", 1, DETECT_HIGH },
		{ "shm", 1, DETECT_HIGH },
		{ "workspace", 0, 0 },
		{ "host", 0, 0 },
		{ "tmpfs", 0, 0 },
	};
	struct detect_state *st = new_state(0);
	struct detect_verdict v[4];
	char buf[128];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(buf, sizeof(buf), "{\"path\":\"/x/prog\",\"exe_origin\":\"%s\"}",
			 cases[i].origin);
		assert_int_equal(
			feed_as(st, (int64_t)i + 1, SEC, 3, 5, 1, "prog", "t", "proc.exec", buf, v),
			cases[i].n);
		if (cases[i].n) {
			assert_string_equal(v[0].rule, "exec.drift");
			assert_int_equal(v[0].severity, cases[i].sev);
		}
	}
	detect_state_free(st);
}

/* exec.masquerade: a daemon's name as comm or argv[0], or renamed to one. */
static void test_exec_masquerade(void **state)
{
	struct detect_state *st = new_state(0);
	struct detect_verdict v[4];

	assert_int_equal(feed_as(st, 1, SEC, 3, 5, 1, "sshd", "t", "proc.exec",
				 "{\"path\":\"/workspace/sshd\",\"argv\":[\"sshd\"]}", v),
			 1);
	assert_string_equal(v[0].rule, "exec.masquerade");
	assert_int_equal(v[0].severity, DETECT_HIGH);
	assert_int_equal(feed_as(st, 2, SEC, 3, 5, 1, "sleep", "t", "proc.exec",
				 "{\"path\":\"/bin/sleep\",\"argv\":[\"[kworker/0:1]\",\"9\"]}", v),
			 1);
	assert_int_equal(feed_as(st, 3, SEC, 3, 5, 1, "sleep", "t", "proc.exec",
				 "{\"path\":\"/bin/sleep\",\"argv\":[\"kworker/0:1\",\"9\"]}", v),
			 1);
	assert_int_equal(feed_as(st, 4, SEC, 3, 5, 1, "python3", "t", "proc.exec",
				 "{\"path\":\"/usr/bin/python3\",\"argv\":[\"python3\",\"-m\"]}",
				 v),
			 0);
	assert_int_equal(feed_as(st, 5, SEC, 3, 5, 1, "python3.11", "t", "proc.rename",
				 "{\"old_comm\":\"python3.11\",\"new_comm\":\"systemd-journal\","
				 "\"exe\":\"python3.11\"}",
				 v),
			 1);
	assert_string_equal(v[0].rule, "exec.masquerade");
	assert_int_equal(feed_as(st, 6, SEC, 3, 5, 1, "python3.11", "t", "proc.rename",
				 "{\"old_comm\":\"python3.11\",\"new_comm\":\"pool-1\","
				 "\"exe\":\"python3.11\"}",
				 v),
			 0);
	assert_int_equal(feed_as(st, 7, SEC, 3, 5, 1, "sshd", "t", "proc.rename",
				 "{\"old_comm\":\"sshd\",\"new_comm\":\"sshd\",\"exe\":\"sshd\"}",
				 v),
			 0);
	detect_state_free(st);
}

static const char loader_policy[] =
	"{\"version\": 1, \"name\": \"l\", \"sandbox\": {\"env\": {\"LANG\": \"C\"}},"
	" \"tools\": {"
	"  \"run_tests\": {\"env\": {\"PYTHONPATH\": \"/workspace/.deps\"}, \"env_allow\": "
	"[\"NODE_OPTIONS\"], \"commands\": [{\"program\": \"/usr/bin/python3\", \"operands\": "
	"\"any\"}]},"
	"  \"git\": {\"env\": {\"GIT_CONFIG_COUNT\": \"1\", \"GIT_CONFIG_KEY_0\": \"core.pager\","
	" \"GIT_CONFIG_VALUE_0\": \"cat\"}, \"commands\": [{\"program\": \"/usr/bin/git\", "
	"\"operands\": \"any\"}]},"
	"  \"pip\": {\"commands\": [{\"program\": \"/usr/bin/python3\", \"operands\": \"any\"}]}}}";

/* exec.loader-injection: a variable the policy does not start the tool with, not inherited, not
 * set by an honest setter (git for git's children, a python's PYTHONPATH for a python). */
static void test_loader_injection(void **state)
{
	struct detect_config c;
	struct detect_state *st = NULL;
	struct policy *p = fixture_policy("l.json", loader_policy);
	struct detect_verdict v[4];

	detect_config_defaults(&c);
	assert_int_equal(detect_state_new(p, &c, &st), 0);
	policy_free(p);
	/* What the policy sets or lets through. */
	assert_int_equal(feed_as(st, 1, SEC, 3, 10, 1, "python3", "run_tests", "proc.exec",
				 "{\"path\":\"/usr/bin/python3\",\"loader_env\":\"PYTHONPATH,"
				 "NODE_OPTIONS\",\"parent_exe\":\"firebreak\"}",
				 v),
			 0);
	assert_int_equal(feed_as(st, 2, SEC, 3, 11, 1, "git", "git", "proc.exec",
				 "{\"path\":\"/usr/bin/git\",\"loader_env\":\"GIT_CONFIG_COUNT\","
				 "\"parent_exe\":\"firebreak\"}",
				 v),
			 0);
	/* git's own children; the same variable set by a shell. */
	assert_int_equal(feed_as(st, 3, SEC, 3, 12, 11, "ssh", "git", "proc.exec",
				 "{\"path\":\"/usr/bin/ssh\",\"loader_env\":\"GIT_CONFIG_COUNT,"
				 "GIT_EXEC_PATH,GIT_SSH_COMMAND\",\"parent_exe\":\"git\"}",
				 v),
			 0);
	assert_int_equal(feed_as(st, 4, SEC, 3, 13, 14, "git", "git", "proc.exec",
				 "{\"path\":\"/usr/bin/git\",\"loader_env\":\"GIT_CONFIG_COUNT,"
				 "GIT_SSH_COMMAND\",\"parent_exe\":\"bash\"}",
				 v),
			 1);
	assert_string_equal(v[0].rule, "exec.loader-injection");
	assert_int_equal(v[0].severity, DETECT_HIGH);
	assert_non_null(strstr(v[0].reason, "GIT_SSH_COMMAND"));
	assert_null(strstr(v[0].reason, "GIT_CONFIG_COUNT"));
	/* pip's build isolation: a python puts PYTHONPATH on a python; a shell doing it counts. */
	assert_int_equal(feed_as(st, 5, SEC, 3, 20, 1, "python3", "pip", "proc.exec",
				 "{\"path\":\"/usr/bin/python3\",\"loader_env\":\"PYTHONPATH\","
				 "\"parent_exe\":\"python3.11\"}",
				 v),
			 0);
	assert_int_equal(feed_as(st, 6, SEC, 3, 21, 1, "python3", "pip", "proc.exec",
				 "{\"path\":\"/usr/bin/python3\",\"loader_env\":\"PYTHONPATH\","
				 "\"parent_exe\":\"bash\"}",
				 v),
			 1);
	/* LD_PRELOAD: flagged where it is set, not again in the child that inherits it. */
	assert_int_equal(feed_as(st, 7, SEC, 3, 30, 1, "true", "pip", "proc.exec",
				 "{\"path\":\"/bin/true\",\"loader_env\":\"LD_PRELOAD\","
				 "\"parent_exe\":\"python3.11\"}",
				 v),
			 1);
	assert_non_null(strstr(v[0].reason, "LD_PRELOAD"));
	assert_int_equal(feed_as(st, 8, SEC, 3, 31, 30, "cat", "pip", "proc.exec",
				 "{\"path\":\"/bin/cat\",\"loader_env\":\"LD_PRELOAD\","
				 "\"parent_exe\":\"true\"}",
				 v),
			 0);
	/* A re-exec in the same process (env LD_AUDIT=x prog): the setter is the previous image. */
	assert_int_equal(feed_as(st, 9, SEC, 3, 40, 1, "env", "pip", "proc.exec",
				 "{\"path\":\"/usr/bin/env\",\"loader_env\":\"\",\"parent_exe\":"
				 "\"python3.11\"}",
				 v),
			 0);
	assert_int_equal(feed_as(st, 10, SEC, 3, 40, 1, "ls", "pip", "proc.exec",
				 "{\"path\":\"/bin/ls\",\"loader_env\":\"LD_AUDIT\",\"parent_exe\":"
				 "\"python3.11\"}",
				 v),
			 1);
	assert_non_null(strstr(v[0].reason, "set by env"));
	/* An environment padded past what the tracer reads. */
	assert_int_equal(
		feed_as(st, 11, SEC, 3, 41, 1, "ls", "pip", "proc.exec",
			"{\"path\":\"/bin/ls\",\"loader_env\":\"\",\"env_truncated\":true}", v),
		1);
	assert_non_null(strstr(v[0].reason, "more than 256"));
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

/* The lures: refused tripwire opens, decoys (not ~/.netrc), runtime sockets, the marker leaving. */
static void test_lure_rules(void **state)
{
	struct detect_state *st = new_state(0);
	struct detect_verdict v[4];

	assert_int_equal(feed(st, 1, SEC, "t", "lure.tripwire",
			      "{\"path\":\"/sys/fs/cgroup/memory.max\",\"lure\":\"cgroup\","
			      "\"op\":\"read\",\"refused\":false}",
			      v),
			 0);
	assert_int_equal(feed(st, 2, SEC, "t", "lure.tripwire",
			      "{\"path\":\"/proc/sys/kernel/core_pattern\",\"lure\":\"kernel\","
			      "\"op\":\"write\",\"refused\":true}",
			      v),
			 1);
	assert_string_equal(v[0].rule, "escape.tripwire");
	assert_int_equal(v[0].severity, DETECT_CRITICAL);
	assert_non_null(strstr(v[0].reason, "kernel tunable /proc/sys/kernel/core_pattern"));

	assert_int_equal(
		feed(st, 3, SEC, "t", "lure.decoy",
		     "{\"path\":\"/home/agent/.netrc\",\"lure\":\"decoy\",\"op\":\"open\"}", v),
		0);
	assert_int_equal(feed(st, 4, SEC, "t", "lure.decoy",
			      "{\"path\":\"/home/agent/.ssh/id_ed25519\",\"lure\":\"decoy\"}", v),
			 1);
	assert_string_equal(v[0].rule, "credential.decoy");
	assert_int_equal(feed(st, 5, SEC, "t", "net.unix",
			      "{\"op\":\"connect\",\"path\":\"/tmp/docker.socket.txt\"}", v),
			 0);
	assert_int_equal(feed(st, 6, SEC, "t", "net.unix",
			      "{\"op\":\"connect\",\"path\":\"/proc/1/root/run/containerd/"
			      "containerd.sock\"}",
			      v),
			 1);
	assert_string_equal(v[0].rule, "escape.runtime-socket");
	/* No marker set: nothing to see leaving. Set, it is seen in argv, and only there. */
	assert_int_equal(feed(st, 7, SEC, "t", "proc.exec",
			      "{\"argv\":[\"curl\",\"x?0123456789abcdef0123\"]}", v),
			 0);
	detect_state_set_marker(st, "0123456789abcdef0123");
	assert_string_equal(detect_state_marker(st), "0123456789abcdef0123");
	assert_int_equal(feed(st, 8, SEC, "t", "proc.exec",
			      "{\"path\":\"/x0123456789abcdef0123\",\"argv\":[\"curl\"]}", v),
			 0);
	assert_int_equal(feed(st, 9, SEC, "t", "proc.exec",
			      "{\"argv\":[\"curl\",\"x?0123456789abcdef0123\"]}", v),
			 1);
	assert_string_equal(v[0].rule, "exfil.decoy-marker");
	assert_int_equal(feed(st, 10, SEC, "t", "dns.query",
			      "{\"name\":\"0123456789abcdef0123.exfil.example\"}", v),
			 1);
	detect_state_set_marker(st, "not a marker");
	assert_string_equal(detect_state_marker(st), "");
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
	assert_int_equal(feed(st, 60, 12 * SEC, "t", "file.write",
			      "{\"path\":\"/home/agent/.ssh/authorized_keys\"}", v),
			 1);
	assert_string_equal(v[0].rule, "file.persistence");
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

/* A dns.query event's fields, as the DNS collector writes them. */
static size_t dns_query(struct detect_state *st, int64_t id, int64_t ts, const char *name,
			const char *type, struct detect_verdict *v)
{
	char f[512];
	size_t longest = 0;

	for (const char *p = name; *p;) {
		size_t n = strcspn(p, ".");

		longest = n > longest ? n : longest;
		p += n + (p[n] == '.');
	}
	snprintf(f, sizeof(f),
		 "{\"name\":\"%s\",\"type\":\"%s\",\"id\":%lld,\"transport\":\"udp\",\"size\":40,"
		 "\"labels\":3,\"longest_label\":%zu,\"server\":\"10.199.0.65\",\"port\":4000}",
		 name, type, (long long)id, longest);
	return feed(st, id, ts, "t", "dns.query", f, v);
}

static void test_dns_tunnel_long_random_labels_under_one_parent(void **state)
{
	struct detect_state *st = new_state(1);
	struct detect_verdict v[4];
	static const char *const labels[] = {
		"aGVsbG8gd29ybGQgdGhpcyBpcyBkYXRhIGxlYXZpbmc", /* base64, 43 */
		"x7k2q9vbn4m1z8c3w6y5t0r2e4u7i9o1p3a5s8d2f",   /* random, 41 */
		"mzxw6ytboi4dsnrqgq2tmnzygezdgnbvgy3tqojq",    /* base32, 40: random-looking */
	};
	char name[128];

	/* Honest: the same few names, again and again (pip against its registry). */
	for (int i = 0; i < 200; i++)
		assert_int_equal(dns_query(st, i + 1, SEC + i * (SEC / 100),
					   i % 2 ? "registry.test" : "files.registry.test",
					   i % 3 ? "A" : "AAAA", v),
				 0);
	/* Two suspicious queries are not yet a tunnel; the third is, once per window. */
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "%s.exfil.test", labels[i]);
		assert_int_equal(dns_query(st, 300 + i, 4 * SEC + i, name, "A", v), i == 2);
	}
	assert_string_equal(v[0].rule, "dns.tunnel");
	assert_int_equal(v[0].severity, DETECT_HIGH);
	assert_non_null(strstr(v[0].reason, "under exfil.test"));
	assert_int_equal(v[0].n_ids, 3);
	assert_int_equal(v[0].event_ids[0], 300);
	assert_int_equal(v[0].event_ids[2], 302);
	assert_int_equal(dns_query(st, 303, 5 * SEC, name, "A", v), 0);	 /* quiet in its window */
	assert_int_equal(dns_query(st, 304, 20 * SEC, name, "A", v), 0); /* one in a new window */
	detect_state_free(st);
}

static void test_dns_tunnel_many_names_and_txt_bursts(void **state)
{
	struct detect_state *st = new_state(1);
	struct detect_verdict v[4];
	char name[128];
	size_t n = 0;

	/* Short, plain labels, but a new one each time: hex chunks of 8 under one parent. */
	for (int i = 0; i < 30; i++) {
		snprintf(name, sizeof(name), "%08x.c2.example.com", (unsigned)(i * 2654435761u));
		n = dns_query(st, i + 1, SEC + i, name, "A", v);
		assert_int_equal(n, i == 29);
	}
	assert_non_null(strstr(v[0].reason, "30 distinct names under example.com"));
	detect_state_free(st);

	/* TXT queries: a few are honest (a mail check), a burst carries data back in. */
	st = new_state(1);
	for (int i = 0; i < 10; i++)
		assert_int_equal(dns_query(st, i + 1, SEC + i, "registry.test", "TXT", v), i == 9);
	assert_non_null(strstr(v[0].reason, "10 TXT or NULL queries"));
	detect_state_free(st);
	st = new_state(1);
	for (int i = 0; i < 9; i++)
		assert_int_equal(dns_query(st, i + 1, SEC + i * 2 * SEC, "registry.test", "TXT", v),
				 0); /* spread out: never 10 in a window */
	/* A 32-digit hex hash (a CDN's name) and long English words are not random-looking. */
	assert_int_equal(
		dns_query(st, 50, 100 * SEC, "d41d8cd98f00b204e9800998ecf8427e.cdn.test", "A", v),
		0);
	assert_int_equal(
		dns_query(st, 51, 100 * SEC, "d41d8cd98f00b204e9800998ecf8427f.cdn.test", "A", v),
		0);
	assert_int_equal(dns_query(st, 52, 100 * SEC,
				   "thedocumentationservicefortheproject.cdn.test", "A", v),
			 0);
	detect_state_free(st);
}

/* Resolving is open to every tool: DNS to the gate that the egress hook passed is no reach. */
static void test_dns_to_the_gate_is_not_out_of_scope(void **state)
{
	struct detect_state *st = new_state(1);
	struct detect_verdict v[4];

	assert_int_equal(feed(st, 1, SEC, "run_tests", "net.connect",
			      "{\"dst\":\"10.199.0.65\",\"port\":53,\"egress_hook\":\"passed\"}",
			      v),
			 0);
	assert_int_equal(feed(st, 2, SEC, "run_tests", "net.sendmsg",
			      "{\"dst\":\"8.8.8.8\",\"port\":53,\"egress_hook\":\"refused\"}", v),
			 1);
	assert_string_equal(v[0].rule, "tool.network-out-of-scope");
	assert_int_equal(feed(st, 3, SEC, "run_tests", "net.connect",
			      "{\"dst\":\"10.199.0.65\",\"port\":80,\"egress_hook\":\"passed\"}",
			      v),
			 1);
	/* "passed" anywhere but a gate: a sandbox with no egress hook, where nothing refuses. */
	assert_int_equal(feed(st, 4, SEC, "run_tests", "net.sendmsg",
			      "{\"dst\":\"10.9.9.9\",\"port\":53,\"egress_hook\":\"passed\"}", v),
			 1);
	assert_string_equal(v[0].rule, "tool.network-out-of-scope");
	assert_int_equal(feed(st, 5, SEC, "run_tests", "net.sendmsg",
			      "{\"dst\":\"10.199.0.66\",\"port\":53,\"egress_hook\":\"passed\"}",
			      v),
			 1);
	assert_int_equal(feed(st, 6, SEC, "run_tests", "net.connect",
			      "{\"dst\":\"fd66:6272:fb:3::1\",\"port\":53,\"egress_hook\":"
			      "\"passed\"}",
			      v),
			 0);
	detect_state_free(st);
}

static void test_dns_thresholds_come_from_the_policy(void **state)
{
	struct detect_state *st = behavior_state(
		", \"dns_names_max\": 5, \"dns_window\": \"2s\", \"dns_label_max\": 20");
	struct detect_verdict v[4];
	char name[64];

	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "n%d.example.org", i);
		assert_int_equal(dns_query(st, i + 1, SEC + i * (SEC / 10), name, "A", v), i == 4);
	}
	detect_state_free(st);
	st = behavior_state(", \"dns_window\": \"2s\"");
	for (int i = 0; i < 30; i++) { /* 30 names, but 1 s apart: never 30 in 2 s */
		snprintf(name, sizeof(name), "n%d.example.org", i);
		assert_int_equal(dns_query(st, i + 1, SEC + i * SEC, name, "A", v), 0);
	}
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
		cmocka_unit_test(test_lure_rules),
		cmocka_unit_test(test_dns_tunnel_long_random_labels_under_one_parent),
		cmocka_unit_test(test_dns_tunnel_many_names_and_txt_bursts),
		cmocka_unit_test(test_dns_thresholds_come_from_the_policy),
		cmocka_unit_test(test_dns_to_the_gate_is_not_out_of_scope),
		cmocka_unit_test(test_signal_beyond_step),
		cmocka_unit_test(test_unexpected_listener),
		cmocka_unit_test(test_reverse_shell),
		cmocka_unit_test(test_exec_drift),
		cmocka_unit_test(test_exec_masquerade),
		cmocka_unit_test(test_loader_injection),
		cmocka_unit_test(test_file_rules),
		cmocka_unit_test(test_file_credential_hunt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
