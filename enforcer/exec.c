/*
 * firebreak exec: one tool call. The gate checks the argv against the tool's scope before anything
 * runs; an allowed call runs in a new step cgroup, inside the sandbox's namespaces, as its
 * unprivileged uid, with no capabilities, no_new_privs, only the fds 0-2, and the seccomp filters.
 */
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <linux/sched.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "egress-hook-user.h"
#include "policy/gate.h"
#include "policy-limits.h"
#include "log.h"
#include "macro.h"
#include "policy/policy.h"
#include "privs.h"
#include "report.h"
#include "sandbox.h"
#include "seccomp.h"
#include "state.h"
#include "timeutil.h"

extern char **environ;

/* The namespaces a tool call joins, in the order it joins them (mnt last: it moves the root). */
static const struct {
	const char *name;
	int type;
} namespaces[] = {
	{ "ipc", CLONE_NEWIPC },	 { "uts", CLONE_NEWUTS }, { "net", CLONE_NEWNET },
	{ "cgroup", CLONE_NEWCGROUP }, { "mnt", CLONE_NEWNS },
};

struct step_run {
	int ns_fds[ARRAY_SIZE(namespaces)];
	int cgroup_dirfd; /* the step's v2 cgroup: the child is born into it */
	int procs_fds[CGROUP_MAX_HIERARCHIES];
	int nprocs;
	int err_pipe[2];
	const char *program;
	char **argv;
	char **envp;
	struct sandbox_seccomp filter;
	struct sandbox_seccomp ids; /* the second filter: no change of uid or gid */
	const struct sandbox_state *st;
};

/* The child: from here on any failure is fatal, reported as an errno on the error pipe. */
_Noreturn static void child_main(const struct step_run *run)
{
	struct rlimit nofile = { run->st->open_files, run->st->open_files };
	struct rlimit nocore = { 0, 0 };
	int r = 0;

	/* The parent blocks a few signals to catch them on a signalfd; the tool gets a clean mask,
	 * and a session of its own: no controlling terminal of the harness's to write to. */
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (setsid() < 0)
		r = -errno;
	/* Born into the step's v2 cgroup; into the v1 hierarchies first thing, before anything of
	 * the tool's can run. */
	for (int i = 0; i < run->nprocs && r == 0; i++)
		if (write(run->procs_fds[i], "0", 1) != 1)
			r = -errno;
	for (size_t i = 0; i < ARRAY_SIZE(namespaces) && r == 0; i++)
		if (setns(run->ns_fds[i], namespaces[i].type) < 0)
			r = -errno;
	if (r == 0 && chdir("/workspace") < 0)
		r = -errno;
	/* Set every limit that matters, not inherit the harness's: no locked memory, no real-time
	 * priority, no raised niceness, no core files. */
	struct rlimit memlock = { 64 << 10, 64 << 10 }, zero = { 0, 0 };
	if (r == 0 && (setrlimit(RLIMIT_NOFILE, &nofile) < 0 || setrlimit(RLIMIT_CORE, &nocore) < 0 ||
		       setrlimit(RLIMIT_MEMLOCK, &memlock) < 0 || setrlimit(RLIMIT_RTPRIO, &zero) < 0 ||
		       setrlimit(RLIMIT_NICE, &zero) < 0))
		r = -errno;
	if (r == 0)
		r = privs_become(run->st->uid, run->st->gid);
	if (r == 0)
		r = sandbox_seccomp_apply(&run->filter);
	if (r == 0)
		r = sandbox_seccomp_apply(&run->ids);
	if (r == 0) {
		/* Only 0, 1 and 2 cross into the tool; the error pipe closes on exec. */
		syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
		execve(run->program, run->argv, run->envp);
		r = -errno;
	}
	(void)!write(run->err_pipe[1], &r, sizeof(r));
	_exit(127);
}

/*
 * Forks the child straight into the step's v2 cgroup (clone3 CLONE_INTO_CGROUP: no migration,
 * which is the slow part of joining a cgroup), with a pidfd to wait on. Returns like fork.
 */
static pid_t fork_into_cgroup(int cgroup_dirfd, int *ret_pidfd)
{
	struct clone_args args = {
		.flags = CLONE_INTO_CGROUP | CLONE_PIDFD,
		.pidfd = (uint64_t)(uintptr_t)ret_pidfd,
		.exit_signal = SIGCHLD,
		.cgroup = (uint64_t)cgroup_dirfd,
	};

	return (pid_t)syscall(SYS_clone3, &args, sizeof(args));
}

/*
 * Waits for pid (pfd: its pidfd) until timeout_ns (0: none) or a signal to us (sfd: a signalfd for
 * SIGINT, SIGTERM, SIGHUP): either kills the whole step cgroup, so an interrupted harness never
 * leaves a tool call running. *ret_why says which: 0 exited, 1 timed out, or the signal number.
 */
static int wait_child(pid_t pid, int pfd, int sfd, const char *rel, int64_t timeout_ns,
		      int *ret_status, int *ret_why)
{
	int64_t deadline = timeout_ns > 0 ? time_now_ns() + timeout_ns : 0;
	int status;

	*ret_why = 0;
	for (;;) {
		struct pollfd p[2] = { { .fd = pfd, .events = POLLIN }, { .fd = sfd, .events = POLLIN } };
		int64_t left = deadline ? deadline - time_now_ns() : -1;
		int ms = left < 0 ? -1 : left / NSEC_PER_MSEC > 0x7fffffff ? 0x7fffffff
									  : (int)(left / NSEC_PER_MSEC);
		int n = poll(p, 2, deadline && left <= 0 ? 0 : ms);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n > 0 && (p[0].revents & POLLIN))
			break;
		if (n > 0 && (p[1].revents & POLLIN)) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == sizeof(si))
				*ret_why = (int)si.ssi_signo;
		} else if (n == 0) {
			*ret_why = 1;
		} else {
			continue;
		}
		cgroup_kill(rel);
		break;
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	*ret_status = status;
	return 0;
}

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
	struct event ev;

	fprintf(stderr, "firebreak exec: refused by rule %s: %s\n", d->rule, d->message);
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

static int open_namespaces(const struct sandbox_state *st, struct step_run *run, int *pid_ns)
{
	char path[64];

	for (size_t i = 0; i < ARRAY_SIZE(namespaces); i++) {
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)st->init_pid, namespaces[i].name);
		run->ns_fds[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (run->ns_fds[i] < 0)
			return -errno;
	}
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)st->init_pid);
	*pid_ns = open(path, O_RDONLY | O_CLOEXEC);
	if (*pid_ns < 0)
		return -errno;
	/* The fds are of the right process only if it is still the same init (pid reuse). */
	return state_init_alive(st) ? 0 : -ESRCH;
}

static void close_run(struct step_run *run, int pid_ns)
{
	for (size_t i = 0; i < ARRAY_SIZE(namespaces); i++)
		if (run->ns_fds[i] >= 0)
			close(run->ns_fds[i]);
	for (int i = 0; i < run->nprocs; i++)
		close(run->procs_fds[i]);
	if (run->cgroup_dirfd >= 0)
		close(run->cgroup_dirfd);
	if (pid_ns >= 0)
		close(pid_ns);
	for (int i = 0; i < 2; i++)
		if (run->err_pipe[i] >= 0)
			close(run->err_pipe[i]);
}

int sandbox_exec(const struct config *cfg, const struct sandbox_exec_request *req)
{
	struct step_run run = { .err_pipe = { -1, -1 }, .cgroup_dirfd = -1 };
	struct sandbox_state st;
	struct sandbox_limits lim;
	struct gate_decision d;
	struct policy *policy = NULL;
	struct report *rp = NULL;
	char path[PATH_MAX], rel[160], sbrel[128], cgdir[PATH_MAX];
	int registered = 0;
	struct gate_env *env = NULL;
	int64_t step = req->step, t0, timeout_ns;
	int pid_ns = -1, pidfd = -1, sfd = -1, why = 0, status = 0, timed_out = 0, exec_err = 0, leftover, made_cgroup = 0, r;
	uint64_t peak = 0, cgid = 0;
	sigset_t sigs;
	struct event ev;
	pid_t pid;

	for (size_t i = 0; i < ARRAY_SIZE(namespaces); i++)
		run.ns_fds[i] = -1;
	r = state_load(cfg, req->name, &st);
	if (r < 0)
		return log_error("firebreak exec: no sandbox named %s", req->name), -ENOENT;
	if (!state_init_alive(&st))
		return log_error("firebreak exec: sandbox %s is dead (its init is gone); destroy it",
				 req->name),
		       -ESRCH;
	/* Frozen by the monitor (a verdict, an operator, its watchdog): a new call would freeze
	 * too, and its caller wait for ever. Say so instead. */
	snprintf(sbrel, sizeof(sbrel), CGROUP_ROOT_NAME "/%s", req->name);
	if (cgroup_frozen(sbrel) == 1)
		return log_error("firebreak exec: sandbox %s is frozen (see firebreak timeline %s); "
				 "nothing runs in it until it is thawed",
				 req->name, req->name),
		       -EAGAIN;
	state_path(cfg, req->name, "policy.json", path, sizeof(path));
	if ((r = state_path_trusted(path)) < 0 || (r = sandbox_load_policy(path, &policy, &lim)) < 0)
		return r;
	/* The policy is the one the sandbox was created with, or nothing runs. */
	if (strcmp(policy_hash(policy), st.policy_hash) != 0) {
		log_error("firebreak exec: %s's policy.json changed since create (%s, was %s); "
			  "refusing",
			  req->name, policy_hash(policy), st.policy_hash);
		r = -EPERM;
		goto out;
	}
	/* Who the tool runs as: the policy's uid, or the one create chose for this sandbox, which
	 * must lie in the range create chooses from (never root). */
	if (lim.uid != 0)
		st.uid = lim.uid;
	if (lim.gid != 0)
		st.gid = lim.gid;
	else if (lim.uid != 0)
		st.gid = lim.uid;
	if (st.uid == 0 || st.gid == 0 ||
	    (lim.uid == 0 && (st.uid < SANDBOX_UID_BASE || st.uid >= SANDBOX_UID_BASE + SANDBOX_UID_COUNT))) {
		log_error("firebreak exec: %s has no valid identity to run as (uid %u)", req->name,
			  (unsigned)st.uid);
		r = -EPERM;
		goto out;
	}
	st.open_files = lim.open_files;
	if (step < 0 && (r = state_next_step(cfg, req->name, &step)) < 0) {
		log_errno(r, "firebreak exec: step counter");
		goto out;
	}
	if (!st.unwatched && (r = report_open(cfg, &rp)) < 0) {
		log_error("firebreak exec: no monitor answers (%s); sandbox %s is watched, so nothing "
			  "runs unrecorded",
			  strerror(-r), req->name);
		r = -ENOTCONN;
		goto out;
	}

	r = gate_check(policy, req->tool, req->argv, 0, &d);
	if (r < 0) {
		log_errno(r, "firebreak exec: gate");
		goto out;
	}
	if (!d.allowed) {
		r = refuse(req, step, rp, &d, st.policy_hash);
		goto out;
	}
	if ((r = gate_build_env(policy, req->tool, environ, &env)) < 0 ||
	    (r = policy_tool_timeout(policy, req->tool, &timeout_ns)) < 0) {
		log_errno(r, "firebreak exec: environment");
		goto out;
	}

	snprintf(rel, sizeof(rel), CGROUP_ROOT_NAME "/%s/step-%lld", req->name, (long long)step);
	if ((r = cgroup_create_step(rel)) < 0) {
		if (r == -EEXIST)
			log_error("firebreak exec: step %lld of %s is running already",
				  (long long)step, req->name);
		else
			log_errno(r, "firebreak exec: step cgroup %s", rel);
		goto out;
	}
	made_cgroup = 1;
	cgroup_id(rel, &cgid);
	/* The kernel's egress hooks learn which tool this step is before anything of it runs. */
	snprintf(sbrel, sizeof(sbrel), CGROUP_ROOT_NAME "/%s", req->name);
	if (st.link > 0 &&
	    ((r = cgroup_v2_dir(sbrel, cgdir, sizeof(cgdir))) < 0 ||
	     (r = egress_hook_step(cgdir, cgid, policy_tool_index(policy, req->tool))) < 0)) {
		log_errno(r, "firebreak exec: register step %lld with the egress hooks",
			  (long long)step);
		goto out;
	}
	registered = st.link > 0;
	if ((run.nprocs = cgroup_open_join(rel, &run.cgroup_dirfd, run.procs_fds,
					   ARRAY_SIZE(run.procs_fds))) < 0 ||
	    (r = open_namespaces(&st, &run, &pid_ns)) < 0 || pipe2(run.err_pipe, O_CLOEXEC) < 0) {
		r = r < 0 ? r : run.nprocs < 0 ? run.nprocs : -errno;
		run.nprocs = run.nprocs < 0 ? 0 : run.nprocs;
		log_errno(r, "firebreak exec: enter sandbox %s", req->name);
		goto out;
	}
	run.program = d.program;
	run.argv = req->argv;
	run.envp = (char **)gate_env_vector(env);
	run.st = &st;
	state_path(cfg, req->name, "seccomp.bpf", path, sizeof(path));
	if ((r = state_path_trusted(path)) < 0 ||
	    (r = sandbox_seccomp_read(path, &run.filter, st.seccomp_hash)) < 0 ||
	    (r = sandbox_seccomp_ids_build(st.uid, st.gid, &run.ids)) < 0) {
		log_errno(r, "firebreak exec: the sandbox's seccomp filter %s", path);
		goto out;
	}

	/* A tool that declares its children has its step's execs confined in the kernel (by the
	 * monitor's exec tracepoint), in place before anything of the step runs. */
	if (rp && policy_tool_children(policy, (size_t)policy_tool_index(policy, req->tool)) &&
	    ((r = report_exec_scope(rp, req->name, step, req->tool, cgid, d.program)) < 0 ||
	     (r = report_wait(rp)) < 0)) {
		log_errno(r, "firebreak exec: the monitor could not confine step %lld's execs",
			  (long long)step);
		goto out;
	}
	make_event(&ev, req, step, "step.start",
		   json_pack("{s:s, s:o, s:s, s:s, s:I}", "program", d.program, "argv",
			     argv_json(req->argv), "policy_hash", st.policy_hash, "cgroup", rel,
			     "cgroup_id", (json_int_t)cgid));
	if (rp)
		report_event(rp, &ev);
	event_clear(&ev);

	/* An interrupted or terminated `firebreak exec` takes its tool call down with it. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC);
	if (sfd < 0) {
		r = log_errno(-errno, "firebreak exec: signalfd");
		goto out;
	}
	/* Our own pid namespace stays; only the child is born into the sandbox's. */
	if (setns(pid_ns, CLONE_NEWPID) < 0) {
		r = log_errno(-errno, "firebreak exec: join the pid namespace");
		goto out;
	}
	t0 = time_now_ns();
	pid = fork_into_cgroup(run.cgroup_dirfd, &pidfd);
	if (pid < 0) {
		r = log_errno(-errno, "firebreak exec: clone3 into %s", rel);
		goto out;
	}
	if (pid == 0)
		child_main(&run);
	close(run.err_pipe[1]);
	run.err_pipe[1] = -1;
	if (read(run.err_pipe[0], &exec_err, sizeof(exec_err)) != sizeof(exec_err))
		exec_err = 0;
	r = wait_child(pid, pidfd, sfd, rel, timeout_ns, &status, &why);
	timed_out = why == 1;
	close(pidfd);
	if (r < 0)
		goto out;

	/* What the tool left running dies with its step. */
	leftover = cgroup_populated(rel) == 1;
	if (leftover)
		cgroup_kill(rel);
	cgroup_memory_peak(rel, &peak);
	r = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (exec_err)
		fprintf(stderr, "firebreak exec: could not run %s: %s\n", d.program,
			strerror(-exec_err));
	if (timed_out)
		fprintf(stderr, "firebreak exec: %s ran over its %llds limit and was killed\n",
			req->tool, (long long)(timeout_ns / NSEC_PER_SEC));
	if (why > 1)
		fprintf(stderr, "firebreak exec: interrupted by signal %d; the tool call was killed\n",
			why);

	make_event(&ev, req, step, "step.end",
		   json_pack("{s:i, s:o, s:I, s:I, s:b, s:b, s:o, s:o}", "exit_code", r, "signal",
			     WIFSIGNALED(status) ? json_integer(WTERMSIG(status)) : json_null(),
			     "duration_ns", (json_int_t)(time_now_ns() - t0), "memory_peak",
			     (json_int_t)peak, "timed_out", timed_out, "leftover_killed", leftover,
			     "interrupted_by", why > 1 ? json_integer(why) : json_null(),
			     "exec_error",
			     exec_err ? json_string(strerror(-exec_err)) : json_null()));
	if (rp) {
		report_event(rp, &ev);
		if (report_wait(rp) < 0)
			log_warn("firebreak exec: the monitor did not record step %lld",
				 (long long)step);
	}
	event_clear(&ev);
out:
	if (sfd >= 0)
		close(sfd);
	close_run(&run, pid_ns);
	if (registered)
		egress_hook_step(cgdir, cgid, -1);
	if (made_cgroup)
		cgroup_remove(rel, 1000);
	gate_env_free(env);
	report_close(rp);
	policy_free(policy);
	return r;
}
