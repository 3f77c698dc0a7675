/*
 * bench_kill_floor: the floor bench_kill.sh compares the monitor's kill path with, and the wait
 * it uses to see a trial's sandbox die.
 *
 *   bench_kill_floor kill CGROUP_DIR   at SCHED_FIFO, writes CGROUP_DIR/cgroup.kill and waits for
 *                                      cgroup.events to say "populated 0": prints the write's
 *                                      and the wait's time in ns. Nothing of the monitor's runs:
 *                                      what is left is the kernel's own time to end the processes.
 *   bench_kill_floor wait CGROUP_DIR MS
 *                                      blocks (poll, no busy loop) until CGROUP_DIR is empty;
 *                                      exits 0, or 1 after MS milliseconds.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup.h"
#include "timeutil.h"

static int open_in(const char *dir, const char *file, int flags)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return open(path, flags | O_CLOEXEC);
}

/* Waits until the cgroup.events open at fd says "populated 0": 0, or -ETIMEDOUT. */
static int wait_empty(int fd, int timeout_ms)
{
	uint64_t deadline = time_mono_ns() + (uint64_t)timeout_ms * 1000000;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLPRI };
		uint64_t now = time_mono_ns();
		int r = cgroup_events_has(fd, "populated", '0');

		if (r != 0)
			return r < 0 ? r : 0;
		if (now >= deadline)
			return -ETIMEDOUT;
		poll(&p, 1, (int)((deadline - now) / 1000000) + 1);
	}
}

int main(int argc, char **argv)
{
	int ev;

	if (argc < 3 || (strcmp(argv[1], "kill") != 0 && strcmp(argv[1], "wait") != 0) ||
	    (strcmp(argv[1], "wait") == 0 && argc != 4)) {
		fprintf(stderr, "usage: bench_kill_floor kill CGROUP_DIR | wait CGROUP_DIR MS\n");
		return 2;
	}
	if ((ev = open_in(argv[2], "cgroup.events", O_RDONLY)) < 0) {
		perror(argv[2]);
		return 2;
	}
	if (strcmp(argv[1], "wait") == 0)
		return wait_empty(ev, atoi(argv[3])) == 0 ? 0 : 1;

	/* As the monitor's kill path runs: SCHED_FIFO at its priority (monitor/killer.h). */
	struct sched_param sp = { .sched_priority = 20 };
	int k = open_in(argv[2], "cgroup.kill", O_WRONLY);
	uint64_t t0, t1, t2;

	if (k < 0 || sched_setscheduler(0, SCHED_FIFO, &sp) < 0) {
		perror("cgroup.kill or SCHED_FIFO");
		return 2;
	}
	t0 = time_mono_ns();
	if (write(k, "1", 1) != 1) {
		perror("cgroup.kill");
		return 2;
	}
	t1 = time_mono_ns();
	if (wait_empty(ev, 3000) < 0) {
		fprintf(stderr, "bench_kill_floor: %s not empty after 3 s\n", argv[2]);
		return 1;
	}
	t2 = time_mono_ns();
	printf("%llu %llu\n", (unsigned long long)(t1 - t0), (unsigned long long)(t2 - t1));
	return 0;
}
