#include "http-tokens.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"

int http_token_ensure(const char *path)
{
	char dir[4096], hex[65];
	unsigned char raw[32];
	int fd;

	if (access(path, F_OK) == 0)
		return 0;
	strscpy(dir, sizeof(dir), path);
	/* Its directory, if new, is root's alone too. */
	if (mkdir(dirname(dir), 0700) < 0 && errno != EEXIST)
		return log_errno(-errno, "HTTP token directory for %s", path);
	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		return log_errno(-EIO, "HTTP token: no randomness");
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(hex + 2 * i, 3, "%02x", raw[i]);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return errno == EEXIST ? 0 : log_errno(-errno, "HTTP token %s", path);
	if (write(fd, hex, 64) != 64 || write(fd, "\n", 1) != 1) {
		int r = -errno;

		close(fd);
		unlink(path);
		return log_errno(r ? r : -EIO, "HTTP token %s", path);
	}
	close(fd);
	log_info("HTTP token created: %s", path);
	return 0;
}

int http_token_load(const char *path, char *buf)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	ssize_t n;

	if (fd < 0)
		return log_errno(-errno, "HTTP token %s", path);
	if (fstat(fd, &st) < 0)
		return log_errno(-errno, "HTTP token %s", path);
	if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & 077)) {
		log_error("HTTP token %s: must be a file of root's that only root can read (chown "
			  "root, chmod 600)",
			  path);
		return -EPERM;
	}
	n = read(fd, buf, HTTP_TOKEN_MAX + 1);
	if (n < 0)
		return log_errno(-errno, "HTTP token %s", path);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	if (n > HTTP_TOKEN_MAX || n < HTTP_TOKEN_MIN) {
		log_error("HTTP token %s: must be %d to %d characters", path, HTTP_TOKEN_MIN,
			  HTTP_TOKEN_MAX);
		return -EINVAL;
	}
	for (ssize_t i = 0; i < n; i++) {
		if (buf[i] <= ' ' || buf[i] > '~') {
			log_error("HTTP token %s: visible ASCII only (no spaces)", path);
			return -EINVAL;
		}
	}
	buf[n] = '\0';
	return 0;
}

int http_token_equal(const char *t, const char *a, size_t n)
{
	size_t tn = strlen(t);
	unsigned char diff = tn != n;

	/* Every byte of the token is compared whatever the length given, so the time says nothing
	 * of where a guess went wrong (only, as always, the token's length). */
	for (size_t i = 0; i < tn; i++)
		diff |= (unsigned char)t[i] ^ (unsigned char)(i < n ? a[i] : 0);
	return diff == 0;
}
