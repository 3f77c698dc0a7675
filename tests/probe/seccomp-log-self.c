/*
 * A bystander with a seccomp filter of its own: installs a filter that refuses getppid with EPERM
 * and asks for audit records (SECCOMP_FILTER_FLAG_LOG), then calls getppid N times (argv[1]).
 * Run outside any sandbox, its records reach the audit stream and the monitor must not store them.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(code) / sizeof(code[0]), .filter = code };
	int n = argc > 1 ? atoi(argv[1]) : 1, refused = 0;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_LOG, &prog) < 0) {
		perror("seccomp");
		return 1;
	}
	for (int i = 0; i < n; i++)
		if (syscall(SYS_getppid) < 0 && errno == EPERM)
			refused++;
	printf("%d\n", refused);
	return refused == n ? 0 : 1;
}
