#include "proc-tracer.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"
#include "proc-trace.skel.h"

struct proc_tracer {
	struct proc_trace *skel;
	struct ring_buffer *rb;
	void (*fn)(const struct proc_trace_event *e, void *data);
	void *data;
};

static int on_record(void *ctx, void *data, size_t size)
{
	struct proc_tracer *t = ctx;

	if (size >= sizeof(struct proc_trace_event) && t->fn)
		t->fn(data, t->data);
	return 0;
}

int proc_tracer_new(uint64_t ring_size, struct proc_tracer **ret)
{
	struct proc_tracer *t = calloc(1, sizeof(*t));
	int r;

	if (!t)
		return -ENOMEM;
	t->skel = proc_trace__open();
	if (!t->skel) {
		r = log_errno(-errno, "process tracer: open");
		goto fail;
	}
	/* Wake the reader at a quarter full, at most 64 KiB: a small ring must not sit full. */
	t->skel->rodata->wakeup_bytes = ring_size / 4 < (64 << 10) ? ring_size / 4 : (64 << 10);
	if ((r = bpf_map__set_max_entries(t->skel->maps.events, (uint32_t)ring_size)) < 0) {
		log_errno(r, "process tracer: ring buffer of %llu bytes",
			  (unsigned long long)ring_size);
		goto fail;
	}
	if ((r = proc_trace__load(t->skel)) < 0 || (r = proc_trace__attach(t->skel)) < 0) {
		log_errno(r, "process tracer: load and attach");
		goto fail;
	}
	t->rb = ring_buffer__new(bpf_map__fd(t->skel->maps.events), on_record, t, NULL);
	if (!t->rb) {
		r = log_errno(-errno, "process tracer: ring buffer");
		goto fail;
	}
	*ret = t;
	return 0;
fail:
	proc_tracer_free(t);
	return r;
}

void proc_tracer_free(struct proc_tracer *t)
{
	if (!t)
		return;
	ring_buffer__free(t->rb);
	proc_trace__destroy(t->skel);
	free(t);
}

int proc_tracer_fd(struct proc_tracer *t)
{
	return ring_buffer__epoll_fd(t->rb);
}

int proc_tracer_watch(struct proc_tracer *t, uint64_t sandbox_cgid, int on)
{
	struct proc_trace_watch zero = { { 0 } };
	int fd = bpf_map__fd(t->skel->maps.watched);

	/* Watching again keeps the counts: a sandbox's loss is never reset under the reader. */
	if (on)
		return bpf_map_update_elem(fd, &sandbox_cgid, &zero, BPF_NOEXIST) < 0 &&
				       errno != EEXIST
			       ? -errno
			       : 0;
	return bpf_map_delete_elem(fd, &sandbox_cgid) < 0 && errno != ENOENT ? -errno : 0;
}

int proc_tracer_drain(struct proc_tracer *t,
		      void (*fn)(const struct proc_trace_event *e, void *data), void *data)
{
	int n;

	t->fn = fn;
	t->data = data;
	n = ring_buffer__consume(t->rb);
	t->fn = NULL;
	return n;
}

void proc_tracer_lost(struct proc_tracer *t, uint64_t ret[PROC_TRACE_KINDS])
{
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(t->skel->maps.lost);

	for (__u32 k = 0; k < PROC_TRACE_KINDS; k++) {
		uint64_t per[256] = { 0 };

		ret[k] = 0;
		if (ncpu <= 0 || ncpu > 256 || bpf_map_lookup_elem(fd, &k, per) < 0)
			continue;
		for (int c = 0; c < ncpu; c++)
			ret[k] += per[c];
	}
}

void proc_tracer_lost_each(struct proc_tracer *t,
			   void (*fn)(uint64_t cgid, const uint64_t lost[PROC_TRACE_KINDS], void *data),
			   void *data)
{
	int fd = bpf_map__fd(t->skel->maps.watched);
	__u64 key, next, *prev = NULL;
	struct proc_trace_watch w;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		if (bpf_map_lookup_elem(fd, &next, &w) == 0) {
			uint64_t lost[PROC_TRACE_KINDS];

			for (int k = 0; k < PROC_TRACE_KINDS; k++)
				lost[k] = w.lost[k];
			fn(next, lost, data);
		}
		key = next;
		prev = &key;
	}
}
