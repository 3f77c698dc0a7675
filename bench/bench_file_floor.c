/*
 * bench_file_floor INIT_PID [BATCH_US]: the floor of what the file collector can cost, for
 * bench/bench_file.sh. It makes the collector's very fanotify groups and marks on the sandbox of
 * INIT_PID (file_notify_new, file_notify_mark_sandbox) and reads them as the collector does (each
 * group paused BATCH_US after a read, 2000 as in collectors/file/file-events.c; 0: read at every
 * wake-up), but does nothing with an event: it closes the descriptors the kernel made for it and
 * counts it. What a workload pays with it running is the kernel's part (making and queueing every
 * event) and the least a reader costs; the collector's ratio against it is its own part. Runs until
 * SIGTERM or SIGINT, then prints the events and reads it took.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <time.h>
#include <unistd.h>

#include "collectors/file/file-notify.h"

#define BUF_SIZE 65536 /* as the collector's */
#define INFO_PIDFD 4   /* FAN_EVENT_INFO_TYPE_PIDFD, absent from older headers */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* Reads one buffer of fd: the events in it (their descriptors and pidfds closed), or 0. */
static long drain(int fd, char *buf)
{
	const struct fanotify_event_metadata *m;
	ssize_t len = read(fd, buf, BUF_SIZE);
	long n = 0;

	if (len <= 0)
		return 0;
	for (m = (const void *)buf; FAN_EVENT_OK(m, len); m = FAN_EVENT_NEXT(m, len)) {
		const char *p = (const char *)m + m->metadata_len,
			   *end = (const char *)m + m->event_len;

		n++;
		if (m->fd >= 0)
			close(m->fd);
		while (p + sizeof(struct fanotify_event_info_header) <= end) {
			const struct fanotify_event_info_header *h = (const void *)p;

			if (h->len == 0)
				break;
			if (h->info_type == INFO_PIDFD) {
				int32_t pidfd;

				memcpy(&pidfd, p + sizeof(*h), sizeof(pidfd));
				if (pidfd >= 0)
					close(pidfd);
			}
			p += h->len;
		}
	}
	return n;
}

int main(int argc, char **argv)
{
	static char buf[BUF_SIZE] __attribute__((aligned(8)));
	long batch_us = argc > 2 ? strtol(argv[2], NULL, 10) : 2000, events = 0, reads = 0;
	struct sigaction sa = { .sa_handler = on_signal };
	struct file_notify *n;
	struct pollfd pfd[FILE_NOTIFY_GROUPS];
	int r;

	if (argc < 2) {
		fprintf(stderr, "usage: bench_file_floor INIT_PID [BATCH_US]\n");
		return 2;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if ((r = file_notify_new(0, &n)) < 0 ||
	    (r = file_notify_mark_sandbox(n, (pid_t)strtol(argv[1], NULL, 10), NULL)) < 0) {
		fprintf(stderr, "bench_file_floor: %s\n", strerror(-r));
		return 1;
	}
	for (int g = 0; g < FILE_NOTIFY_GROUPS; g++)
		pfd[g] = (struct pollfd){ .fd = file_notify_fd(n, g), .events = POLLIN };
	printf("ready\n");
	fflush(stdout);
	while (!stop) {
		long k;

		if (poll(pfd, FILE_NOTIFY_GROUPS, -1) <= 0)
			continue;
		for (int g = 0; g < FILE_NOTIFY_GROUPS; g++) {
			if (!(pfd[g].revents & POLLIN))
				continue;
			while ((k = drain(pfd[g].fd, buf)) > 0) {
				events += k;
				reads++;
			}
		}
		if (batch_us > 0)
			nanosleep(&(struct timespec){ 0, batch_us * 1000 }, NULL);
	}
	printf("events %ld reads %ld\n", events, reads);
	file_notify_free(n);
	return 0;
}
