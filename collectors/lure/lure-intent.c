/* The flags of an open held at a tripwire (lure-intent.h). */
#include "lure-intent.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Which argument holds the flags, by syscall (x86-64: the only entry the sandbox's filter lets
 * through); openat2 passes a struct open_how whose first member is the flags. */
static int flags_arg(long nr, int *ret_arg, int *ret_indirect)
{
	*ret_indirect = 0;
	switch (nr) {
	case SYS_open:
		*ret_arg = 1;
		return 0;
	case SYS_openat:
		*ret_arg = 2;
		return 0;
	case SYS_creat:
		*ret_arg = -1; /* always O_CREAT|O_WRONLY|O_TRUNC */
		return 0;
#ifdef SYS_openat2
	case SYS_openat2:
		*ret_arg = 2;
		*ret_indirect = 1;
		return 0;
#endif
	default:
		return -ENOTSUP;
	}
}

static int read_user(pid_t tid, uint64_t addr, uint64_t *ret)
{
	char path[64];
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)tid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	n = pread(fd, ret, sizeof(*ret), (off_t)addr);
	close(fd);
	return n == (ssize_t)sizeof(*ret) ? 0 : -EIO;
}

int lure_open_flags(pid_t tid, uint64_t *ret)
{
	char path[64];
	unsigned long long a[6];
	long nr;
	int arg, indirect, r;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)tid);
	if (!(f = fopen(path, "re")))
		return -errno;
	r = fscanf(f, "%ld %llx %llx %llx %llx %llx %llx", &nr, &a[0], &a[1], &a[2], &a[3], &a[4],
		   &a[5]);
	fclose(f);
	if (r != 7)
		return -EBADMSG; /* "running" or "-1 ...": not in a syscall */
	if ((r = flags_arg(nr, &arg, &indirect)) < 0)
		return r;
	if (arg < 0) {
		*ret = O_CREAT | O_WRONLY | O_TRUNC;
		return 0;
	}
	if (indirect)
		return read_user(tid, a[arg], ret);
	*ret = a[arg];
	return 0;
}

int lure_flags_write(uint64_t flags)
{
	return (flags & O_ACCMODE) != O_RDONLY || (flags & (O_TRUNC | O_CREAT)) != 0;
}
