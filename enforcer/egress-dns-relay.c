#include "egress-dns-relay.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/capability.h>
#include <poll.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "egress-dns-wire.h"
#include "egress-nft.h"
#include "egress.h"
#include "log.h"
#include "policy/policy.h"

/* Why a request is refused, or NULL: only an address for a set of one of the policy's host
 * rules. What the address is, the gate's never-open ranges judge before these sets. */
static const char *request_refused(const struct dns_wire_request *req, const struct policy *p)
{
	if (req->op != DNS_WIRE_ADD)
		return "unknown operation";
	if (req->family != 4 && req->family != 6)
		return "unknown family";
	if (req->rule >= policy_egress_count(p) || !policy_egress(p, req->rule)->host)
		return "no such host rule";
	return NULL;
}

/* One request in, one answer back; returns 1 if it was refused, 0 if not, -errno if the
 * connection is gone. */
static int relay_one(int fd, unsigned k, const struct policy *p)
{
	struct dns_wire_request req;
	char addr[INET6_ADDRSTRLEN], text[256], err[256];
	const char *why;
	uint8_t answer = DNS_WIRE_REFUSED;
	ssize_t n = recv(fd, &req, sizeof(req), MSG_TRUNC);

	if (n == 0)
		return -EPIPE;
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	why = n != (ssize_t)sizeof(req) ? "not one request" : request_refused(&req, p);
	if (!why) {
		inet_ntop(req.family == 4 ? AF_INET : AF_INET6, req.addr, addr, sizeof(addr));
		snprintf(text, sizeof(text),
			 "add element inet " EGRESS_TABLE "_%u dns%u_%u { %s }\n", k, req.family,
			 req.rule, addr);
		if (nft_apply(-1, text, err, sizeof(err)) < 0) /* the keeper is in the gate */
			why = "nft refused it";
		else
			answer = DNS_WIRE_OK;
	}
	if (why)
		log_warn("firebreak DNS keeper: refused a request: %s", why);
	if (send(fd, &answer, 1, MSG_NOSIGNAL) != 1)
		return -errno;
	return why != NULL;
}

int egress_dns_relay_narrow(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { { 0 } };

	/* The bounding set first (CAP_SETPCAP is still there): every nft started later has it. */
	for (int cap = 0; cap <= 63; cap++)
		if (cap != CAP_NET_ADMIN && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 &&
		    errno != EINVAL)
			return -errno;
	d[0].effective = d[0].permitted = 1U << CAP_NET_ADMIN;
	if (syscall(SYS_capset, &h, d) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	return 0;
}

/* The first connection from uid is dnsmasq's; the listener closes then, so there is no other. */
static int accept_dnsmasq(int lfd, uid_t uid)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 || cred.uid != uid) {
		close(fd);
		return log_warn_errno(-EPERM,
				      "firebreak DNS keeper: a connection not from the gate's "
				      "uid");
	}
	return fd;
}

int egress_dns_relay_serve(int lfd, pid_t dnsmasq, uid_t uid, unsigned k, const struct policy *p)
{
	int fd = -1, refused = 0, status;

	for (;;) {
		struct pollfd pfd = { .fd = fd >= 0 ? fd : lfd, .events = POLLIN };
		int r = poll(&pfd, 1, 1000);

		if (waitpid(dnsmasq, &status, WNOHANG) == dnsmasq)
			break;
		if (r <= 0)
			continue;
		if (fd < 0) {
			fd = accept_dnsmasq(lfd,
					    uid); /* one not from uid is refused, and waited on */
			if (fd >= 0)
				close(lfd);
			continue;
		}
		if ((r = relay_one(fd, k, p)) < 0) {
			/* dnsmasq closed its end: it is exiting (or jammed its own gate). */
			while (waitpid(dnsmasq, &status, 0) < 0 && errno == EINTR)
				;
			break;
		}
		refused += r;
	}
	if (fd >= 0)
		close(fd);
	return refused;
}
