/*
 * Tries every syscall the sandbox's seccomp filter must refuse, through the native x86-64 entry,
 * the i386 entry (int 0x80) and with the x32 bit, and prints one JSON line per attempt:
 * {"syscall":"ptrace","entry":"native","ret":-1,"errno":1} (on a kernel without the i386 entry,
 * its attempts say "entry_absent":true instead of trying). Where an unprivileged process would
 * normally succeed, the arguments are chosen so that it would: ptrace(TRACEME), unshare(NEWUSER),
 * keyctl, add_key, personality(ADDR_NO_RANDOMIZE), io_uring_setup, name_to_handle_at("/"), ...
 * so that a refusal proves the filter, not merely a missing capability. The test runs it inside
 * a sandbox (all refused) and, as a control, outside one (some succeed).
 *
 * `seccomp-probe once NAME...` makes only the named attempts, natively, and exits at once with
 * _exit: its refusals' audit records arrive after the process is gone (tests/integration/92).
 * It knows a few more attempts than the sweep: the other refused socket families and protocols,
 * and the namespace flags of clone and unshare one by one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#define X32_BIT 0x40000000L

struct probe {
	const char *name;
	long nr;      /* x86-64 */
	long nr_i386; /* -1: no i386 twin */
	long a[6];
};

static void report(const char *name, const char *entry, long ret, int err)
{
	printf("{\"syscall\":\"%s\",\"entry\":\"%s\",\"ret\":%ld,\"errno\":%d}\n", name, entry, ret,
	       ret < 0 ? err : 0);
	fflush(stdout);
}

/* A syscall through the i386 entry; arguments are 32-bit. Returns -errno like the kernel. */
static long syscall_i386(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(nr), "b"(a), "c"(b), "d"(c)
			 : "memory", "r8", "r9", "r10", "r11");
	return ret;
}

/*
 * Whether this kernel has an i386 entry at all: a kernel built or booted without IA-32 emulation
 * (a PVM guest's says "IA-32 emulation off" at boot) answers int 0x80 with a general protection
 * fault, SIGSEGV, before any filter is asked. Tried once in a child; a filter's refusal (EPERM)
 * there means the entry exists.
 */
static int i386_entry_present(void)
{
	static int present = -1;
	int status;
	pid_t pid;

	if (present >= 0)
		return present;
	pid = fork();
	if (pid == 0) {
		syscall_i386(20 /* getpid */, 0, 0, 0);
		_exit(0);
	}
	present = pid > 0 && waitpid(pid, &status, 0) == pid &&
		  !(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV);
	return present;
}

/* A successful clone or unshare must not leave us changed or doubled. */
static void settle(const char *name, long ret)
{
	if (strncmp(name, "clone-", 6) == 0 && ret == 0)
		_exit(0); /* the child of an allowed clone */
	if (strncmp(name, "clone-", 6) == 0 && ret > 0)
		waitpid((pid_t)ret, NULL, 0);
}

static char buf[64];
static struct io_uring_params uring;
static struct {
	unsigned int handle_bytes;
	int handle_type;
	unsigned char f_handle[128];
} handle = { .handle_bytes = 128 };
static struct iovec local = { buf, 8 }, remote = { buf + 8, 8 };
static int mount_id;

/* Every call to try, with arguments an unprivileged process could succeed with. */
static struct probe probes[] = {
	{ "mount", SYS_mount, 21, { (long)"none", (long)"/tmp", (long)"tmpfs", 0, 0 } },
	{ "umount2", SYS_umount2, 52, { (long)"/tmp", 0 } },
	{ "pivot_root", SYS_pivot_root, 217, { (long)"/tmp", (long)"/tmp" } },
	{ "move_mount", 429, 429, { -1, (long)"", -1, (long)"", 0 } },
	{ "open_tree", 428, 428, { AT_FDCWD, (long)"/tmp", 0 } },
	{ "fsopen", 430, 430, { (long)"tmpfs", 0 } },
	{ "fsconfig", 431, 431, { -1, 0, 0, 0, 0 } },
	{ "fsmount", 432, 432, { -1, 0, 0 } },
	{ "fspick", 433, 433, { AT_FDCWD, (long)"/tmp", 0 } },
	{ "mount_setattr", 442, 442, { AT_FDCWD, (long)"/tmp", 0, 0, 0 } },
	{ "unshare", SYS_unshare, 310, { CLONE_NEWUSER } },
	{ "setns", SYS_setns, 346, { -1, 0 } },
	{ "ptrace", SYS_ptrace, 26, { PTRACE_TRACEME, 0, 0, 0 } },
	{ "process_vm_readv",
	  SYS_process_vm_readv,
	  347,
	  { 0 /* pid, set below */, (long)&local, 1, (long)&remote, 1, 0 } },
	{ "process_vm_writev",
	  SYS_process_vm_writev,
	  348,
	  { 0, (long)&local, 1, (long)&remote, 1, 0 } },
	{ "pidfd_getfd", 438, 438, { -1, 0, 0 } },
	{ "bpf", SYS_bpf, 357, { 0, 0, 0 } },
	{ "perf_event_open", SYS_perf_event_open, 336, { 0, 0, -1, -1, 0 } },
	{ "kexec_load", SYS_kexec_load, 283, { 0, 0, 0, 0 } },
	{ "kexec_file_load", SYS_kexec_file_load, -1, { -1, -1, 0, 0, 0 } },
	{ "init_module", SYS_init_module, 128, { 0, 0, (long)"" } },
	{ "finit_module", SYS_finit_module, 350, { -1, (long)"", 0 } },
	{ "delete_module", SYS_delete_module, 129, { (long)"firebreak_none", 0 } },
	{ "keyctl", SYS_keyctl, 288, { KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0 } },
	{ "add_key",
	  SYS_add_key,
	  286,
	  { (long)"user", (long)"firebreak-probe", (long)"x", 1, KEY_SPEC_PROCESS_KEYRING } },
	{ "request_key",
	  SYS_request_key,
	  287,
	  { (long)"user", (long)"firebreak-probe", 0, KEY_SPEC_PROCESS_KEYRING } },
	{ "userfaultfd", SYS_userfaultfd, 374, { 1 /* UFFD_USER_MODE_ONLY */ } },
	{ "io_uring_setup", 425, 425, { 1, (long)&uring } },
	{ "io_uring_enter", 426, 426, { -1, 0, 0, 0, 0, 0 } },
	{ "io_uring_register", 427, 427, { -1, 0, 0, 0 } },
	{ "personality", SYS_personality, 136, { ADDR_NO_RANDOMIZE } },
	{ "reboot", SYS_reboot, 88, { 0, 0, 0, 0 } },
	{ "swapon", SYS_swapon, 87, { (long)"/nonexistent", 0 } },
	{ "swapoff", SYS_swapoff, 115, { (long)"/nonexistent" } },
	{ "acct", SYS_acct, 51, { 0 } },
	{ "quotactl", SYS_quotactl, 131, { 0, 0, 0, 0 } },
	{ "open_by_handle_at", SYS_open_by_handle_at, 342, { AT_FDCWD, (long)&handle, 0 } },
	{ "name_to_handle_at",
	  SYS_name_to_handle_at,
	  341,
	  { AT_FDCWD, (long)"/", (long)&handle, (long)&mount_id, 0 } },
	{ "mknod-chr", SYS_mknod, 14, { (long)"/tmp/probe-null", S_IFCHR | 0600, 0x103 } },
	{ "clone-newuser", SYS_clone, 120, { CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0 } },
	{ "clone3", 435, 435, { 0, 0 } },
	{ "fanotify_init", SYS_fanotify_init, 338, { 0x200 /* FAN_REPORT_FID */, 0 } },
	/* The hypervisor's vsock is reachable from any netns; and the same with the
	 * family's upper 32 bits set, which the kernel ignores and a careless filter would
	 * not. */
	{ "socket-vsock", SYS_socket, 359, { 40 /* AF_VSOCK */, 1, 0 } },
	{ "socket-vsock-high-bits", SYS_socket, -1, { 0x100000028L, 1, 0 } },
	{ "socket-packet", SYS_socket, 359, { 17 /* AF_PACKET */, 3, 0 } },
	{ "getpid", SYS_getpid, 20, { 0 } }, /* allowed natively: the control */
};

static int sv[2];

/* Only for `once`: each refused by one of the filter's argument rules (enforcer/seccomp.c). */
static struct probe more[] = {
	{ "socket-raw", SYS_socket, -1, { 2 /* AF_INET */, 3 /* SOCK_RAW */, 1 /* ICMP */ } },
	{ "socket-raw6", SYS_socket, -1, { 10 /* AF_INET6 */, 3, 58 /* ICMPV6 */ } },
	{ "socket-alg", SYS_socket, -1, { 38 /* AF_ALG */, 5 /* SOCK_SEQPACKET */, 0 } },
	{ "socket-netlink-audit", SYS_socket, -1, { 16 /* AF_NETLINK */, 3, 9 /* AUDIT */ } },
	{ "socket-netlink-diag", SYS_socket, -1, { 16, 3, 4 /* SOCK_DIAG */ } },
	{ "socket-netlink-uevent", SYS_socket, -1, { 16, 3, 15 /* KOBJECT_UEVENT */ } },
	{ "socketpair-packet", SYS_socketpair, -1, { 17 /* AF_PACKET */, 2, 0, (long)sv } },
	{ "unshare-net", SYS_unshare, -1, { CLONE_NEWNET } },
	{ "unshare-mnt", SYS_unshare, -1, { CLONE_NEWNS } },
	{ "clone-newnet", SYS_clone, -1, { CLONE_NEWNET | SIGCHLD, 0, 0, 0, 0 } },
	{ "clone-newpid", SYS_clone, -1, { CLONE_NEWPID | SIGCHLD, 0, 0, 0, 0 } },
	{ "clone-newns", SYS_clone, -1, { CLONE_NEWNS | SIGCHLD, 0, 0, 0, 0 } },
};

static struct probe *find_probe(const char *name)
{
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
		if (strcmp(probes[i].name, name) == 0)
			return &probes[i];
	for (size_t i = 0; i < sizeof(more) / sizeof(more[0]); i++)
		if (strcmp(more[i].name, name) == 0)
			return &more[i];
	return NULL;
}

/* `once NAME...`: each named attempt natively, then gone at once. */
static int once(int argc, char **argv)
{
	for (int i = 2; i < argc; i++) {
		struct probe *p = find_probe(argv[i]);
		long ret;

		if (!p) {
			fprintf(stderr, "seccomp-probe: no attempt named %s\n", argv[i]);
			return 2;
		}
		errno = 0;
		ret = syscall(p->nr, p->a[0], p->a[1], p->a[2], p->a[3], p->a[4], p->a[5]);
		report(p->name, "native", ret, errno);
		settle(p->name, ret);
	}
	_exit(0);
}

/* One probe through the three entries: native, i386 (int 0x80) and with the x32 bit. */
static void try_probe(struct probe *p)
{
	long ret;

	if (strncmp(p->name, "process_vm", 10) == 0)
		p->a[0] = getpid();
	if (strcmp(p->name, "pidfd_getfd") == 0)
		p->a[0] = syscall(434 /* pidfd_open */, getpid(), 0);
	errno = 0;
	ret = syscall(p->nr, p->a[0], p->a[1], p->a[2], p->a[3], p->a[4], p->a[5]);
	report(p->name, "native", ret, errno);
	settle(p->name, ret);
	if (strcmp(p->name, "personality") == 0 && ret >= 0)
		personality((unsigned long)ret); /* put it back */
	if (p->nr_i386 >= 0 && !i386_entry_present()) {
		printf("{\"syscall\":\"%s\",\"entry\":\"i386\",\"ret\":-1,\"errno\":0,"
		       "\"entry_absent\":true}\n",
		       p->name);
		fflush(stdout);
	} else if (p->nr_i386 >= 0) {
		/* Pointers do not fit 32 bits; the filter must refuse before it reads them.
		 */
		ret = syscall_i386(p->nr_i386, 0, 0, 0);
		report(p->name, "i386", ret < 0 && ret > -4096 ? -1 : ret,
		       ret < 0 && ret > -4096 ? (int)-ret : 0);
		settle(p->name, ret);
	}
	errno = 0;
	ret = syscall(p->nr | X32_BIT, p->a[0], p->a[1], p->a[2], p->a[3], p->a[4], p->a[5]);
	report(p->name, "x32", ret, errno);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "once") == 0)
		return once(argc, argv);
	if (argc > 1) {
		fprintf(stderr, "usage: seccomp-probe [once NAME...]\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
		try_probe(&probes[i]);
	return 0;
}
