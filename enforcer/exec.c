/*
 * firebreak exec: one tool call. The gate checks the argv against the tool's scope before anything
 * runs; an allowed call runs in a new step cgroup, inside the sandbox's namespaces, as its
 * unprivileged uid, with no capabilities, no_new_privs, only the fds 0-2, and the seccomp filters.
 */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/signalfd.h>
#include <sys/wait.h>

#include "egress-hook-user.h"
#include "exec-step.h"
#include "policy/gate.h"
#include "policy-limits.h"
#include "log.h"
#include "macro.h"
#include "policy/policy.h"
#include "report.h"
#include "sandbox.h"
#include "state.h"
#include "term-safe.h"
#include "timeutil.h"

extern char **environ;

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

/* The gate said no: one line naming the rule, an event, exit 126. */
static int refuse(const struct sandbox_exec_request *req, int64_t step, struct report *rp,
		  const struct gate_decision *d, const char *hash)
{
	_cleanup_free_ char *msg = term_safe_dup(d->message); /* it quotes the agent's argv */
	struct event ev;

	fprintf(stderr, "firebreak exec: refused by rule %s: %s\n", d->rule,
		msg ? msg : "(out of memory)");
	make_event(&ev, req, step, "gate.refused",
		   json_pack("{s:s, s:s, s:o, s:s}", "rule", d->rule, "message", d->message, "argv",
			     argv_json(req->argv), "policy_hash", hash));
	if (rp) {
		report_event(rp, &ev);
		if (report_wait(rp) < 0)
			log_warn("firebreak exec: the monitor did not record the refusal");
	}
	event_clear(&ev);
	return SANDBOX_EXIT_REFUSED;
}

/* One tool call, from the sandbox's state to the step's end: what each step hands the next. */
struct exec_call {
	const struct config *cfg;
	const struct sandbox_exec_request *req;
	struct sandbox_state st;
	struct sandbox_limits lim;
	struct policy *policy;
	struct report *rp;
	struct gate_decision d;
	struct gate_env *env;
	int64_t step;
	int64_t timeout_ns;
	char rel[160];	      /* the step's cgroup */
	char sbrel[128];      /* the sandbox's cgroup */
	char cgdir[PATH_MAX]; /* the sandbox's v2 cgroup dir, where the egress hooks hang */
	uint64_t cgid;	      /* the step's cgroup id */
	int made_cgroup;      /* the step cgroup is ours to remove */
	int registered;	      /* the egress hooks know the step: unregister it */
	struct exec_step run;
	int sfd; /* SIGINT, SIGTERM, SIGHUP to us */
	int pidfd;
	pid_t pid;
	int64_t t0;
	int exec_err; /* the child's -errno if it never ran the program, else 0 */
	int status;
	int why; /* as exec_step_wait's *ret_why */
};

/* The sandbox must exist, its init still run, and it must not be frozen. */
static int exec_find_sandbox(struct exec_call *c)
{
	const char *name = c->req->name;

	if (state_load(c->cfg, name, &c->st) < 0)
		return log_error("firebreak exec: no sandbox named %s", name), -ENOENT;
	if (!state_init_alive(&c->st))
		return log_error(
			       "firebreak exec: sandbox %s is dead (its init is gone); destroy it",
			       name),
		       -ESRCH;
	/* Frozen by the monitor (a verdict, an operator, its watchdog): a new call would freeze
	 * too, and its caller wait for ever. Say so instead. */
	snprintf(c->sbrel, sizeof(c->sbrel), CGROUP_ROOT_NAME "/%s", name);
	if (cgroup_frozen(c->sbrel) == 1)
		return log_error(
			       "firebreak exec: sandbox %s is frozen (see firebreak timeline %s); "
			       "nothing runs in it until it is thawed",
			       name, name),
		       -EAGAIN;
	return 0;
}

/* The policy is the one the sandbox was created with, or nothing runs. */
static int exec_load_policy(struct exec_call *c)
{
	char path[PATH_MAX];
	int r;

	state_path(c->cfg, c->req->name, "policy.json", path, sizeof(path));
	if ((r = state_path_trusted(path)) < 0 ||
	    (r = sandbox_load_policy(path, &c->policy, &c->lim)) < 0)
		return r;
	if (strcmp(policy_hash(c->policy), c->st.policy_hash) != 0) {
		log_error("firebreak exec: %s's policy.json changed since create (%s, was %s); "
			  "refusing",
			  c->req->name, policy_hash(c->policy), c->st.policy_hash);
		return -EPERM;
	}
	return 0;
}

/*
 * Who the tool runs as: the policy's uid, or the one create chose for this sandbox, which must
 * lie in the range create chooses from (never root).
 */
static int exec_choose_identity(struct exec_call *c)
{
	struct sandbox_state *st = &c->st;
	const struct sandbox_limits *lim = &c->lim;

	if (lim->uid != 0)
		st->uid = lim->uid;
	if (lim->gid != 0)
		st->gid = lim->gid;
	else if (lim->uid != 0)
		st->gid = lim->uid;
	if (st->uid == 0 || st->gid == 0 ||
	    (lim->uid == 0 &&
	     (st->uid < SANDBOX_UID_BASE || st->uid >= SANDBOX_UID_BASE + SANDBOX_UID_COUNT)))
		return log_error("firebreak exec: %s has no valid identity to run as (uid %u)",
				 c->req->name, (unsigned)st->uid),
		       -EPERM;
	st->open_files = lim->open_files;
	return 0;
}

/* The step's number (the next one unless the caller chose), and the monitor that records it. */
static int exec_open_record(struct exec_call *c)
{
	int r;

	if (c->step < 0 && (r = state_next_step(c->cfg, c->req->name, &c->step)) < 0)
		return log_errno(r, "firebreak exec: step counter");
	if (!c->st.unwatched && (r = report_open(c->cfg, &c->rp)) < 0) {
		log_error("firebreak exec: no monitor answers (%s); sandbox %s is watched, so "
			  "nothing "
			  "runs unrecorded",
			  strerror(-r), c->req->name);
		return -ENOTCONN;
	}
	return 0;
}

/*
 * The gate decides on the argv under the tool's scope; an allowed call gets the policy's
 * environment and timeout. Returns 0 (allowed), SANDBOX_EXIT_REFUSED (refused, and recorded), or
 * -errno.
 */
static int exec_check_gate(struct exec_call *c)
{
	int r;

	if ((r = gate_check(c->policy, c->req->tool, c->req->argv, 0, &c->d)) < 0)
		return log_errno(r, "firebreak exec: gate");
	if (!c->d.allowed)
		return refuse(c->req, c->step, c->rp, &c->d, c->st.policy_hash);
	if ((r = gate_build_env(c->policy, c->req->tool, environ, &c->env)) < 0 ||
	    (c->st.decoy_marker[0] &&
	     (r = gate_env_add_decoys(c->env, c->policy, c->st.decoy_marker)) < 0) ||
	    (r = policy_tool_timeout(c->policy, c->req->tool, &c->timeout_ns)) < 0)
		return log_errno(r, "firebreak exec: environment");
	return 0;
}

/* The step's own cgroup; the kernel's egress hooks learn which tool it is before anything of it
 * runs. */
static int exec_enter_step(struct exec_call *c)
{
	int r;

	snprintf(c->rel, sizeof(c->rel), CGROUP_ROOT_NAME "/%s/step-%lld", c->req->name,
		 (long long)c->step);
	if ((r = cgroup_create_step(c->rel)) < 0) {
		if (r == -EEXIST)
			log_error("firebreak exec: step %lld of %s is running already",
				  (long long)c->step, c->req->name);
		else
			log_errno(r, "firebreak exec: step cgroup %s", c->rel);
		return r;
	}
	c->made_cgroup = 1;
	cgroup_id(c->rel, &c->cgid);
	if (c->st.link > 0 &&
	    ((r = cgroup_v2_dir(c->sbrel, c->cgdir, sizeof(c->cgdir))) < 0 ||
	     (r = egress_hook_step(c->cgdir, c->cgid, policy_tool_index(c->policy, c->req->tool))) <
		     0))
		return log_errno(r, "firebreak exec: register step %lld with the egress hooks",
				 (long long)c->step);
	c->registered = c->st.link > 0;
	return 0;
}

/* Opens everything the child needs to join the sandbox: cgroups, namespaces, the error pipe. */
static int exec_open_sandbox(struct exec_call *c)
{
	int r = exec_step_open(&c->run, c->rel, &c->st);

	if (r == -EOPNOTSUPP)
		return log_error("firebreak exec: this kernel has no Landlock (lsm= lacks "
				 "landlock), which keeps one step's processes from another's; "
				 "nothing runs without it"),
		       r;
	if (r < 0)
		return log_errno(r, "firebreak exec: enter sandbox %s", c->req->name);
	return 0;
}

/* What the child executes, and the two seccomp filters it installs last. */
static int exec_load_filters(struct exec_call *c)
{
	struct exec_step *run = &c->run;
	char path[PATH_MAX];
	int r;

	run->program = c->d.program;
	run->argv = c->req->argv;
	run->envp = (char **)gate_env_vector(c->env);
	run->st = &c->st;
	state_path(c->cfg, c->req->name, "seccomp.bpf", path, sizeof(path));
	if ((r = state_path_trusted(path)) < 0 ||
	    (r = sandbox_seccomp_read(path, &run->filter, c->st.seccomp_hash)) < 0 ||
	    (r = sandbox_seccomp_ids_build(c->st.uid, c->st.gid, &run->ids)) < 0)
		return log_errno(r, "firebreak exec: the sandbox's seccomp filter %s", path);
	return 0;
}

/* Sends step.start; the monitor's exec confinement is in place first where the tool has one. */
static int exec_record_start(struct exec_call *c)
{
	const struct sandbox_exec_request *req = c->req;
	size_t tool = (size_t)policy_tool_index(c->policy, req->tool);
	struct event ev;
	int r;

	/* A tool that declares its children has its step's execs confined in the kernel (by the
	 * monitor's exec tracepoint), in place before anything of the step runs. */
	if (c->rp && policy_tool_children(c->policy, tool) &&
	    ((r = report_exec_scope(c->rp, req->name, c->step, req->tool, c->cgid, c->d.program)) <
		     0 ||
	     (r = report_wait(c->rp)) < 0))
		return log_errno(r,
				 "firebreak exec: the monitor could not confine step %lld's execs",
				 (long long)c->step);
	make_event(&ev, req, c->step, "step.start",
		   json_pack("{s:s, s:o, s:s, s:s, s:I}", "program", c->d.program, "argv",
			     argv_json(req->argv), "policy_hash", c->st.policy_hash, "cgroup",
			     c->rel, "cgroup_id", (json_int_t)c->cgid));
	if (c->rp)
		report_event(c->rp, &ev);
	event_clear(&ev);
	return 0;
}

/*
 * Starts the child in the sandbox's pid namespace and the step's cgroup, and waits until it has
 * executed the program (or said on the error pipe why it could not).
 */
static int exec_spawn(struct exec_call *c)
{
	sigset_t sigs;

	/* An interrupted or terminated `firebreak exec` takes its tool call down with it. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	c->sfd = signalfd(-1, &sigs, SFD_CLOEXEC);
	if (c->sfd < 0)
		return log_errno(-errno, "firebreak exec: signalfd");
	/* Our own pid namespace stays; only the child is born into the sandbox's. */
	if (setns(c->run.pid_ns, CLONE_NEWPID) < 0)
		return log_errno(-errno, "firebreak exec: join the pid namespace");
	c->t0 = time_now_ns();
	c->pid = exec_step_clone(&c->run, &c->pidfd);
	if (c->pid < 0)
		return log_errno(-errno, "firebreak exec: clone3 into %s", c->rel);
	c->exec_err = exec_step_exec_error(&c->run);
	return 0;
}

static int exec_wait(struct exec_call *c)
{
	char path[PATH_MAX + 16], dir[PATH_MAX];
	int efd = -1, r;

	/* Frozen under the call (a verdict's freeze): its caller hears of it at once rather than
	 * after call_timeout. */
	if (cgroup_v2_dir(c->sbrel, dir, sizeof(dir)) == 0) {
		snprintf(path, sizeof(path), "%s/cgroup.events", dir);
		efd = open(path, O_RDONLY | O_CLOEXEC);
	}
	r = exec_step_wait(c->pid, c->pidfd, c->sfd, efd, c->rel, c->timeout_ns, &c->status,
			   &c->why);
	if (efd >= 0)
		close(efd);
	close(c->pidfd);
	return r;
}

/* What the caller is told on stderr besides the exit status. */
static void exec_tell_caller(const struct exec_call *c)
{
	/* The program and the tool are the harness's (the agent's) words: escaped. */
	_cleanup_free_ char *program = term_safe_dup(c->d.program);
	_cleanup_free_ char *tool = term_safe_dup(c->req->tool);

	if (!program || !tool)
		return;
	if (c->exec_err)
		fprintf(stderr, "firebreak exec: could not run %s: %s\n", program,
			strerror(-c->exec_err));
	if (c->why == 1)
		fprintf(stderr, "firebreak exec: %s ran over its %llds limit and was killed\n",
			tool, (long long)(c->timeout_ns / NSEC_PER_SEC));
	if (c->why > 1)
		fprintf(stderr,
			"firebreak exec: interrupted by signal %d; the tool call was killed\n",
			c->why);
	if (c->why == EXEC_WHY_FROZEN)
		fprintf(stderr,
			"firebreak exec: sandbox %s was frozen while %s ran (see firebreak "
			"timeline %s);"
			" the call is held there, unfinished, until it is thawed or killed\n",
			c->req->name, tool, c->req->name);
}

/* step.end with fields (taken), recorded with the monitor and waited for. */
static void exec_record_end(struct exec_call *c, json_t *fields)
{
	struct event ev;

	make_event(&ev, c->req, c->step, "step.end", fields);
	if (c->rp) {
		report_event(c->rp, &ev);
		if (report_wait(c->rp) < 0)
			log_warn("firebreak exec: the monitor did not record step %lld",
				 (long long)c->step);
	}
	event_clear(&ev);
}

/*
 * A call under a freeze: its caller is told (SANDBOX_EXIT_FROZEN), and step.end says it was frozen,
 * not how it ended. Its processes and cgroup stay as they are, for whoever looks at the freeze;
 * a thaw lets them go on, a kill or destroy ends them.
 */
static int exec_finish_frozen(struct exec_call *c)
{
	c->made_cgroup = 0;
	c->registered = 0;
	exec_tell_caller(c);
	exec_record_end(c, json_pack("{s:n, s:n, s:I, s:b, s:b, s:b}", "exit_code", "signal",
				     "duration_ns", (json_int_t)(time_now_ns() - c->t0),
				     "timed_out", 0, "leftover_killed", 0, "frozen", 1));
	return SANDBOX_EXIT_FROZEN;
}

/* How long processes already SIGKILLed with their cgroup get to finish dying. */
#define LEFTOVER_DYING_MS 200

/*
 * What the tool left running dies with its step; step.end says how the call ended. Returns the
 * tool's exit status, 128+N if signal N killed it.
 */
static int exec_finish(struct exec_call *c)
{
	int status = c->status, why = c->why, timed_out = why == 1, leftover, code;
	uint64_t peak = 0;
	json_t *fields;

	if (why == EXEC_WHY_FROZEN)
		return exec_finish_frozen(c);

	leftover = cgroup_populated(c->rel) == 1;
	/* A tool dead of SIGKILL was most often killed with its whole cgroup (the monitor's kill of
	 * the sandbox, an OOM kill): what it left is dying already and was not left behind. */
	if (leftover && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL &&
	    cgroup_wait_empty(c->rel, LEFTOVER_DYING_MS) == 0)
		leftover = 0;
	if (leftover)
		cgroup_kill(c->rel);
	cgroup_memory_peak(c->rel, &peak);
	code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	exec_tell_caller(c);
	fields =
		json_pack("{s:i, s:o, s:I, s:I, s:b, s:b, s:o, s:o}", "exit_code", code, "signal",
			  WIFSIGNALED(status) ? json_integer(WTERMSIG(status)) : json_null(),
			  "duration_ns", (json_int_t)(time_now_ns() - c->t0), "memory_peak",
			  (json_int_t)peak, "timed_out", timed_out, "leftover_killed", leftover,
			  "interrupted_by", why > 1 ? json_integer(why) : json_null(), "exec_error",
			  c->exec_err ? json_string(strerror(-c->exec_err)) : json_null());
	exec_record_end(c, fields);
	return code;
}

/* Undoes what the steps made, whichever one failed: the step's cgroup and its hook entry go. */
static void exec_call_close(struct exec_call *c)
{
	if (c->sfd >= 0)
		close(c->sfd);
	exec_step_close(&c->run);
	if (c->registered)
		egress_hook_step(c->cgdir, c->cgid, -1);
	if (c->made_cgroup)
		cgroup_remove(c->rel, 1000);
	gate_env_free(c->env);
	report_close(c->rp);
	policy_free(c->policy);
}

int sandbox_exec(const struct config *cfg, const struct sandbox_exec_request *req)
{
	struct exec_call c = {
		.cfg = cfg,
		.req = req,
		.step = req->step,
		.sfd = -1,
		.pidfd = -1,
	};
	int r;

	exec_step_init(&c.run);
	/* What runs, as whom, recorded where: nothing of the step exists yet. */
	if ((r = exec_find_sandbox(&c)) < 0 || (r = exec_load_policy(&c)) < 0 ||
	    (r = exec_choose_identity(&c)) < 0 || (r = exec_open_record(&c)) < 0)
		goto out;
	/* A refusal is the call's answer (126): recorded, and nothing starts. */
	if ((r = exec_check_gate(&c)) != 0)
		goto out;
	/* From here every failure removes the step's cgroup: a half-entered step never runs. */
	if ((r = exec_enter_step(&c)) < 0 || (r = exec_open_sandbox(&c)) < 0 ||
	    (r = exec_load_filters(&c)) < 0 || (r = exec_record_start(&c)) < 0 ||
	    (r = exec_spawn(&c)) < 0 || (r = exec_wait(&c)) < 0)
		goto out;
	r = exec_finish(&c);
out:
	exec_call_close(&c);
	return r;
}
