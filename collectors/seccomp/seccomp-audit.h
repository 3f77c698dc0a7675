/*
 * Seccomp refusals from the kernel's audit stream. The reader joins the audit multicast group
 * (AUDIT_NLGRP_READLOG): it is not the audit daemon, so it neither displaces auditd nor needs
 * audit enabled, and it loads no rule, so no host process is put on the audit slow path (seccomp
 * writes its own records, without per-syscall audit contexts; see KERNEL-NOTES.md). The
 * enforcer's filter asks for these records with SECCOMP_FILTER_FLAG_LOG.
 */
#ifndef FB_SECCOMP_AUDIT_H
#define FB_SECCOMP_AUDIT_H

#include <stddef.h>
#include <stdint.h>

struct seccomp_denial {
	int64_t ts;	 /* ns since the epoch (the record's own time, ms resolution) */
	uint64_t serial; /* the audit record's serial */
	int32_t pid;	 /* in the initial pid namespace */
	uint32_t uid;
	char comm[16];
	char exe[256];
	uint32_t arch; /* AUDIT_ARCH_* */
	int64_t syscall;
	uint32_t code; /* the filter's action (the kernel logs no errno data) */
	int32_t sig;
};

/* Opens a non-blocking audit socket in the read-log multicast group; the fd or -errno. */
int seccomp_audit_open(void);

struct seccomp_audit_counters {
	uint64_t unparsed; /* records (or netlink messages) that did not parse */
	uint64_t overruns; /* times the socket overflowed and the kernel dropped records */
};

/*
 * Reads every record waiting on fd and calls cb for each AUDIT_SECCOMP one; other records are
 * skipped. Returns the number of seccomp records, or -errno if the socket itself failed.
 */
int seccomp_audit_read(int fd, void (*cb)(const struct seccomp_denial *d, void *data), void *data,
		       struct seccomp_audit_counters *c);

/* Parses the text of one AUDIT_SECCOMP record; 0 or -EINVAL. */
int seccomp_audit_parse(const char *text, size_t len, struct seccomp_denial *ret);

/* The action's name ("errno", "kill_process", ...) for a filter return code. */
const char *seccomp_action_name(uint32_t code);

#endif
