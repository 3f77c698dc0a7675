/* firebreak create: a sandbox is every layer or nothing. */
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "egress-dns.h"
#include "gate-jail.h"
#include "egress-proxy.h"
#include "proxy-ca.h"
#include "egress.h"
#include "launcher.h"
#include "egress-hook-user.h"
#include "fileio.h"
#include "init.h"
#include "policy-limits.h"
#include "log.h"
#include "macro.h"
#include "plant-lures.h"
#include "procstat.h"
#include "policy/policy.h"
#include "report.h"
#include "sandbox.h"
#include "seccomp.h"
#include "state.h"
#include "timeutil.h"

#define CREATE_READY_TIMEOUT_MS 10000

static int make_dirs(const struct config *cfg, const char *name)
{
	char path[PATH_MAX + 16];
	int r;

	/* The runtime dir is the monitor's too: root's (and the firebreak group's) only. One that
	 * exists already must be out of everyone else's reach, all the way up. */
	if (mkdir(cfg->runtime_dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	if ((r = state_path_trusted(cfg->runtime_dir)) < 0)
		return r;
	snprintf(path, sizeof(path), "%s/%s", cfg->runtime_dir, SANDBOX_STATE_DIR);
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (state_dir(cfg, name, path, sizeof(path)) < 0)
		return -ENAMETOOLONG;
	if (mkdir(path, 0700) < 0)
		return -errno;
	return 0;
}

static int copy_file(const char *src, const char *dst)
{
	char buf[65536];
	_cleanup_close_ int in = open(src, O_RDONLY | O_CLOEXEC);
	_cleanup_close_ int out = -1;
	ssize_t n;

	if (in < 0)
		return -errno;
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (out < 0)
		return -errno;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			return -EIO;
	return n < 0 ? -errno : 0;
}

/* Forks the init into new mount, pid, net, ipc and uts namespaces; returns its pid or -errno. */
static pid_t clone_init(const struct sandbox_init_args *a, int parent_go, int parent_report)
{
	pid_t pid = (pid_t)syscall(SYS_clone,
				   CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
					   CLONE_NEWUTS | SIGCHLD,
				   NULL, NULL, NULL, 0);

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		close(parent_go);
		close(parent_report);
		sandbox_init_main(a);
	}
	return pid;
}

/* Reads the init's one-line verdict; 0 when it said "ok". */
static int wait_ready(int fd, char *msg, size_t size)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	size_t len = 0;

	msg[0] = '\0';
	while (len < size - 1) {
		ssize_t n;

		if (poll(&p, 1, CREATE_READY_TIMEOUT_MS) <= 0) {
			snprintf(msg, size, "the sandbox's init did not get ready in %d ms",
				 CREATE_READY_TIMEOUT_MS);
			return -ETIMEDOUT;
		}
		n = read(fd, msg + len, size - 1 - len);
		if (n <= 0)
			break;
		len += (size_t)n;
		if (memchr(msg, '\n', len))
			break;
	}
	msg[len] = '\0';
	if (len > 0 && msg[len - 1] == '\n')
		msg[len - 1] = '\0';
	if (strcmp(msg, "ok") == 0)
		return 0;
	if (!msg[0])
		snprintf(msg, size, "the sandbox's init exited during set-up");
	return -EIO;
}

static void record_created(struct report *rp, const char *name, const struct sandbox_limits *l,
			   const char *hash)
{
	struct event ev;
	json_t *f;

	event_init(&ev);
	ev.ts = time_now_ns();
	strscpy(ev.sandbox, sizeof(ev.sandbox), name);
	ev.source = EVENT_SOURCE_ENFORCER;
	strcpy(ev.kind, "sandbox.created");
	f = json_pack("{s:s, s:i, s:I, s:I, s:I, s:I, s:I, s:I}", "policy_hash", hash, "uid",
		      (int)l->uid, "memory", (json_int_t)l->caps.memory_bytes, "pids",
		      (json_int_t)l->caps.pids, "cpu_quota_us", (json_int_t)l->caps.cpu_quota_us,
		      "workspace", (json_int_t)l->workspace_bytes, "open_files",
		      (json_int_t)l->open_files, "wall_clock_ns", (json_int_t)l->wall_clock_ns);
	if (f)
		event_set_fields(&ev, f);
	json_decref(f);
	report_event(rp, &ev);
	event_clear(&ev);
}

/* One create, from the policy to the monitor's record: what each step hands the next, and what a
 * failure must undo. */
struct create_run {
	const struct config *cfg;
	const char *name;
	const char *policy_path;
	int unwatched;
	int timings; /* each phase's time on stderr */
	struct sandbox_limits lim;
	struct sandbox_state st;
	struct policy *policy;
	struct report *rp;
	char dir[PATH_MAX];		/* the sandbox's state dir */
	char root[PATH_MAX];		/* where the init builds the sandbox's tree */
	char rel[128];			/* the sandbox's cgroup */
	int link_lock;			/* the sandboxes' lock, held until the state is saved */
	int made_cgroup;		/* the cgroup is ours to remove */
	int kill_fd;			/* its cgroup.kill, for the init's wall clock */
	int go[2];			/* the init waits on go[0] until it is in the cgroup */
	int rep[2];			/* the init's verdict arrives on rep[0] */
	pid_t pid;			/* the init */
	int attached;			/* something of the egress link may exist: detach it */
	struct launcher_start launcher; /* forked with the init, started last */
	struct gate_keeper dns, proxy;	/* the DNS gate and the L7 proxy, starting */
	char trust[PATH_MAX + 32]; /* the L7 proxy's CA bundle, bound over the sandbox's; "" none */
};

/* A policy with no egress allowlist gets no link at all: loopback only, nothing to judge, no
 * gate, hooks, DNS gate or proxy to set up (and a create several times faster). */
static int create_has_egress(const struct create_run *c)
{
	return policy_egress_count(c->policy) > 0;
}

/* Without a monitor answering, create refuses (fail closed); --unwatched says so on stderr. */
static int create_check_monitor(struct create_run *c)
{
	int r;

	if (c->unwatched) {
		fprintf(stderr,
			"firebreak create: WARNING: sandbox %s is UNWATCHED: no monitor records "
			"or stops what runs in it. --unwatched exists to test the enforcer "
			"alone.\n",
			c->name);
	} else if ((r = report_open(c->cfg, &c->rp)) < 0) {
		log_error("firebreak create: no monitor answers at %s (%s); refusing to create an "
			  "unwatched sandbox (--unwatched is for testing the enforcer alone)",
			  c->cfg->runtime_dir, strerror(-r));
		return -ENOTCONN;
	}
	return 0;
}

/* The sandbox's state dir, new: one that exists already is another sandbox's, and stays. */
static int create_state_dir(struct create_run *c)
{
	int r;

	if ((r = make_dirs(c->cfg, c->name)) < 0) {
		if (r == -EEXIST)
			log_error("firebreak create: sandbox %s exists already", c->name);
		else
			log_errno(r, "firebreak create: state dir in %s", c->cfg->runtime_dir);
		return r;
	}
	state_dir(c->cfg, c->name, c->dir, sizeof(c->dir));
	return 0;
}

/* Identity and link are chosen under the sandboxes' lock, held until the state is saved. */
static int create_choose_identity(struct create_run *c)
{
	int r;

	c->link_lock = state_lock(c->cfg);
	if (c->link_lock < 0)
		return log_errno(c->link_lock, "firebreak create: the sandboxes' lock");
	if (c->lim.uid == 0) {
		uid_t uid;

		if ((r = state_alloc_uid(c->cfg, &uid)) < 0)
			return log_errno(r, "firebreak create: choose a uid");
		c->lim.uid = uid;
	}
	if (c->lim.gid == 0)
		c->lim.gid = c->lim.uid;
	return 0;
}

/* The policy's copy, the root the init builds on, and the seccomp filter every exec installs. */
static int create_state_files(struct create_run *c)
{
	char path[PATH_MAX];
	int r;

	state_path(c->cfg, c->name, "root", c->root, sizeof(c->root));
	state_path(c->cfg, c->name, "policy.json", path, sizeof(path));
	if ((r = copy_file(c->policy_path, path)) < 0 || mkdir(c->root, 0700) < 0)
		return log_errno(r ? r : -errno, "firebreak create: state files in %s", c->dir);
	state_path(c->cfg, c->name, "seccomp.bpf", path, sizeof(path));
	if ((r = sandbox_lures_marker(c->st.decoy_marker)) < 0)
		return log_errno(r, "firebreak create: the decoys' marker");
	if ((r = sandbox_seccomp_build(path)) < 0 ||
	    (r = sandbox_seccomp_hash(path, c->st.seccomp_hash)) < 0)
		return r;
	return 0;
}

/*
 * The L7 proxy's TLS, before the init builds the sandbox's tree (which binds the bundle over its
 * trust store): the deployment's root CA (made once) and a signing CA of this sandbox's own
 * (enforcer/proxy-ca.h), where some rule's TLS is intercepted.
 */
static int create_proxy_ca(struct create_run *c)
{
	char dir[PATH_MAX], err[512] = "";
	int r;

	if (!egress_proxy_intercepts(c->policy))
		return 0;
	state_path(c->cfg, c->name, EGRESS_PROXY_DIR, dir, sizeof(dir));
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return log_errno(-errno, "firebreak create: %s", dir);
	if ((r = proxy_ca_ensure(c->cfg, err, sizeof(err))) < 0 ||
	    (r = proxy_ca_issue_sandbox(c->cfg, c->lim.wall_clock_ns, dir, 0, 0, err,
					sizeof(err))) < 0)
		return log_errno(r, "firebreak create: the L7 proxy's CA: %s", err);
	snprintf(c->trust, sizeof(c->trust), "%s/" EGRESS_PROXY_BUNDLE, dir);
	return 0;
}

/* The sandbox's cgroup with the policy's caps, and its cgroup.kill for the init's wall clock. */
static int create_cgroup(struct create_run *c)
{
	int r;

	snprintf(c->rel, sizeof(c->rel), CGROUP_ROOT_NAME "/%s", c->name);
	if ((r = cgroup_create(c->rel, &c->lim.caps)) < 0)
		return log_errno(r, "firebreak create: cgroup %s", c->rel);
	c->made_cgroup = 1;
	if ((c->kill_fd = cgroup_open_kill(c->rel)) < 0)
		return log_errno(c->kill_fd, "firebreak create: %s/cgroup.kill", c->rel);
	return 0;
}

/*
 * Clones the init, which waits for its go-ahead (create_init_ready) until it is in the sandbox's
 * cgroups, and forks the launcher, which puts it there while create wires the egress.
 */
static int create_start_init(struct create_run *c)
{
	if (pipe2(c->go, O_CLOEXEC) < 0 || pipe2(c->rep, O_CLOEXEC) < 0)
		return -errno;
	struct sandbox_init_args a = {
		.go_fd = c->go[0],
		.report_fd = c->rep[1],
		.kill_fd = c->kill_fd,
		.mounts = {
			.root = c->root,
			.workspace_bytes = c->lim.workspace_bytes,
			.tmp_bytes = c->lim.tmp_bytes,
			.home_bytes = c->lim.home_bytes,
			.marker = c->st.decoy_marker,
			.trust = c->trust[0] ? c->trust : NULL,
			.policy = c->policy,
			.uid = c->lim.uid,
			.gid = c->lim.gid,
		},
		.hostname = c->name,
		.wall_clock_ns = c->lim.wall_clock_ns,
	};
	c->pid = clone_init(&a, c->go[1], c->rep[0]);
	if (c->pid < 0)
		return log_errno(c->pid, "firebreak create: clone the sandbox's init");
	close(c->go[0]);
	close(c->rep[1]);
	c->go[0] = c->rep[1] = -1;
	return launcher_fork(c->cfg, c->name, c->policy, &c->lim, c->pid, &c->launcher);
}

/*
 * The sandbox's link to the egress gate: chosen under the sandboxes' lock (which the caller holds
 * until the state is saved) and wired, with the gate's rules for it. c->attached says from here on
 * whether there is anything to undo.
 */
static int create_link(struct create_run *c)
{
	int r;

	if (!create_has_egress(c))
		return 0;
	if ((r = state_alloc_link(c->cfg, EGRESS_LINKS_MAX, egress_link_busy, &c->st.link)) < 0)
		return log_errno(r, "firebreak create: choose a link to the gate");
	c->attached = 1; /* from here on, partly maybe: detach cleans what is there */
	return egress_attach(c->cfg, c->name, c->st.link, c->pid, c->policy);
}

/* Per-tool egress, in the kernel, on the sandbox's cgroup: a tool's connect outside its share of
 * the allowlist fails with EPERM before a packet exists. */
static int create_hooks(struct create_run *c)
{
	char cgdir[PATH_MAX];
	int r;

	if (!create_has_egress(c))
		return 0;
	if ((r = cgroup_v2_dir(c->rel, cgdir, sizeof(cgdir))) < 0)
		return r;
	return egress_hook_install(cgdir, c->policy, c->st.link);
}

/* The sandbox's DNS gate, started: create goes on while it starts (create_gate_ready). */
static int create_dns(struct create_run *c)
{
	if (!create_has_egress(c))
		return 0;
	return egress_dns_start(c->cfg, c->name, c->st.link, c->policy, &c->dns);
}

/* The sandbox's L7 proxy, started likewise. */
static int create_proxy(struct create_run *c)
{
	if (!create_has_egress(c))
		return 0;
	return egress_proxy_start(c->cfg, c->name, c->st.link, c->policy, c->st.decoy_marker,
				  &c->proxy);
}

/*
 * The init in its cgroups (the launcher moved it there meanwhile), told to go on, and its tree
 * and loopback up. Names resolve only through the gate: its resolv.conf is rewritten in place, so
 * the init's bind mount of it shows the new content.
 */
static int create_init_ready(struct create_run *c)
{
	char msg[512], line[128], resolv[64];
	struct egress_link l;
	int r;

	if ((r = launcher_attached(&c->launcher)) < 0)
		return log_errno(r, "firebreak create: move the init into %s", c->rel);
	if (write(c->go[1], "g", 1) != 1)
		return -EIO;
	if ((r = wait_ready(c->rep[0], msg, sizeof(msg))) < 0) {
		log_error("firebreak create: %s", msg);
		return r;
	}
	if (!create_has_egress(c))
		return 0;
	egress_link_of(c->st.link, &l);
	snprintf(resolv, sizeof(resolv), "/proc/%d/root/etc/resolv.conf", (int)c->pid);
	snprintf(line, sizeof(line), "nameserver %s\noptions timeout:2 attempts:1\n", l.gate4);
	return file_write_text(resolv, line);
}

/* The DNS gate and the proxy listen, or the create fails: nothing runs before its gate does. */
static int create_gate_ready(struct create_run *c)
{
	int r = egress_dns_wait(c->name, &c->dns),
	    r2 = egress_proxy_wait(c->cfg, c->name, &c->proxy);

	return r < 0 ? r : r2;
}

/* The state on record; from then on the link is the sandbox's, and the lock is released. */
static int create_save_state(struct create_run *c)
{
	struct sandbox_state *st = &c->st;
	int r;

	strscpy(st->name, sizeof(st->name), c->name);
	st->init_pid = c->pid;
	st->init_start = proc_start_time(c->pid);
	st->created_ts = time_now_ns();
	st->uid = c->lim.uid;
	st->gid = c->lim.gid;
	st->open_files = c->lim.open_files;
	strscpy(st->policy_hash, sizeof(st->policy_hash), policy_hash(c->policy));
	st->unwatched = c->unwatched;
	if ((r = state_save(c->cfg, st)) < 0)
		return log_errno(r, "firebreak create: save state");
	close(c->link_lock); /* the link is ours on record now */
	c->link_lock = -1;
	return 0;
}

/* The monitor registers the sandbox and records sandbox.created, or the create fails. */
static int create_register(struct create_run *c)
{
	int r;

	if (!c->rp)
		return 0;
	report_register(c->rp, c->name, "running", c->rel, c->st.policy_hash);
	record_created(c->rp, c->name, &c->lim, c->st.policy_hash);
	if ((r = report_wait(c->rp)) < 0)
		return log_errno(r, "firebreak create: the monitor did not record the sandbox");
	return 0;
}

/* The exec launcher: from here on tool calls can run. */
static int create_start_launcher(struct create_run *c)
{
	return launcher_go(&c->launcher);
}

/* A failed create leaves nothing behind: the launcher, the init, the link, the cgroup and the
 * state dir go. */
static void create_undo(struct create_run *c)
{
	launcher_abandon(&c->launcher);
	launcher_stop(c->cfg, c->name);
	if (c->pid > 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
	}
	if (c->attached) {
		/* What is still starting has written its pid file once it answers. */
		gate_keeper_wait(&c->proxy);
		gate_keeper_wait(&c->dns);
		egress_proxy_stop(c->cfg, c->name);
		egress_dns_stop(c->cfg, c->name);
		egress_detach(c->cfg, c->name, c->st.link);
		egress_gate_down_if_idle(c->cfg);
	}
	if (c->made_cgroup)
		cgroup_remove(c->rel, 1000);
	state_remove(c->cfg, c->name);
}

static void create_close(struct create_run *c)
{
	launcher_abandon(&c->launcher);
	if (c->link_lock >= 0)
		close(c->link_lock);
	for (int i = 0; i < 2; i++)
		if (c->go[i] >= 0)
			close(c->go[i]);
	for (int i = 0; i < 2; i++)
		if (c->rep[i] >= 0)
			close(c->rep[i]);
	if (c->kill_fd >= 0)
		close(c->kill_fd);
}

/* The phases of a create, in order; a failure in any undoes them all. */
static const struct create_phase {
	const char *name;
	int (*run)(struct create_run *c);
} create_phases[] = {
	{ "identity", create_choose_identity },
	{ "state-files", create_state_files },
	{ "proxy-ca", create_proxy_ca },
	{ "cgroup", create_cgroup },
	{ "init", create_start_init },
	{ "link", create_link },
	{ "hooks", create_hooks },
	{ "dns-gate", create_dns },
	{ "proxy", create_proxy },
	{ "init-ready", create_init_ready },
	{ "save-state", create_save_state },
	{ "gate-ready", create_gate_ready },
	{ "register", create_register },
	{ "launcher", create_start_launcher },
};

static int create_run_phases(struct create_run *c)
{
	uint64_t t0 = time_mono_ns(), t = t0;
	int r;

	for (size_t i = 0; i < ARRAY_SIZE(create_phases); i++) {
		if ((r = create_phases[i].run(c)) < 0)
			return r;
		if (c->timings) {
			uint64_t now = time_mono_ns();

			fprintf(stderr, "firebreak create: %-11s %8.3f ms\n", create_phases[i].name,
				(double)(now - t) / 1e6);
			t = now;
		}
	}
	if (c->timings)
		fprintf(stderr, "firebreak create: %-11s %8.3f ms\n", "total",
			(double)(t - t0) / 1e6);
	return 0;
}

int sandbox_create(const struct config *cfg, const char *name, const char *policy_path,
		   unsigned flags)
{
	struct create_run c = {
		.cfg = cfg,
		.name = name,
		.policy_path = policy_path,
		.unwatched = !!(flags & SANDBOX_CREATE_UNWATCHED),
		.timings = !!(flags & SANDBOX_CREATE_TIMINGS),
		.link_lock = -1,
		.kill_fd = -1,
		.go = { -1, -1 },
		.rep = { -1, -1 },
		.pid = -1,
		.launcher = { .pid = -1, .go_fd = -1, .ready_fd = -1 },
		.dns = { .pid = -1, .ready_fd = -1 },
		.proxy = { .pid = -1, .ready_fd = -1 },
	};
	int r;

	if (!event_sandbox_name_valid(name))
		return log_error("firebreak create: '%s' is not a valid sandbox name", name),
		       -EINVAL;
	if ((r = sandbox_load_policy(policy_path, &c.policy, &c.lim)) < 0)
		return r;
	/* A failure before the state dir is ours leaves it alone: it may be another sandbox's. */
	if ((r = create_check_monitor(&c)) < 0 || (r = create_state_dir(&c)) < 0)
		goto out_keep_dir;
	/* From here a failure removes everything made so far: a half-built sandbox never runs. */
	if ((r = create_run_phases(&c)) < 0)
		create_undo(&c);
	create_close(&c);
out_keep_dir:
	report_close(c.rp);
	policy_free(c.policy);
	return r;
}
