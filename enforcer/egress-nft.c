#include "egress-nft.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro.h"

int nft_apply(int nsfd, const char *text, char *err, size_t errlen)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, status, r = 0;
	size_t len = strlen(text), off = 0, got = 0;
	pid_t pid;

	err[0] = '\0';
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0) {
		r = -errno;
		goto out;
	}
	pid = fork();
	if (pid < 0) {
		r = -errno;
		goto out;
	}
	if (pid == 0) {
		char *argv[] = { NFT_BIN, "-f", "-", NULL };
		char *envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };

		if (setns(nsfd, CLONE_NEWNET) < 0 || dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 ||
		    dup2(out[1], 2) < 0)
			_exit(126);
		execve(NFT_BIN, argv, envp);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	in[0] = out[1] = -1;
	signal(SIGPIPE, SIG_IGN);
	while (off < len) {
		ssize_t n = write(in[1], text + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	close(in[1]);
	in[1] = -1;
	/* nft's messages: keep the first line that says what is wrong. */
	for (;;) {
		ssize_t n = read(out[0], err + got, errlen - 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || got + (size_t)n >= errlen - 1) {
			if (n > 0)
				got += (size_t)n;
			break;
		}
		got += (size_t)n;
	}
	err[got] = '\0';
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		r = WIFEXITED(status) && WEXITSTATUS(status) == 127 ? -ENOENT : -EINVAL;
	else
		err[0] = '\0';
out:
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (out[i] >= 0)
			close(out[i]);
	}
	return r;
}
