/*
 * The exec launcher's process (launcher.h): its start from create, and its loop. The loop is one
 * thread, so the step processes it forks may do anything a fresh process may; only a call's wait
 * for its process is asynchronous, every record to the monitor is a short synchronous round trip.
 */
#include "launcher.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec-call.h"
#include "fileio.h"
#include "launcher-wire.h"
#include "log.h"
#include "macro.h"
#include "policy/policy.h"
#include "report.h"
#include "timeutil.h"
#include "unixsock.h"

/* Connections that have not sent their request yet, beside the calls. */
#define LAUNCHER_PENDING_MAX 16

/* A caller told its tool's exit, waiting to hear that step.end is durable. */
struct record_waiter {
	uint64_t seq; /* step.end's number on the monitor's connection; 0: a free slot */
	int fd;
};

struct loop {
	struct launcher L; /* first: launcher_record_lost() finds the loop from it */
	struct record_waiter waiters[LAUNCHER_CALLS_MAX];
	int listen_fd, sfd;
	int dying; /* the init is gone or we were told to stop: no new calls */
	struct exec_call *calls[LAUNCHER_CALLS_MAX];
	int pending[LAUNCHER_PENDING_MAX];
	/* Counted, told on exit and to {"stats": true}. */
	unsigned long long started, refused, failed, bad_requests, untrusted_peers, busy;
};

static void tell_recorded(struct record_waiter *w, int ok)
{
	if (launcher_wire_send(w->fd, json_pack("{s:b}", "recorded", ok), NULL, 0) < 0)
		log_debug("firebreak-exec: a caller went away before its record was durable");
	close(w->fd);
	w->seq = 0;
	w->fd = -1;
}

/* The monitor acknowledged request seq: whoever waits for it hears. */
static void record_acked(void *data, uint64_t seq, int ok)
{
	struct loop *lp = data;

	for (int i = 0; i < LAUNCHER_CALLS_MAX; i++)
		if (lp->waiters[i].seq == seq)
			tell_recorded(&lp->waiters[i], ok);
}

struct report *launcher_record(struct launcher *L)
{
	if (L->st.unwatched)
		return NULL;
	if (L->rp && !report_alive(L->rp))
		launcher_record_lost(L);
	if (!L->rp && report_open(L->cfg, &L->rp) < 0)
		L->rp = NULL;
	if (L->rp)
		report_on_ack(L->rp, record_acked, L);
	return L->rp;
}

void launcher_record_lost(struct launcher *L)
{
	struct loop *lp = (struct loop *)L;

	/* What was not acknowledged may not be durable: its callers hear so. */
	for (int i = 0; i < LAUNCHER_CALLS_MAX; i++)
		if (lp->waiters[i].seq)
			tell_recorded(&lp->waiters[i], 0);
	report_close(L->rp);
	L->rp = NULL;
}

/* The caller on fd (taken) waits for step.end (seq) to be durable; with no slot, it waits here. */
static void wait_recorded(struct loop *lp, int fd, uint64_t seq)
{
	for (int i = 0; i < LAUNCHER_CALLS_MAX; i++)
		if (!lp->waiters[i].seq) {
			lp->waiters[i] = (struct record_waiter){ .seq = seq, .fd = fd };
			return;
		}
	struct record_waiter w = { .seq = seq, .fd = fd };
	if (!lp->L.rp || report_wait(lp->L.rp) < 0)
		launcher_record_lost(&lp->L);
	if (w.seq)
		tell_recorded(&w, lp->L.rp != NULL);
}

/* Makes the next step's process ahead, so that the next call finds it in place. */
static void prepare_next(struct loop *lp)
{
	struct launcher *L = &lp->L;
	int64_t step;
	int r;

	if (lp->dying || L->next.pid > 0)
		return;
	if ((r = state_next_step(L->cfg, L->st.name, &step)) < 0 ||
	    (r = exec_step_prepare(&L->sb, L->st.name, step, &L->next)) < 0)
		log_warn_errno(r, "firebreak-exec: %s: the next step's process", L->st.name);
}

static void answer(int fd, json_t *obj)
{
	if (fd >= 0 && launcher_wire_send(fd, obj, NULL, 0) < 0)
		log_debug("firebreak-exec: a caller went away before its answer");
}

static void answer_error(int fd, int r, const char *text)
{
	answer(fd,
	       json_pack("{s:s, s:i}", "error", text && *text ? text : strerror(-r), "errno", -r));
}

/* A string array of the request, or NULL: each element a string, at most max of them. */
static char **string_vector(json_t *a, size_t min, size_t max)
{
	size_t n = json_array_size(a), i;
	char **v;

	if (!json_is_array(a) || n < min || n > max || !(v = calloc(n + 1, sizeof(char *))))
		return NULL;
	for (i = 0; i < n; i++)
		if (!(v[i] = (char *)json_string_value(json_array_get(a, i)))) {
			free(v);
			return NULL;
		}
	return v;
}

/* Fills c's request from the message; 0 or -EINVAL with the reason in *why. */
static int parse_request(struct exec_call *c, const char **why)
{
	json_t *m = c->msg, *step = json_object_get(m, "step"), *id = json_object_get(m, "call_id");

	c->req.name = c->L->st.name;
	c->req.tool = json_string_value(json_object_get(m, "tool"));
	c->req.step = -1;
	if (!c->req.tool || !event_tool_name_valid(c->req.tool))
		return *why = "the request names no valid tool", -EINVAL;
	if (!(c->req.argv = string_vector(json_object_get(m, "argv"), 1, 1 << 20)))
		return *why = "the request's argv is not a list of strings", -EINVAL;
	if (!(c->env_in = string_vector(json_object_get(m, "env"), 0, 1 << 20)))
		return *why = "the request's env is not a list of strings", -EINVAL;
	if (id && (!json_is_string(id) || strlen(json_string_value(id)) > FB_CALL_ID_MAX))
		return *why = "the request's call_id is too long or not a string", -EINVAL;
	c->req.call_id = json_string_value(id);
	if (step) {
		if (!json_is_integer(step) || json_integer_value(step) < 0 ||
		    json_integer_value(step) > FB_STEP_MAX)
			return *why = "the request's step is not a step number", -EINVAL;
		c->req.step = json_integer_value(step);
	}
	return 0;
}

static int free_slot(struct loop *lp)
{
	for (int i = 0; i < LAUNCHER_CALLS_MAX; i++)
		if (!lp->calls[i])
			return i;
	return -1;
}

/* A request arrived on pending connection fd (taken): it runs, or is answered at once. */
static void take_request(struct loop *lp, int fd)
{
	struct exec_call *c;
	const char *why = NULL;
	int fds[3], nfds, slot, r;
	json_t *msg;

	r = launcher_wire_recv(fd, &msg, fds, 3, &nfds);
	if (r == -ECONNRESET || r == -EAGAIN) {
		if (r == -ECONNRESET)
			close(fd);
		return; /* gone before it asked, or nothing yet */
	}
	if (r == 0 && json_is_true(json_object_get(msg, "stats"))) {
		answer(fd,
		       json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "started",
				 (json_int_t)lp->started, "refused", (json_int_t)lp->refused,
				 "failed", (json_int_t)lp->failed, "bad_requests",
				 (json_int_t)lp->bad_requests, "untrusted_peers",
				 (json_int_t)lp->untrusted_peers, "busy", (json_int_t)lp->busy));
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		json_decref(msg);
		close(fd);
		return;
	}
	if (r < 0 || nfds != 3) {
		lp->bad_requests++;
		answer_error(fd, r < 0 ? r : -EBADMSG,
			     r == -EMSGSIZE ? "the request is too large"
			     : r < 0	    ? "the request is not a JSON object"
					    : "the request must carry stdin, stdout and stderr");
		for (int i = 0; r == 0 && i < nfds; i++)
			close(fds[i]);
		json_decref(msg);
		close(fd);
		return;
	}
	if (!(c = calloc(1, sizeof(*c)))) {
		for (int i = 0; i < 3; i++)
			close(fds[i]);
		json_decref(msg);
		answer_error(fd, -ENOMEM, NULL);
		close(fd);
		return;
	}
	c->L = &lp->L;
	c->msg = msg;
	c->client = fd;
	memcpy(c->stdio, fds, sizeof(fds));
	exec_step_init(&c->run);
	if ((r = parse_request(c, &why)) < 0) {
		lp->bad_requests++;
		answer_error(fd, r, why);
		exec_call_free(c);
		return;
	}
	if (lp->dying) {
		struct pollfd p = { .fd = lp->L.init_pidfd, .events = POLLIN };
		char text[256];

		snprintf(text, sizeof(text),
			 poll(&p, 1, 0) != 0 ? "firebreak exec: sandbox %s is dead (its init is "
					       "gone); destroy it"
					     : "firebreak exec: sandbox %s is being destroyed",
			 lp->L.st.name);
		answer_error(fd, -ESRCH, text);
		exec_call_free(c);
		return;
	}
	if ((slot = free_slot(lp)) < 0) {
		lp->busy++;
		answer_error(fd, -EBUSY,
			     "firebreak exec: too many calls run in this sandbox at once");
		exec_call_free(c);
		return;
	}
	log_capture(&c->tell);
	r = exec_call_begin(c);
	log_capture(NULL);
	if (r != 0) {
		if (r > 0) {
			lp->refused += r == SANDBOX_EXIT_REFUSED;
			answer(fd, json_pack("{s:i, s:s}", "exit", r, "stderr",
					     c->tell.p ? c->tell.p : ""));
		} else {
			lp->failed++;
			answer_error(fd, r, c->tell.p);
		}
		exec_call_free(c);
	} else {
		lp->started++;
		lp->calls[slot] = c;
		/* The caller's fds are the tool's now: ours would only keep its pipes open. */
		for (int i = 0; i < 3; i++) {
			close(c->stdio[i]);
			c->stdio[i] = -1;
		}
		answer(fd, json_pack("{s:I}", "step", (json_int_t)c->run.step));
	}
	prepare_next(lp);
}

/* The call's process ended (or, frozen, is left as it is): the caller gets its answer. */
static void end_call(struct loop *lp, int slot)
{
	struct exec_call *c = lp->calls[slot];
	int code;

	log_capture(&c->tell);
	code = exec_call_end(c);
	log_capture(NULL);
	/* The tool's exit at once; that its step.end is durable, when the monitor says so. */
	answer(c->client, json_pack("{s:i, s:s, s:s}", "exit", code, "stderr",
				    c->tell.p ? c->tell.p : "", "record",
				    c->end_seq		 ? "pending"
				    : c->L->st.unwatched ? "none"
							 : "failed"));
	if (c->end_seq && c->client >= 0) {
		wait_recorded(lp, c->client, c->end_seq);
		c->client = -1;
	}
	if (c->why == EXEC_WHY_FROZEN) {
		/* Answered; reaped when it ends, whenever a thaw or a kill lets it. */
		c->held = 1;
		close(c->client);
		c->client = -1;
		return;
	}
	exec_call_free(c);
	lp->calls[slot] = NULL;
}

/* Cuts call c short: its whole step cgroup is killed, and why is what step.end says. */
static void cut_short(struct exec_call *c, int why)
{
	if (c->why != 0)
		return;
	c->why = why;
	cgroup_kill(c->run.rel);
}

/* The caller said something while its call runs: an interrupt, or it went away. */
static void caller_spoke(struct exec_call *c)
{
	int fds[3], nfds;
	json_t *msg;
	int r = launcher_wire_recv(c->client, &msg, fds, 3, &nfds);

	if (r == -EAGAIN)
		return;
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
	if (r < 0) {
		/* Gone: nobody waits for the call, so it ends here. */
		cut_short(c, SIGPIPE);
		close(c->client);
		c->client = -1;
		return;
	}
	json_t *sig = json_object_get(msg, "signal");
	if (json_is_integer(sig) && json_integer_value(sig) > 0 && json_integer_value(sig) < 65)
		cut_short(c, (int)json_integer_value(sig));
	json_decref(msg);
}

static void reap(struct exec_call *c)
{
	int status = 0;

	while (waitpid(c->run.pid, &status, 0) < 0 && errno == EINTR)
		;
	c->status = status;
}

/* The sandbox froze: every running call is answered now, and left where it is. */
static void sandbox_froze(struct loop *lp)
{
	char buf[256];
	ssize_t n = pread(lp->L.events_fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return;
	buf[n] = '\0';
	if (!strstr(buf, "frozen 1\n"))
		return;
	for (int i = 0; i < LAUNCHER_CALLS_MAX; i++) {
		struct exec_call *c = lp->calls[i];

		if (c && !c->held && c->why == 0) {
			c->why = EXEC_WHY_FROZEN;
			end_call(lp, i);
		}
	}
}

static int running(const struct loop *lp)
{
	for (int i = 0; i < LAUNCHER_CALLS_MAX; i++)
		if (lp->calls[i])
			return 1;
	return 0;
}

/* Kills every call (the launcher is stopped): each is answered and recorded as interrupted. */
static void stop_all(struct loop *lp, int sig)
{
	lp->dying = 1;
	for (int i = 0; i < LAUNCHER_CALLS_MAX; i++)
		if (lp->calls[i] && !lp->calls[i]->held)
			cut_short(lp->calls[i], sig);
}

static int poll_timeout(const struct loop *lp)
{
	int64_t now = (int64_t)time_mono_ns(), next = -1;

	for (int i = 0; i < LAUNCHER_CALLS_MAX; i++) {
		const struct exec_call *c = lp->calls[i];

		if (c && !c->held && c->why == 0 && c->deadline && (next < 0 || c->deadline < next))
			next = c->deadline;
	}
	if (next < 0)
		return -1;
	return next <= now ? 0 : (int)((next - now) / NSEC_PER_MSEC + 1);
}

static void accept_caller(struct loop *lp)
{
	int fd = accept4(lp->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK), i;

	if (fd < 0)
		return;
	/* The socket's directory is root's alone; the peer is checked all the same. */
	if (unixsock_peer_trusted(fd, (gid_t)-1) != 1) {
		lp->untrusted_peers++;
		close(fd);
		return;
	}
	for (i = 0; i < LAUNCHER_PENDING_MAX && lp->pending[i] >= 0; i++)
		;
	if (i == LAUNCHER_PENDING_MAX) {
		lp->busy++;
		answer_error(fd, -EBUSY, "firebreak exec: too many callers at once");
		close(fd);
		return;
	}
	lp->pending[i] = fd;
}

/* One round of the loop: waits, then handles what woke it. */
static void loop_once(struct loop *lp)
{
	enum { FIXED = 6 };
	struct pollfd p[FIXED + LAUNCHER_PENDING_MAX + 2 * LAUNCHER_CALLS_MAX];
	int who[ARRAY_SIZE(p)], n = 0, timeout = poll_timeout(lp);

	p[n++] = (struct pollfd){ .fd = lp->dying ? -1 : lp->listen_fd, .events = POLLIN };
	p[n++] = (struct pollfd){ .fd = lp->sfd, .events = POLLIN };
	p[n++] = (struct pollfd){ .fd = lp->L.init_pidfd, .events = POLLIN };
	p[n++] = (struct pollfd){ .fd = lp->L.events_fd, .events = POLLPRI };
	p[n++] = (struct pollfd){ .fd = lp->L.rp && report_pending(lp->L.rp) ? report_fd(lp->L.rp)
									     : -1,
				  .events = POLLIN };
	/* The next step's process dies only with the sandbox: reaped at once, as the init's end
	 * waits for every process of its pid namespace to be. */
	p[n++] = (struct pollfd){ .fd = lp->L.next.pid > 0 ? lp->L.next.pidfd : -1,
				  .events = POLLIN };
	for (int i = 0; i < LAUNCHER_PENDING_MAX; i++) {
		who[n] = i;
		p[n++] = (struct pollfd){ .fd = lp->pending[i], .events = POLLIN };
	}
	for (int i = 0; i < LAUNCHER_CALLS_MAX; i++) {
		struct exec_call *c = lp->calls[i];

		who[n] = i;
		p[n++] = (struct pollfd){ .fd = c ? c->run.pidfd : -1, .events = POLLIN };
		who[n] = i;
		p[n++] = (struct pollfd){ .fd = c ? c->client : -1, .events = POLLIN };
	}
	if (poll(p, (nfds_t)n, timeout) < 0)
		return;
	if (p[1].revents & POLLIN) {
		struct signalfd_siginfo si;

		if (read(lp->sfd, &si, sizeof(si)) == sizeof(si))
			stop_all(lp, (int)si.ssi_signo);
	}
	if (p[2].revents & POLLIN) {
		/* The init is gone: so is the pid namespace, and every step in it. */
		lp->dying = 1;
		exec_step_discard(&lp->L.next);
	}
	if (p[3].revents & (POLLPRI | POLLERR))
		sandbox_froze(lp);
	if (p[5].revents & POLLIN)
		exec_step_discard(&lp->L.next);
	if ((p[4].revents & (POLLIN | POLLHUP | POLLERR)) && lp->L.rp) {
		int r = report_take_acks(lp->L.rp);

		if (r < 0 && r != -EPROTO) /* a refusal is answered; a broken connection is not */
			launcher_record_lost(&lp->L);
	}
	for (int k = FIXED + LAUNCHER_PENDING_MAX; k < n; k += 2) {
		struct exec_call *c = lp->calls[who[k]];

		if (!c)
			continue;
		if (p[k + 1].revents & (POLLIN | POLLHUP))
			caller_spoke(c);
		if (p[k].revents & POLLIN) {
			reap(c);
			if (c->held) {
				exec_call_free(c);
				lp->calls[who[k]] = NULL;
			} else {
				end_call(lp, who[k]);
			}
		}
	}
	for (int i = 0; i < LAUNCHER_CALLS_MAX; i++) {
		struct exec_call *c = lp->calls[i];

		if (c && !c->held && c->why == 0 && c->deadline &&
		    (int64_t)time_mono_ns() >= c->deadline)
			cut_short(c, EXEC_WHY_TIMEOUT);
	}
	for (int k = FIXED; k < FIXED + LAUNCHER_PENDING_MAX; k++)
		if (p[k].revents & (POLLIN | POLLHUP)) {
			int fd = lp->pending[who[k]];

			lp->pending[who[k]] = -1;
			take_request(lp, fd);
		}
	if (p[0].revents & POLLIN)
		accept_caller(lp);
}

/* Everything the calls share, opened once; 0 or -errno after logging why. */
static int launcher_open(struct loop *lp, const struct config *cfg, const struct sandbox_state *st,
			 const struct policy *policy, const struct sandbox_limits *lim)
{
	struct launcher *L = &lp->L;
	char path[PATH_MAX + 32];
	sigset_t sigs;
	int r;

	L->cfg = cfg;
	L->st = *st;
	L->lim = *lim;
	L->policy = (struct policy *)policy;
	L->events_fd = -1;
	exec_sandbox_init(&L->sb);
	exec_step_init(&L->next);
	if (L->st.uid == 0 || L->st.gid == 0)
		return log_error("firebreak-exec: %s has no identity to run as (uid %u)", st->name,
				 (unsigned)L->st.uid),
		       -EPERM;
	snprintf(L->sbrel, sizeof(L->sbrel), CGROUP_ROOT_NAME "/%s", st->name);
	if ((r = cgroup_v2_dir(L->sbrel, L->cgdir, sizeof(L->cgdir))) < 0)
		return log_errno(r, "firebreak-exec: %s's cgroup", st->name);
	/* Never the sandbox's OOM victim where root may say so (CAP_SYS_RESOURCE); elsewhere its
	 * few pages make it the last choice anyway. */
	if ((r = file_write_text("/proc/self/oom_score_adj", "-1000")) < 0)
		log_debug_errno(r, "firebreak-exec: oom_score_adj");
	snprintf(path, sizeof(path), "%s/cgroup.events", L->cgdir);
	if ((L->events_fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return log_errno(-errno, "firebreak-exec: %s", path);
	state_path(cfg, st->name, "seccomp.bpf", path, sizeof(path));
	if ((r = sandbox_seccomp_read(path, &L->sb.filter, st->seccomp_hash)) < 0 ||
	    (r = sandbox_seccomp_ids_build(L->st.uid, L->st.gid, &L->sb.ids)) < 0)
		return log_errno(r, "firebreak-exec: the sandbox's seccomp filter %s", path);
	if ((r = exec_sandbox_open(&L->sb, &L->st)) == -EOPNOTSUPP)
		return log_error("firebreak-exec: this kernel has no Landlock (lsm= lacks "
				 "landlock), which keeps one step's processes from another's; "
				 "nothing runs without it"),
		       r;
	if (r < 0)
		return log_errno(r, "firebreak-exec: enter sandbox %s", st->name);
	if ((lp->L.init_pidfd = (int)syscall(SYS_pidfd_open, st->init_pid, 0)) < 0)
		return log_errno(-errno, "firebreak-exec: pidfd of the init");
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	if ((lp->sfd = signalfd(-1, &sigs, SFD_CLOEXEC)) < 0)
		return log_errno(-errno, "firebreak-exec: signalfd");
	state_path(cfg, st->name, LAUNCHER_SOCKET, path, sizeof(path));
	if ((lp->listen_fd = unixsock_listen_seqpacket(path, 0600)) < 0)
		return log_errno(lp->listen_fd, "firebreak-exec: listen on %s", path);
	for (int i = 0; i < LAUNCHER_PENDING_MAX; i++)
		lp->pending[i] = -1;
	for (int i = 0; i < LAUNCHER_CALLS_MAX; i++)
		lp->waiters[i].fd = -1;
	launcher_record(L);
	return 0;
}

static int write_pidfile(const struct config *cfg, const char *name)
{
	char path[PATH_MAX + 32];
	FILE *f;

	state_path(cfg, name, LAUNCHER_PID, path, sizeof(path));
	if (!(f = fopen(path, "we")))
		return -errno;
	fprintf(f, "%d\n", (int)getpid());
	return fclose(f) < 0 ? -errno : 0;
}

_Noreturn static void launcher_main(const struct config *cfg, const char *name,
				    const struct policy *policy, const struct sandbox_limits *lim,
				    pid_t init, int go, int ready)
{
	static struct loop lp; /* 64 calls' slots: not on the stack */
	struct sandbox_state st;
	char path[PATH_MAX + 32], rel[128];
	unsigned char answer_byte;
	ssize_t n;
	int fd, r;

	setsid(); /* the caller's terminal is not ours */
	prctl(PR_SET_NAME, LAUNCHER_COMM);
	/* Until it listens, what goes wrong is create's to say: stderr stays create's. Nothing
	 * else of create's (its lock on the sandboxes, its monitor connection) stays open. */
	fd_close_all_except((int[]){ go, ready, 2 }, 3);
	/* The init into the sandbox's cgroups first: the first v1 cgroup.procs write after idle
	 * waits for an RCU grace period (10-25 ms), which create spends on its egress meanwhile.
	 * Then this process into the resource cgroups, so that every step is born in them (no
	 * migration on a call's path: lib/cgroup.h) and charged to the sandbox: cheap right after
	 * the init's, while the kernel's cgroup lock is still in its fast mode. */
	snprintf(rel, sizeof(rel), CGROUP_ROOT_NAME "/%s", name);
	r = cgroup_attach(rel, init);
	answer_byte = (unsigned char)-r;
	if (write(ready, &answer_byte, 1) != 1 || r < 0)
		_exit(1);
	r = cgroup_join_resources(rel);
	if (r < 0)
		log_errno(r, "firebreak-exec: join %s's resource cgroups", name);
	/* The go-ahead: create has saved and registered the sandbox. EOF is create giving up. */
	while ((n = read(go, &answer_byte, 1)) < 0 && errno == EINTR)
		;
	if (n != 1)
		_exit(1);
	close(go);
	if (r == 0 && (r = state_load(cfg, name, &st)) < 0)
		log_errno(r, "firebreak-exec: the state of %s", name);
	if (r == 0)
		r = launcher_open(&lp, cfg, &st, policy, lim);
	if (r == 0)
		r = write_pidfile(cfg, name);
	state_path(cfg, name, LAUNCHER_LOG, path, sizeof(path));
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || dup2(fd, 2) < 0 || (fd = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0 ||
	    dup2(fd, 0) < 0 || dup2(fd, 1) < 0)
		r = r < 0 ? r : -EIO;
	log_set_stamp(LAUNCHER_COMM);
	if (r == 0)
		prepare_next(&lp); /* its stdio is /dev/null: nothing of create's */
	answer_byte = (unsigned char)-r;
	if (write(ready, &answer_byte, 1) != 1 || r < 0)
		_exit(1);
	close(ready);
	while (!lp.dying || running(&lp))
		loop_once(&lp);
	exec_step_discard(&lp.L.next);
	if (lp.L.rp && report_wait(lp.L.rp) < 0)
		launcher_record_lost(&lp.L);
	log_info("firebreak-exec: %s: %llu calls started, %llu refused, %llu failed, %llu bad "
		 "requests, %llu untrusted peers, %llu busy",
		 name, lp.started, lp.refused, lp.failed, lp.bad_requests, lp.untrusted_peers,
		 lp.busy);
	_exit(0);
}

int launcher_fork(const struct config *cfg, const char *name, const struct policy *policy,
		  const struct sandbox_limits *lim, pid_t init, struct launcher_start *ls)
{
	int go[2], ready[2];

	ls->pid = -1;
	ls->go_fd = ls->ready_fd = -1;
	if (pipe2(go, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(ready, O_CLOEXEC) < 0) {
		close(go[0]);
		close(go[1]);
		return -errno;
	}
	ls->pid = fork();
	if (ls->pid == 0) {
		close(go[1]);
		close(ready[0]);
		launcher_main(cfg, name, policy, lim, init, go[0], ready[1]);
	}
	close(go[0]);
	close(ready[1]);
	if (ls->pid < 0) {
		close(go[1]);
		close(ready[0]);
		return log_errno(-errno, "firebreak create: fork the exec launcher");
	}
	ls->go_fd = go[1];
	ls->ready_fd = ready[0];
	return 0;
}

int launcher_attached(struct launcher_start *ls)
{
	unsigned char answer_byte;
	ssize_t n;

	while ((n = read(ls->ready_fd, &answer_byte, 1)) < 0 && errno == EINTR)
		;
	return n == 1 ? -(int)answer_byte : -EIO;
}

int launcher_go(struct launcher_start *ls)
{
	unsigned char answer_byte = 0;
	ssize_t n;
	int r;

	if (write(ls->go_fd, &answer_byte, 1) != 1)
		n = 0;
	else
		while ((n = read(ls->ready_fd, &answer_byte, 1)) < 0 && errno == EINTR)
			;
	r = n == 1 ? -(int)answer_byte : -EIO;
	close(ls->go_fd);
	close(ls->ready_fd);
	ls->go_fd = ls->ready_fd = -1;
	if (r == 0)
		return 0;
	while (waitpid(ls->pid, NULL, 0) < 0 && errno == EINTR)
		;
	ls->pid = -1;
	return log_errno(r, "firebreak create: the exec launcher did not start");
}

void launcher_abandon(struct launcher_start *ls)
{
	if (ls->go_fd < 0)
		return;
	close(ls->go_fd); /* EOF: it exits before it opens anything */
	close(ls->ready_fd);
	ls->go_fd = ls->ready_fd = -1;
	while (waitpid(ls->pid, NULL, 0) < 0 && errno == EINTR)
		;
	ls->pid = -1;
}

void launcher_stop(const struct config *cfg, const char *name)
{
	state_stop_pidfile(cfg, name, LAUNCHER_PID, LAUNCHER_COMM, SIGTERM);
}
