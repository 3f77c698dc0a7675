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

/* Forks nft -f - in the netns nsfd (the caller's if negative), reading in[0] and writing out[1].
 * Returns like fork. */
static pid_t nft_spawn(int nsfd, const int in[2], const int out[2])
{
	pid_t pid = fork();

	if (pid == 0) {
		char *argv[] = { NFT_BIN, "-f", "-", NULL };
		char *envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL };

		if ((nsfd >= 0 && setns(nsfd, CLONE_NEWNET) < 0) || dup2(in[0], 0) < 0 ||
		    dup2(out[1], 1) < 0 || dup2(out[1], 2) < 0)
			_exit(126);
		execve(NFT_BIN, argv, envp);
		_exit(127);
	}
	return pid;
}

/* Writes len bytes of text to fd, or as many as nft reads before it exits. */
static void nft_feed(int fd, const char *text, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
}

/* nft's messages: keep the first line that says what is wrong. */
static void nft_read_messages(int fd, char *err, size_t errlen)
{
	size_t got = 0;

	for (;;) {
		ssize_t n = read(fd, err + got, errlen - 1 - got);

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
}

int nft_apply(int nsfd, const char *text, char *err, size_t errlen)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, status, r = 0;
	size_t len = strlen(text);
	pid_t pid;

	err[0] = '\0';
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0) {
		r = -errno;
		goto out;
	}
	pid = nft_spawn(nsfd, in, out);
	if (pid < 0) {
		r = -errno;
		goto out;
	}
	close(in[0]);
	close(out[1]);
	in[0] = out[1] = -1;
	signal(SIGPIPE, SIG_IGN);
	nft_feed(in[1], text, len);
	close(in[1]);
	in[1] = -1;
	nft_read_messages(out[0], err, errlen);
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
