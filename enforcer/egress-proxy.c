/*
 * Starting and ending a sandbox's L7 proxy (egress-proxy.h). create writes the proxy's files
 * into the sandbox's state dir (proxy/: squid.conf, the error pages, the upstream CAs, the
 * signing CA; the two logs beside it), then forks a minder that enters the gate's netns, starts
 * squid in the gate jail and waits for it: squid dies with its minder (the jail's parent-death
 * signal), and the minder ends when squid does, so a proxy that is gone leaves its rule's
 * connections refused (fail closed: the gate still redirects them to a port nobody holds).
 */
#include "egress-proxy.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/prctl.h>
#include <arpa/inet.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/tcp.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "egress-icap.h"
#include "egress.h"
#include "fileio.h"
#include "gate-jail.h"
#include "jail.h"
#include "log.h"
#include "macro.h"
#include "netns.h"
#include "policy/policy.h"
#include "proxy-ca.h"
#include "state.h"

#define SQUID_BIN "/usr/sbin/squid"
#define SQUID_TEMPLATES "/usr/share/squid/errors/templates"
#define PROXY_READY_MS 10000

/* What squid does besides the common set: drop privileges it does not have (no-ops for an
 * unprivileged uid, refused by the kernel otherwise), start its certificate helpers (fork, exec,
 * a socketpair, a session), and size its files. */
static const char *const squid_calls[] = {
	"setuid",    "setgid",	  "setresuid",	"setresgid",	"setgroups",
	"getresuid", "getresgid", "capset",	"socketpair",	"setsid",
	"ftruncate", "fstatfs",	  "readlinkat", "epoll_create", "setrlimit",
	"getpgrp",   "setpgid",	  "unlink",	"rename",
};

/* Asking about its capabilities and keeping them across its uid change (none to keep); no other
 * prctl: squid's attempt to make itself dumpable again is refused. */
static int squid_prctl(scmp_filter_ctx ctx)
{
	static const int options[] = { PR_CAPBSET_READ,	  PR_SET_KEEPCAPS, PR_GET_NO_NEW_PRIVS,
				       PR_GET_SECUREBITS, PR_CAP_AMBIENT,  PR_SET_NAME,
				       PR_GET_DUMPABLE };
	int r = 0;

	for (size_t i = 0; i < ARRAY_SIZE(options) && r == 0; i++)
		r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(prctl), 1,
				     SCMP_A0(SCMP_CMP_EQ, options[i]));
	return r;
}

/* Default EPERM, as the DNS gate's: no netlink at all (squid's conntrack marks are not used). */
static int squid_seccomp(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	int r = ctx ? 0 : -ENOMEM;

	if (r == 0)
		r = gate_jail_allow_common(ctx);
	if (r == 0)
		r = jail_allow_names(ctx, squid_calls, ARRAY_SIZE(squid_calls));
	if (r == 0)
		r = gate_jail_allow_inet_fork(ctx);
	if (r == 0)
		r = squid_prctl(ctx);
	if (r == 0)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	return r;
}

static int write_text(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	size_t len = strlen(text);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	if (close(fd) < 0 || n != (ssize_t)len)
		return n < 0 ? -errno : -EIO;
	return 0;
}

static int copy_into(const char *from, const char *to, mode_t mode)
{
	int in = open(from, O_RDONLY | O_CLOEXEC), out, r;

	if (in < 0)
		return -errno;
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	if (out < 0) {
		r = -errno;
		close(in);
		return r;
	}
	r = fd_copy(in, out);
	close(in);
	if (close(out) < 0 && r == 0)
		r = -errno;
	return r;
}

/* What rule e lets its tools send, for its refusal page. */
static void rule_page(FILE *f, const struct policy_egress_rule *e)
{
	const struct policy_http *h = e->http;

	fprintf(f,
		"firebreak: refused by the sandbox's egress policy: %%M %%U\n"
		"Egress rule \"%s\" (%s) lets the tools that name it send ",
		e->name, e->host);
	if (!h || h->n_methods == 0)
		fputs("any method", f);
	for (size_t j = 0; h && j < h->n_methods; j++)
		fprintf(f, "%s%s", j ? ", " : "", h->methods[j]);
	if (h && h->n_paths) {
		fputs(" under ", f);
		for (size_t j = 0; j < h->n_paths; j++)
			fprintf(f, "%s%s", j ? ", " : "", h->paths[j]);
	}
	if (h && h->max_request_body >= 0)
		fprintf(f, ", with request bodies of at most %lld bytes",
			(long long)h->max_request_body);
	fputs(", to its host only (Host and TLS name alike).\n"
	      "This request is not that; it is recorded in the sandbox's timeline.\n",
	      f);
}

int egress_proxy_pages(const struct policy *p, const char *dir)
{
	char from[PATH_MAX], to[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int r = 0;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return -errno;
	if (!(d = opendir(SQUID_TEMPLATES)))
		return -errno;
	while ((de = readdir(d)) && r == 0) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(from, sizeof(from), SQUID_TEMPLATES "/%s", de->d_name);
		snprintf(to, sizeof(to), "%s/%s", dir, de->d_name);
		/* A hard link where the state dir shares the templates' file system: ~47 new
		 * inodes per create cost ext4 10-15 ms (/run is no tmpfs everywhere). squid's
		 * files are root's and read-only to the proxy either way. */
		if (link(from, to) < 0)
			r = copy_into(from, to, 0644);
	}
	closedir(d);
	if (r < 0)
		return r;
	snprintf(to, sizeof(to), "%s/ERR_FB_HOST", dir);
	if ((r = write_text(to,
			    "firebreak: refused by the sandbox's egress policy: %M %U\n"
			    "No egress rule of this tool names this host on this port, or the host "
			    "does not resolve to the address the connection was made to.\n"
			    "This request is recorded in the sandbox's timeline.\n",
			    0644)) < 0)
		return r;
	snprintf(to, sizeof(to), "%s/ERR_FB_DECOY", dir);
	if ((r = write_text(to,
			    "firebreak: refused: this request carries one of the sandbox's decoy "
			    "credentials, which never leave it (%M %U). The sandbox is killed.\n",
			    0644)) < 0)
		return r;
	for (size_t i = 0; i < policy_egress_count(p); i++) {
		const struct policy_egress_rule *e = policy_egress(p, i);
		_cleanup_free_ char *text = NULL;
		size_t n = 0;
		FILE *f;

		if (!egress_proxy_port_of(e, 80) && !egress_proxy_port_of(e, 443))
			continue;
		if (!(f = open_memstream(&text, &n)))
			return -ENOMEM;
		rule_page(f, e);
		fclose(f);
		snprintf(to, sizeof(to), "%s/ERR_FB_R%zu", dir, i);
		if ((r = write_text(to, text, 0644)) < 0)
			return r;
	}
	return 0;
}

/*
 * Whether a TCP socket of this netns listens on addr:port, IPv4 or IPv6 (the gate holds every
 * sandbox's servers: the port alone says nothing). Asked of sock_diag for listening sockets only:
 * /proc/net/tcp walks the host's whole established hash on every read (~1 ms here), which a
 * poll every millisecond turned into a core taken from the very squid it waited for.
 */
static int listening_on(const char *addr, unsigned port)
{
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 req;
	} q = {
		.nlh = { .nlmsg_len = sizeof(q),
			 .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			 .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP },
		.req = { .sdiag_protocol = IPPROTO_TCP, .idiag_states = 1u << TCP_LISTEN },
	};
	uint32_t want[4] = { 0 };
	char buf[8192];
	int six = strchr(addr, ':') != NULL, found = 0, done = 0;
	_cleanup_close_ int fd = -1;

	if (inet_pton(six ? AF_INET6 : AF_INET, addr, want) != 1)
		return 0;
	q.req.sdiag_family = six ? AF_INET6 : AF_INET;
	if ((fd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG)) < 0 ||
	    send(fd, &q, sizeof(q), 0) != (ssize_t)sizeof(q))
		return 0;
	while (!done) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h = (struct nlmsghdr *)buf;

		if (n <= 0)
			break;
		for (; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			const struct inet_diag_msg *m = NLMSG_DATA(h);

			if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
				done = 1;
				break;
			}
			found |= ntohs(m->id.idiag_sport) == port &&
				 memcmp(m->id.idiag_src, want, six ? 16 : 4) == 0;
		}
	}
	return found;
}

/* The last port of the proxy's config: squid binds them in order, so it listens when this does. */
static unsigned last_port(const struct policy *p)
{
	unsigned last = EGRESS_PROXY_PORT_OWN;

	for (size_t i = 0; i < policy_egress_count(p); i++) {
		const struct policy_egress_rule *e = policy_egress(p, i);

		if (egress_proxy_port_of(e, 443))
			return EGRESS_PROXY_PORT_HTTPS;
		if (egress_proxy_port_of(e, 80))
			last = EGRESS_PROXY_PORT_HTTP;
	}
	return last;
}

struct proxy_run {
	const struct config *cfg;
	const struct policy *p;
	const char *name, *marker;
	unsigned k;
	uid_t uid;
	char dir[PATH_MAX], access[PATH_MAX], cache[PATH_MAX], pidfile[PATH_MAX];
	char minder_log[PATH_MAX];
	char icap_dir[PATH_MAX], icap_log[PATH_MAX], gate4[24], gate6[48];
	char upstream_ca[PATH_MAX]; /* proxy_upstream_ca_dir's */
	pid_t pid;		    /* squid */
	pid_t icap_pid;		    /* c-icap */
};

/* squid in the jail; returns its pid or -errno. */
static pid_t spawn_squid(const struct proxy_run *pr)
{
	static char path[] = "PATH=/usr/sbin:/usr/bin";
	static char *envp[] = { path, NULL };
	static char *argv[] = { SQUID_BIN, "-N", "-f", EGRESS_PROXY_JAIL_DIR "/squid.conf", NULL };
	const struct gate_jail_file files[] = {
		{ .host = pr->dir, .jail = EGRESS_PROXY_JAIL_DIR, .dir = 1 },
		{ .host = pr->access, .jail = EGRESS_PROXY_JAIL_LOG, .writable = 1 },
		{ .host = pr->cache, .jail = EGRESS_PROXY_JAIL_CACHE, .writable = 1 },
		{ .host = pr->upstream_ca, .jail = EGRESS_PROXY_JAIL_UPSTREAM_CA, .dir = 1 },
	};
	const struct gate_jail g = {
		.who = "proxy jail",
		.uid = pr->uid,
		.files = files,
		.n_files = ARRAY_SIZE(files),
		.envp = envp,
		.shm_size = "8m",
		.seccomp = squid_seccomp,
	};

	return gate_jail_spawn(&g, argv);
}

/* Waits until pid listens on addr:port (and addr6:port, if not NULL); 0, or -errno if it died
 * or is late. */
static int wait_listening(pid_t pid, const char *addr, const char *addr6, unsigned port)
{
	int status;

	/* Every millisecond: each one here is one create waits for (a sock_diag dump of the
	 * gate's few listeners costs microseconds). */
	for (int i = 0; i < PROXY_READY_MS; i++) {
		if (listening_on(addr, port) && (!addr6 || listening_on(addr6, port)))
			return 0;
		if (waitpid(pid, &status, WNOHANG) == pid)
			return -ECHILD;
		usleep(1000);
	}
	return -ETIMEDOUT;
}

static int proxy_files(const struct config *cfg, const char *name, unsigned k,
		       const struct policy *p, const char *marker, struct proxy_run *pr);

/* The minder, in the gate's netns (gate_keeper_start): writes the proxy's files (while create
 * goes on with its own work), starts c-icap, then squid (which needs its ICAP service from its
 * first request), drops what it held of root's once both listen, and returns; then waits for
 * them (minder_serve). */
static int minder_start(void *arg)
{
	struct proxy_run *pr = arg;
	char pid_text[32];
	int r;

	if ((r = proxy_files(pr->cfg, pr->name, pr->k, pr->p, pr->marker, pr)) < 0)
		return r;
	if ((r = pr->icap_pid = egress_icap_spawn(pr->icap_dir, pr->icap_log, pr->uid)) < 0)
		return r;
	if ((r = wait_listening(pr->icap_pid, pr->gate4, NULL, EGRESS_ICAP_PORT)) < 0) {
		kill(pr->icap_pid, SIGKILL);
		return log_errno(r, "proxy: c-icap did not listen on %s:%u", pr->gate4,
				 EGRESS_ICAP_PORT);
	}
	if ((r = pr->pid = spawn_squid(pr)) < 0) {
		kill(pr->icap_pid, SIGKILL);
		return r;
	}
	snprintf(pid_text, sizeof(pid_text), "%d\n", (int)pr->pid);
	if ((r = write_text(pr->pidfile, pid_text, 0644)) < 0 ||
	    (r = wait_listening(pr->pid, pr->gate4, pr->gate6, last_port(pr->p))) < 0) {
		kill(pr->pid, SIGKILL);
		kill(pr->icap_pid, SIGKILL);
		return r;
	}
	/* Nothing of root's from here on: the proxy's uid, no capability. Before create hears it
	 * is ready: jail_drop ties a process to its parent's life until the death signal is
	 * cleared, and create may exit the moment it hears (a drop after that lost the race now
	 * and then, and squid with it). */
	if ((r = jail_drop(pr->uid, "proxy minder")) < 0 ||
	    (r = prctl(PR_SET_PDEATHSIG, 0) < 0 ? -errno : 0) < 0) {
		kill(pr->pid, SIGKILL);
		kill(pr->icap_pid, SIGKILL);
		return r;
	}
	return 0;
}

static void minder_serve(void *arg)
{
	struct proxy_run *pr = arg;
	int status = 0;
	pid_t ended;

	/* The first of the two to end ends the other: squid without its checks would fail every
	 * body anyway (bypass=off), and the monitor knows a proxy that is down. */
	while ((ended = waitpid(-1, &status, 0)) < 0 && errno == EINTR)
		;
	kill(ended == pr->pid ? pr->icap_pid : pr->pid, SIGKILL);
	log_info("proxy: %s ended (%s %d)", ended == pr->pid ? "squid" : "c-icap",
		 WIFSIGNALED(status) ? "signal" : "status",
		 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	_exit(0);
}

/* The last lines of a log of the proxy's, as errors (up to 2 KiB). */
static void log_tail(const char *path)
{
	char buf[2048], *line, *save = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	off_t end;
	ssize_t n;

	if (fd < 0)
		return;
	end = lseek(fd, 0, SEEK_END);
	n = pread(fd, buf, sizeof(buf) - 1,
		  end > (off_t)sizeof(buf) - 1 ? end - (off_t)sizeof(buf) + 1 : 0);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		log_error("proxy: %s", line);
}

/* The proxy's files: the config, the pages, the upstream CAs, the two logs (the proxy's). */
static int proxy_files(const struct config *cfg, const char *name, unsigned k,
		       const struct policy *p, const char *marker, struct proxy_run *pr)
{
	_cleanup_free_ char *conf = NULL;
	char path[PATH_MAX + 32], signing[PATH_MAX + 32], verdict[EGRESS_ICAP_VERDICT_LEN + 1];
	char err[512];
	int r;

	if ((r = egress_icap_verdict_new(verdict)) < 0 ||
	    (r = egress_icap_files(pr->icap_dir, pr->uid, pr->gate4, p, marker, verdict)) < 0)
		return r;
	snprintf(path, sizeof(path), "%s/squid.conf", pr->dir);
	if ((r = egress_proxy_conf(cfg, name, k, p, marker, verdict, &conf)) < 0 ||
	    (r = write_text(path, conf, 0644)) < 0)
		return log_errno(r, "firebreak create: %s", path);
	snprintf(path, sizeof(path), "%s/" EGRESS_PROXY_CREDENTIALS, pr->dir);
	if ((r = egress_proxy_credentials(p, path, pr->uid)) < 0)
		return r;
	snprintf(path, sizeof(path), "%s/errors", pr->dir);
	if ((r = egress_proxy_pages(p, path)) < 0)
		return log_errno(r, "firebreak create: the proxy's pages in %s", path);
	if ((r = proxy_upstream_ca_dir(cfg, pr->upstream_ca, sizeof(pr->upstream_ca), err,
				       sizeof(err))) < 0)
		return log_errno(r, "firebreak create: gate_proxy_upstream_ca: %s", err);
	/* The signing CA (proxy-ca.c made it at create, root's): the proxy's own to read. None
	 * when no rule intercepts TLS. */
	snprintf(signing, sizeof(signing), "%s/" EGRESS_PROXY_SIGNING, pr->dir);
	if ((chown(signing, pr->uid, pr->uid) < 0 || chmod(signing, 0400) < 0) &&
	    (errno != ENOENT || egress_proxy_intercepts(p)))
		return log_errno(-errno, "firebreak create: %s", signing);
	for (int i = 0; i < 3; i++) {
		const char *log = i == 2 ? pr->icap_log : i ? pr->cache : pr->access;
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);

		if (fd < 0 || fchown(fd, pr->uid, pr->uid) < 0) {
			r = -errno;
			if (fd >= 0)
				close(fd);
			return log_errno(r, "firebreak create: %s", log);
		}
		close(fd);
	}
	return 0;
}

int egress_proxy_start(const struct config *cfg, const char *name, unsigned k,
		       const struct policy *p, const char *marker, struct gate_keeper *keeper)
{
	struct proxy_run pr = {
		.cfg = cfg,
		.p = p,
		.name = name,
		.marker = marker,
		.k = k,
		.uid = egress_proxy_uid(cfg, k),
	};
	struct egress_link l;
	int r;

	if (!egress_proxy_needed(p))
		return 0;
	state_path(cfg, name, EGRESS_PROXY_DIR, pr.dir, sizeof(pr.dir));
	state_path(cfg, name, EGRESS_PROXY_ACCESS_LOG, pr.access, sizeof(pr.access));
	state_path(cfg, name, EGRESS_PROXY_CACHE_LOG, pr.cache, sizeof(pr.cache));
	state_path(cfg, name, EGRESS_PROXY_PID, pr.pidfile, sizeof(pr.pidfile));
	state_path(cfg, name, "proxy-minder.log", pr.minder_log, sizeof(pr.minder_log));
	state_path(cfg, name, EGRESS_ICAP_DIR, pr.icap_dir, sizeof(pr.icap_dir));
	state_path(cfg, name, EGRESS_ICAP_LOG, pr.icap_log, sizeof(pr.icap_log));
	egress_link_of(k, &l);
	snprintf(pr.gate4, sizeof(pr.gate4), "%s", l.gate4);
	snprintf(pr.gate6, sizeof(pr.gate6), "%s", l.gate6);
	if (mkdir(pr.dir, 0755) < 0 && errno != EEXIST)
		return log_errno(-errno, "firebreak create: %s", pr.dir);
	if ((r = gate_keeper_start(pr.minder_log, minder_start, minder_serve, &pr, keeper)) < 0)
		return log_errno(r, "firebreak create: the L7 proxy of %s did not start", name);
	return 0;
}

int egress_proxy_wait(const struct config *cfg, const char *name, struct gate_keeper *keeper)
{
	static const char *const logs[] = { "proxy-minder.log", EGRESS_ICAP_LOG,
					    EGRESS_PROXY_CACHE_LOG };
	char path[PATH_MAX];
	int r;

	if ((r = gate_keeper_wait(keeper)) == 0)
		return 0;
	/* The state dir goes with the failed create: what squid said goes to the caller. */
	for (size_t i = 0; i < ARRAY_SIZE(logs); i++) {
		state_path(cfg, name, logs[i], path, sizeof(path));
		log_tail(path);
	}
	return log_errno(r, "firebreak create: the L7 proxy of %s did not start", name);
}

void egress_proxy_stop(const struct config *cfg, const char *name)
{
	/* SIGKILL: squid's own shutdown waits for its clients; its helpers die with it (their pid
	 * namespace's init), and its minder when it is gone. */
	state_stop_pidfile(cfg, name, EGRESS_PROXY_PID, "squid", SIGKILL);
}
