/*
 * The second seccomp filter: identity changes. A tool runs with no capability, so the only ids
 * it may still "set" are the ones it has; a call naming any other id is an attempt to become
 * someone else. Such a call is refused with EPERM (the kernel's own answer to it) and, being a
 * seccomp refusal, reaches the audit log, where the monitor reads it (escape.seccomp).
 *
 * Written by hand rather than with libseccomp: "neither the tool's id nor -1 (keep)" is two
 * comparisons of one argument, which a libseccomp rule cannot hold. The kernel reads uid_t
 * arguments as their low 32 bits, and so does this filter, so the high half cannot smuggle an id
 * past it. Stacked after the main filter, which already refuses foreign architectures and the x32
 * numbers: here any other architecture passes.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "macro.h"
#include "seccomp.h"

/* The low half of argument a: x86-64 is little-endian. */
#define ARG_LO(a) (offsetof(struct seccomp_data, args) + 8 * (a))

/* Each call, how many id arguments it has, and whether they are user or group ids; 0 refuses
 * every call (setgroups: the kernel wants CAP_SETGID for any list). */
static const struct {
	int nr;
	int args;
	int group;
} id_calls[] = {
	{ __NR_setuid, 1, 0 },	  { __NR_setfsuid, 1, 0 },  { __NR_setreuid, 2, 0 },
	{ __NR_setresuid, 3, 0 }, { __NR_setgid, 1, 1 },    { __NR_setfsgid, 1, 1 },
	{ __NR_setregid, 2, 1 },  { __NR_setresgid, 3, 1 }, { __NR_setgroups, 0, 1 },
};

/* Instructions the filter takes: a head of 4, a block per call, a final allow and the refusal. */
static size_t ids_filter_len(void)
{
	size_t n = 4 + 2;

	for (size_t i = 0; i < ARRAY_SIZE(id_calls); i++)
		n += 2 + 3 * (size_t)id_calls[i].args;
	return n;
}

static void emit(struct sock_filter *f, size_t *n, struct sock_filter insn)
{
	f[(*n)++] = insn;
}

int sandbox_seccomp_ids_build(uint32_t uid, uint32_t gid, struct sandbox_seccomp *ret)
{
	size_t len = ids_filter_len(), deny = len - 1, n = 0;
	struct sock_filter *f = ret->insns;

	if (len > SANDBOX_SECCOMP_MAX_INSNS)
		return -E2BIG;
	emit(f, &n,
	     (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					  offsetof(struct seccomp_data, arch)));
	emit(f, &n,
	     (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0));
	emit(f, &n, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
	emit(f, &n,
	     (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					  offsetof(struct seccomp_data, nr)));
	/* A block per call; a call that is not this one skips it with the number still loaded.
	 * Every other jump goes forward to the refusal, the last instruction (each offset < 256:
	 * the whole filter is 66 instructions). */
	for (size_t i = 0; i < ARRAY_SIZE(id_calls); i++) {
		uint32_t id = id_calls[i].group ? gid : uid;
		int args = id_calls[i].args;

		emit(f, &n,
		     (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						  (uint32_t)id_calls[i].nr, 0, 3 * args + 1));
		for (int a = 0; a < args; a++) {
			emit(f, &n,
			     (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
							  (uint32_t)ARG_LO(a)));
			emit(f, &n,
			     (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, id, 1, 0));
			emit(f, &n,
			     (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffffu, 0,
							  (uint8_t)(deny - n - 1)));
		}
		/* setgroups has no allowed form; the others passed every argument. */
		if (args == 0)
			emit(f, &n,
			     (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JA,
							  (uint32_t)(deny - n - 1), 0, 0));
		else
			emit(f, &n,
			     (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
	}
	emit(f, &n, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
	emit(f, &n, (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM));
	ret->len = (unsigned short)n;
	return n == len ? 0 : -EINVAL;
}
