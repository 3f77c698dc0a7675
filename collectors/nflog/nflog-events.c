#include "nflog-events.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "monitor/daemon.h"
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

struct nflog_state {
	struct nflog_reader *reader;
	struct nflog_agg agg[NFLOG_AGG_MAX];
	size_t n;
};

static const char *proto_name(uint8_t p)
{
	switch (p) {
	case IPPROTO_TCP: return "tcp";
	case IPPROTO_UDP: return "udp";
	case IPPROTO_ICMP: return "icmp";
	case IPPROTO_ICMPV6: return "icmpv6";
	default: return NULL;
	}
}

static void store_agg(struct daemon *d, const struct nflog_agg *a)
{
	struct writer_op op;
	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];
	struct store_sandbox *sb = registry_find(d->registry, a->sandbox);
	const char *proto = proto_name(a->proto);
	json_t *f;

	if (!sb) { /* forgotten since (destroyed and purged): counted, not stored */
		d->nflog_unattributed += a->count;
		return;
	}
	inet_ntop(a->family, a->src, src, sizeof(src));
	inet_ntop(a->family, a->dst, dst, sizeof(dst));
	writer_event_init(&op, sb, a->first, EVENT_STEP_NONE, NULL, EVENT_SOURCE_NFLOG, "net.denied");
	f = json_pack("{s:I, s:s, s:s, s:o, s:I, s:I, s:I}", "packets", (json_int_t)a->count,
		      "src", src, "dst", dst,
		      "proto", proto ? json_string(proto) : json_integer(a->proto),
		      "port", (json_int_t)a->dport, "first_ts", (json_int_t)a->first, "last_ts",
		      (json_int_t)a->last);
	if (writer_submit_event(d->writer, &op, f) == 0) {
		d->nflog_events++;
		d->nflog_packets_stored += a->count;
	} else {
		d->nflog_lost += a->count;
	}
}

/* Stores the aggregates older than the window (all of them if all is set). */
static void flush(struct daemon *d, int all)
{
	struct nflog_state *s = d->nflog;
	uint64_t now = time_mono_ns();
	size_t kept = 0;

	for (size_t i = 0; i < s->n; i++) {
		if (all || now - s->agg[i].opened >= NFLOG_WINDOW_NS)
			store_agg(d, &s->agg[i]);
		else
			s->agg[kept++] = s->agg[i];
	}
	s->n = kept;
}

static void on_packet(const struct nflog_packet *p, void *data)
{
	struct daemon *d = data;
	struct nflog_state *s = d->nflog;
	const char *name;
	struct nflog_agg *a;
	size_t len;

	d->nflog_packets++;
	if (strncmp(p->prefix, NFLOG_PREFIX, sizeof(NFLOG_PREFIX) - 1) != 0) {
		d->nflog_unattributed++; /* another rule's log in the same group */
		return;
	}
	name = p->prefix + sizeof(NFLOG_PREFIX) - 1;
	len = strcspn(name, " ");
	if (len == 0 || len >= sizeof(a->sandbox)) {
		d->nflog_unattributed++;
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
		flush(d, 1);
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
	struct daemon *d = data;
	struct nflog_state *s = d->nflog;

	if (s->reader)
		nflog_read(s->reader, on_packet, d, &d->nflog_unparsed);
}

static void close_reader(struct daemon *d)
{
	struct nflog_state *s = d->nflog;

	if (!s->reader)
		return;
	nflog_read(s->reader, on_packet, d, &d->nflog_unparsed);
	d->nflog_kernel_drops_closed += nflog_kernel_drops(s->reader);
	loop_remove(d->loop, nflog_fd(s->reader));
	nflog_close(s->reader);
	s->reader = NULL;
}

/*
 * The gate exists only while some sandbox has egress, and is made anew after the last one goes:
 * follow it by its namespace's inode, once a tick, and at every registration of a running
 * sandbox (its create may just have made the gate: packets logged before a reader listens are
 * dropped by the kernel, uncounted).
 */
void nflog_events_follow(struct daemon *d)
{
	struct nflog_state *s = d->nflog;
	struct stat st;
	int r;

	if (stat(NETNS_DIR "/" EGRESS_GATE_NETNS, &st) < 0) {
		close_reader(d);
		return;
	}
	if (s->reader && nflog_netns_ino(s->reader) == st.st_ino)
		return;
	close_reader(d);
	r = nflog_open(NETNS_DIR "/" EGRESS_GATE_NETNS, d->cfg.gate_nflog_group, &s->reader);
	if (r < 0) {
		log_warn_errno(r, "NFLOG group %u in the gate", d->cfg.gate_nflog_group);
		return;
	}
	if ((r = loop_add(d->loop, nflog_fd(s->reader), EPOLLIN, on_ready, d)) < 0) {
		nflog_close(s->reader);
		s->reader = NULL;
	}
}

static void on_tick(struct loop *l, uint64_t n, void *data)
{
	struct daemon *d = data;

	on_ready(l, -1, 0, d);
	flush(d, 0);
	nflog_events_follow(d);
	d->nflog_kernel_drops = d->nflog_kernel_drops_closed +
				(d->nflog->reader ? nflog_kernel_drops(d->nflog->reader) : 0);
}

uint64_t nflog_events_pending(struct daemon *d)
{
	uint64_t n = 0;

	for (size_t i = 0; d->nflog && i < d->nflog->n; i++)
		n += d->nflog->agg[i].count;
	return n;
}

int nflog_events_start(struct daemon *d)
{
	if (!(d->nflog = calloc(1, sizeof(*d->nflog))))
		return -ENOMEM;
	nflog_events_follow(d);
	return loop_add_timer(d->loop, 100 * NSEC_PER_MSEC, on_tick, d);
}

void nflog_events_stop(struct daemon *d)
{
	if (!d->nflog)
		return;
	close_reader(d);
	flush(d, 1);
	free(d->nflog);
	d->nflog = NULL;
}
