#include "netns.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro.h"

static int path_of(const char *name, char *buf, size_t size)
{
	int n = snprintf(buf, size, NETNS_DIR "/%s", name);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int netns_create(const char *name)
{
	char path[256], nspath[64];
	int fd, pipefd[2], r = 0;
	pid_t pid;
	char c;

	if ((r = path_of(name, path, sizeof(path))) < 0)
		return r;
	if (mkdir(NETNS_DIR, 0755) < 0 && errno != EEXIST)
		return -errno;
	fd = open(path, O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
	if (fd < 0)
		return -errno;
	close(fd);
	/* A child makes the namespace and holds it while we bind-mount it into place. */
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		r = -errno;
		unlink(path);
		return r;
	}
	pid = fork();
	if (pid < 0) {
		r = -errno;
		goto out;
	}
	if (pid == 0) {
		close(pipefd[0]);
		c = unshare(CLONE_NEWNET) < 0 ? 1 : 0;
		(void)!write(pipefd[1], &c, 1);
		pause(); /* until the parent has the namespace bound */
		_exit(0);
	}
	close(pipefd[1]);
	pipefd[1] = -1;
	if (read(pipefd[0], &c, 1) != 1 || c != 0) {
		r = -EPERM;
	} else {
		snprintf(nspath, sizeof(nspath), "/proc/%d/ns/net", (int)pid);
		if (mount(nspath, path, NULL, MS_BIND, NULL) < 0)
			r = -errno;
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
out:
	if (pipefd[0] >= 0)
		close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	if (r < 0)
		unlink(path);
	return r;
}

int netns_open(const char *name)
{
	char path[256];
	int fd, r;

	if ((r = path_of(name, path, sizeof(path))) < 0)
		return r;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int netns_delete(const char *name)
{
	char path[256];
	int r;

	if ((r = path_of(name, path, sizeof(path))) < 0)
		return r;
	if (umount2(path, MNT_DETACH) < 0 && errno != EINVAL && errno != ENOENT)
		return -errno;
	if (unlink(path) < 0)
		return -errno;
	return 0;
}

int netns_run(int nsfd, int (*fn)(void *data), void *data)
{
	pid_t pid;
	int status, p[2], r = 0;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(p[0]);
		close(p[1]);
		return r;
	}
	if (pid == 0) {
		close(p[0]);
		r = setns(nsfd, CLONE_NEWNET) < 0 ? -errno : fn(data);
		(void)!write(p[1], &r, sizeof(r));
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], &r, sizeof(r)) != sizeof(r))
		r = -EIO;
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return r;
}
