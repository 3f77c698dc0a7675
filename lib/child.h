/*
 * A helper process of firebreakd's: this binary re-executed with a flag (`--http-child`,
 * `--exporter`), given a few fds, watched through a pidfd, and started again with backoff when
 * it dies. The core keeps watching sandboxes whatever its helpers do.
 */
#ifndef FB_CHILD_H
#define FB_CHILD_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

struct loop;

struct child {
	const char *name; /* for the log: "HTTP API", "exporter" */
	const char *flag; /* the flag it is run with */
	char **argv;	  /* the daemon's own arguments, passed on after the flag */
	struct loop *loop;
	pid_t pid; /* 0: not running */
	int pidfd;
	int64_t started_ns, restart_at_ns, backoff_ns; /* monotonic */
	uint64_t restarts;
};

/* Starts c with fds[i] as its fd 3 + i (the rest closed by exec); 0 or -errno. */
int child_start(struct child *c, const int *fds, int nfds);

/* Whether c died and its backoff is over: the caller starts it again. */
int child_due(struct child *c);

/* SIGTERM, a second to go, then SIGKILL; reaps it. */
void child_stop(struct child *c);

/*
 * In the child, first thing: its name (comm, and the log's), every fd closed but 3..last_fd,
 * then the log (syslog's socket opened only now, so nothing closes it under glibc), SIGPIPE
 * ignored, and SIGTERM and SIGINT blocked (for every thread started later) into *stop, for the
 * main thread to wait on.
 */
void child_begin(const char *comm, const char *log_name, int last_fd, int foreground,
		 sigset_t *stop);

#endif
