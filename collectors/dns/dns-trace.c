#include "dns-tracer.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collectors/bpf-util.h"
#include "dns-trace.skel.h"
#include "log.h"

/* The two hooks attached to one watched sandbox's cgroup. */
struct dns_links {
	uint64_t cgid;
	struct bpf_link *egress, *ingress;
};

struct dns_tracer {
	struct dns_trace *skel;
	struct ring_buffer *rb;
	struct dns_links *links;
	size_t n_links, cap_links;
	unsigned at_level[DNS_TRACE_LEVEL_MAX + 1]; /* watched cgroups per level */
	void (*fn)(const struct dns_trace_event *e, void *data);
	void *data;
};

static int on_record(void *ctx, void *data, size_t size)
{
	struct dns_tracer *t = ctx;

	if (size >= sizeof(struct dns_trace_event) && t->fn)
		t->fn(data, t->data);
	return 0;
}

int dns_tracer_new(uint64_t ring_size, uint64_t share_rate, struct dns_tracer **ret)
{
	struct dns_tracer *t = calloc(1, sizeof(*t));
	int r;

	if (!t)
		return -ENOMEM;
	if (!(t->skel = dns_trace__open())) {
		r = log_errno(-errno, "DNS tracer: open");
		goto fail;
	}
	/* Wake the reader at a quarter full, at most 16 KiB: a small ring must not sit full. */
	t->skel->rodata->wakeup_bytes = ring_size / 4 < (16 << 10) ? ring_size / 4 : (16 << 10);
	/* Each sandbox's share, as the process tracer's (collectors/share.bpf.h). */
	t->skel->rodata->share_burst = bpf_share_burst(ring_size, DNS_TRACE_SHARE_MIN);
	t->skel->rodata->share_rate = share_rate;
	t->skel->rodata->share_reserve_at = ring_size / 2;
	if ((r = bpf_map__set_max_entries(t->skel->maps.dns_events, (uint32_t)ring_size)) < 0) {
		log_errno(r, "DNS tracer: ring buffer of %llu bytes",
			  (unsigned long long)ring_size);
		goto fail;
	}
	if ((r = dns_trace__load(t->skel)) < 0) {
		log_errno(r, "DNS tracer: load");
		goto fail;
	}
	/* cgroup_skb programs do not attach by themselves: this sets up the ring buffer only. */
	if ((r = bpf_collector_attach(t->skel->skeleton, t->skel->maps.dns_events, on_record, t,
				      "DNS tracer", &t->rb)) < 0)
		goto fail;
	*ret = t;
	return 0;
fail:
	dns_tracer_free(t);
	return r;
}

static void detach(struct dns_tracer *t, size_t i)
{
	bpf_link__destroy(t->links[i].egress);
	bpf_link__destroy(t->links[i].ingress);
	t->links[i] = t->links[--t->n_links];
}

void dns_tracer_free(struct dns_tracer *t)
{
	if (!t)
		return;
	while (t->n_links)
		detach(t, 0);
	free(t->links);
	ring_buffer__free(t->rb);
	dns_trace__destroy(t->skel);
	free(t);
}

int dns_tracer_fd(struct dns_tracer *t)
{
	return ring_buffer__epoll_fd(t->rb);
}

/* Links, not classic attachments: they go when the monitor goes. */
static int attach(struct dns_tracer *t, uint64_t cgid, const char *cgroup_dir)
{
	struct dns_links l = { .cgid = cgid };
	int fd, r = 0;

	if (t->n_links == t->cap_links) {
		size_t cap = t->cap_links ? 2 * t->cap_links : 16;
		struct dns_links *n = realloc(t->links, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		t->links = n;
		t->cap_links = cap;
	}
	if ((fd = open(cgroup_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -errno;
	if (!(l.egress = bpf_program__attach_cgroup(t->skel->progs.dns_egress, fd)) ||
	    !(l.ingress = bpf_program__attach_cgroup(t->skel->progs.dns_ingress, fd)))
		r = -errno;
	close(fd);
	if (r < 0) {
		bpf_link__destroy(l.egress);
		return r;
	}
	t->links[t->n_links++] = l;
	return 0;
}

static void set_levels(struct dns_tracer *t)
{
	bpf_levels_set(t->at_level, DNS_TRACE_LEVEL_MAX, DNS_TRACE_SANDBOX_LEVEL,
		       &t->skel->data->level_lo, &t->skel->data->level_hi);
}

int dns_tracer_watch(struct dns_tracer *t, uint64_t cgid, unsigned level, const char *cgroup_dir,
		     int on)
{
	int fd = bpf_map__fd(t->skel->maps.dns_watched);
	struct dns_trace_watch fresh;

	if (level < 1 || level > DNS_TRACE_LEVEL_MAX)
		return -ERANGE;
	for (size_t i = 0; i < t->n_links; i++) {
		if (t->links[i].cgid != cgid)
			continue;
		if (!on)
			detach(t, i);
		return 0;
	}
	if (!on)
		return 0;
	/* The entry before the hooks: every message through them has its sandbox. Watching again
	 * keeps the counts: a sandbox's loss is never reset under the reader. */
	memset(&fresh, 0, sizeof(fresh));
	/* A full bucket from the start (share.bpf.h): the first records of a sandbox that has
	 * sent nothing are never over its share, on however many CPUs they come at once. */
	fresh.share = (__s64)t->skel->rodata->share_burst;
	if (bpf_map_update_elem(fd, &cgid, &fresh, BPF_NOEXIST) == 0) {
		t->at_level[level]++;
		set_levels(t);
	} else if (errno != EEXIST) {
		return -errno;
	}
	return attach(t, cgid, cgroup_dir);
}

void dns_tracer_forget(struct dns_tracer *t, uint64_t cgid, unsigned level)
{
	if (level < 1 || level > DNS_TRACE_LEVEL_MAX ||
	    bpf_map_delete_elem(bpf_map__fd(t->skel->maps.dns_watched), &cgid) < 0)
		return;
	t->at_level[level]--;
	set_levels(t);
}

int dns_tracer_watch_lost(struct dns_tracer *t, uint64_t cgid, struct dns_trace_watch *ret)
{
	return bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.dns_watched), &cgid, ret) < 0 ? -errno
											   : 0;
}

int dns_tracer_drain(struct dns_tracer *t, void (*fn)(const struct dns_trace_event *e, void *data),
		     void *data)
{
	int n;

	t->fn = fn;
	t->data = data;
	n = ring_buffer__consume(t->rb);
	t->fn = NULL;
	return n;
}

void dns_tracer_lost(struct dns_tracer *t, uint64_t ret[DNS_TRACE_LOSSES])
{
	for (uint32_t k = 0; k < DNS_TRACE_LOSSES; k++)
		ret[k] = __atomic_load_n(&t->skel->bss->dns_lost_total[k], __ATOMIC_RELAXED);
}
