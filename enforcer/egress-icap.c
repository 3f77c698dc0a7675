/*
 * The proxy's ICAP service (egress-icap.h): its files, squid's lines for it, and its jail.
 * c-icap keeps its locks, shared memory, pid file and command FIFO in a private /dev/shm of the
 * jail's (posix schemes), so the jail's root stays read-only; its one writable file is its log.
 */
#include "egress-icap.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <unistd.h>

#include "egress-proxy.h"
#include "gate-jail.h"
#include "jail.h"
#include "log.h"
#include "lures.h"
#include "macro.h"
#include "policy/policy.h"
#include "randhex.h"

#define CICAP_BIN "/usr/bin/c-icap"

int egress_icap_verdict_new(char ret[EGRESS_ICAP_VERDICT_LEN + 1])
{
	return random_hex(ret, EGRESS_ICAP_VERDICT_LEN);
}

/* One process of workers (threads) is enough for one sandbox's proxy; nothing is loaded but
 * our module. */
static int write_conf(const char *path, const char *gate4)
{
	FILE *f = fopen(path, "we");

	if (!f)
		return -errno;
	fprintf(f,
		"# firebreak: this sandbox's ICAP service (generated at create; docs/egress.md)\n"
		/* A name of its own: without one c-icap looks its host's name up in DNS, which
		 * the jail has none of (a query to 127.0.0.1, dropped as the sandbox's). */
		"ServerName firebreak-icap\n"
		"PidFile /dev/shm/c-icap.pid\n"
		"CommandsSocket /dev/shm/c-icap.ctl\n"
		"TmpDir /dev/shm\n"
		"InterProcessLockingScheme posix\n"
		"InterProcessSharedMemScheme posix\n"
		"Timeout 60\n"
		"KeepAliveTimeout 600\n"
		"MaxKeepAliveRequests 0\n"
		"StartServers 1\n"
		"MaxServers 1\n"
		"ThreadsPerChild 16\n"
		"MinSpareThreads 2\n"
		"MaxSpareThreads 16\n"
		"MaxRequestsPerChild 0\n"
		"Pipelining on\n"
		"SupportBuggyClients off\n"
		"DebugLevel 1\n"
		"Port %s:%u\n"
		"ServerLog " EGRESS_ICAP_JAIL_LOG "\n"
		"AccessLog /dev/null\n"
		"ServicesDir /\n"
		"Service " EGRESS_ICAP_SERVICE " " EGRESS_ICAP_JAIL_MODULE "\n" EGRESS_ICAP_SERVICE
		".Secrets " EGRESS_ICAP_JAIL_SECRETS "\n",
		gate4, EGRESS_ICAP_PORT);
	return fclose(f) == 0 ? 0 : -errno;
}

/* One credential's swap line; the real value is wiped before it returns. */
static int write_swap(FILE *f, const struct policy_credential *c, const char *marker)
{
	char value[EGRESS_PROXY_CREDENTIAL_MAX + 1], decoy[128];
	int n = egress_proxy_credential_read(c, value, sizeof(value));

	if (n >= 0 && lure_credential_decoy(c->name, c->env, marker, decoy, sizeof(decoy)) < 0)
		n = -ENOSPC;
	if (n >= 0)
		fprintf(f, "swap %s %s\n", decoy, value);
	explicit_bzero(value, sizeof(value));
	return n < 0 ? n : 0;
}

static int write_secrets(const char *path, uid_t uid, const struct policy *p, const char *marker,
			 const char *verdict)
{
	FILE *f;
	int r;

	if ((r = egress_proxy_secret_open(path, uid, &f)) < 0)
		return r;
	fprintf(f, "marker %s\nverdict %s\n", marker, verdict);
	for (size_t i = 0; i < policy_credential_count(p) && r == 0; i++)
		r = write_swap(f, policy_credential(p, i), marker);
	if (fclose(f) != 0 && r == 0)
		r = log_errno(-errno, "firebreak create: %s", path);
	if (r < 0)
		unlink(path);
	return r;
}

int egress_icap_files(const char *dir, uid_t uid, const char *gate4, const struct policy *p,
		      const char *marker, const char *verdict)
{
	char path[PATH_MAX + 32];
	int r;

	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		return log_errno(-errno, "firebreak create: %s", dir);
	snprintf(path, sizeof(path), "%s/c-icap.conf", dir);
	if ((r = write_conf(path, gate4)) < 0)
		return log_errno(r, "firebreak create: %s", path);
	snprintf(path, sizeof(path), "%s/secrets", dir);
	return write_secrets(path, uid, p, marker, verdict);
}

void egress_icap_squid_conf(FILE *f, const struct policy *p, const char *gate4, const char *verdict)
{
	size_t n = policy_credential_count(p);

	/* Fail closed (bypass=off): a body that cannot be checked does not leave, and a credential
	 * host's response that cannot be checked does not arrive. */
	fprintf(f,
		"icap_enable on\n"
		"icap_preview_enable on\n"
		"icap_persistent_connections on\n"
		"icap_send_client_ip off\n"
		"icap_send_client_username off\n"
		"icap_service fb_reqmod reqmod_precache icap://%s:%u/" EGRESS_ICAP_SERVICE
		" bypass=off\n"
		"icap_service fb_respmod respmod_precache icap://%s:%u/" EGRESS_ICAP_SERVICE
		" bypass=off\n"
		/* Every request with a body, whatever its rule (a CONNECT has none of its own). */
		"acl fb_body_cl req_header Content-Length ^0*[1-9]\n"
		"acl fb_body any-of fb_body_cl fb_chunked\n"
		"adaptation_access fb_reqmod allow fb_body !fb_connect\n"
		"adaptation_access fb_reqmod deny all\n",
		gate4, EGRESS_ICAP_PORT, gate4, EGRESS_ICAP_PORT);
	if (n) {
		fputs("acl fb_cred_hosts any-of", f);
		for (size_t i = 0; i < n; i++)
			fprintf(f, " fb_c%zu_h", i);
		/* The response must be readable to be checked: no compression from those hosts
		 * (the module refuses an encoded answer all the same). */
		fputs("\nadaptation_access fb_respmod allow fb_cred_hosts\n"
		      "request_header_access Accept-Encoding deny fb_cred_hosts\n",
		      f);
	}
	fputs("adaptation_access fb_respmod deny all\n", f);
	/* The module's refusal carries the token, which no upstream knows: that is the decoy
	 * note's one source besides the header checks. squid strips reply headers before
	 * http_reply_access looks, so the note is made where the header is stripped (the ACL
	 * list's annotation runs when the header matches); the header never reaches the tool, and
	 * an upstream's header of the name (without the token) is stripped unnoted. */
	fprintf(f,
		"acl fb_icap_decoy rep_header " EGRESS_ICAP_VERDICT_HEADER " ^decoy-%s$\n"
		"reply_header_access " EGRESS_ICAP_VERDICT_HEADER
		" deny fb_icap_decoy fb_decoy_note\n"
		"reply_header_access " EGRESS_ICAP_VERDICT_HEADER " deny all\n",
		verdict);
}

/* What c-icap does besides the common set: make, size, link into place and remove its shared
 * memory and semaphores (posix schemes, in its /dev/shm: glibc's sem_open links a temporary
 * file to the semaphore's name), make its command FIFO. */
static const char *const cicap_calls[] = {
	"ftruncate", "link", "unlink", "mknodat", "mknod",
};

static int cicap_seccomp(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	int r = ctx ? 0 : -ENOMEM;

	if (r == 0)
		r = gate_jail_allow_common(ctx);
	if (r == 0)
		r = jail_allow_names(ctx, cicap_calls, ARRAY_SIZE(cicap_calls));
	if (r == 0)
		r = gate_jail_allow_inet_fork(ctx);
	if (r == 0)
		r = seccomp_load(ctx);
	seccomp_release(ctx);
	return r;
}

pid_t egress_icap_spawn(const char *dir, const char *log, uid_t uid)
{
	static char path[] = "PATH=/usr/bin";
	static char *envp[] = { path, NULL };
	static char *argv[] = { CICAP_BIN, "-N", "-f", EGRESS_ICAP_JAIL_CONF, NULL };
	char module[PATH_MAX];
	int r;

	if ((r = gate_jail_beside_exe(EGRESS_ICAP_MODULE_FILE, module, sizeof(module))) < 0)
		return log_errno(r, "icap jail: the module %s", EGRESS_ICAP_MODULE_FILE);
	const struct gate_jail_file files[] = {
		{ .host = dir, .jail = EGRESS_ICAP_JAIL_DIR, .dir = 1 },
		{ .host = module, .jail = EGRESS_ICAP_JAIL_MODULE, .exec = 1 },
		{ .host = log, .jail = EGRESS_ICAP_JAIL_LOG, .writable = 1 },
	};
	const struct gate_jail g = {
		.who = "icap jail",
		.uid = uid,
		.files = files,
		.n_files = ARRAY_SIZE(files),
		.envp = envp,
		.shm_size = "4m", /* its locks, shared tables and pid: a few KiB */
		.seccomp = cicap_seccomp,
	};

	return gate_jail_spawn(&g, argv);
}
