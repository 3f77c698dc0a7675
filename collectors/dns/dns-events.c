#include "dns-events.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "cgroup.h"
#include "collectors/collector.h"
#include "config.h"
#include "counters.h"
#include "dns-parse.h"
#include "dns-tracer.h"
#include "log.h"
#include "loop.h"
#include "macro.h"
#include "policy/policy.h"
#include "store/registry.h"
#include "store/sink.h"
#include "timeutil.h"

/* The ring is drained this often besides its watermark's wakeups: a query is seen within it. */
#define DNS_DRAIN_NS (20 * NSEC_PER_MSEC)

/* A watched sandbox: the id and level it was watched under, its loss as last reported. */
struct dns_watch {
	char sandbox[64];
	uint64_t cgid;
	unsigned level;
	uint64_t lost, over_share;
	int64_t since;
};

struct dns_events {
	struct collector_env env;
	struct dns_watch *watches;
	size_t n_watches, cap_watches;
	struct dns_tracer *tracer;
	int timer;
	int paused; /* the ring is not polled: the writer's queue is full */
	/* The policy of the sandbox last asked about: which names its DNS gate forwards. */
	char policy_of[64];
	struct policy *policy;
	uint64_t read, queries, answers;
	uint64_t malformed;    /* messages that do not parse (stored as dns.malformed) */
	uint64_t partial;      /* longer than the capture: read as far as it goes */
	uint64_t unattributed; /* of a cgroup no sandbox owns: dropped */
	uint64_t lost[DNS_TRACE_LOSSES];
	int64_t lost_since; /* when the tracer started */
};

/* The message a record carries: over TCP, after its 2-byte length; *ret_cut: not all of it. */
static const uint8_t *message_of(const struct dns_trace_event *e, size_t *ret_len, int *ret_cut)
{
	size_t len = e->cap_len < DNS_TRACE_PAYLOAD_MAX ? e->cap_len : DNS_TRACE_PAYLOAD_MAX;
	size_t msg;

	if (!(e->flags & DNS_TRACE_F_TCP)) {
		*ret_len = len;
		*ret_cut = e->wire_len > len;
		return e->payload;
	}
	/* One message per segment is read: a message split across segments, as far as its first
	 * goes (a segment that is only the length: nothing to read). */
	if (len < 2)
		return NULL;
	msg = (size_t)e->payload[0] << 8 | e->payload[1];
	*ret_len = len - 2 < msg ? len - 2 : msg;
	*ret_cut = e->wire_len - 2 < msg || len - 2 < msg;
	return e->payload + 2;
}

/* Whether the sandbox's DNS gate refuses name: its policy names no such host (enforcer/egress-dns.c
 * forwards exactly those and answers NXDOMAIN for the rest). */
static int gate_refuses(struct dns_events *d, const char *sandbox, const char *name)
{
	char path[PATH_MAX], err[256];

	if (strcmp(d->policy_of, sandbox) != 0) {
		policy_free(d->policy);
		d->policy = NULL;
		strscpy(d->policy_of, sizeof(d->policy_of), sandbox);
		if (config_sandbox_path(d->env.cfg, sandbox, "policy.json", path, sizeof(path)) <
			    0 ||
		    policy_load(path, &d->policy, err, sizeof(err)) < 0)
			d->policy = NULL; /* adopted: no gate of ours, nothing refused by it */
	}
	if (!d->policy)
		return 0;
	for (size_t i = 0; i < policy_egress_count(d->policy); i++) {
		const char *h = policy_egress(d->policy, i)->host;
		size_t n = h ? strlen(h) : 0;

		/* A trailing dot names the same host. */
		if (h && strncasecmp(h, name, n) == 0 &&
		    (!name[n] || (name[n] == '.' && !name[n + 1])))
			return 0;
	}
	return 1;
}

static void addr_text(const struct dns_trace_event *e, const uint8_t *a, char *buf, size_t len)
{
	inet_ntop(e->flags & DNS_TRACE_F_IPV6 ? AF_INET6 : AF_INET, a, buf, (socklen_t)len);
}

/* The fields both kinds carry: the question, the transport, the sizes and the server. */
static json_t *common_fields(const struct dns_trace_event *e, const struct dns_message *m)
{
	char tb[16], server[INET6_ADDRSTRLEN];
	int in = e->flags & DNS_TRACE_F_INGRESS;

	addr_text(e, in ? e->saddr : e->daddr, server, sizeof(server));
	return json_pack("{s:s, s:s, s:i, s:s, s:i, s:i, s:i, s:s, s:i}", "name", m->name, "type",
			 dns_type_name(m->qtype, tb), "id", (int)m->id, "transport",
			 e->flags & DNS_TRACE_F_TCP ? "tcp" : "udp", "size", (int)e->wire_len,
			 "labels", (int)m->labels, "longest_label", (int)m->longest_label, "server",
			 server, "port", (int)(in ? e->dport : e->sport));
}

static json_t *answer_fields(struct dns_events *d, const char *sandbox,
			     const struct dns_trace_event *e, const struct dns_message *m)
{
	json_t *f = common_fields(e, m), *addrs = json_array();
	char rb[16];

	for (unsigned i = 0; i < m->n_addrs; i++)
		json_array_append_new(addrs, json_string(m->addrs[i]));
	json_object_set_new(f, "rcode", json_string(dns_rcode_name(m->rcode, rb)));
	json_object_set_new(f, "answers", json_integer(m->ancount));
	json_object_set_new(f, "addrs", addrs);
	json_object_set_new(
		f, "refused",
		json_boolean((m->rcode == DNS_RCODE_NXDOMAIN || m->rcode == DNS_RCODE_REFUSED) &&
			     gate_refuses(d, sandbox, m->name)));
	if (m->tc)
		json_object_set_new(f, "truncated", json_true());
	return f;
}

/* What does not parse is an event too: garbage sent to port 53 is a channel of its own. */
static json_t *malformed_fields(const struct dns_trace_event *e, const char *why)
{
	char server[INET6_ADDRSTRLEN];
	int in = e->flags & DNS_TRACE_F_INGRESS;

	addr_text(e, in ? e->saddr : e->daddr, server, sizeof(server));
	return json_pack("{s:s, s:s, s:s, s:i, s:s}", "direction", in ? "answer" : "query",
			 "transport", e->flags & DNS_TRACE_F_TCP ? "tcp" : "udp", "error", why,
			 "size", (int)e->wire_len, "server", server);
}

static void on_record(const struct dns_trace_event *e, void *data)
{
	struct dns_events *d = data;
	const char *sandbox, *tool = NULL, *why = "a TCP segment with no whole length";
	struct store_sandbox *sb;
	struct dns_message m;
	struct writer_op op;
	const uint8_t *msg;
	int64_t step = EVENT_STEP_NONE;
	size_t len = 0;
	int cut = 0, bad;
	json_t *f;

	d->read++;
	if (!collector_resolve(d->env.registry, e->cgroup_id, &sandbox, &step, &tool) ||
	    !(sb = registry_find(d->env.registry, sandbox))) {
		d->unattributed++;
		return;
	}
	msg = message_of(e, &len, &cut);
	bad = !msg || dns_parse(msg, len, cut, &m, &why) < 0;
	writer_event_init(&op, sb, time_boot_to_wall_ns(e->ts), step, tool, EVENT_SOURCE_EBPF,
			  bad				   ? "dns.malformed"
			  : e->flags & DNS_TRACE_F_INGRESS ? "dns.answer"
							   : "dns.query");
	op.ev.pid = (int32_t)e->pid;
	memcpy(op.ev.comm, e->comm, sizeof(e->comm) - 1); /* FB_COMM_MAX is 15 */
	if (bad) {
		d->malformed++;
		f = malformed_fields(e, why);
	} else if (e->flags & DNS_TRACE_F_INGRESS) {
		d->answers++;
		f = answer_fields(d, sandbox, e, &m);
	} else {
		d->queries++;
		f = common_fields(e, &m);
	}
	if (!bad && m.partial) {
		d->partial++;
		json_object_set_new(f, "partial", json_true());
	}
	sink_submit_event(d->env.sink, &op, f);
}

/*
 * Stores "N DNS messages of sandbox w lost between since and now" if its count moved, with how
 * many of them went past its own share of the ring (over_share: its own flood).
 */
static void report_loss(struct dns_events *d, struct dns_watch *w)
{
	struct dns_trace_watch k;
	struct store_sandbox *sb;
	struct writer_op op;
	int64_t now = time_now_ns();

	if (dns_tracer_watch_lost(d->tracer, w->cgid, &k) < 0 || k.lost == w->lost)
		return;
	if ((sb = registry_find(d->env.registry, w->sandbox))) {
		writer_event_init(&op, sb, now, EVENT_STEP_NONE, NULL, EVENT_SOURCE_MONITOR,
				  "monitor.loss");
		sink_submit_event(d->env.sink, &op,
				  json_pack("{s:s, s:I, s:I, s:I, s:I}", "stage", "DNS ring buffer",
					    "since", (json_int_t)w->since, "until", (json_int_t)now,
					    "dns", (json_int_t)(k.lost - w->lost), "over_share",
					    (json_int_t)(k.over_share - w->over_share)));
	}
	w->lost = k.lost;
	w->over_share = k.over_share;
	w->since = now;
}

void dns_events_drain(struct dns_events *d)
{
	uint64_t was;
	int full;

	if (!d)
		return;
	/* Backpressure: while the writer's queue is full the records wait in the ring (the ring's
	 * fd stays readable: it is not polled meanwhile, or the loop would spin). */
	full = sink_full(d->env.sink);
	if (!full)
		dns_tracer_drain(d->tracer, on_record, d);
	if (full != d->paused &&
	    loop_modify(d->env.loop, dns_tracer_fd(d->tracer), full ? 0 : EPOLLIN) == 0)
		d->paused = full;
	/*
	 * Loss is an event of the sandbox it happened in: the kernel counts each message it did
	 * not record in its sandbox's entry (a message of no watched sandbox is not reserved at
	 * all: unowned, no one's loss). The totals are the cheap check; the sandboxes' entries are
	 * read only when they moved.
	 */
	was = d->lost[DNS_TRACE_LOST_RING] + d->lost[DNS_TRACE_LOST_OVER_SHARE];
	dns_tracer_lost(d->tracer, d->lost);
	if (d->lost[DNS_TRACE_LOST_RING] + d->lost[DNS_TRACE_LOST_OVER_SHARE] != was)
		for (size_t i = 0; i < d->n_watches; i++)
			report_loss(d, &d->watches[i]);
}

static void on_ready(struct loop *l, int fd, uint32_t events, void *data)
{
	dns_events_drain(data);
}

static void on_timer(struct loop *l, uint64_t n, void *data)
{
	dns_events_drain(data);
}

static struct dns_watch *watch_find(struct dns_events *d, const char *sandbox)
{
	for (size_t i = 0; i < d->n_watches; i++)
		if (strcmp(d->watches[i].sandbox, sandbox) == 0)
			return &d->watches[i];
	return NULL;
}

/* The sandbox's entry, made (with no loss reported yet) if it has none; NULL without memory. */
static struct dns_watch *watch_add(struct dns_events *d, const char *sandbox, uint64_t cgid,
				   unsigned level)
{
	struct dns_watch *w = watch_find(d, sandbox);

	if (w)
		return w;
	if (d->n_watches == d->cap_watches) {
		size_t cap = d->cap_watches ? 2 * d->cap_watches : 16;

		if (!(w = realloc(d->watches, cap * sizeof(*w))))
			return NULL;
		d->watches = w;
		d->cap_watches = cap;
	}
	w = &d->watches[d->n_watches++];
	*w = (struct dns_watch){ .cgid = cgid, .level = level, .since = d->lost_since };
	strscpy(w->sandbox, sizeof(w->sandbox), sandbox);
	return w;
}

int dns_events_watch(struct dns_events *d, const struct store_sandbox *sb)
{
	unsigned level = cgroup_level(sb->cgroup);
	struct dns_watch *w;
	char dir[PATH_MAX];
	uint64_t cgid;
	int r;

	if (!d)
		return 0;
	if (!sb->cgroup[0])
		return -EINVAL;
	if ((r = cgroup_id(sb->cgroup, &cgid)) < 0 ||
	    (r = cgroup_v2_dir(sb->cgroup, dir, sizeof(dir))) < 0)
		return r;
	if (!(w = watch_add(d, sb->name, cgid, level)))
		return -ENOMEM;
	if ((r = dns_tracer_watch(d->tracer, w->cgid, w->level, dir, 1)) < 0)
		return log_errno(r, "DNS hooks on %s", dir);
	return 0;
}

void dns_events_unwatch(struct dns_events *d, const struct store_sandbox *sb)
{
	struct dns_watch *w;

	if (!d)
		return;
	/* By the id it was watched under (its cgroup may be gone already): the hooks first, then
	 * what is in the ring and its loss so far, which still belong to the sandbox. */
	if ((w = watch_find(d, sb->name)))
		dns_tracer_watch(d->tracer, w->cgid, w->level, NULL, 0);
	dns_events_drain(d);
	if (w) {
		report_loss(d, w);
		dns_tracer_forget(d->tracer, w->cgid, w->level);
		*w = d->watches[--d->n_watches];
	}
	if (strcmp(d->policy_of, sb->name) == 0) {
		policy_free(d->policy);
		d->policy = NULL;
		d->policy_of[0] = '\0';
	}
}

static const struct counter_def counters[] = {
	{ "read", COUNTER_TOTAL, "DNS records taken from the ring buffer",
	  COUNTER_AT(struct dns_events, read) },
	{ "queries", COUNTER_TOTAL, "dns.query events", COUNTER_AT(struct dns_events, queries) },
	{ "answers", COUNTER_TOTAL, "dns.answer events", COUNTER_AT(struct dns_events, answers) },
	/* Not a loss: each is stored, as a dns.malformed event with the reason. */
	{ "malformed", COUNTER_TOTAL, "messages that did not parse (dns.malformed events)",
	  COUNTER_AT(struct dns_events, malformed) },
	{ "partial", COUNTER_TOTAL, "messages longer than the capture, read as far as it goes",
	  COUNTER_AT(struct dns_events, partial) },
	{ "unattributed", COUNTER_TOTAL, "records of a cgroup no sandbox owns (dropped)",
	  COUNTER_FAMILY_LOST, "unattributed", COUNTER_AT(struct dns_events, unattributed) },
	{ "lost.ring", COUNTER_TOTAL,
	  "messages of watched sandboxes the kernel had no ring room for", COUNTER_FAMILY_LOST,
	  "kernel_ring_buffer", COUNTER_AT(struct dns_events, lost[DNS_TRACE_LOST_RING]) },
	{ "over_share", COUNTER_TOTAL,
	  "messages refused in the kernel: past their sandbox's share of the ring",
	  COUNTER_FAMILY_LOST, "over_share",
	  COUNTER_AT(struct dns_events, lost[DNS_TRACE_LOST_OVER_SHARE]) },
	/* No one's loss: the hooks ran for a socket of no watched cgroup (a watch's start or end).
	 */
	{ "unowned", COUNTER_TOTAL, "messages of no watched sandbox, not recorded in the kernel",
	  COUNTER_FAMILY_LOST, "unattributed",
	  COUNTER_AT(struct dns_events, lost[DNS_TRACE_UNOWNED]) },
	{ "lost.load", COUNTER_TOTAL, "packets whose bytes the kernel could not read",
	  COUNTER_FAMILY_LOST, "dns_packet_read",
	  COUNTER_AT(struct dns_events, lost[DNS_TRACE_LOST_LOAD]) },
};

int dns_events_new(const struct collector_env *env, struct dns_events **ret)
{
	struct dns_events *d = calloc(1, sizeof(*d));
	struct store_sandbox *sb;
	size_t pos = 0;
	int r;

	if (!d)
		return -ENOMEM;
	d->env = *env;
	d->timer = -1;
	d->lost_since = time_now_ns();
	if ((r = dns_tracer_new(env->cfg->dns_ring_size, env->cfg->dns_sandbox_rate, &d->tracer)) <
		    0 ||
	    (r = loop_add(env->loop, dns_tracer_fd(d->tracer), EPOLLIN, on_ready, d)) < 0 ||
	    (r = d->timer = loop_add_timer(env->loop, DNS_DRAIN_NS, on_timer, d)) < 0 ||
	    (r = counters_add(env->counters, "dns", counters, ARRAY_SIZE(counters), d)) < 0) {
		if (d->timer >= 0)
			loop_remove(env->loop, d->timer);
		if (d->tracer)
			loop_remove(env->loop, dns_tracer_fd(d->tracer));
		dns_tracer_free(d->tracer);
		free(d);
		return r;
	}
	/* A restarted monitor watches again every sandbox still running, or frozen. */
	while ((sb = registry_next(env->registry, &pos)))
		if (registry_live(sb))
			dns_events_watch(d, sb);
	*ret = d;
	return 0;
}

void dns_events_free(struct dns_events *d)
{
	if (!d)
		return;
	dns_tracer_drain(d->tracer, on_record, d);
	loop_remove(d->env.loop, d->timer);
	loop_remove(d->env.loop, dns_tracer_fd(d->tracer));
	dns_tracer_free(d->tracer);
	counters_remove(d->env.counters, d);
	policy_free(d->policy);
	free(d->watches);
	free(d);
}
