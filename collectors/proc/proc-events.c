#include "proc-events.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cgroup.h"
#include "hashmap.h"
#include "collectors/collector.h"
#include "config.h"
#include "counters.h"
#include "loop.h"
#include "store/registry.h"
#include "store/sink.h"
#include "macro.h"
#include "proc-events-internal.h"
#include "proc-tracer.h"
#include "timeutil.h"

/*
 * A record can beat the enforcer's report of its step (it is sent before the step starts, but the
 * loop may drain the ring buffer first), and a short step's cgroup can be gone by then: such
 * records wait here, a while, for the report.
 */
#define PROC_PENDING_MAX 4096
#define PROC_PENDING_NS (2 * NSEC_PER_SEC)

struct proc_pending {
	struct proc_trace_event e;
	uint64_t since;
};

/* The process records' last attribution, valid while gen is the registry's generation. */
struct proc_attr_cache {
	uint64_t cgid, gen;
	int64_t step;
	const char *tool;
	struct store_sandbox *sb; /* NULL: empty */
};

struct proc_events {
	struct collector_env env;
	struct proc_tracer *tracer;
	struct proc_attr_cache cache;
	struct proc_mounts *mounts; /* the sandboxes' writable mounts, for exe_origin */
	uint64_t read;		    /* records taken from the ring buffer */
	uint64_t read_ns;	    /* time spent taking them (and handing them to the writer) */
	uint64_t stored;	    /* process records stored */
	uint64_t unattributed;	    /* records of a cgroup no sandbox owns (dropped, counted) */
	uint64_t lost[PROC_TRACE_KINDS]; /* the kernel's reservation failures, as last seen */
	int64_t lost_since;		 /* when the tracer started */
	struct hashmap *loss_seen;	 /* sandbox -> its loss as last reported */
	struct proc_pending *pending;	 /* records whose step was not reported yet */
	size_t n_pending, pending_cap;	 /* grown as needed, up to PROC_PENDING_MAX; freed empty */
	int paused;			 /* the ring is not polled: the writer's queue is full */
	/* Its counters: the fixed ones, then one loss counter per record kind. */
	struct counter_def counters[6 + PROC_TRACE_KINDS];
	char lost_names[PROC_TRACE_KINDS][32];
};

static json_t *argv_json(const struct proc_trace_event *e)
{
	json_t *a = json_array();
	size_t len = e->argv_len < PROC_TRACE_ARGV_MAX ? e->argv_len : PROC_TRACE_ARGV_MAX;

	for (size_t i = 0; i < len;) {
		size_t n = strnlen(e->argv + i, len - i);

		json_array_append_new(a, json_stringn(e->argv + i, n));
		i += n + 1;
	}
	return a;
}

static const char *family_name(unsigned f)
{
	return f == AF_INET	 ? "inet"
	       : f == AF_INET6	 ? "inet6"
	       : f == AF_UNIX	 ? "unix"
	       : f == AF_NETLINK ? "netlink"
				 : NULL;
}

/*
 * Text put piece by piece into a fixed buffer: the fields of the records every storm is made of
 * are written here, as snprintf's format parsing was a tenth of the reader's time.
 */
struct fixbuf {
	char *p;
	size_t len, size;
	int over; /* something did not fit: the text is incomplete */
};

static void put(struct fixbuf *b, const char *s, size_t n)
{
	if (b->over || n >= b->size - b->len) {
		b->over = 1;
		return;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

/* lit: a string literal, nothing else (its size is taken) */
#define PUT(b, lit) put((b), "" lit, sizeof(lit) - 1)

static void put_u64(struct fixbuf *b, uint64_t v)
{
	char digits[20];
	size_t i = sizeof(digits);

	do
		digits[--i] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	put(b, digits + i, sizeof(digits) - i);
}

static void put_int(struct fixbuf *b, long long v)
{
	if (v < 0)
		PUT(b, "-");
	put_u64(b, v < 0 ? -(uint64_t)v : (uint64_t)v);
}

/*
 * ,"exe":"NAME": the connecting process's executable's name. It is the sandbox's bytes, written
 * here without a JSON library: a byte that is not a letter, digit or one of "._+-" becomes '?'
 * (the names the rules look for have none).
 */
static void put_exe(struct fixbuf *b, const struct proc_trace_event *e)
{
	char name[PROC_TRACE_EXE_NAME_MAX];
	size_t len = strnlen(e->path, PROC_TRACE_EXE_NAME_MAX - 1);

	if (!len)
		return;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)e->path[i];

		name[i] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
					  (c >= '0' && c <= '9') || (c && strchr("._+-", c))
				  ? (char)c
				  : '?';
	}
	PUT(b, ",\"exe\":\"");
	put(b, name, len);
	PUT(b, "\"");
}

/*
 * The fields of a fork, exit or socket record, written directly: only numbers and fixed words, so
 * no JSON library is needed on the path every record takes. net.socket: what was made;
 * net.connect/sendmsg: where to, and the egress hook's verdict (it ran first; a refusal there is
 * what the tool saw, EPERM). Returns the length, or -1 if it did not fit.
 */
static int small_fields(const struct proc_trace_event *e, char *buf, size_t size)
{
	struct fixbuf b = { buf, 0, size, size == 0 };
	const char *fam = family_name(e->family);
	char addr[INET6_ADDRSTRLEN] = "";

	switch (e->kind) {
	case PROC_TRACE_FORK:
		break;
	case PROC_TRACE_EXIT:
		PUT(&b, "{\"exit_code\":");
		put_int(&b, (e->exit_code >> 8) & 0xff);
		if (e->exit_code & 0x7f) {
			PUT(&b, ",\"signal\":");
			put_int(&b, e->exit_code & 0x7f);
		} else {
			PUT(&b, ",\"signal\":null");
		}
		break;
	default:
		PUT(&b, "{\"family\":");
		if (fam) {
			PUT(&b, "\"");
			put(&b, fam, strlen(fam));
			PUT(&b, "\"");
		} else {
			put_u64(&b, e->family);
		}
		PUT(&b, ",\"type\":");
		put_int(&b, e->sock_type & 0xff);
		PUT(&b, ",\"protocol\":");
		put_int(&b, e->protocol);
	}
	if (e->kind == PROC_TRACE_FORK)
		PUT(&b, "{\"cgroup_id\":");
	else
		PUT(&b, ",\"cgroup_id\":");
	put_u64(&b, e->cgroup_id);
	if (e->kind != PROC_TRACE_FORK && e->kind != PROC_TRACE_EXIT &&
	    e->kind != PROC_TRACE_SOCKET) {
		inet_ntop(e->family == AF_INET6 ? AF_INET6 : AF_INET, e->addr, addr, sizeof(addr));
		PUT(&b, ",\"dst\":\"");
		put(&b, addr, strlen(addr));
		PUT(&b, "\",\"port\":");
		put_u64(&b, e->port);
		if (e->hook_retval) {
			PUT(&b, ",\"egress_hook\":\"refused\",\"errno\":");
			put_int(&b, -(long long)e->hook_retval);
		} else {
			PUT(&b, ",\"egress_hook\":\"passed\"");
		}
		put_exe(&b, e);
	}
	PUT(&b, "}");
	return b.over ? -1 : (int)b.len;
}

/* path with "//", "/./" and "x/.." folded away, as the kernel would walk it (symlinks aside). */
static void fold_path(const char *path, char *out, size_t size)
{
	size_t n = 0;

	for (const char *p = path; *p && n + 1 < size;) {
		size_t seg = strcspn(p, "/");

		if (seg == 0 || (seg == 1 && p[0] == '.')) {
			/* an empty or "." component */
		} else if (seg == 2 && p[0] == '.' && p[1] == '.') {
			while (n > 0 && out[n - 1] != '/')
				n--;
			if (n > 0)
				n--;
		} else {
			if ((n > 0 || path[0] == '/') && n + 1 < size)
				out[n++] = '/';
			for (size_t i = 0; i < seg && n + 1 < size; i++)
				out[n++] = p[i];
		}
		p += seg;
		while (*p == '/')
			p++;
	}
	out[n] = '\0';
}

/*
 * Whether path names one of the monitor's own files: in its runtime dir (sockets) or its store's
 * dir, anywhere in the path once folded (an escaped process would go through /proc/PID/root/...),
 * or, for a relative path, their names without the leading slash. A symlink to them is not seen.
 */
static int monitor_path(const struct proc_events *pe, const char *path)
{
	char store_dir[PATH_MAX], folded[PATH_MAX], *slash;
	const char *dirs[2] = { pe->env.cfg->runtime_dir, store_dir };

	strscpy(store_dir, sizeof(store_dir), pe->env.cfg->db);
	if ((slash = strrchr(store_dir, '/')) && slash != store_dir)
		*slash = '\0';
	fold_path(path, folded, sizeof(folded));
	for (int i = 0; i < 2; i++) {
		const char *dir = dirs[i];

		if (!dir[0] || strcmp(dir, "/") == 0)
			continue;
		if (strstr(folded, dir) || (folded[0] != '/' && strstr(folded, dir + 1)))
			return 1;
	}
	return 0;
}

/*
 * The fields of an escape indicator. net.unix: the path asked for ("@name" for an abstract one)
 * and whether it is the monitor's; host.sysctl: the sysctl's name and the value written, refused
 * in the kernel; host.cgroup: the v2 cgroup made, removed or joined, and by which task.
 */
static json_t *escape_fields(const struct proc_events *pe, const struct proc_trace_event *e)
{
	size_t len = e->argv_len < PROC_TRACE_ARGV_MAX ? e->argv_len : PROC_TRACE_ARGV_MAX;
	char path[PROC_TRACE_PATH_MAX + 1];
	json_t *f;

	switch (e->kind) {
	case PROC_TRACE_UNIX:
		/* An abstract name (in the sandbox's own network namespace) starts with a NUL. */
		int abstract = len > 0 && e->path[0] == '\0';

		if (abstract) {
			path[0] = '@';
			memcpy(path + 1, e->path + 1, len - 1);
			path[len] = '\0';
		} else {
			memcpy(path, e->path, sizeof(e->path));
			path[strnlen(e->path, len < sizeof(e->path) ? len : sizeof(e->path))] =
				'\0';
		}
		f = json_pack("{s:s, s:s%, s:b, s:b, s:I}", "op",
			      e->flags & PROC_TRACE_F_SENDMSG ? "sendmsg" : "connect", "path", path,
			      strlen(path), "abstract", abstract, "monitor_path",
			      !abstract && monitor_path(pe, path), "cgroup_id",
			      (json_int_t)e->cgroup_id);
		return f;
	case PROC_TRACE_SYSCTL:
		return json_pack("{s:s%, s:s%, s:s, s:I}", "name", e->path,
				 strnlen(e->path, sizeof(e->path)), "value", e->argv,
				 strnlen(e->argv, len), "hook", "refused", "cgroup_id",
				 (json_int_t)e->cgroup_id);
	default:
		f = json_pack("{s:s, s:s%, s:I}", "op",
			      e->flags & PROC_TRACE_F_CG_MKDIR	 ? "mkdir"
			      : e->flags & PROC_TRACE_F_CG_RMDIR ? "rmdir"
			      : e->flags & PROC_TRACE_F_CG_LEFT	 ? "leave"
								 : "attach",
			      "path", e->path, strnlen(e->path, sizeof(e->path)), "cgroup_id",
			      (json_int_t)e->cgroup_id);
		if (f && (e->flags & PROC_TRACE_F_CG_ATTACH))
			json_object_set_new(f, "moved_pid", json_integer(e->ppid));
		return f;
	}
}

static int emit(struct proc_events *pe, const struct proc_trace_event *e, int late);

/*
 * One record from the ring. While the writer's queue is full, the rest stay in the ring (its
 * room is the buffer, and what no longer fits there the kernel counts as lost): the monitor's
 * memory does not grow with a burst.
 */
static int on_record(const struct proc_trace_event *e, void *data)
{
	struct proc_events *pe = data;

	/* sink_full takes the writer's lock: asked once per 256 records, not per record. */
	if (emit(pe, e, 0) > 0)
		return (++pe->read & 255) == 0 && sink_full(pe->env.sink);
	pe->read++;
	/* 1.2 KiB each (an exec's argv): grown as needed, not 4.9 MB from the first. */
	if (pe->n_pending == pe->pending_cap && pe->pending_cap < PROC_PENDING_MAX) {
		size_t cap = pe->pending_cap ? 2 * pe->pending_cap : 16;
		struct proc_pending *v = realloc(pe->pending, cap * sizeof(*v));

		if (v) {
			pe->pending = v;
			pe->pending_cap = cap;
		}
	}
	if (pe->n_pending == pe->pending_cap) {
		pe->unattributed++;
		return 0;
	}
	pe->pending[pe->n_pending].e = *e;
	pe->pending[pe->n_pending].since = time_mono_ns();
	pe->n_pending++;
	return 0;
}

static void retry_pending(struct proc_events *pe)
{
	uint64_t now = time_mono_ns();
	size_t kept = 0;

	for (size_t i = 0; i < pe->n_pending; i++) {
		struct proc_pending *p = &pe->pending[i];

		if (emit(pe, &p->e, now - p->since > PROC_PENDING_NS) > 0)
			continue;
		if (now - p->since > PROC_PENDING_NS) {
			pe->unattributed++;
			continue;
		}
		pe->pending[kept++] = *p;
	}
	pe->n_pending = kept;
	if (kept == 0 && pe->pending_cap > 16) { /* a burst's array goes with it */
		free(pe->pending);
		pe->pending = NULL;
		pe->pending_cap = 0;
	}
}

/*
 * Whether a record so attributed can be stored now: a step cgroup found before its step's report
 * (collector_resolve) has no tool yet, and the record waits for the report unless it is late.
 */
static int reported(int64_t step, const char *tool, int late)
{
	return step == EVENT_STEP_NONE || tool || late;
}

/*
 * Which sandbox, step and tool a record is: its own cgroup's if known; in an adopted cgroup (no
 * steps there) or once its step's report is overdue (late), the watched cgroup's it came through.
 */
static int attribute(struct proc_events *pe, const struct proc_trace_event *e, int late,
		     const char **sandbox, int64_t *step, const char **tool,
		     struct store_sandbox **sb)
{
	struct proc_attr_cache *c = &pe->cache;
	uint64_t gen = registry_generation(pe->env.registry);

	/* Records come in runs from one cgroup: the last answer holds until the registry changes.
	 */
	if (c->sb && c->cgid == e->cgroup_id && c->gen == gen) {
		*sandbox = c->sb->name;
		*step = c->step;
		*tool = c->tool;
		*sb = c->sb;
		return 1;
	}
	if (registry_cgroup_get(pe->env.registry, e->cgroup_id, sandbox, step, tool) &&
	    (*sb = registry_find(pe->env.registry, *sandbox)))
		goto found;
	if (registry_cgroup_get(pe->env.registry, e->sandbox_cgid, sandbox, step, tool) &&
	    (*sb = registry_find(pe->env.registry, *sandbox))) {
		if (registry_adopted(*sb))
			goto found;
		if (late) /* not cached: only this record gives up on its step */
			return 1;
	}
	return collector_resolve(pe->env.registry, e->cgroup_id, sandbox, step, tool) &&
	       (*sb = registry_find(pe->env.registry, *sandbox)) && reported(*step, *tool, late);
found:
	if (!reported(*step, *tool, late))
		return 0;
	c->cgid = e->cgroup_id;
	c->gen = registry_generation(pe->env.registry);
	c->step = *step;
	c->tool = *tool;
	c->sb = *sb;
	return 1;
}

/* Stores the record as an event of its sandbox and step; 1 if done, 0 if not attributable yet. */
static int emit(struct proc_events *pe, const struct proc_trace_event *e, int late)
{
	static const char *const kinds[PROC_TRACE_KINDS] = {
		"proc.exec",   "proc.fork",  "proc.exit",   "net.socket",  "net.connect",
		"net.sendmsg", "net.unix",   "host.sysctl", "host.cgroup", "net.bind",
		"net.listen",  "net.accept", "signal.sent", "proc.rename", "proc.oom-kill",
	};
	struct writer_op op;
	const char *sandbox, *tool;
	struct store_sandbox *sb;
	char small[256];
	int64_t step;
	int r;

	if (e->kind >= PROC_TRACE_KINDS)
		return 1;
	if (!attribute(pe, e, late, &sandbox, &step, &tool, &sb))
		return 0;
	writer_event_init(&op, sb, time_boot_to_wall_ns(e->ts), step, tool, EVENT_SOURCE_EBPF,
			  kinds[e->kind]);
	op.ev.pid = (int32_t)e->pid;
	op.ev.ppid = (int32_t)e->ppid;
	op.ev.uid = e->uid;
	memcpy(op.ev.comm, e->comm, sizeof(op.ev.comm) - 1);
	if (e->kind >= PROC_TRACE_BIND) {
		if (e->kind == PROC_TRACE_RENAME)
			op.ev.ppid = 0; /* the record's ppid is the renamed thread: a field */
		r = sink_submit_event(pe->env.sink, &op,
				      proc_senses_fields(pe->env.registry, e, step));
	} else if (e->kind >= PROC_TRACE_UNIX) {
		r = sink_submit_event(pe->env.sink, &op, escape_fields(pe, e));
	} else if (e->kind == PROC_TRACE_EXEC) {
		/* Path and argv are the tool's bytes: jansson escapes them. */
		json_t *f = json_pack("{s:s%, s:o, s:I}", "path", e->path,
				      strnlen(e->path, sizeof(e->path)), "argv", argv_json(e),
				      "cgroup_id", (json_int_t)e->cgroup_id);

		/* Outside its step's scope: SIGKILL in the kernel, before it ran. */
		if (f && (e->flags & PROC_TRACE_F_KILLED))
			json_object_set_new(f, "killed_in_kernel", json_true());
		proc_exec_fields(f, pe->mounts, pe->env.cfg, sb, e);
		r = sink_submit_event(pe->env.sink, &op, f);
	} else {
		int n = small_fields(e, small, sizeof(small));

		r = n > 0 && (size_t)n < sizeof(small) ? event_take_fields(&op.ev, small, (size_t)n)
						       : -EOVERFLOW;
		r = r < 0 ? (writer_op_clear(&op), r) : sink_submit(pe->env.sink, &op);
	}
	if (r == 0)
		pe->stored++;
	return 1;
}

/* What a sandbox's loss was when last reported, so each monitor.loss event carries a delta. */
struct proc_loss_seen {
	char sandbox[64]; /* the map's key */
	uint64_t lost[PROC_TRACE_KINDS];
	uint64_t over_share;
	int64_t since;
};

/*
 * Stores "N records of sandbox S lost between since and now" if its counts moved, with how many
 * of them went past the sandbox's own share of the ring (over_share: its own flood).
 */
static void report_loss(uint64_t cgid, const struct proc_trace_watch *w, void *data)
{
	struct writer_op op;
	struct proc_events *pe = data;
	struct proc_loss_seen *seen;
	const char *sandbox, *tool;
	struct store_sandbox *sb;
	int64_t step, now = time_now_ns();
	json_t *f;

	uint64_t any = 0;

	for (int k = 0; k < PROC_TRACE_KINDS; k++)
		any |= w->lost[k];
	if (!any || !registry_cgroup_get(pe->env.registry, cgid, &sandbox, &step, &tool) ||
	    !(sb = registry_find(pe->env.registry, sandbox)))
		return;
	if (!(seen = hashmap_get(pe->loss_seen, sandbox))) {
		if (!(seen = calloc(1, sizeof(*seen))))
			return;
		strscpy(seen->sandbox, sizeof(seen->sandbox), sandbox);
		seen->since = pe->lost_since;
		if (hashmap_put(pe->loss_seen, seen->sandbox, seen) < 0) {
			free(seen);
			return;
		}
	}
	if (!memcmp(seen->lost, w->lost, sizeof(seen->lost)))
		return;
	writer_event_init(&op, sb, now, EVENT_STEP_NONE, NULL, EVENT_SOURCE_MONITOR,
			  "monitor.loss");
	f = json_pack("{s:s, s:I, s:I, s:I}", "stage", "kernel ring buffer", "since",
		      (json_int_t)seen->since, "until", (json_int_t)now, "over_share",
		      (json_int_t)(w->over_share - seen->over_share));
	for (unsigned k = 0; f && k < PROC_TRACE_KINDS; k++)
		json_object_set_new(f, proc_tracer_kind_name(k),
				    json_integer((json_int_t)(w->lost[k] - seen->lost[k])));
	sink_submit_event(pe->env.sink, &op, f);
	memcpy(seen->lost, w->lost, sizeof(seen->lost));
	seen->over_share = w->over_share;
	seen->since = now;
}

int proc_events_task_cgroup(void *data, int32_t pid, uint64_t *ret_cgid)
{
	struct proc_events *pe = data;

	if (!pe || pid <= 0)
		return -ENOENT;
	return proc_tracer_task_cgroup(pe->tracer, (uint32_t)pid, ret_cgid);
}

void proc_events_drain(struct proc_events *pe)
{
	uint64_t lost[PROC_TRACE_KINDS];

	_Static_assert(sizeof(pe->lost) >= sizeof(lost), "proc_lost holds every kind");
	if (!pe)
		return;
	uint64_t t0 = time_mono_ns();

	retry_pending(pe);
	if (!sink_full(pe->env.sink))
		proc_tracer_drain(pe->tracer, on_record, pe);
	pe->read_ns += time_mono_ns() - t0;
	proc_events_backpressure(pe);
	/*
	 * Loss is an event too, of the sandbox it happened in: the timeline must show where it is
	 * blind. The total is the cheap check; the per-sandbox counts are read only when it moved.
	 */
	proc_tracer_lost(pe->tracer, lost);
	if (!memcmp(lost, pe->lost, sizeof(lost)))
		return;
	if (pe->loss_seen || hashmap_new(&pe->loss_seen) == 0)
		proc_tracer_lost_each(pe->tracer, report_loss, pe);
	memcpy(pe->lost, lost, sizeof(lost));
}

int proc_events_watch(struct proc_events *pe, const struct store_sandbox *sb)
{
	char dir[PATH_MAX];
	unsigned level = cgroup_level(sb->cgroup);
	uint64_t cgid;
	int r;

	if (!pe)
		return 0;
	if (!sb->cgroup[0])
		return -EINVAL;
	if ((r = cgroup_id(sb->cgroup, &cgid)) < 0 ||
	    (r = cgroup_v2_dir(sb->cgroup, dir, sizeof(dir))) < 0)
		return r;
	if ((r = registry_watch_put(pe->env.registry, sb->name, cgid, level)) < 0 ||
	    (r = registry_cgroup_put(pe->env.registry, cgid, sb->name, EVENT_STEP_NONE, NULL)) < 0)
		return r;
	return proc_tracer_watch(pe->tracer, cgid, level, dir, 1);
}

void proc_events_unwatch(struct proc_events *pe, const struct store_sandbox *sb)
{
	unsigned level;
	uint64_t cgid;

	if (!pe)
		return;
	/* What is in the ring, and the loss so far, still belong to the sandbox. */
	proc_events_drain(pe);
	/* By the id it was watched under: its cgroup may be gone already. */
	if (registry_watch_take(pe->env.registry, sb->name, &cgid, &level))
		proc_tracer_watch(pe->tracer, cgid, level, NULL, 0);
}

void proc_events_backpressure(struct proc_events *pe)
{
	int full;

	if (!pe)
		return;
	/* The ring's fd stays readable while records wait: stop polling it, or the loop spins. */
	full = sink_full(pe->env.sink);
	if (full != pe->paused &&
	    loop_modify(pe->env.loop, proc_tracer_fd(pe->tracer), full ? 0 : EPOLLIN) == 0)
		pe->paused = full;
}

static void on_ready(struct loop *l, int fd, uint32_t events, void *data)
{
	proc_events_drain(data);
}

static uint64_t pending_now(const void *state)
{
	return ((const struct proc_events *)state)->n_pending;
}

static uint64_t watched_now(const void *state)
{
	return proc_tracer_watched(((const struct proc_events *)state)->tracer);
}

/* The tracer's stages: read from the ring, stored, waiting, dropped, lost in the kernel. */
static int add_counters(struct proc_events *pe)
{
	static const struct counter_def fixed[] = {
		{ "read", COUNTER_TOTAL, "records taken from the ring buffer",
		  COUNTER_AT(struct proc_events, read) },
		{ "read_ns", COUNTER_TOTAL, "time spent taking them and handing them on",
		  COUNTER_AT(struct proc_events, read_ns) },
		{ "stored", COUNTER_TOTAL, "process records queued for the store",
		  COUNTER_AT(struct proc_events, stored) },
		{ "pending", COUNTER_GAUGE, "records waiting for their step's report",
		  .read = pending_now },
		{ "watched", COUNTER_GAUGE, "sandboxes (cgroups) the tracer watches now",
		  .read = watched_now },
		{ "unattributed", COUNTER_TOTAL, "records of a cgroup no sandbox owns (dropped)",
		  COUNTER_FAMILY_LOST, "unattributed",
		  COUNTER_AT(struct proc_events, unattributed) },
	};

	memcpy(pe->counters, fixed, sizeof(fixed));
	for (unsigned k = 0; k < PROC_TRACE_KINDS; k++) {
		struct counter_def *c = &pe->counters[ARRAY_SIZE(fixed) + k];

		snprintf(pe->lost_names[k], sizeof(pe->lost_names[k]), "lost_%s",
			 proc_tracer_kind_name(k));
		*c = (struct counter_def){ pe->lost_names[k],
					   COUNTER_TOTAL,
					   "records the kernel had no ring room for",
					   COUNTER_FAMILY_LOST,
					   "kernel_ring_buffer",
					   .offset = offsetof(struct proc_events, lost[k]) };
	}
	return counters_add(pe->env.counters, "proc_trace", pe->counters, ARRAY_SIZE(pe->counters),
			    pe);
}

int proc_events_new(const struct collector_env *env, struct proc_events **ret)
{
	struct proc_events *pe = calloc(1, sizeof(*pe));
	struct store_sandbox *sb;
	size_t pos = 0;
	int r;

	if (!pe)
		return -ENOMEM;
	pe->env = *env;
	if ((r = proc_mounts_new(&pe->mounts)) < 0 ||
	    (r = proc_tracer_new(env->cfg->proc_ring_size, env->cfg->proc_sandbox_rate,
				 &pe->tracer)) < 0 ||
	    (r = loop_add(env->loop, proc_tracer_fd(pe->tracer), EPOLLIN, on_ready, pe)) < 0 ||
	    (r = add_counters(pe)) < 0) {
		if (pe->tracer)
			loop_remove(env->loop, proc_tracer_fd(pe->tracer));
		proc_tracer_free(pe->tracer);
		proc_mounts_free(pe->mounts);
		free(pe);
		return r;
	}
	pe->lost_since = time_now_ns();
	/* A restarted monitor re-adopts every sandbox still running, or frozen (it may be thawed).
	 */
	while ((sb = registry_next(env->registry, &pos)))
		if (registry_live(sb))
			proc_events_watch(pe, sb);
	*ret = pe;
	return 0;
}

void proc_events_free(struct proc_events *pe)
{
	if (!pe)
		return;
	proc_events_drain(pe);
	counters_remove(pe->env.counters, pe);
	loop_remove(pe->env.loop, proc_tracer_fd(pe->tracer));
	proc_tracer_free(pe->tracer);
	free(pe->pending);
	proc_mounts_free(pe->mounts);
	if (pe->loss_seen) {
		struct proc_loss_seen *seen;
		size_t pos = 0;

		while ((seen = hashmap_next(pe->loss_seen, &pos)))
			free(seen);
		hashmap_free(pe->loss_seen);
	}
	free(pe);
}

struct proc_tracer *proc_events_tracer(struct proc_events *pe)
{
	return pe->tracer;
}

unsigned proc_events_level_max(void)
{
	return PROC_TRACE_LEVEL_MAX;
}
