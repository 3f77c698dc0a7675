#include "egress-dns.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "egress.h"
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

/* Nothing of the host's configuration: it listens on the gate's address only, as root there. */
static int dns_args_fixed(struct dns_args *a, const char *listen, const char *logfile,
			  const char *pidfile)
{
	dns_arg(a, DNSMASQ_BIN);
	dns_arg(a, "--conf-file=/dev/null"); /* nothing of the host's dnsmasq configuration */
	dns_arg(a, "--no-resolv");	     /* no upstream but the ones below */
	dns_arg(a, "--no-hosts");
	dns_arg(a, "--no-poll");
	dns_arg(a, "--bind-interfaces");
	dns_arg(a, listen);
	dns_arg(a, "--except-interface=lo");
	/* It keeps CAP_NET_ADMIN for the nft sets; it lives in the gate only. */
	dns_arg(a, "--user=root");
	dns_arg(a, "--max-cache-ttl=60");
	dns_arg(a, "--log-queries");
	if (dns_arg_owned(a, "--log-facility=%s", logfile) < 0 ||
	    dns_arg_owned(a, "--pid-file=%s", pidfile) < 0)
		return -ENOMEM;
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

/* Runs dnsmasq in the gate's netns; it forks into the background once it listens. */
static int dns_spawn(char *const *argv, const char *name)
{
	int gate, status, r;
	pid_t pid;

	gate = netns_open(EGRESS_GATE_NETNS);
	if (gate < 0)
		return gate;
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(gate);
		return r;
	}
	if (pid == 0) {
		char *envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		if (setns(gate, CLONE_NEWNET) < 0 || null < 0 || dup2(null, 0) < 0 ||
		    dup2(null, 1) < 0)
			_exit(126);
		execve(DNSMASQ_BIN, argv, envp);
		_exit(127);
	}
	close(gate);
	/* dnsmasq forks into the background once it listens; its first process's exit says so. */
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		log_error("firebreak create: the DNS gate for %s did not start (exit %d)", name,
			  WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return -EIO;
	}
	return 0;
}

int egress_dns_start(const struct config *cfg, const char *name, unsigned k, const struct policy *p)
{
	char listen[64], pidfile[PATH_MAX + 16], logfile[PATH_MAX + 16];
	struct dns_args a = { .argc = 0 };
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
	egress_link_of(k, &l);
	state_path(cfg, name, "dnsmasq.pid", pidfile, sizeof(pidfile));
	state_path(cfg, name, "dns.log", logfile, sizeof(logfile));
	snprintf(listen, sizeof(listen), "--listen-address=%s", l.gate4);
	if ((r = dns_args_fixed(&a, listen, logfile, pidfile)) == 0 &&
	    (r = dns_args_hosts(&a, cfg, k, p)) == 0) {
		a.argv[a.argc] = NULL;
		r = dns_spawn(a.argv, name);
	}
	for (size_t i = 0; i < a.nowned; i++)
		free(a.owned[i]);
	return r;
}

void egress_dns_stop(const struct config *cfg, const char *name)
{
	char path[PATH_MAX + 16], comm[32] = "";
	FILE *f;
	int pid = 0;

	state_path(cfg, name, "dnsmasq.pid", path, sizeof(path));
	f = fopen(path, "re");
	if (!f)
		return;
	if (fscanf(f, "%d", &pid) != 1)
		pid = 0;
	fclose(f);
	if (pid <= 1)
		return;
	/* Only ours: the pid must still be a dnsmasq (pids get reused). */
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "re");
	if (f) {
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
	}
	if (strncmp(comm, "dnsmasq", 7) != 0)
		return;
	kill(pid, SIGTERM);
	/* Wait (1 s at most) so that nothing of the sandbox outlives its destroy. */
	for (int i = 0; i < 100 && kill(pid, 0) == 0; i++) {
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		f = fopen(path, "re");
		if (!f)
			break;
		/* A zombie is gone for our purpose (pid 1 reaps it when it will). */
		if (fscanf(f, "%*d %*s %31s", comm) == 1 && comm[0] == 'Z') {
			fclose(f);
			break;
		}
		fclose(f);
		usleep(10000);
	}
}
