#include "nflog-events.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "collectors/collector.h"
#include "config.h"
#include "counters.h"
#include "log.h"
#include "loop.h"
#include "store/registry.h"
#include "store/sink.h"
#include "macro.h"
#include "names.h"
#include "nflog-pcap.h"
#include "timeutil.h"

/*
 * One aggregate: the packets of one flow shape seen since it was opened. It is stored as one event
 * when it is NFLOG_WINDOW_NS old (or the table is full, or the daemon stops), so a flood of
 * 10,000 packets is a handful of rows whose counts add up to 10,000.
 */
#define NFLOG_AGG_MAX 256
#define NFLOG_WINDOW_NS (1 * NSEC_PER_SEC)
#define NFLOG_PREFIX "firebreak:"

struct nflog_agg {
	char sandbox[64];
	uint8_t family, proto;
	uint8_t src[16], dst[16];
	uint16_t dport;
	uint64_t count;
	int64_t first, last;
	uint64_t opened; /* monotonic */
};

struct nflog_events {
	struct collector_env env;
	struct nflog_reader *reader;
	struct nflog_agg agg[NFLOG_AGG_MAX];
	size_t n;
	int timer_fd;
	uint64_t packets;	 /* packets read */
	uint64_t packets_stored; /* packets counted in stored net.denied events */
	uint64_t events;	 /* net.denied events stored */
	uint64_t unattributed;	 /* packets with no sandbox's prefix */
	uint64_t unparsed;
	uint64_t lost;				    /* packets of aggregates the store refused */
	uint64_t kernel_drops, kernel_drops_closed; /* all, and those of readers closed since */
};

static const char *proto_name(uint8_t p)
{
	switch (p) {
	case IPPROTO_TCP:
		return "tcp";
	case IPPROTO_UDP:
		return "udp";
	case IPPROTO_ICMP:
		return "icmp";
	case IPPROTO_ICMPV6:
		return "icmpv6";
	default:
		return NULL;
	}
}

static void store_agg(struct nflog_events *s, const struct nflog_agg *a)
{
	struct writer_op op;
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
	struct store_sandbox *sb = registry_find(s->env.registry, a->sandbox);
	const char *proto = proto_name(a->proto);
	json_t *f;

	if (!sb) { /* forgotten since (destroyed and purged): counted, not stored */
		s->unattributed += a->count;
		return;
	}
	inet_ntop(a->family, a->src, src, sizeof(src));
	inet_ntop(a->family, a->dst, dst, sizeof(dst));
	writer_event_init(&op, sb, a->first, EVENT_STEP_NONE, NULL, EVENT_SOURCE_NFLOG,
			  "net.denied");
	f = json_pack("{s:I, s:s, s:s, s:o, s:I, s:I, s:I}", "packets", (json_int_t)a->count, "src",
		      src, "dst", dst, "proto", proto ? json_string(proto) : json_integer(a->proto),
		      "port", (json_int_t)a->dport, "first_ts", (json_int_t)a->first, "last_ts",
		      (json_int_t)a->last);
	if (sink_submit_event(s->env.sink, &op, f) == 0) {
		s->events++;
		s->packets_stored += a->count;
	} else {
		s->lost += a->count;
	}
}

/* Stores the aggregates older than the window (all of them if all is set). */
static void flush(struct nflog_events *s, int all)
{

	uint64_t now = time_mono_ns();
	size_t kept = 0;

	for (size_t i = 0; i < s->n; i++) {
		if (all || now - s->agg[i].opened >= NFLOG_WINDOW_NS)
			store_agg(s, &s->agg[i]);
		else
			s->agg[kept++] = s->agg[i];
	}
	s->n = kept;
}

static void on_packet(const struct nflog_packet *p, void *data)
{
	struct nflog_events *s = data;
	const char *name;
	struct nflog_agg *a;
	size_t len;

	s->packets++;
	if (strncmp(p->prefix, NFLOG_PREFIX, sizeof(NFLOG_PREFIX) - 1) != 0) {
		s->unattributed++; /* another rule's log in the same group */
		return;
	}
	name = p->prefix + sizeof(NFLOG_PREFIX) - 1;
	len = strcspn(name, " ");
	if (len == 0 || len >= sizeof(a->sandbox)) {
		s->unattributed++;
		return;
	}
	for (size_t i = 0; i < s->n; i++) {
		a = &s->agg[i];
		if (a->family == p->family && a->proto == p->proto && a->dport == p->dport &&
		    !memcmp(a->src, p->src, 16) && !memcmp(a->dst, p->dst, 16) &&
		    !strncmp(a->sandbox, name, len) && !a->sandbox[len]) {
			a->count++;
			a->last = p->ts;
			return;
		}
	}
	if (s->n == NFLOG_AGG_MAX)
		flush(s, 1);
	a = &s->agg[s->n++];
	memset(a, 0, sizeof(*a));
	memcpy(a->sandbox, name, len);
	a->family = p->family;
	a->proto = p->proto;
	memcpy(a->src, p->src, 16);
	memcpy(a->dst, p->dst, 16);
	a->dport = p->dport;
	a->count = 1;
	a->first = a->last = p->ts;
	a->opened = time_mono_ns();
}

static void on_ready(struct loop *l, int fd, uint32_t events, void *data)
{
	struct nflog_events *s = data;

	if (s->reader)
		nflog_read(s->reader, on_packet, s, &s->unparsed);
}

static void close_reader(struct nflog_events *s)
{

	if (!s->reader)
		return;
	nflog_read(s->reader, on_packet, s, &s->unparsed);
	s->kernel_drops_closed += nflog_kernel_drops(s->reader);
	loop_remove(s->env.loop, nflog_fd(s->reader));
	nflog_close(s->reader);
	s->reader = NULL;
}

/*
 * The gate exists only while some sandbox has egress, and is made anew after the last one goes:
 * follow it by its namespace's inode, once a tick, and at every registration of a running
 * sandbox (its create may just have made the gate: packets logged before a reader listens are
 * dropped by the kernel, uncounted).
 */
void nflog_events_follow(struct nflog_events *s)
{
	struct stat st;
	int r;

	if (!s)
		return;
	if (stat(NETNS_DIR "/" EGRESS_GATE_NETNS, &st) < 0) {
		close_reader(s);
		return;
	}
	if (s->reader && nflog_netns_ino(s->reader) == st.st_ino)
		return;
	close_reader(s);
	r = nflog_open(NETNS_DIR "/" EGRESS_GATE_NETNS, s->env.cfg->gate_nflog_group, &s->reader);
	if (r < 0) {
		log_warn_errno(r, "NFLOG group %u in the gate", s->env.cfg->gate_nflog_group);
		return;
	}
	if ((r = loop_add(s->env.loop, nflog_fd(s->reader), EPOLLIN, on_ready, s)) < 0) {
		nflog_close(s->reader);
		s->reader = NULL;
	}
}

static void on_tick(struct loop *l, uint64_t n, void *data)
{
	struct nflog_events *s = data;

	on_ready(l, -1, 0, s);
	flush(s, 0);
	nflog_events_follow(s);
	s->kernel_drops = s->kernel_drops_closed + (s->reader ? nflog_kernel_drops(s->reader) : 0);
}

/* Packets read and counted in aggregates not stored yet. */
static uint64_t pending(const void *state)
{
	const struct nflog_events *s = state;
	uint64_t n = 0;

	for (size_t i = 0; i < s->n; i++)
		n += s->agg[i].count;
	return n;
}

static const struct counter_def counters[] = {
	{ "packets", COUNTER_TOTAL, "denied packets read",
	  COUNTER_AT(struct nflog_events, packets) },
	{ "packets_stored", COUNTER_TOTAL, "packets counted in stored net.denied events",
	  COUNTER_AT(struct nflog_events, packets_stored) },
	{ "pending", COUNTER_GAUGE, "packets in aggregates not stored yet", .read = pending },
	{ "events", COUNTER_TOTAL, "net.denied events stored",
	  COUNTER_AT(struct nflog_events, events) },
	{ "unattributed", COUNTER_TOTAL, "packets with no sandbox's prefix", COUNTER_FAMILY_LOST,
	  "unattributed", COUNTER_AT(struct nflog_events, unattributed) },
	{ "unparsed", COUNTER_TOTAL, "packets that did not parse", COUNTER_FAMILY_LOST, "unparsed",
	  COUNTER_AT(struct nflog_events, unparsed) },
	{ "lost", COUNTER_TOTAL, "packets of aggregates the store refused", COUNTER_FAMILY_LOST,
	  "nflog_store", COUNTER_AT(struct nflog_events, lost) },
	{ "kernel_drops", COUNTER_TOTAL, "packets the kernel dropped before they were read",
	  COUNTER_FAMILY_LOST, "nflog_kernel", COUNTER_AT(struct nflog_events, kernel_drops) },
};

int nflog_events_new(const struct collector_env *env, struct nflog_events **ret)
{
	struct nflog_events *s = calloc(1, sizeof(*s));
	int r;

	if (!s)
		return -ENOMEM;
	s->env = *env;
	s->timer_fd = -1;
	nflog_events_follow(s);
	if ((r = s->timer_fd = loop_add_timer(env->loop, 100 * NSEC_PER_MSEC, on_tick, s)) < 0 ||
	    (r = counters_add(env->counters, "nflog", counters, ARRAY_SIZE(counters), s)) < 0) {
		nflog_events_free(s);
		return r;
	}
	*ret = s;
	return 0;
}

void nflog_events_free(struct nflog_events *s)
{
	if (!s)
		return;
	if (s->timer_fd >= 0)
		loop_remove(s->env.loop, s->timer_fd);
	close_reader(s);
	flush(s, 1);
	counters_remove(s->env.counters, s);
	free(s);
}
