#include "egress-dns.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "egress-dns-jail.h"
#include "egress-dns-relay.h"
#include "egress-dns-wire.h"
#include "egress.h"
#include "gate-jail.h"
#include "log.h"
#include "macro.h"
#include "netns.h"
#include "policy/policy.h"
#include "state.h"

#define DNS_ARGS_MAX (16 + 3 * POLICY_EGRESS_MAX)

/* dnsmasq's argv, and those of its strings that are ours to free. */
struct dns_args {
	char *argv[DNS_ARGS_MAX + 1];
	char *owned[DNS_ARGS_MAX];
	size_t argc;
	size_t nowned;
};

static void dns_arg(struct dns_args *a, const char *s)
{
	a->argv[a->argc++] = (char *)s;
}

_printf_(2, 3) static int dns_arg_owned(struct dns_args *a, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	a->owned[a->nowned++] = s;
	dns_arg(a, s);
	return 0;
}

/* Nothing of the host's configuration: it listens on the gate's address only, in its jail. */
static int dns_args_fixed(struct dns_args *a, const char *listen)
{
	dns_arg(a, DNSMASQ_BIN);
	dns_arg(a, "--conf-file=/dev/null"); /* nothing of the host's dnsmasq configuration */
	dns_arg(a, "--no-resolv");	     /* no upstream but the ones below */
	dns_arg(a, "--no-hosts");
	dns_arg(a, "--no-poll");
	dns_arg(a, "--bind-interfaces");
	dns_arg(a, listen);
	dns_arg(a, "--except-interface=lo");
	/* The jail's pid 1: in the foreground, no pid file (its keeper records the host's pid),
	 * and already unprivileged: no user or group to change to (the jail has no /etc). */
	dns_arg(a, "--keep-in-foreground");
	dns_arg(a, "--pid-file=");
	dns_arg(a, "--user=");
	dns_arg(a, "--group=");
	dns_arg(a, "--max-cache-ttl=60");
	dns_arg(a, "--log-queries");
	dns_arg(a, "--log-facility=" DNS_JAIL_LOG);
	/* Everything not named below: NXDOMAIN, never forwarded. */
	dns_arg(a, "--address=/#/");
	return 0;
}

/* Each host rule's name resolves upstream, and its answers fill the rule's sets in table k. */
static int dns_args_hosts(struct dns_args *a, const struct config *cfg, unsigned k,
			  const struct policy *p)
{
	for (size_t i = 0; i < policy_egress_count(p); i++) {
		const struct policy_egress_rule *e = policy_egress(p, i);

		if (!e->host)
			continue;
		/* Subdomains of an allowed name are refused too: they would carry data out. */
		if (dns_arg_owned(a, "--address=/*.%s/", e->host) < 0)
			return -ENOMEM;
		if (cfg->gate_dns_upstream[0] &&
		    dns_arg_owned(a, "--server=/%s/%s", e->host, cfg->gate_dns_upstream) < 0)
			return -ENOMEM;
		if (dns_arg_owned(a,
				  "--nftset=/%s/4#inet#" EGRESS_TABLE "_%u#dns4_%zu,"
				  "6#inet#" EGRESS_TABLE "_%u#dns6_%zu",
				  e->host, k, i, k, i) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* What the keeper is given: where the jail's files are on the host, and the sandbox's rules. */
struct dns_keeper {
	const struct config *cfg;
	const struct policy *p;
	const char *name, *gate4;
	unsigned k;
	char log[PATH_MAX + 16], sock[PATH_MAX + 16], pidfile[PATH_MAX + 16];
	char keeper_log[PATH_MAX + 16], shim[PATH_MAX];
	char *const *argv; /* dnsmasq's */
	int lfd;	   /* the keeper's socket, for dnsmasq's shim */
	pid_t pid;	   /* dnsmasq */
};

/* The file's content is text; 0 or -errno. */
static int write_file(const char *path, const char *text, int flags, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | flags, mode);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -EIO;
}

/* The keeper's socket, which only uid may connect to; returns it listening, or -errno. */
static int keeper_listen(const char *path, uid_t uid)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	unlink(path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chown(path, uid, 0) < 0 ||
	    chmod(path, 0600) < 0 || listen(fd, 1) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

/* dnsmasq listens once its TCP port takes a connection; 0, or -errno if it died or is late. */
static int keeper_wait_listening(const char *gate4, pid_t pid)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(53) };
	int status;

	inet_pton(AF_INET, gate4, &sa.sin_addr);
	for (int i = 0; i < 5000; i++) { /* 5 s, a try every millisecond: each one create waits */
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), r;

		if (fd < 0)
			return -errno;
		r = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
		close(fd);
		if (r == 0)
			return 0;
		if (waitpid(pid, &status, WNOHANG) == pid)
			return -ECHILD;
		usleep(1000);
	}
	return -ETIMEDOUT;
}

/*
 * The keeper, in the gate's netns (gate_keeper_start): makes the jail's files, starts dnsmasq in
 * the jail and returns once it listens; then serves it (keeper_serve) until it exits.
 */
static int keeper_start(void *arg)
{
	struct dns_keeper *kp = arg;
	uid_t uid = kp->cfg->gate_dns_uid;
	struct dns_jail j = { .uid = uid, .log = kp->log, .sock = kp->sock, .shim = kp->shim };
	char pid_text[32];
	int r;

	/* Port 53 without a capability: in the gate's netns only, where nothing but the gate's
	 * DNS servers runs (the sysctl is per network namespace). */
	if ((r = write_file("/proc/sys/net/ipv4/ip_unprivileged_port_start", "0", 0, 0)) < 0 ||
	    (r = write_file(kp->log, "", O_CREAT | O_APPEND, 0640)) < 0 ||
	    (r = chown(kp->log, uid, uid) < 0 ? -errno : 0) < 0 ||
	    (r = kp->lfd = keeper_listen(kp->sock, uid)) < 0 ||
	    (r = kp->pid = egress_dns_jail_spawn(&j, kp->argv)) < 0)
		return r;
	snprintf(pid_text, sizeof(pid_text), "%d\n", (int)kp->pid);
	/* The jail is built: from here on the keeper can do nft and nothing else of root's. */
	if ((r = write_file(kp->pidfile, pid_text, O_CREAT | O_TRUNC, 0644)) < 0 ||
	    (r = keeper_wait_listening(kp->gate4, kp->pid)) < 0 ||
	    (r = egress_dns_relay_narrow()) < 0) {
		kill(kp->pid, SIGKILL);
		return r;
	}
	return 0;
}

static void keeper_serve(void *arg)
{
	struct dns_keeper *kp = arg;

	egress_dns_relay_serve(kp->lfd, kp->pid, kp->cfg->gate_dns_uid, kp->k, kp->p);
	unlink(kp->sock);
	_exit(0);
}

int egress_dns_start(const struct config *cfg, const char *name, unsigned k, const struct policy *p,
		     struct gate_keeper *keeper)
{
	struct dns_keeper kp = { .cfg = cfg, .p = p, .name = name, .k = k };
	struct dns_args a = { .argc = 0 };
	char listen[64];
	size_t hosts = 0;
	struct egress_link l;
	int r;

	for (size_t i = 0; i < policy_egress_count(p); i++)
		hosts += policy_egress(p, i)->host != NULL;
	if (hosts == 0)
		return 0;
	if (!cfg->gate_dns_upstream[0])
		log_warn("firebreak create: sandbox %s names hosts but no gate_dns_upstream is "
			 "configured: they will not resolve",
			 name);
	/* The shim, beside this binary (build/firebreak-nftset.so). */
	if ((r = gate_jail_beside_exe(DNS_WIRE_SHIM_FILE, kp.shim, sizeof(kp.shim))) < 0)
		return log_errno(r, "firebreak create: the DNS gate's nft shim %s", kp.shim);
	egress_link_of(k, &l);
	kp.gate4 = l.gate4;
	state_path(cfg, name, "dnsmasq.pid", kp.pidfile, sizeof(kp.pidfile));
	state_path(cfg, name, "dns.log", kp.log, sizeof(kp.log));
	state_path(cfg, name, "dns-keeper.sock", kp.sock, sizeof(kp.sock));
	state_path(cfg, name, "dns-keeper.log", kp.keeper_log, sizeof(kp.keeper_log));
	snprintf(listen, sizeof(listen), "--listen-address=%s", l.gate4);
	if ((r = dns_args_fixed(&a, listen)) == 0 && (r = dns_args_hosts(&a, cfg, k, p)) == 0) {
		a.argv[a.argc] = NULL;
		kp.argv = a.argv;
		r = gate_keeper_start(kp.keeper_log, keeper_start, keeper_serve, &kp, keeper);
		if (r < 0)
			log_errno(r, "firebreak create: the DNS gate for %s did not start", name);
	}
	for (size_t i = 0; i < a.nowned; i++)
		free(a.owned[i]);
	return r;
}

int egress_dns_wait(const char *name, struct gate_keeper *keeper)
{
	int r = gate_keeper_wait(keeper);

	if (r < 0)
		log_errno(r,
			  "firebreak create: the DNS gate for %s did not start (see its "
			  "dns-keeper.log)",
			  name);
	return r;
}

void egress_dns_stop(const struct config *cfg, const char *name)
{
	state_stop_pidfile(cfg, name, "dnsmasq.pid", "dnsmasq", SIGTERM);
}
