#include "seccomp-audit.h"

#include <errno.h>
#include <libaudit.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"

#ifndef AUDIT_NLGRP_READLOG
#define AUDIT_NLGRP_READLOG 1
#endif

int seccomp_audit_open(void)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK,
				  .nl_groups = 1U << (AUDIT_NLGRP_READLOG - 1) };
	int rcvbuf = 4 << 20, fd = audit_open();

	if (fd < 0)
		return -errno;
	/* Room for a burst (a loop of refused calls); an overflow is still counted, not silent. */
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	/* Bound to the group: NETLINK_ADD_MEMBERSHIP alone delivered nothing on this kernel. */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = -errno;

		audit_close(fd);
		return r;
	}
	return fd;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/*
 * Copies the value of key= from the record: "quoted" as is, or, where the kernel hex-encoded it
 * (a name with spaces or quotes), decoded. 1 if found.
 */
static int field(const char *text, size_t len, const char *key, char *out, size_t size)
{
	size_t klen = strlen(key), i = 0, n = 0;
	const char *p = text, *end = text + len, *v;

	for (;;) {
		p = memmem(p, (size_t)(end - p), key, klen);
		if (!p)
			return 0;
		if ((p == text || p[-1] == ' ') && p + klen < end && p[klen] == '=')
			break;
		p += klen;
	}
	v = p + klen + 1;
	if (v < end && *v == '"') {
		for (v++; v < end && *v != '"' && n + 1 < size; v++)
			out[n++] = *v;
	} else {
		const char *e = v;

		while (e < end && *e != ' ' && *e != '\n')
			e++;
		/* Unquoted comm and exe are hex; numbers are copied as they are. */
		if (strcmp(key, "comm") == 0 || strcmp(key, "exe") == 0) {
			for (i = 0; v + i + 1 < e && n + 1 < size; i += 2) {
				int hi = hexval(v[i]), lo = hexval(v[i + 1]);

				if (hi < 0 || lo < 0)
					return 0;
				out[n++] = (char)(hi << 4 | lo);
			}
		} else {
			for (; v < e && n + 1 < size; v++)
				out[n++] = *v;
		}
	}
	out[n] = '\0';
	return 1;
}

static int number(const char *text, size_t len, const char *key, int base, long long *ret)
{
	char buf[32], *e;

	if (!field(text, len, key, buf, sizeof(buf)) || !buf[0])
		return 0;
	errno = 0;
	*ret = strtoll(buf, &e, base);
	return !errno && !*e;
}

int seccomp_audit_parse(const char *text, size_t len, struct seccomp_denial *ret)
{
	long long pid, uid, arch, nr, code, sig;
	unsigned long long sec, ms, serial;
	const char *p;
	char stamp[64];
	size_t n;

	/* A NUL ends the text even where len says more: what follows is not the record's. */
	len = strnlen(text, len);
	p = memmem(text, len, "audit(", 6);
	memset(ret, 0, sizeof(*ret));
	if (!p)
		return -EINVAL;
	p += 6;
	n = (size_t)(text + len - p) < sizeof(stamp) - 1 ? (size_t)(text + len - p)
							 : sizeof(stamp) - 1;
	memcpy(stamp, p, n);
	stamp[n] = '\0';
	if (sscanf(stamp, "%llu.%llu:%llu)", &sec, &ms, &serial) != 3)
		return -EINVAL;
	if (!number(text, len, "pid", 10, &pid) || !number(text, len, "uid", 10, &uid) ||
	    !number(text, len, "arch", 16, &arch) || !number(text, len, "syscall", 10, &nr) ||
	    !number(text, len, "code", 0, &code) || !number(text, len, "sig", 10, &sig))
		return -EINVAL;
	ret->ts = (int64_t)(sec * 1000000000ULL + ms * 1000000ULL);
	ret->serial = serial;
	ret->pid = (int32_t)pid;
	ret->uid = (uint32_t)uid;
	ret->arch = (uint32_t)arch;
	ret->syscall = nr;
	ret->code = (uint32_t)code;
	ret->sig = (int32_t)sig;
	field(text, len, "comm", ret->comm, sizeof(ret->comm));
	field(text, len, "exe", ret->exe, sizeof(ret->exe));
	return 0;
}

const char *seccomp_action_name(uint32_t code)
{
	switch (code & SECCOMP_RET_ACTION_FULL) {
	case SECCOMP_RET_KILL_PROCESS:
		return "kill_process";
	case SECCOMP_RET_KILL_THREAD:
		return "kill_thread";
	case SECCOMP_RET_TRAP:
		return "trap";
	case SECCOMP_RET_ERRNO:
		return "errno";
	case SECCOMP_RET_USER_NOTIF:
		return "user_notif";
	case SECCOMP_RET_TRACE:
		return "trace";
	case SECCOMP_RET_LOG:
		return "log";
	case SECCOMP_RET_ALLOW:
		return "allow";
	default:
		return "unknown";
	}
}

int seccomp_audit_read(int fd, void (*cb)(const struct seccomp_denial *d, void *data), void *data,
		       struct seccomp_audit_counters *c)
{
	struct audit_reply rep;
	struct seccomp_denial d;
	int n = 0, r;
	size_t len;

	for (;;) {
		r = audit_get_reply(fd, &rep, GET_REPLY_NONBLOCKING, MSG_DONTWAIT);
		if (r == 0 || r == -EAGAIN)
			return n;
		if (r == -ENOBUFS) {
			/* The socket overflowed: the kernel dropped records we never saw. */
			c->overruns++;
			continue;
		}
		if (r < 0) {
			static unsigned shown;

			if (shown++ < 5)
				log_warn_errno(r, "audit: unreadable netlink message");
			c->unparsed++;
			if (r == -EBADF || r == -ENOTSOCK)
				return r;
			continue;
		}
		if (rep.type != AUDIT_SECCOMP)
			continue;
		/*
		 * libaudit's rep.len is the whole netlink message, header included; the text is
		 * what follows the header, not NUL-terminated, and the buffer beyond it holds stale
		 * bytes of earlier messages (which made records fail to parse, or worse).
		 */
		len = rep.len >= NLMSG_HDRLEN ? (size_t)rep.len - NLMSG_HDRLEN : 0;
		if (seccomp_audit_parse(rep.message, len, &d) < 0) {
			/* Shown (the first few), so that a format change is noticed, not just
			 * counted. */
			static unsigned shown;

			if (shown++ < 5)
				log_warn("audit: unparsed AUDIT_SECCOMP record: %.*s", (int)len,
					 rep.message);
			c->unparsed++;
			continue;
		}
		cb(&d, data);
		n++;
	}
}
