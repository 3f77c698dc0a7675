#include "egress-dns.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
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

int egress_dns_start(const struct config *cfg, const char *name, unsigned k,
		     const struct policy *p)
{
	char *argv[DNS_ARGS_MAX + 1], listen[64], pidfile[PATH_MAX + 16], logfile[PATH_MAX + 16];
	char *owned[DNS_ARGS_MAX];
	size_t argc = 0, nowned = 0, hosts = 0;
	struct egress_link l;
	int gate, status, r = 0;
	pid_t pid;

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

#define ARG(s) (argv[argc++] = (char *)(s))
#define OWNED(fmt, ...)                                                                            \
	do {                                                                                       \
		char *_s;                                                                          \
		if (asprintf(&_s, fmt, __VA_ARGS__) < 0)                                           \
			goto nomem;                                                                \
		owned[nowned++] = _s;                                                              \
		ARG(_s);                                                                           \
	} while (0)
	ARG(DNSMASQ_BIN);
	ARG("--conf-file=/dev/null"); /* nothing of the host's dnsmasq configuration */
	ARG("--no-resolv");	      /* no upstream but the ones below */
	ARG("--no-hosts");
	ARG("--no-poll");
	ARG("--bind-interfaces");
	ARG(listen);
	ARG("--except-interface=lo");
	ARG("--user=root"); /* it keeps CAP_NET_ADMIN for the nft sets; it lives in the gate only */
	ARG("--max-cache-ttl=60");
	ARG("--log-queries");
	OWNED("--log-facility=%s", logfile);
	OWNED("--pid-file=%s", pidfile);
	/* Everything not named below: NXDOMAIN, never forwarded. */
	ARG("--address=/#/");
	for (size_t i = 0; i < policy_egress_count(p); i++) {
		const struct policy_egress_rule *e = policy_egress(p, i);

		if (!e->host)
			continue;
		/* Subdomains of an allowed name are refused too: they would carry data out. */
		OWNED("--address=/*.%s/", e->host);
		if (cfg->gate_dns_upstream[0])
			OWNED("--server=/%s/%s", e->host, cfg->gate_dns_upstream);
		OWNED("--nftset=/%s/4#inet#" EGRESS_TABLE "_%u#dns4_%zu,6#inet#" EGRESS_TABLE
		      "_%u#dns6_%zu",
		      e->host, k, i, k, i);
	}
	argv[argc] = NULL;
#undef ARG
#undef OWNED

	gate = netns_open(EGRESS_GATE_NETNS);
	if (gate < 0) {
		r = gate;
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(gate);
		goto out;
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
		r = -EIO;
	}
out:
	for (size_t i = 0; i < nowned; i++)
		free(owned[i]);
	return r;
nomem:
	r = -ENOMEM;
	goto out;
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
