#include "proc-tracer.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collectors/bpf-util.h"
#include "loader-env.h"
#include "log.h"
#include "macro.h"
#include "proc-trace.skel.h"

/* The hooks attached to one watched sandbox's cgroup: sockets (inet and unix) and sysctl. */
#define CGROUP_HOOKS 10
struct sandbox_links {
	uint64_t cgid;
	struct bpf_link *link[CGROUP_HOOKS];
};

struct proc_tracer {
	struct proc_trace *skel;
	struct sandbox_links *links;
	size_t n_links, cap_links;
	struct ring_buffer *rb;
	unsigned at_level[PROC_TRACE_LEVEL_MAX + 1]; /* watched cgroups per level */
	struct proc_trace_event whole;		     /* a head-only record, completed */
	int (*fn)(const struct proc_trace_event *e, void *data);
	void *data;
};

static void detach_cgroup_hooks(struct proc_tracer *t, uint64_t cgid);

static int on_record(void *ctx, void *data, size_t size)
{
	struct proc_tracer *t = ctx;
	struct proc_trace_event *e = data;

	if (!t->fn || size < PROC_TRACE_HEAD_SIZE)
		return 0;
	if (size < sizeof(*e)) {
		/* A shorter record (head, head and an exe's name, head and more, or without
		 * environment values): the callee sees a whole one, what the kernel did not send
		 * zeroed up to the values, and none. */
		size_t n = size < PROC_TRACE_TEXT_SIZE ? size : PROC_TRACE_TEXT_SIZE;

		memcpy(&t->whole, data, n);
		memset((char *)&t->whole + n, 0, PROC_TRACE_TEXT_SIZE - n);
		if (size < PROC_TRACE_ADDR_SIZE) /* a connect's carries the exe's name */
			t->whole.path[0] = '\0';
		if (size < PROC_TRACE_TEXT_SIZE)
			t->whole.argv_len = 0;
		t->whole.n_values = 0;
		e = &t->whole;
	}
	/* Non-zero: this record is taken, the rest stay in the ring for later. */
	return t->fn(e, t->data) ? -EAGAIN : 0;
}

/* The watched environment names, bit by bit, into the kernel side's map (lib/loader-env.c). */
static int fill_env_names(struct proc_tracer *t)
{
	int fd = bpf_map__fd(t->skel->maps.env_names);

	_Static_assert(PROC_TRACE_ENV_VALUES == 4, "value slots are a power of two");
	for (size_t i = 0; i < loader_env_count() && i < PROC_TRACE_ENV_NAMES_MAX; i++) {
		char key[PROC_TRACE_ENV_NAME_MAX] = { 0 };
		struct proc_trace_env_name v = {
			.bit = (uint32_t)i,
			.keep_value = !!(loader_env_table[i].flags & LOADER_ENV_VALUE),
		};

		strncpy(key, loader_env_table[i].name, sizeof(key) - 1);
		if (bpf_map_update_elem(fd, key, &v, BPF_ANY) < 0)
			return log_errno(-errno, "process tracer: env name %s", key);
	}
	return 0;
}

/* Opens and loads the skeleton; with_unix 0 leaves out the unix socket hooks (Linux 6.7). */
static int open_and_load(struct proc_tracer *t, uint64_t ring_size, uint64_t share_rate,
			 int with_unix)
{
	int r;

	t->skel = proc_trace__open();
	if (!t->skel)
		return log_errno(-errno, "process tracer: open");
	/* Wake the reader at a quarter full, at most 64 KiB: a small ring must not sit full. */
	t->skel->rodata->wakeup_bytes = ring_size / 4 < (64 << 10) ? ring_size / 4 : (64 << 10);
	/* A sandbox may hold an eighth of the ring at once (PROC_TRACE_SHARE_MIN at least, what
	 * an honest step's start takes, but never more than half the ring), refilled at
	 * share_rate; past half full, the rest is for sandboxes that are not spending theirs
	 * (collectors/share.bpf.h). */
	t->skel->rodata->share_burst = bpf_share_burst(ring_size, PROC_TRACE_SHARE_MIN);
	t->skel->rodata->share_rate = share_rate;
	t->skel->rodata->share_reserve_at = ring_size / 2;
	if ((r = bpf_map__set_max_entries(t->skel->maps.events, (uint32_t)ring_size)) < 0)
		return log_errno(r, "process tracer: ring buffer of %llu bytes",
				 (unsigned long long)ring_size);
	/* The unix hooks' sections name inet ones (this libbpf knows no others): set their own. */
	if (with_unix &&
	    ((r = bpf_program__set_expected_attach_type(t->skel->progs.connect_unix,
							PROC_TRACE_ATTACH_UNIX_CONNECT)) < 0 ||
	     (r = bpf_program__set_expected_attach_type(t->skel->progs.sendmsg_unix,
							PROC_TRACE_ATTACH_UNIX_SENDMSG)) < 0))
		return log_errno(r, "process tracer: unix socket hooks");
	if (!with_unix) {
		bpf_program__set_autoload(t->skel->progs.connect_unix, false);
		bpf_program__set_autoload(t->skel->progs.sendmsg_unix, false);
	}
	if ((r = proc_trace__load(t->skel)) < 0)
		return r;
	return fill_env_names(t);
}

int proc_tracer_new(uint64_t ring_size, uint64_t share_rate, struct proc_tracer **ret)
{
	struct proc_tracer *t = calloc(1, sizeof(*t));
	int r;

	if (!t)
		return -ENOMEM;
	/* A kernel before 6.7 has no unix socket hooks: everything else still loads without them.
	 */
	if ((r = open_and_load(t, ring_size, share_rate, 1)) < 0) {
		proc_trace__destroy(t->skel);
		t->skel = NULL;
		if ((r = open_and_load(t, ring_size, share_rate, 0)) == 0)
			log_warn("process tracer: no unix socket hooks on this kernel (Linux 6.7 "
				 "has "
				 "them): the monitor's sockets asked for are not seen");
	}
	if (r < 0) {
		log_errno(r, "process tracer: load and attach");
		goto fail;
	}
	if ((r = bpf_collector_attach(t->skel->skeleton, t->skel->maps.events, on_record, t,
				      "process tracer", &t->rb)) < 0)
		goto fail;
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
	while (t->n_links)
		detach_cgroup_hooks(t, t->links[0].cgid);
	free(t->links);
	ring_buffer__free(t->rb);
	proc_trace__destroy(t->skel);
	free(t);
}

int proc_tracer_fd(struct proc_tracer *t)
{
	return ring_buffer__epoll_fd(t->rb);
}

static void detach_cgroup_hooks(struct proc_tracer *t, uint64_t cgid)
{
	for (size_t i = 0; i < t->n_links; i++) {
		if (t->links[i].cgid != cgid)
			continue;
		for (int k = 0; k < CGROUP_HOOKS; k++)
			bpf_link__destroy(t->links[i].link[k]);
		t->links[i] = t->links[--t->n_links];
		return;
	}
}

/*
 * Links, not classic attachments: they go when the monitor goes, and they run after the
 * enforcer's egress hook, which was attached before the sandbox was registered.
 */
static int attach_cgroup_hooks(struct proc_tracer *t, uint64_t cgid, const char *cgroup_dir)
{
	struct bpf_program *progs[CGROUP_HOOKS] = {
		t->skel->progs.sock_create,  t->skel->progs.connect4,
		t->skel->progs.connect6,     t->skel->progs.sendmsg4,
		t->skel->progs.sendmsg6,     t->skel->progs.connect_unix,
		t->skel->progs.sendmsg_unix, t->skel->progs.sysctl_write,
		t->skel->progs.bind4,	     t->skel->progs.bind6,
	};
	struct sandbox_links sl = { .cgid = cgid };
	int fd, r = 0;

	for (size_t i = 0; i < t->n_links; i++)
		if (t->links[i].cgid == cgid)
			return 0;
	if (t->n_links == t->cap_links) {
		size_t cap = t->cap_links ? 2 * t->cap_links : 16;
		struct sandbox_links *n = realloc(t->links, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		t->links = n;
		t->cap_links = cap;
	}
	if ((fd = open(cgroup_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -errno;
	for (int k = 0; k < CGROUP_HOOKS && r == 0; k++)
		if (bpf_program__fd(progs[k]) >= 0 && /* not loaded on this kernel: left out */
		    !(sl.link[k] = bpf_program__attach_cgroup(progs[k], fd)))
			r = -errno;
	close(fd);
	if (r < 0) {
		for (int k = 0; k < CGROUP_HOOKS; k++)
			bpf_link__destroy(sl.link[k]);
		return r;
	}
	t->links[t->n_links++] = sl;
	return 0;
}

static void set_levels(struct proc_tracer *t)
{
	bpf_levels_set(t->at_level, PROC_TRACE_LEVEL_MAX, PROC_TRACE_SANDBOX_LEVEL,
		       &t->skel->data->level_lo, &t->skel->data->level_hi);
}

uint64_t proc_tracer_watched(const struct proc_tracer *t)
{
	uint64_t n = 0;

	for (unsigned l = 0; l <= PROC_TRACE_LEVEL_MAX; l++)
		n += t->at_level[l];
	return n;
}

int proc_tracer_watch(struct proc_tracer *t, uint64_t sandbox_cgid, unsigned level,
		      const char *cgroup_dir, int on)
{
	int fd = bpf_map__fd(t->skel->maps.watched), r;
	struct proc_trace_watch fresh;

	memset(&fresh, 0, sizeof(fresh));
	/* A full bucket from the start (share.bpf.h): the first records of a sandbox that has
	 * sent nothing are never over its share, on however many CPUs they come at once. */
	fresh.share = (__s64)t->skel->rodata->share_burst;

	if (level < 1 || level > PROC_TRACE_LEVEL_MAX)
		return -ERANGE;
	if (!on) {
		detach_cgroup_hooks(t, sandbox_cgid);
		if (bpf_map_delete_elem(fd, &sandbox_cgid) < 0)
			return errno == ENOENT ? 0 : -errno;
		t->at_level[level]--;
		set_levels(t);
		return 0;
	}
	/* Watching again keeps the counts: a sandbox's loss is never reset under the reader. */
	if (bpf_map_update_elem(fd, &sandbox_cgid, &fresh, BPF_NOEXIST) == 0) {
		t->at_level[level]++;
		set_levels(t);
	} else if (errno != EEXIST) {
		return -errno;
	}
	if (cgroup_dir && (r = attach_cgroup_hooks(t, sandbox_cgid, cgroup_dir)) < 0)
		return log_errno(r, "socket hooks on %s", cgroup_dir);
	return 0;
}

int proc_tracer_drain(struct proc_tracer *t,
		      int (*fn)(const struct proc_trace_event *e, void *data), void *data)
{
	int n;

	t->fn = fn;
	t->data = data;
	n = ring_buffer__consume(t->rb);
	t->fn = NULL;
	return n == -EAGAIN ? 0 : n;
}

const char *proc_tracer_kind_name(unsigned kind)
{
	static const char *const names[PROC_TRACE_KINDS] = {
		"exec",	  "fork", "exit",   "socket", "connect", "sendmsg", "unix", "sysctl",
		"cgroup", "bind", "listen", "accept", "signal",	 "rename",  "oom",
	};

	return kind < PROC_TRACE_KINDS ? names[kind] : "?";
}

void proc_tracer_lost(struct proc_tracer *t, uint64_t ret[PROC_TRACE_KINDS])
{
	for (__u32 k = 0; k < PROC_TRACE_KINDS; k++)
		ret[k] = __atomic_load_n(&t->skel->bss->lost_total[k], __ATOMIC_RELAXED);
}

void proc_tracer_lost_each(struct proc_tracer *t,
			   void (*fn)(uint64_t cgid, const struct proc_trace_watch *w, void *data),
			   void *data)
{
	int fd = bpf_map__fd(t->skel->maps.watched);
	__u64 key, next, *prev = NULL;
	struct proc_trace_watch w;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		if (bpf_map_lookup_elem(fd, &next, &w) == 0)
			fn(next, &w, data);
		key = next;
		prev = &key;
	}
}

int proc_tracer_task_cgroup(struct proc_tracer *t, uint32_t tgid, uint64_t *ret_cgid)
{
	__u64 cg;

	if (!t || bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.task_cgroups), &tgid, &cg) < 0)
		return -ENOENT;
	*ret_cgid = cg;
	return 0;
}

int proc_tracer_scope_allow(struct proc_tracer *t, const struct proc_trace_scope_key *k, int on)
{
	int fd = bpf_map__fd(t->skel->maps.scope_allow);
	__u8 one = 1;

	if (on)
		return bpf_map_update_elem(fd, k, &one, BPF_ANY) < 0 ? -errno : 0;
	return bpf_map_delete_elem(fd, k) < 0 && errno != ENOENT ? -errno : 0;
}

int proc_tracer_scope(struct proc_tracer *t, uint64_t step_cgid, int on)
{
	int fd = bpf_map__fd(t->skel->maps.scoped);
	__u32 one = 1;

	if (on)
		return bpf_map_update_elem(fd, &step_cgid, &one, BPF_ANY) < 0 ? -errno : 0;
	return bpf_map_delete_elem(fd, &step_cgid) < 0 && errno != ENOENT ? -errno : 0;
}
