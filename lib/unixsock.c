#include "unixsock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "macro.h"

/*
 * The address of path; one longer than sun_path is reached through its directory, opened O_PATH
 * into *dirfd (close it after bind or connect): /proc/self/fd/N/NAME names the same file.
 */
static int fill_addr(struct sockaddr_un *sa, const char *path, int *dirfd)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	*dirfd = -1;
	if (strlen(path) < sizeof(sa->sun_path))
		return strscpy(sa->sun_path, sizeof(sa->sun_path), path);
	if (!slash || (size_t)(slash - path) >= sizeof(dir))
		return -ENAMETOOLONG;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
	*dirfd = open(dir[0] ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (*dirfd < 0)
		return -errno;
	if (snprintf(sa->sun_path, sizeof(sa->sun_path), "/proc/self/fd/%d/%s", *dirfd,
		     slash + 1) >= (int)sizeof(sa->sun_path)) {
		close(*dirfd);
		return -ENAMETOOLONG;
	}
	return 0;
}

static int listen_typed(const char *path, int type, mode_t mode, gid_t gid)
{
	struct sockaddr_un sa;
	_cleanup_close_ int fd = -1, dirfd = -1;
	mode_t old_umask;
	int r;

	if ((r = fill_addr(&sa, path, &dirfd)) < 0)
		return r;
	fd = socket(AF_UNIX, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (unlink(path) < 0 && errno != ENOENT)
		return -errno;
	/* The umask makes the socket born with no more than mode: no window where others connect.
	 */
	old_umask = umask(~mode & 0777);
	r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old_umask);
	if (r < 0)
		return -errno;
	if (gid != (gid_t)-1 && chown(path, 0, gid) < 0)
		return -errno;
	if (chmod(path, mode) < 0)
		return -errno;
	if (listen(fd, 128) < 0)
		return -errno;
	return TAKE_FD(fd);
}

int unixsock_listen(const char *path, mode_t mode, gid_t gid)
{
	return listen_typed(path, SOCK_STREAM, mode, gid);
}

int unixsock_listen_seqpacket(const char *path, mode_t mode)
{
	return listen_typed(path, SOCK_SEQPACKET, mode, (gid_t)-1);
}

static int connect_typed(const char *path, int type)
{
	struct sockaddr_un sa;
	_cleanup_close_ int fd = -1, dirfd = -1;
	int r;

	if ((r = fill_addr(&sa, path, &dirfd)) < 0)
		return r;
	fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -errno;
	return TAKE_FD(fd);
}

int unixsock_connect(const char *path)
{
	return connect_typed(path, SOCK_STREAM);
}

int unixsock_connect_seqpacket(const char *path)
{
	return connect_typed(path, SOCK_SEQPACKET);
}

int unixsock_peer_trusted(int fd, gid_t gid)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	char path[64], line[512];
	FILE *f;
	int trusted = 0;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return -errno;
	if (cred.uid == 0)
		return 1;
	if (gid == (gid_t)-1)
		return 0;
	if (cred.gid == gid)
		return 1;
	/* Supplementary groups are not in SO_PEERCRED; the peer's /proc status lists them. */
	snprintf(path, sizeof(path), "/proc/%d/status", (int)cred.pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		char *p, *end;

		if (strncmp(line, "Groups:", 7) != 0)
			continue;
		for (p = line + 7;; p = end) {
			unsigned long g = strtoul(p, &end, 10);

			if (end == p)
				break;
			if (g == gid)
				trusted = 1;
		}
	}
	fclose(f);
	return trusted;
}
