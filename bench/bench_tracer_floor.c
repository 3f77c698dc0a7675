/*
 * The floor of the pipeline's throughput (bench/bench_pipeline.sh): firebreakd's own process
 * tracer (collectors/proc, the same BPF programs, ring and hooks on the same cgroup) read by a
 * reader that only counts, as often as firebreakd's loop drains it (on the ring's wake-up and a
 * 20 ms timer). What firebreakd does past that, attribution, JSON, detectors, the store, is what
 * the pipeline's ratio to this floor measures.
 *
 *   bench_tracer_floor CGROUP RING_BYTES N
 *
 * CGROUP is a cgroup path relative to the hierarchy's root (firebreak-bench-PID). Prints "ready"
 * once the hooks are attached, then exits when N connect records were read or lost, printing
 * "read R lost L". Needs root.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "collectors/proc/proc-tracer.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* The generator's connects only: its own fork, exec and exit are not the N. */
static int count(const struct proc_trace_event *e, void *data)
{
	*(unsigned long long *)data += e->kind == PROC_TRACE_CONNECT;
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long long read = 0, lost = 0, want;
	struct sigaction sa = { .sa_handler = on_signal };
	uint64_t cgid, lost_kinds[PROC_TRACE_KINDS];
	struct proc_tracer *t = NULL;
	char dir[4096];
	int r;

	if (argc != 4) {
		fprintf(stderr, "usage: bench_tracer_floor CGROUP RING_BYTES N\n");
		return 2;
	}
	want = strtoull(argv[3], NULL, 10);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if ((r = cgroup_id(argv[1], &cgid)) < 0 ||
	    (r = cgroup_v2_dir(argv[1], dir, sizeof(dir))) < 0 ||
	    (r = proc_tracer_new(strtoull(argv[2], NULL, 10), 0, &t)) < 0 ||
	    (r = proc_tracer_watch(t, cgid, cgroup_level(argv[1]), dir, 1)) < 0) {
		fprintf(stderr, "bench_tracer_floor: %s\n", strerror(-r));
		proc_tracer_free(t);
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	while (!stop && read + lost < want) {
		struct pollfd p = { .fd = proc_tracer_fd(t), .events = POLLIN };

		poll(&p, 1, 20);
		if ((r = proc_tracer_drain(t, count, &read)) < 0 && r != -EINTR) {
			fprintf(stderr, "bench_tracer_floor: drain: %s\n", strerror(-r));
			break;
		}
		proc_tracer_lost(t, lost_kinds);
		lost = lost_kinds[PROC_TRACE_CONNECT];
	}
	printf("read %llu lost %llu\n", read, lost);
	proc_tracer_free(t);
	return 0;
}
