/*
 * The L7 proxy's traffic over time (rules-http.c judges one refused request at a time): how much
 * one tool sends through the proxy within a window (exfil.http-upload), and one tool asking one
 * host at near-constant intervals (net.http-beacon). Both count only what the proxy let through
 * (http.request): a refused request reached no host, and is an alert of its own (http.refused).
 *
 * They judge by what the sandbox cannot forge. The tool is the one whose source address the
 * request came from (the kernel hooks bind each tool's sockets to its own, and the collector
 * names the tool from the address, never from the line's text); bytes_up and the log time are
 * squid's own counts. The host is the name the request asked for (over TLS its SNI), which the
 * sandbox chooses, but the proxy let the request through only because that name is a host of one
 * of the tool's rules and resolved to the address the tool connected to: the hosts a tool can
 * make keys of are its policy's, not the sandbox's to invent.
 */
#include <stdio.h>
#include <string.h>

#include "detect-internal.h"
#include "macro.h"
#include "timeutil.h"

/* A beacon checks in at most once a second: a loop that asks faster is a download or a crawl. */
#define BEACON_MIN_INTERVAL_NS NSEC_PER_SEC
/*
 * Requests of one key logged less than this after the key's previous one are one check-in: an
 * intercepted TLS connection's CONNECT and the request inside it (squid logs both, the CONNECT
 * when the connection closes), a beacon's "ask for work" and "post the result".
 */
#define BEACON_BURST_NS (NSEC_PER_SEC / 4)

static const char *tool_or_none(const char *tool)
{
	return tool[0] ? tool : "(no tool)";
}

/* The upload account of ev's tool: its own in the policy, else the one of no tool. */
static struct detect_upload *upload_of(struct detect_state *st, const char *tool)
{
	for (size_t i = 0; tool[0] && i < st->n_tools; i++)
		if (strcmp(st->tools[i].name, tool) == 0)
			return &st->tools[i].upload;
	return &st->upload_other;
}

/*
 * Adds bytes sent at ts to u and returns what u holds for the window ending at the newest slice
 * it has seen: the sum of the 16 slices up to it, so a request drops out of the sum between 15/16
 * of the window and the whole window after it. A request older than every slice kept (a line
 * logged out of order by more than the window) counts for nothing: its window is gone.
 */
static uint64_t upload_add(struct detect_upload *u, int64_t window, int64_t ts, uint64_t bytes)
{
	int64_t width = window / DETECT_UPLOAD_SLICES, now = (ts > 0 ? ts : 0) / width,
		newest = now;
	size_t at = (size_t)(now % DETECT_UPLOAD_SLICES);
	uint64_t sum = 0;

	for (size_t i = 0; i < DETECT_UPLOAD_SLICES; i++)
		if (u->slice[i] > newest)
			newest = u->slice[i];
	if (now > newest - DETECT_UPLOAD_SLICES) {
		if (u->slice[at] != now) { /* the slot's slice is 16 or more slices old */
			u->slice[at] = now;
			u->bytes[at] = 0;
		}
		u->bytes[at] += bytes;
	}
	for (size_t i = 0; i < DETECT_UPLOAD_SLICES; i++)
		if (u->slice[i] > newest - DETECT_UPLOAD_SLICES)
			sum += u->bytes[i];
	return sum;
}

/* The ids of u's last requests within the window before ts, oldest first. */
static void upload_ids(const struct detect_upload *u, int64_t window, int64_t ts,
		       struct detect_verdict *v)
{
	v->n_ids = 0;
	for (size_t k = 0; k < DETECT_IDS_MAX; k++) {
		size_t i = (u->last_next + k) % DETECT_IDS_MAX;

		if (u->last[i].id && ts - u->last[i].ts < window)
			v->event_ids[v->n_ids++] = u->last[i].id;
	}
}

/* One more request of ev's tool; a verdict (if room) when its window's sum passes the cap. */
static size_t upload_rule(struct detect_state *st, const struct event *ev, const char *host,
			  struct detect_verdict *out, size_t room)
{
	struct detect_upload *u = upload_of(st, ev->tool);
	int64_t window = st->cfg.http_upload_window_ns, bytes = 0;
	uint64_t sum;

	if (!event_field_int(ev, "bytes_up", &bytes) || bytes < 0)
		bytes = 0;
	u->last[u->last_next].ts = ev->ts;
	u->last[u->last_next].id = ev->id;
	u->last_next = (u->last_next + 1) % DETECT_IDS_MAX;
	sum = upload_add(u, window, ev->ts, (uint64_t)bytes);
	if (sum <= st->cfg.http_upload_max || ev->ts < u->quiet_until || !room)
		return 0;
	u->quiet_until = ev->ts + window;
	detect_verdict_init(out, ev, RULE_EXFIL_HTTP_UPLOAD, DETECT_HIGH);
	upload_ids(u, window, ev->ts, out);
	snprintf(out->reason, sizeof(out->reason),
		 "tool %.63s sent %llu bytes through the L7 proxy within %lld s, past the cap of "
		 "%llu (the last to %.60s)",
		 tool_or_none(ev->tool), (unsigned long long)sum,
		 (long long)(window / NSEC_PER_SEC), (unsigned long long)st->cfg.http_upload_max,
		 host);
	return 1;
}

/*
 * The key's entry: found, else a free one, else the least recently seen (its history goes). NULL
 * only when the table cannot be made (out of memory).
 */
static struct detect_beacon *beacon_of(struct detect_state *st, const char *tool, uint64_t host)
{
	struct detect_beacon *victim = NULL;

	if (!st->beacons && !(st->beacons = calloc(DETECT_BEACON_KEYS, sizeof(*st->beacons))))
		return NULL;
	for (size_t i = 0; i < DETECT_BEACON_KEYS; i++) {
		struct detect_beacon *b = &st->beacons[i];

		if (b->n && b->host == host && strcmp(b->tool, tool) == 0)
			return b;
		if (!victim || (victim->n && (!b->n || b->seen < victim->seen)))
			victim = b;
	}
	memset(victim, 0, sizeof(*victim));
	strscpy(victim->tool, sizeof(victim->tool), tool);
	victim->host = host;
	return victim;
}

/* A check-in at ts (event id): a new one, or part of the key's last (BEACON_BURST_NS). */
static int beacon_note(struct detect_beacon *b, int64_t ts, int64_t id)
{
	if (b->n && ts - b->seen < BEACON_BURST_NS) {
		if (ts > b->seen)
			b->seen = ts;
		return 0;
	}
	if (b->n == DETECT_BEACON_TIMES) { /* full: the oldest goes */
		memmove(b->start, b->start + 1, sizeof(b->start[0]) * (DETECT_BEACON_TIMES - 1));
		memmove(b->id, b->id + 1, sizeof(b->id[0]) * (DETECT_BEACON_TIMES - 1));
		b->n--;
	}
	b->start[b->n] = ts;
	b->id[b->n++] = id;
	b->seen = ts;
	return 1;
}

/*
 * Whether b's last count check-ins are a beacon's: within the window, at least a second apart on
 * average, and every interval's deviation from their mean small: the variance under (jitter% of
 * the mean)^2, that is a coefficient of variation under jitter%, with no square root taken.
 * ret_mean and ret_dev (the largest deviation) are for the reason.
 */
static int beacon_regular(const struct detect_beacon *b, const struct detect_config *c,
			  int64_t *ret_mean, int64_t *ret_dev)
{
	unsigned k = c->http_beacon_count - 1; /* intervals */
	const int64_t *t;
	int64_t span, dev = 0;
	double mean, var = 0;

	if (b->n < c->http_beacon_count)
		return 0;
	t = b->start + b->n - c->http_beacon_count;
	span = t[k] - t[0];
	if (span > c->http_beacon_window_ns || span < (int64_t)k * BEACON_MIN_INTERVAL_NS)
		return 0;
	mean = (double)span / k;
	for (unsigned i = 1; i <= k; i++) {
		double d = (double)(t[i] - t[i - 1]) - mean;
		int64_t a = t[i] - t[i - 1] - span / k;

		var += d * d / k;
		if ((a < 0 ? -a : a) > dev)
			dev = a < 0 ? -a : a;
	}
	*ret_mean = span / k;
	*ret_dev = dev;
	return var * 10000 < (double)c->http_beacon_jitter * c->http_beacon_jitter * mean * mean;
}

/* One more request of ev's tool to host; a verdict (if room) when its check-ins are regular. */
static size_t beacon_rule(struct detect_state *st, const struct event *ev, const char *host,
			  struct detect_verdict *out, size_t room)
{
	char name[256];
	size_t len = strlen(host) < sizeof(name) ? strlen(host) : 0;
	struct detect_beacon *b;
	int64_t mean, dev;
	unsigned n = st->cfg.http_beacon_count;

	memcpy(name, host, len);
	name[len] = '\0';
	while (len > 0 && name[len - 1] == '.') /* the same host as the proxy matched it */
		name[--len] = '\0';
	if (!len)
		return 0;
	if (!(b = beacon_of(st, ev->tool, detect_name_hash(name))) ||
	    !beacon_note(b, ev->ts, ev->id) || ev->ts < b->quiet_until ||
	    !beacon_regular(b, &st->cfg, &mean, &dev) || !room)
		return 0;
	b->quiet_until = ev->ts + st->cfg.http_beacon_window_ns;
	detect_verdict_init(out, ev, RULE_NET_HTTP_BEACON, DETECT_MEDIUM);
	out->n_ids = 0;
	for (size_t i = b->n - (n < DETECT_IDS_MAX ? n : DETECT_IDS_MAX); i < b->n; i++)
		out->event_ids[out->n_ids++] = b->id[i];
	snprintf(out->reason, sizeof(out->reason),
		 "tool %.63s asked %.60s %u times at %lld ms intervals (each within %lld ms of "
		 "it): a beacon's check-ins",
		 tool_or_none(ev->tool), name, n, (long long)(mean / NSEC_PER_MSEC),
		 (long long)(dev / NSEC_PER_MSEC));
	return 1;
}

size_t detect_rules_http_flow(struct detect_state *st, const struct event *ev,
			      struct detect_verdict *out, size_t max)
{
	char host[256] = "";
	size_t n;

	if (ev->source != EVENT_SOURCE_PROXY || strcmp(ev->kind, "http.request") != 0)
		return 0;
	/*
	 * The name the proxy checked against the tool's rules: over TLS the SNI (a request inside
	 * it whose Host differs is refused, and squid logs the connection's CONNECT with the
	 * address as its host), else the Host. One longer than a DNS name is none.
	 */
	if ((!event_field_str(ev, "sni", host, sizeof(host)) || !host[0]) &&
	    !event_field_str(ev, "host", host, sizeof(host)))
		host[0] = '\0';
	/* Both keep their state whether or not a verdict fits (out has room for max). */
	n = upload_rule(st, ev, host[0] ? host : "?", out, max);
	return n + beacon_rule(st, ev, host, out + n, max - n);
}
