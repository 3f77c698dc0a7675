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
#include "egress.h"
#include "egress-hook-user.h"
#include "init.h"
#include "policy-limits.h"
#include "log.h"
#include "macro.h"
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

static int write_file(const char *path, const char *text)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	size_t len = strlen(text);

	if (fd < 0)
		return -errno;
	return write(fd, text, len) == (ssize_t)len ? 0 : -EIO;
}

/*
 * Connects the sandbox to the egress gate: a link (chosen under the sandboxes' lock, which the
 * caller holds until the state is saved), the gate's rules, the per-tool kernel hooks on its
 * cgroup, its resolv.conf and its DNS gate. *attached says whether there is anything to undo.
 */
static int connect_network(const struct config *cfg, const char *name, const char *rel,
			   pid_t pid, const struct policy *policy, struct sandbox_state *st,
			   int *attached)
{
	char cgdir[PATH_MAX], line[128], resolv[64];
	struct egress_link l;
	int r;

	if ((r = state_alloc_link(cfg, EGRESS_LINKS_MAX, egress_link_busy, &st->link)) < 0)
		return log_errno(r, "firebreak create: choose a link to the gate");
	*attached = 1; /* from here on, partly maybe: detach cleans what is there */
	if ((r = egress_attach(cfg, name, st->link, pid, policy)) < 0)
		return r;
	/* Per-tool egress, in the kernel, on the sandbox's cgroup: a tool's connect outside its
	 * share of the allowlist fails with EPERM before a packet exists. */
	if ((r = cgroup_v2_dir(rel, cgdir, sizeof(cgdir))) < 0 ||
	    (r = egress_hook_install(cgdir, policy, st->link)) < 0)
		return r;
	/* Names resolve only through the gate; the file is rewritten in place, so the init's bind
	 * mount of it shows the new content. */
	egress_link_of(st->link, &l);
	snprintf(resolv, sizeof(resolv), "/proc/%d/root/etc/resolv.conf", (int)pid);
	snprintf(line, sizeof(line), "nameserver %s\noptions timeout:2 attempts:1\n", l.gate4);
	if ((r = write_file(resolv, line)) < 0)
		return r;
	return egress_dns_start(cfg, name, st->link, policy);
}

/* Forks the init into new mount, pid, net, ipc and uts namespaces; returns its pid or -errno. */
static pid_t clone_init(const struct sandbox_init_args *a, int parent_go, int parent_report)
{
	pid_t pid = (pid_t)syscall(SYS_clone, CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET |
						      CLONE_NEWIPC | CLONE_NEWUTS | SIGCHLD,
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

int sandbox_create(const struct config *cfg, const char *name, const char *policy_path,
		   int unwatched)
{
	char dir[PATH_MAX], path[PATH_MAX], root[PATH_MAX], rel[128], msg[512];
	struct sandbox_limits lim;
	struct sandbox_state st = { 0 };
	struct policy *policy = NULL;
	struct report *rp = NULL;
	int go[2] = { -1, -1 }, rep[2] = { -1, -1 }, kill_fd = -1, made_cgroup = 0, r;
	int link_lock = -1, attached = 0;
	pid_t pid = -1;

	if (!event_sandbox_name_valid(name))
		return log_error("firebreak create: '%s' is not a valid sandbox name", name), -EINVAL;
	if ((r = sandbox_load_policy(policy_path, &policy, &lim)) < 0)
		return r;
	if (unwatched) {
		fprintf(stderr, "firebreak create: WARNING: sandbox %s is UNWATCHED: no monitor records "
				"or stops what runs in it. --unwatched exists to test the enforcer "
				"alone.\n",
			name);
	} else if ((r = report_open(cfg, &rp)) < 0) {
		log_error("firebreak create: no monitor answers at %s (%s); refusing to create an "
			  "unwatched sandbox (--unwatched is for testing the enforcer alone)",
			  cfg->runtime_dir, strerror(-r));
		policy_free(policy);
		return -ENOTCONN;
	}
	if ((r = make_dirs(cfg, name)) < 0) {
		if (r == -EEXIST)
			log_error("firebreak create: sandbox %s exists already", name);
		else
			log_errno(r, "firebreak create: state dir in %s", cfg->runtime_dir);
		goto out_keep_dir;
	}
	state_dir(cfg, name, dir, sizeof(dir));
	/* Identity and link are chosen under the sandboxes' lock, held until the state is saved. */
	link_lock = state_lock(cfg);
	if (link_lock < 0) {
		r = log_errno(link_lock, "firebreak create: the sandboxes' lock");
		goto fail;
	}
	if (lim.uid == 0) {
		uid_t uid;

		if ((r = state_alloc_uid(cfg, &uid)) < 0) {
			log_errno(r, "firebreak create: choose a uid");
			goto fail;
		}
		lim.uid = uid;
	}
	if (lim.gid == 0)
		lim.gid = lim.uid;
	state_path(cfg, name, "root", root, sizeof(root));
	state_path(cfg, name, "policy.json", path, sizeof(path));
	if ((r = copy_file(policy_path, path)) < 0 || mkdir(root, 0700) < 0) {
		r = log_errno(r ? r : -errno, "firebreak create: state files in %s", dir);
		goto fail;
	}
	state_path(cfg, name, "seccomp.bpf", path, sizeof(path));
	if ((r = sandbox_seccomp_build(path)) < 0 ||
	    (r = sandbox_seccomp_hash(path, st.seccomp_hash)) < 0)
		goto fail;

	snprintf(rel, sizeof(rel), CGROUP_ROOT_NAME "/%s", name);
	if ((r = cgroup_create(rel, &lim.caps)) < 0) {
		log_errno(r, "firebreak create: cgroup %s", rel);
		goto fail;
	}
	made_cgroup = 1;
	if ((kill_fd = cgroup_open_kill(rel)) < 0) {
		r = log_errno(kill_fd, "firebreak create: %s/cgroup.kill", rel);
		goto fail;
	}
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(rep, O_CLOEXEC) < 0) {
		r = -errno;
		goto fail;
	}
	struct sandbox_init_args a = {
		.go_fd = go[0],
		.report_fd = rep[1],
		.kill_fd = kill_fd,
		.mounts = { .root = root,
			    .workspace_bytes = lim.workspace_bytes, .tmp_bytes = lim.tmp_bytes,
			    .uid = lim.uid, .gid = lim.gid },
		.hostname = name,
		.wall_clock_ns = lim.wall_clock_ns,
	};
	pid = clone_init(&a, go[1], rep[0]);
	if (pid < 0) {
		r = log_errno(pid, "firebreak create: clone the sandbox's init");
		goto fail;
	}
	close(go[0]);
	close(rep[1]);
	go[0] = rep[1] = -1;
	if ((r = cgroup_attach(rel, pid)) < 0 || write(go[1], "g", 1) != 1) {
		r = r < 0 ? r : -EIO;
		goto fail;
	}
	if ((r = wait_ready(rep[0], msg, sizeof(msg))) < 0) {
		log_error("firebreak create: %s", msg);
		goto fail;
	}
	/* A policy with no egress allowlist gets no link at all: loopback only, nothing to judge,
	 * no gate, hooks or DNS gate to set up (and a create several times faster). */
	if (policy_egress_count(policy) > 0 &&
	    (r = connect_network(cfg, name, rel, pid, policy, &st, &attached)) < 0)
		goto fail;

	strscpy(st.name, sizeof(st.name), name);
	st.init_pid = pid;
	st.init_start = state_process_start(pid);
	st.created_ts = time_now_ns();
	st.uid = lim.uid;
	st.gid = lim.gid;
	st.open_files = lim.open_files;
	strscpy(st.policy_hash, sizeof(st.policy_hash), policy_hash(policy));
	st.unwatched = unwatched;
	if ((r = state_save(cfg, &st)) < 0) {
		log_errno(r, "firebreak create: save state");
		goto fail;
	}
	close(link_lock); /* the link is ours on record now */
	link_lock = -1;
	if (rp) {
		report_register(rp, name, "running", rel, st.policy_hash);
		record_created(rp, name, &lim, st.policy_hash);
		if ((r = report_wait(rp)) < 0) {
			log_errno(r, "firebreak create: the monitor did not record the sandbox");
			goto fail;
		}
	}
	r = 0;
	goto out;
fail:
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	if (attached) {
		egress_dns_stop(cfg, name);
		egress_detach(cfg, name, st.link);
		egress_gate_down_if_idle(cfg);
	}
	if (made_cgroup)
		cgroup_remove(rel, 1000);
	state_remove(cfg, name);
out:
	if (link_lock >= 0)
		close(link_lock);
	if (go[0] >= 0)
		close(go[0]);
	if (go[1] >= 0)
		close(go[1]);
	if (rep[0] >= 0)
		close(rep[0]);
	if (rep[1] >= 0)
		close(rep[1]);
	if (kill_fd >= 0)
		close(kill_fd);
out_keep_dir:
	report_close(rp);
	policy_free(policy);
	return r;
}
