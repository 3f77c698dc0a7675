/*
 * Events per second persisted by the batched writer: the real writer thread and store, on a fresh
 * database in a temporary directory, for several batch sizes, measured in one run side by side.
 * Usage: bench_writer [EVENTS] [DIR]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "store/store.h"
#include "timeutil.h"
#include "store/sink.h"
#include "store/writer.h"

struct counter {
	uint64_t done;
};

static void count(const struct writer_completion *c, void *data)
{
	((struct counter *)data)->done++;
	free(c->msg);
}

/* A realistic exec-like event: ~120 bytes of fields. */
static void make_event(struct event *ev, uint64_t i, int64_t sandbox_id)
{
	char fields[256];

	event_init(ev);
	ev->ts = time_now_ns();
	ev->sandbox_id = sandbox_id;
	strcpy(ev->sandbox, "bench");
	ev->step = (int64_t)(i / 1000);
	strcpy(ev->tool, "run_tests");
	ev->source = EVENT_SOURCE_EBPF;
	strcpy(ev->kind, "proc.exec");
	ev->pid = 1000 + (int32_t)(i % 30000);
	ev->ppid = 999;
	ev->uid = 65534;
	strcpy(ev->comm, "pytest");
	snprintf(fields, sizeof(fields),
		 "{\"path\":\"/usr/bin/python3\",\"argv\":[\"python3\",\"-m\",\"pytest\",\"-q\","
		 "\"tests/test_%llu.py\"]}",
		 (unsigned long long)i);
	event_set_fields_text(ev, fields, strlen(fields));
}

static double run(const char *dir, uint64_t n, unsigned batch, int sync_full)
{
	char path[512];
	struct store *s;
	struct writer *w;
	struct writer_config cfg = { .batch_max = batch };
	struct store_sandbox sb = { .id = 1, .name = "bench", .state = "running" };
	struct counter ctr = { 0 };
	uint64_t t0, t1;

	snprintf(path, sizeof(path), "%s/bench-%u-%d.db", dir, batch, sync_full);
	unlink(path);
	if (store_open(path, STORE_READ_WRITE, &s) < 0)
		exit(1);
	store_set_synchronous_full(s, sync_full);
	store_begin(s);
	store_sandbox_put(s, &sb);
	store_commit(s);
	if (writer_new(s, &cfg, &w) < 0)
		exit(1);
	/* The events are made first: what is timed is the writer persisting them (the producer's
	 * work, JSON checks included, is the collectors' cost, measured with them). */
	struct writer_op *ops = calloc(n, sizeof(*ops));
	if (!ops)
		exit(1);
	for (uint64_t i = 0; i < n; i++) {
		ops[i].type = WRITER_OP_EVENT;
		make_event(&ops[i].ev, i, 1);
	}
	/* Through a sink, as in the daemon: it gives each event its id (no stage: the detectors are
	 * measured with the pipeline). */
	struct sink *sk = NULL;
	if (sink_new(w, &sk) < 0)
		exit(1);
	t0 = time_mono_ns();
	for (uint64_t i = 0; i < n; i++)
		sink_submit(sk, &ops[i]);
	sink_stop(sk);
	t1 = time_mono_ns();
	sink_free(sk);
	free(ops);
	writer_dispatch(w, count, &ctr);
	{
		struct writer_stats st;
		writer_get_stats(w, &st);
		if (st.events != n) {
			fprintf(stderr, "lost events: %llu of %llu\n",
				(unsigned long long)st.events, (unsigned long long)n);
			exit(1);
		}
	}
	writer_free(w);
	unlink(path);
	snprintf(path, sizeof(path), "%s/bench-%u-%d.db-wal", dir, batch, sync_full);
	unlink(path);
	snprintf(path, sizeof(path), "%s/bench-%u-%d.db-shm", dir, batch, sync_full);
	unlink(path);
	return (double)n / ((double)(t1 - t0) / 1e9);
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	const char *dir = argc > 2 ? argv[2] : "/tmp";
	static const unsigned batches[] = { 256, 1024, 4096, 16384 };

	log_max_level = LOG_LEVEL_WARN;
	printf("writer: %llu events per run, store in %s\n", (unsigned long long)n, dir);
	for (int sync_full = 1; sync_full >= 0; sync_full--)
		for (size_t i = 0; i < sizeof(batches) / sizeof(batches[0]); i++)
			printf("  batch %5u  sync %-6s  %10.0f events/s\n", batches[i],
			       sync_full ? "full" : "normal", run(dir, n, batches[i], sync_full));
	return 0;
}
