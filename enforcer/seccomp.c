#include "seccomp.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "sha256.h"
#include "macro.h"

/*
 * Refused outright with EPERM, one reason each. The default is allow: this filter removes the
 * kernel's escape and blinding surface; what a tool may run is the command gate's job.
 */
static const struct {
	const char *name;
	const char *why;
} refused[] = {
	{ "mount", "file system layout is fixed before the sandbox runs" },
	{ "umount2", "could uncover what the sandbox's mounts hide" },
	{ "pivot_root", "root is fixed" },
	{ "chroot",
	  "root is fixed (the kernel refuses it without CAP_SYS_CHROOT; here it is seen)" },
	{ "move_mount", "new mount API" },
	{ "open_tree", "new mount API: clones mounts" },
	{ "fsopen", "new mount API" },
	{ "fsconfig", "new mount API" },
	{ "fsmount", "new mount API" },
	{ "fspick", "new mount API" },
	{ "mount_setattr", "could make read-only mounts writable" },
	{ "unshare", "new namespaces (user namespaces reopen everything above)" },
	{ "setns", "joining other namespaces" },
	{ "ptrace", "inspecting or steering other processes" },
	{ "process_vm_readv", "reading other processes' memory" },
	{ "process_vm_writev", "writing other processes' memory" },
	{ "pidfd_getfd", "stealing other processes' file descriptors" },
	{ "bpf", "kernel programs; could also blind the monitor" },
	{ "perf_event_open", "kernel observation, side channels" },
	{ "kexec_load", "replacing the kernel" },
	{ "kexec_file_load", "replacing the kernel" },
	{ "init_module", "kernel modules" },
	{ "finit_module", "kernel modules" },
	{ "delete_module", "kernel modules" },
	{ "keyctl", "kernel keyrings are not namespaced" },
	{ "add_key", "kernel keyrings are not namespaced" },
	{ "request_key", "kernel keyrings are not namespaced" },
	{ "userfaultfd", "a classic primitive for kernel exploits" },
	{ "io_uring_setup", "io_uring bypasses the syscall hooks the monitor watches" },
	{ "io_uring_enter", "io_uring" },
	{ "io_uring_register", "io_uring" },
	{ "reboot", "host power" },
	{ "swapon", "host memory" },
	{ "swapoff", "host memory" },
	{ "acct", "host process accounting" },
	{ "quotactl", "host quotas" },
	{ "quotactl_fd", "host quotas" },
	{ "open_by_handle_at", "opens files outside the sandbox's mounts by handle" },
	{ "name_to_handle_at", "the other half of open_by_handle_at" },
	{ "lookup_dcookie", "kernel profiling" },
	{ "vm86", "legacy mode" },
	{ "vm86old", "legacy mode" },
	{ "iopl", "port I/O" },
	{ "ioperm", "port I/O" },
	{ "settimeofday", "host clock" },
	{ "clock_settime", "host clock" },
	{ "clock_adjtime", "host clock" },
	{ "adjtimex", "host clock" },
	{ "syslog", "kernel log" },
	{ "nfsservctl", "kernel NFS server" },
	{ "uselib", "legacy loader" },
	{ "fanotify_init",
	  "watches the host's files (shared read-only mounts) and other sandboxes" },
};

/* Socket families a tool may open; every other one is refused (socket, socketpair). AF_VSOCK
 * would reach the hypervisor from any netns; AF_PACKET, AF_ALG, RDS, TIPC... are kernel surface
 * no tool needs. */
static const int allowed_families[] = { AF_UNIX, AF_INET, AF_INET6, AF_NETLINK };

void sandbox_seccomp_each_refused(void (*fn)(const char *name, int err, void *data), void *data)
{
	for (size_t i = 0; i < ARRAY_SIZE(refused); i++)
		fn(refused[i].name, EPERM, data);
	fn("clone3", ENOSYS, data);
}

/* The table above: each refused outright with EPERM. */
static int add_refused(scmp_filter_ctx ctx)
{
	for (size_t i = 0; i < ARRAY_SIZE(refused); i++) {
		int nr = seccomp_syscall_resolve_name(refused[i].name), r;

		if (nr == __NR_SCMP_ERROR)
			continue; /* not on this architecture */
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
		if (r < 0)
			return log_errno(r, "seccomp: rule for %s", refused[i].name);
	}
	return 0;
}

/* clone with any namespace flag; clone3 hides its flags in memory the filter cannot read, so it
 * answers ENOSYS and libc falls back to clone, whose flags it can see. */
static int add_clone_rules(scmp_filter_ctx ctx)
{
	static const unsigned long ns_flags[] = {
		CLONE_NEWNS,  CLONE_NEWUTS, CLONE_NEWIPC,    CLONE_NEWUSER,
		CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWCGROUP, 0x00000080,
	};
	int r;

	for (size_t i = 0; i < ARRAY_SIZE(ns_flags); i++) {
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
				     SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]));
		if (r < 0)
			return log_errno(r, "seccomp: clone rule");
	}
	if ((r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0)) < 0)
		return log_errno(r, "seccomp: clone3 rule");
	return 0;
}

/* Device nodes; FIFOs and sockets stay allowed. */
static int add_mknod_rules(scmp_filter_ctx ctx)
{
	int r;

	if ((r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(mknod), 1,
				  SCMP_A1(SCMP_CMP_MASKED_EQ, S_IFMT, S_IFCHR))) < 0 ||
	    (r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(mknod), 1,
				  SCMP_A1(SCMP_CMP_MASKED_EQ, S_IFMT, S_IFBLK))) < 0 ||
	    (r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(mknodat), 1,
				  SCMP_A2(SCMP_CMP_MASKED_EQ, S_IFMT, S_IFCHR))) < 0 ||
	    (r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(mknodat), 1,
				  SCMP_A2(SCMP_CMP_MASKED_EQ, S_IFMT, S_IFBLK))) < 0)
		return log_errno(r, "seccomp: mknod rules");
	return 0;
}

/*
 * Netlink, protocol by protocol: only NETLINK_ROUTE (addresses, links, routes: `ip addr`, glibc's
 * getaddrinfo and getifaddrs) is open; the others (sock_diag, audit, netfilter, uevents, xfrm,
 * generic netlink...) reach kernel subsystems a tool has no use for. The kernel reads the
 * protocol as an int: the low 32 bits are compared, and anything past MAX_LINKS it refuses
 * itself.
 */
#define NETLINK_PROTOCOLS 32
static int add_netlink_rules(scmp_filter_ctx ctx)
{
	int r;

	for (int proto = 1; proto < NETLINK_PROTOCOLS; proto++)
		if ((r = seccomp_rule_add(
			     ctx, SCMP_ACT_ERRNO(EPROTONOSUPPORT), SCMP_SYS(socket), 2,
			     SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffff, AF_NETLINK),
			     SCMP_A2(SCMP_CMP_MASKED_EQ, 0xffffffff, (scmp_datum_t)proto))) < 0)
			return log_errno(r, "seccomp: netlink protocol rule");
	return 0;
}

/*
 * Socket families: refuse each one not allowed (AF_PACKET, AF_ALG, AF_VSOCK, AF_KEY, AF_XDP,
 * AF_BLUETOOTH, AF_TIPC, AF_RDS...), and anything past the known range. The kernel reads the
 * family as an int, so the low 32 bits are what is compared: junk in the high half does not slip
 * a refused family past an equality test.
 */
static int add_socket_rules(scmp_filter_ctx ctx)
{
	int r;

	for (int fam = 0; fam < AF_MAX; fam++) {
		int ok = 0;

		for (size_t i = 0; i < ARRAY_SIZE(allowed_families); i++)
			ok |= fam == allowed_families[i];
		if (ok)
			continue;
		if ((r = seccomp_rule_add(
			     ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
			     SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffff, (scmp_datum_t)fam))) < 0 ||
		    (r = seccomp_rule_add(
			     ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socketpair), 1,
			     SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffff, (scmp_datum_t)fam))) < 0)
			return log_errno(r, "seccomp: socket family rule");
	}
	/* Raw inet sockets need CAP_NET_RAW, which no tool has: the kernel would refuse them, but
	 * only this refusal is seen (ping, a packet forger, a scanner). */
	for (size_t i = 0; i < 2; i++)
		if ((r = seccomp_rule_add(
			     ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 2,
			     SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffff, i ? AF_INET6 : AF_INET),
			     SCMP_A1(SCMP_CMP_MASKED_EQ, 0xf, SOCK_RAW))) < 0)
			return log_errno(r, "seccomp: raw socket rule");
	if ((r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1,
				  SCMP_A0(SCMP_CMP_GE, (scmp_datum_t)AF_MAX))) < 0 ||
	    (r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socketpair), 1,
				  SCMP_A0(SCMP_CMP_GE, (scmp_datum_t)AF_MAX))) < 0)
		return log_errno(r, "seccomp: socket family rule");
	return add_netlink_rules(ctx);
}

/*
 * Signals to the sandbox's init (pid 1 in its pid namespace): it is uid 0, so the kernel refuses
 * them anyway (EPERM); refusing them here too makes the attempt an audited seccomp refusal, which
 * the kernel's own refusal is not. detectors/rules-senses.c reads a refused kill, tkill or tgkill
 * as aimed at init for that reason: keep the two in step.
 */
static int add_init_signal_rules(scmp_filter_ctx ctx)
{
	int r;

	if ((r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(kill), 1,
				  SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffff, 1))) < 0 ||
	    (r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(tkill), 1,
				  SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffff, 1))) < 0 ||
	    (r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(tgkill), 1,
				  SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffff, 1))) < 0)
		return log_errno(r, "seccomp: init signal rules");
	return 0;
}

/*
 * Allowed but recorded (SECCOMP_RET_LOG: the kernel writes the same audit record as for a
 * refusal, with action "log"; the monitor stores it as seccomp.logged):
 * - kill(-1), a signal to every process the sender may signal (the only kill logged: the
 *   detectors read a logged kill as kill -1);
 * - setrlimit, and prlimit64 with a new limit: a raise past the hard limit is refused by the
 *   kernel without a trace, and the filter cannot read the limit (it is in memory), so every
 *   change is recorded. Go's runtime raises its open-files soft limit at every start: a record,
 *   not a finding.
 */
static int add_logged_rules(scmp_filter_ctx ctx)
{
	int r;

	if ((r = seccomp_rule_add(ctx, SCMP_ACT_LOG, SCMP_SYS(kill), 1,
				  SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffff, 0xffffffff))) < 0 ||
	    (r = seccomp_rule_add(ctx, SCMP_ACT_LOG, SCMP_SYS(setrlimit), 0)) < 0 ||
	    (r = seccomp_rule_add(ctx, SCMP_ACT_LOG, SCMP_SYS(prlimit64), 1,
				  SCMP_A2(SCMP_CMP_NE, 0))) < 0)
		return log_errno(r, "seccomp: logged rules");
	return 0;
}

/* Typing into the caller's terminal: the sandbox may inherit the harness's tty. */
static int add_tty_rules(scmp_filter_ctx ctx)
{
	int r;

	if ((r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
				  SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffff, TIOCSTI))) < 0 ||
	    (r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(ioctl), 1,
				  SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffff, TIOCLINUX))) < 0)
		return log_errno(r, "seccomp: ioctl rules");
	return 0;
}

/* Every rule, in one fixed order: the exported BPF (and so its hash) follows it. */
static int add_rules(scmp_filter_ctx ctx)
{
	int r;

	if ((r = add_refused(ctx)) < 0 || (r = add_clone_rules(ctx)) < 0 ||
	    (r = add_mknod_rules(ctx)) < 0)
		return r;
	/* personality: only the query; setting flags such as ADDR_NO_RANDOMIZE is refused. */
	if ((r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(personality), 1,
				  SCMP_A0(SCMP_CMP_NE, 0xffffffff))) < 0)
		return log_errno(r, "seccomp: personality rule");
	if ((r = add_socket_rules(ctx)) < 0 || (r = add_tty_rules(ctx)) < 0 ||
	    (r = add_init_signal_rules(ctx)) < 0 || (r = add_logged_rules(ctx)) < 0)
		return r;
	return 0;
}

int sandbox_seccomp_build(const char *path)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	_cleanup_close_ int fd = -1;
	int r;

	if (!ctx)
		return -ENOMEM;
	/*
	 * The architecture is checked first: only the native x86-64 entry is allowed. A syscall
	 * through the i386 entry (int 0x80) or with the x32 bit set gets EPERM whatever it is, so
	 * no syscall number can be smuggled past the rules through another table.
	 */
	if ((r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(EPERM))) < 0 ||
	    /* Refusals reach the audit log, where the monitor reads them. */
	    (r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_LOG, 1)) < 0 || (r = add_rules(ctx)) < 0) {
		seccomp_release(ctx);
		return r;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		r = -errno;
		seccomp_release(ctx);
		return log_errno(r, "seccomp: %s", path);
	}
	r = seccomp_export_bpf(ctx, fd);
	seccomp_release(ctx);
	if (r < 0)
		return log_errno(r, "seccomp: export the filter");
	return 0;
}

int sandbox_seccomp_read(const char *path, struct sandbox_seccomp *ret, const char *hash)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	char got[SHA256_PREFIXED_HEX_SIZE];
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, ret->insns, sizeof(ret->insns));
	if (n <= 0 || n % (ssize_t)sizeof(ret->insns[0]) != 0)
		return -EBADMSG;
	sha256_prefixed_hex(ret->insns, (size_t)n, got);
	if (!hash || strcmp(got, hash) != 0)
		return log_error("firebreak: %s is not the filter created with the sandbox", path),
		       -EBADMSG;
	ret->len = (unsigned short)(n / (ssize_t)sizeof(ret->insns[0]));
	return 0;
}

int sandbox_seccomp_hash(const char *path, char ret[72])
{
	struct sock_filter insns[SANDBOX_SECCOMP_MAX_INSNS];
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, insns, sizeof(insns));
	if (n <= 0)
		return -EBADMSG;
	sha256_prefixed_hex(insns, (size_t)n, ret);
	return 0;
}

int sandbox_seccomp_apply(const struct sandbox_seccomp *f)
{
	struct sock_fprog prog = { .len = f->len, .filter = (struct sock_filter *)f->insns };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	/* TSYNC is not needed: the caller is single-threaded. The LOG flag makes refusals audited.
	 */
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_LOG, &prog) < 0)
		return -errno;
	return 0;
}
