/*
 * dns-jail-exec UID LOG SOCK SHIM PROGRAM [ARG...]: runs PROGRAM in a DNS gate jail built by the
 * enforcer's own code (enforcer/egress-dns-jail.c, the very object firebreak links), in the
 * caller's network namespace, and exits as it did (128+N for signal N). 84-dns-gate-jail.sh runs
 * an attacker's probe this way, in the jail the live dnsmasq runs in.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "egress-dns-jail.h"

int main(int argc, char **argv)
{
	struct dns_jail j;
	int status;
	pid_t pid;

	if (argc < 6) {
		fprintf(stderr, "usage: dns-jail-exec UID LOG SOCK SHIM PROGRAM [ARG...]\n");
		return 2;
	}
	j.uid = (uid_t)strtoul(argv[1], NULL, 10);
	j.log = argv[2];
	j.sock = argv[3];
	j.shim = argv[4];
	pid = egress_dns_jail_spawn(&j, argv + 5);
	if (pid < 0)
		return 125;
	if (waitpid(pid, &status, 0) != pid)
		return 125;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
