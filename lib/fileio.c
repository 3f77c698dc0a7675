#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int fd_copy(int in, int out)
{
	char buf[65536];

	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));

		if (n == 0)
			return 0;
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(out, buf + off, (size_t)(n - off));

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return w < 0 ? -errno : -EIO;
			off += w;
		}
	}
}

void fd_close_all_except(const int *keep, int n)
{
	int lo = 3;

	for (;;) {
		int next = -1;

		for (int i = 0; i < n; i++)
			if (keep[i] >= lo && (next < 0 || keep[i] < next))
				next = keep[i];
		if (next < 0) {
			syscall(SYS_close_range, lo, ~0U, 0);
			return;
		}
		if (next > lo)
			syscall(SYS_close_range, lo, next - 1, 0);
		lo = next + 1;
	}
}

int file_write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), r;
	size_t len = strlen(text);

	if (fd < 0)
		return -errno;
	r = write(fd, text, len) == (ssize_t)len ? 0 : errno ? -errno : -EIO;
	close(fd);
	return r;
}

int file_read_all(const char *path, size_t max, char **ret, size_t *ret_len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *buf = NULL;
	int r = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		r = -errno;
	else if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > max)
		r = -EINVAL;
	else if (!(buf = malloc((size_t)st.st_size + 1)))
		r = -ENOMEM;
	else if (read(fd, buf, (size_t)st.st_size) != st.st_size)
		r = -EIO;
	close(fd);
	if (r < 0) {
		free(buf);
		return r;
	}
	buf[st.st_size] = '\0';
	*ret = buf;
	*ret_len = (size_t)st.st_size;
	return 0;
}
