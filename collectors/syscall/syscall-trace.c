#include "syscall-tracer.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>

#include "collectors/bpf-util.h"
#include "log.h"
#include "syscall-trace.skel.h"

struct syscall_tracer {
	struct syscall_trace *skel;
	struct ring_buffer *rb;
	void (*fn)(const struct syscall_trace_event *e, void *data);
	void *data;
};

static int on_record(void *ctx, void *data, size_t size)
{
	struct syscall_tracer *t = ctx;

	if (size >= sizeof(struct syscall_trace_event) && t->fn)
		t->fn(data, t->data);
	return 0;
}

int syscall_tracer_new(uint64_t cgid, unsigned level, struct syscall_tracer **ret)
{
	struct syscall_tracer *t = calloc(1, sizeof(*t));
	int r;

	if (!t)
		return -ENOMEM;
	if (!(t->skel = syscall_trace__open())) {
		r = log_errno(-errno, "syscall recorder: open");
		goto fail;
	}
	t->skel->rodata->sandbox_cgid = cgid;
	t->skel->rodata->sandbox_level = level;
	if ((r = syscall_trace__load(t->skel)) < 0) {
		log_errno(r, "syscall recorder: load and attach");
		goto fail;
	}
	if ((r = bpf_collector_attach(t->skel->skeleton, t->skel->maps.sys_events, on_record, t,
				      "syscall recorder", &t->rb)) < 0)
		goto fail;
	*ret = t;
	return 0;
fail:
	syscall_tracer_free(t);
	return r;
}

void syscall_tracer_free(struct syscall_tracer *t)
{
	if (!t)
		return;
	ring_buffer__free(t->rb);
	syscall_trace__destroy(t->skel);
	free(t);
}

int syscall_tracer_fd(struct syscall_tracer *t)
{
	return ring_buffer__epoll_fd(t->rb);
}

int syscall_tracer_drain(struct syscall_tracer *t,
			 void (*fn)(const struct syscall_trace_event *e, void *data), void *data)
{
	int n;

	t->fn = fn;
	t->data = data;
	n = ring_buffer__consume(t->rb);
	t->fn = NULL;
	return n;
}

uint64_t syscall_tracer_lost(struct syscall_tracer *t)
{
	return bpf_percpu_sum(bpf_map__fd(t->skel->maps.sys_lost), 0);
}
