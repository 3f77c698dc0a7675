#include "http-follow.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "http-parse.h"
#include "macro.h"

struct http_follow {
	char path[PATH_MAX];
	const struct http_follow_ops *ops;
	void *data;
	int fd;
	uint64_t inode;	     /* of fd; 0: none open */
	uint64_t want_inode; /* the cursor's, until the first open */
	int64_t offset;	     /* of the first byte of buf: the next line not handed out */
	char buf[HTTP_LOG_LINE_MAX + 2];
	size_t n;     /* bytes in buf */
	int skipping; /* inside an overlong line: drop bytes up to its newline */
};

int http_follow_new(const char *path, uint64_t inode, int64_t offset,
		    const struct http_follow_ops *ops, void *data, struct http_follow **ret)
{
	struct http_follow *f = calloc(1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	if (strscpy(f->path, sizeof(f->path), path) < 0) {
		free(f);
		return -ENAMETOOLONG;
	}
	f->ops = ops;
	f->data = data;
	f->fd = -1;
	f->want_inode = inode;
	f->offset = inode ? offset : 0;
	*ret = f;
	return 0;
}

void http_follow_free(struct http_follow *f)
{
	if (!f)
		return;
	if (f->fd >= 0)
		close(f->fd);
	free(f);
}

uint64_t http_follow_inode(const struct http_follow *f)
{
	return f->inode;
}

int64_t http_follow_offset(const struct http_follow *f)
{
	return f->offset;
}

/*
 * Opens path: a regular file, not through a symlink (the state dir is root's, so this is
 * defence in depth). 0 and the fd's inode, or -errno (-ENOENT: not there yet).
 */
static int open_log(struct http_follow *f)
{
	struct stat st;
	int fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	f->fd = fd;
	f->inode = (uint64_t)st.st_ino;
	f->n = 0;
	f->skipping = 0;
	if (f->want_inode && f->want_inode != f->inode && f->offset > 0)
		f->ops->note(HTTP_FOLLOW_RESTARTED, f->inode, f->offset, f->data);
	if (!f->want_inode || f->want_inode != f->inode)
		f->offset = 0;
	f->want_inode = 0;
	return 0;
}

/* Hands out the whole lines in buf; 1 if the owner asked to stop. */
static int hand_out(struct http_follow *f, size_t max_lines, int *count)
{
	size_t start = 0;
	char *nl;
	int stop = 0;

	while (!stop && (size_t)*count < max_lines &&
	       (nl = memchr(f->buf + start, '\n', f->n - start))) {
		size_t len = (size_t)(nl - (f->buf + start));
		int64_t next = f->offset + (int64_t)(start + len + 1);

		if (f->skipping) {
			f->skipping = 0; /* the overlong line ends here */
		} else if (f->ops->line(f->buf + start, len, f->inode, next, f->data) != 0) {
			stop = 1;
			break;
		} else {
			++*count;
		}
		start += len + 1;
	}
	f->offset += (int64_t)start;
	memmove(f->buf, f->buf + start, f->n - start);
	f->n -= start;
	/* A line longer than any of ours: drop what there is of it and its rest up to '\n'. */
	if (!stop && f->n > HTTP_LOG_LINE_MAX) {
		if (!f->skipping) /* past what is dropped: a restart does not report it again */
			f->ops->note(HTTP_FOLLOW_OVERLONG, f->inode, f->offset + (int64_t)f->n,
				     f->data);
		f->skipping = 1;
		f->offset += (int64_t)f->n;
		f->n = 0;
	}
	return stop;
}

/* Reads fd from offset + n on; the lines handed out, or -errno. */
static int read_on(struct http_follow *f, size_t max_lines)
{
	int count = 0;

	for (;;) {
		ssize_t got = pread(f->fd, f->buf + f->n, sizeof(f->buf) - 1 - f->n,
				    f->offset + (off_t)f->n);

		if (got < 0)
			return errno == EINTR ? count : -errno;
		if (got == 0)
			return count; /* a partial line waits for its newline */
		f->n += (size_t)got;
		if (hand_out(f, max_lines, &count) || (size_t)count >= max_lines)
			return count;
	}
}

int http_follow_poll(struct http_follow *f, size_t max_lines)
{
	struct stat now, cur;
	int r, count = 0, there;

	if (f->fd < 0 && (r = open_log(f)) < 0)
		return r == -ENOENT ? 0 : r;
	if (fstat(f->fd, &cur) == 0 && cur.st_size < f->offset + (off_t)f->n) {
		f->ops->note(HTTP_FOLLOW_TRUNCATED, f->inode, f->offset, f->data);
		f->offset = 0;
		f->n = 0;
		f->skipping = 0;
	}
	if ((r = read_on(f, max_lines)) < 0)
		return r;
	count = r;
	if ((size_t)count >= max_lines)
		return count;
	/* Another file at the path: the old one is read to its end (above), then left. */
	there = stat(f->path, &now) == 0;
	if (there && (uint64_t)now.st_ino != f->inode) {
		if (f->n > 0 && !f->skipping)
			f->ops->note(HTTP_FOLLOW_OVERLONG, f->inode, f->offset, f->data);
		close(f->fd);
		f->fd = -1;
		f->ops->note(HTTP_FOLLOW_ROTATED, f->inode, f->offset, f->data);
		if ((r = open_log(f)) < 0)
			return r == -ENOENT ? count : r;
		if ((r = read_on(f, max_lines - (size_t)count)) < 0)
			return r;
		count += r;
	}
	return count;
}
