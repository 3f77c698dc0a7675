#include "netns-thread.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

int netns_enter(const char *path, ino_t *ret_ino)
{
	struct stat st;
	int home, there, r = 0;

	if ((home = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC)) < 0)
		return -errno;
	if ((there = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		r = -errno;
		close(home);
		return r;
	}
	if (ret_ino && fstat(there, &st) == 0)
		*ret_ino = st.st_ino;
	if (setns(there, CLONE_NEWNET) < 0)
		r = -errno;
	close(there);
	if (r < 0) {
		close(home);
		return r;
	}
	return home;
}

void netns_leave(int home)
{
	if (setns(home, CLONE_NEWNET) < 0) {
		log_error("cannot return to the daemon's network namespace: %m");
		abort();
	}
	close(home);
}
