/*
 * One tool call, in the exec launcher: the gate checks the argv against the tool's scope before
 * anything runs; an allowed call runs in its own step cgroup, inside the sandbox's namespaces, as
 * its unprivileged uid, with no capabilities, no_new_privs, only the fds 0-2 (the caller's own),
 * and the seccomp filters. Its process was made ahead (exec-step.c); what the caller is told goes
 * back to it in c->tell.
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "egress-hook-user.h"
#include "exec-call.h"
#include "log.h"
#include "macro.h"
#include "policy/policy.h"
#include "report.h"
#include "term-safe.h"
#include "timeutil.h"

static void make_event(struct event *ev, const struct sandbox_exec_request *req, int64_t step,
		       const char *kind, json_t *fields)
{
	event_init(ev);
	ev->ts = time_now_ns();
	strscpy(ev->sandbox, sizeof(ev->sandbox), req->name);
	ev->step = step;
	strscpy(ev->tool, sizeof(ev->tool), req->tool);
	ev->source = EVENT_SOURCE_ENFORCER;
	strscpy(ev->kind, sizeof(ev->kind), kind);
	if (fields) {
		if (req->call_id)
			json_object_set_new(fields, "call_id", json_string(req->call_id));
		event_set_fields(ev, fields);
		json_decref(fields);
	}
}

static json_t *argv_json(char **argv)
{
	json_t *a = json_array();

	for (int i = 0; argv[i] && i < 64; i++)
		json_array_append_new(a, json_stringn(argv[i], strnlen(argv[i], 1024)));
	return a;
}

/* Sends ev to the monitor and, with wait, waits for its acknowledgement; a failure drops the
 * connection so the next call reconnects. 0, or -errno. */
static int record(struct exec_call *c, const struct event *ev, int wait)
{
	struct report *rp = c->L->rp;
	int r;

	if (!rp)
		return 0;
	if ((r = report_event(rp, ev)) == 0 && wait)
		r = report_wait(rp);
	if (r < 0)
		launcher_record_lost(c->L);
	return r;
}

/* A line for the caller's stderr, escaped whole: it quotes the agent's words. */
_printf_(2, 3) static void tell(struct exec_call *c, const char *fmt, ...)
{
	_cleanup_free_ char *safe = NULL;
	char line[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	safe = term_safe_dup(line);
	strbuf_printf(&c->tell, "%s\n", safe ? safe : "(out of memory)");
}

/*
 * The step's number and process: the one made ahead for the next step, or (a step the caller
 * chose, or none made ahead) one made now. 0 or -errno.
 */
static int take_step(struct exec_call *c)
{
	struct launcher *L = c->L;
	int64_t step = c->req.step;
	int r;

	if (L->next.pid > 0 && (step < 0 || step == L->next.step)) {
		c->run = L->next;
		exec_step_init(&L->next);
		if ((r = exec_step_wait_ready(&c->run)) == 0)
			return 0;
		/* It could not get in place (a step left it so, or the machine): one made now. */
		log_warn_errno(r, "firebreak exec: the process made ahead for step %lld",
			       (long long)c->run.step);
		exec_step_discard(&c->run);
	}
	if (step < 0 && (r = state_next_step(L->cfg, L->st.name, &step)) < 0)
		return log_errno(r, "firebreak exec: step counter");
	r = exec_step_prepare(&L->sb, L->st.name, step, &c->run);
	if (r == -EEXIST)
		log_error("firebreak exec: step %lld of %s is running already", (long long)step,
			  L->st.name);
	else if (r < 0)
		log_errno(r, "firebreak exec: step %lld of %s", (long long)step, L->st.name);
	return r;
}

/* The gate said no: one line naming the rule, an event, exit 126. The step made for it goes. */
static int refuse(struct exec_call *c)
{
	const struct gate_decision *d = &c->d;
	struct event ev;

	tell(c, "firebreak exec: refused by rule %s: %s", d->rule, d->message);
	make_event(&ev, &c->req, c->run.step, "gate.refused",
		   json_pack("{s:s, s:s, s:o, s:s}", "rule", d->rule, "message", d->message, "argv",
			     argv_json(c->req.argv), "policy_hash", c->L->st.policy_hash));
	if (record(c, &ev, 1) < 0)
		log_warn("firebreak exec: the monitor did not record the refusal");
	event_clear(&ev);
	exec_step_discard(&c->run);
	return SANDBOX_EXIT_REFUSED;
}

/* Not while frozen: a new call would freeze too, and its caller wait for ever. */
static int check_thawed(struct exec_call *c)
{
	const char *name = c->L->st.name;
	struct pollfd p = { .fd = c->L->init_pidfd, .events = POLLIN };

	if (poll(&p, 1, 0) != 0)
		return log_error(
			       "firebreak exec: sandbox %s is dead (its init is gone); destroy it",
			       name),
		       -ESRCH;
	if (cgroup_frozen(c->L->sbrel) == 1)
		return log_error(
			       "firebreak exec: sandbox %s is frozen (see firebreak timeline %s); "
			       "nothing runs in it until it is thawed",
			       name, name),
		       -EAGAIN;
	if (!c->L->st.unwatched && !launcher_record(c->L))
		return log_error("firebreak exec: no monitor answers; sandbox %s is watched, so "
				 "nothing runs unrecorded",
				 name),
		       -ENOTCONN;
	return 0;
}

/* The gate decides on the argv under the tool's scope; an allowed call gets the policy's
 * environment and timeout. 0 allowed, SANDBOX_EXIT_REFUSED (recorded), or -errno. */
static int check_gate(struct exec_call *c)
{
	struct launcher *L = c->L;
	int r;

	if ((r = gate_check(L->policy, c->req.tool, c->req.argv, 0, &c->d)) < 0)
		return log_errno(r, "firebreak exec: gate");
	if (!c->d.allowed)
		return refuse(c);
	if ((r = gate_build_env(L->policy, c->req.tool, c->env_in, &c->env)) < 0 ||
	    (L->st.decoy_marker[0] &&
	     (r = gate_env_add_decoys(c->env, L->policy, L->st.decoy_marker)) < 0) ||
	    (r = policy_tool_timeout(L->policy, c->req.tool, &c->timeout_ns)) < 0)
		return log_errno(r, "firebreak exec: environment");
	return 0;
}

/* The kernel's egress hooks learn which tool the step is before anything of it runs. */
static int register_step(struct exec_call *c)
{
	struct launcher *L = c->L;
	int r;

	if (L->st.link == 0)
		return 0;
	if ((r = egress_hook_step(L->cgdir, c->run.cgid,
				  policy_tool_index(L->policy, c->req.tool))) < 0)
		return log_errno(r, "firebreak exec: register step %lld with the egress hooks",
				 (long long)c->run.step);
	c->registered = 1;
	return 0;
}

/* Sends step.start; the monitor's exec confinement is in place first where the tool has one. */
static int record_start(struct exec_call *c)
{
	struct launcher *L = c->L;
	size_t tool = (size_t)policy_tool_index(L->policy, c->req.tool);
	struct event ev;
	int r;

	/* A tool that declares its children has its step's execs confined in the kernel (by the
	 * monitor's exec tracepoint), in place before anything of the step runs. */
	if (L->rp && policy_tool_children(L->policy, tool) &&
	    ((r = report_exec_scope(L->rp, L->st.name, c->run.step, c->req.tool, c->run.cgid,
				    c->d.program)) < 0 ||
	     (r = report_wait(L->rp)) < 0)) {
		launcher_record_lost(L);
		return log_errno(r,
				 "firebreak exec: the monitor could not confine step %lld's execs",
				 (long long)c->run.step);
	}
	make_event(&ev, &c->req, c->run.step, "step.start",
		   json_pack("{s:s, s:o, s:s, s:s, s:I}", "program", c->d.program, "argv",
			     argv_json(c->req.argv), "policy_hash", L->st.policy_hash, "cgroup",
			     c->run.rel, "cgroup_id", (json_int_t)c->run.cgid));
	r = record(c, &ev, 0);
	event_clear(&ev);
	return r < 0 ? log_errno(r, "firebreak exec: the monitor did not take step %lld's start",
				 (long long)c->run.step)
		     : 0;
}

/* Hands the step's process its call; it runs once this returns 0. */
static int start(struct exec_call *c)
{
	struct exec_step_call call = {
		.program = c->d.program,
		.argv = c->req.argv,
		.envp = gate_env_vector(c->env),
		.stdio = c->stdio,
	};
	int r;

	c->t0 = time_now_ns();
	if ((r = exec_step_start(&c->run, &call, &c->exec_err)) < 0)
		return log_errno(r, "firebreak exec: start step %lld of %s", (long long)c->run.step,
				 c->L->st.name);
	if (c->timeout_ns > 0)
		c->deadline = (int64_t)time_mono_ns() + c->timeout_ns;
	return 0;
}

int exec_call_begin(struct exec_call *c)
{
	int r;

	if ((r = check_thawed(c)) < 0 || (r = take_step(c)) < 0)
		return r;
	/* A refusal is the call's answer (126): recorded, and nothing starts. */
	if ((r = check_gate(c)) != 0)
		return r;
	/* From here every failure removes the step's cgroup: a half-entered step never runs. */
	if ((r = register_step(c)) < 0 || (r = record_start(c)) < 0 || (r = start(c)) < 0)
		return r;
	return 0;
}

/* What the caller is told on stderr besides the exit status. */
static void tell_outcome(struct exec_call *c)
{
	if (c->exec_err)
		tell(c, "firebreak exec: could not run %s: %s", c->d.program,
		     strerror(-c->exec_err));
	if (c->why == EXEC_WHY_TIMEOUT)
		tell(c, "firebreak exec: %s ran over its %llds limit and was killed", c->req.tool,
		     (long long)(c->timeout_ns / NSEC_PER_SEC));
	if (c->why > 0)
		tell(c, "firebreak exec: interrupted by signal %d; the tool call was killed",
		     c->why);
	if (c->why == EXEC_WHY_FROZEN)
		tell(c,
		     "firebreak exec: sandbox %s was frozen while %s ran (see firebreak timeline "
		     "%s);"
		     " the call is held there, unfinished, until it is thawed or killed",
		     c->L->st.name, c->req.tool, c->L->st.name);
}

/*
 * step.end with fields (taken), sent to the monitor: the caller hears the tool's exit at once, and
 * that the record is durable when the monitor acknowledges it (c->end_seq, the launcher's wait).
 */
static void record_end(struct exec_call *c, json_t *fields)
{
	struct event ev;

	make_event(&ev, &c->req, c->run.step, "step.end", fields);
	if (record(c, &ev, 0) < 0)
		log_warn("firebreak exec: the monitor did not take step %lld's end",
			 (long long)c->run.step);
	else if (c->L->rp)
		c->end_seq = report_sent(c->L->rp);
	event_clear(&ev);
}

/* How long processes already SIGKILLed with their cgroup get to finish dying. */
#define LEFTOVER_DYING_MS 200

int exec_call_end(struct exec_call *c)
{
	int status = c->status, leftover, code;
	uint64_t peak = 0;
	int have_peak;

	/*
	 * A call under a freeze: its caller is told (SANDBOX_EXIT_FROZEN), and step.end says it was
	 * frozen, not how it ended. Its processes and cgroup stay as they are, for whoever looks at
	 * the freeze; a thaw lets them go on, a kill or destroy ends them.
	 */
	if (c->why == EXEC_WHY_FROZEN) {
		tell_outcome(c);
		record_end(c, json_pack("{s:n, s:n, s:I, s:b, s:b, s:b}", "exit_code", "signal",
					"duration_ns", (json_int_t)(time_now_ns() - c->t0),
					"timed_out", 0, "leftover_killed", 0, "frozen", 1));
		return SANDBOX_EXIT_FROZEN;
	}
	leftover = cgroup_populated(c->run.rel) == 1;
	/* A tool dead of SIGKILL was most often killed with its whole cgroup (the monitor's kill of
	 * the sandbox, an OOM kill): what it left is dying already and was not left behind. */
	if (leftover && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL &&
	    cgroup_wait_empty(c->run.rel, LEFTOVER_DYING_MS) == 0)
		leftover = 0;
	if (leftover)
		cgroup_kill(c->run.rel);
	/* Where memory is a v1 controller a step has no memory cgroup of its own (lib/cgroup.h). */
	have_peak = cgroup_memory_peak(c->run.rel, &peak) == 0;
	code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	tell_outcome(c);
	record_end(c, json_pack("{s:i, s:o, s:I, s:o, s:b, s:b, s:o, s:o}", "exit_code", code,
				"signal",
				WIFSIGNALED(status) ? json_integer(WTERMSIG(status)) : json_null(),
				"duration_ns", (json_int_t)(time_now_ns() - c->t0), "memory_peak",
				have_peak ? json_integer((json_int_t)peak) : json_null(),
				"timed_out", c->why == EXEC_WHY_TIMEOUT, "leftover_killed",
				leftover, "interrupted_by",
				c->why > 0 ? json_integer(c->why) : json_null(), "exec_error",
				c->exec_err ? json_string(strerror(-c->exec_err)) : json_null()));
	return code;
}

void exec_call_free(struct exec_call *c)
{
	if (!c)
		return;
	/* A frozen call's processes and cgroup stay for whoever looks at the freeze. */
	if (c->why != EXEC_WHY_FROZEN) {
		if (c->registered)
			egress_hook_step(c->L->cgdir, c->run.cgid, -1);
		if (c->run.pid > 0) {
			exec_step_close(&c->run);
			if (c->run.pidfd >= 0)
				close(c->run.pidfd);
			cgroup_remove(c->run.rel, 1000);
		}
	}
	for (int i = 0; i < 3; i++)
		if (c->stdio[i] >= 0)
			close(c->stdio[i]);
	if (c->client >= 0)
		close(c->client);
	gate_env_free(c->env);
	free(c->tell.p);
	free(c->req.argv);
	free(c->env_in);
	json_decref(c->msg);
	free(c);
}
