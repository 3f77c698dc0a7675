/*
 * Network rules: the cloud metadata service, bursts and scans of refused destinations, and a
 * tool whose scope opens no egress reaching for the network.
 */
#include <stdio.h>
#include <string.h>

#include "detect-internal.h"
#include "macro.h"
#include "names.h"

/* Where instances fetch credentials: any attempt is an attack (the lesson's first move). */
static int metadata_address(const char *dst)
{
	return strcmp(dst, "169.254.169.254") == 0 || strcmp(dst, "fd00:ec2::254") == 0 ||
	       strcmp(dst, "100.100.100.200") == 0;
}

/* Whether ev's tool is in the policy and its scope opens no egress. */
static int tool_without_network(const struct detect_state *st, const struct event *ev)
{
	const struct detect_tool *t = detect_tool(st, ev->tool);

	return t && !t->network;
}

/* Remembers a refused attempt; the ring keeps the last DETECT_DENIALS_MAX. */
static void note_denial(struct detect_state *st, const struct event *ev, const char *dst)
{
	size_t at;

	if (st->den_n == DETECT_DENIALS_MAX) { /* full: the oldest goes */
		at = st->den_head;
		st->den_head = (st->den_head + 1) % DETECT_DENIALS_MAX;
	} else {
		at = (st->den_head + st->den_n++) % DETECT_DENIALS_MAX;
	}
	st->denials[at].ts = ev->ts;
	st->denials[at].id = ev->id;
	strscpy(st->denials[at].dst, sizeof(st->denials[at].dst), dst);
}

/* The ids of the refused attempts within the window before now, newest last (at most the cap). */
static void window_ids(const struct detect_state *st, int64_t now, struct detect_verdict *v)
{
	size_t k = 0;

	v->n_ids = 0;
	for (size_t i = st->den_n; i-- > 0 && k < DETECT_IDS_MAX;) {
		const struct detect_denial *d =
			&st->denials[(st->den_head + i) % DETECT_DENIALS_MAX];

		if (now - d->ts > st->cfg.deny_burst_window_ns)
			break;
		k++;
	}
	for (size_t i = st->den_n - k; i < st->den_n; i++)
		v->event_ids[v->n_ids++] = st->denials[(st->den_head + i) % DETECT_DENIALS_MAX].id;
}

/* Counts refused attempts and distinct destinations within the window ending at now. */
static void window_counts(const struct detect_state *st, int64_t now, unsigned *ret_n,
			  unsigned *ret_distinct)
{
	const char *seen[DETECT_DENIALS_MAX];
	unsigned n = 0, distinct = 0;

	for (size_t i = st->den_n; i-- > 0;) {
		const struct detect_denial *d =
			&st->denials[(st->den_head + i) % DETECT_DENIALS_MAX];
		unsigned j;

		if (now - d->ts > st->cfg.deny_burst_window_ns)
			break;
		n++;
		for (j = 0; j < distinct && strcmp(seen[j], d->dst) != 0; j++)
			;
		if (j == distinct)
			seen[distinct++] = d->dst;
	}
	*ret_n = n;
	*ret_distinct = distinct;
}

/*
 * Whether dst is the sandbox's own loopback (127/8, ::1, ::ffff:127/104; 0.0.0.0 and :: reach
 * it too): what goes there never leaves the sandbox's network namespace.
 */
static int loopback_address(const char *dst)
{
	return strncmp(dst, "127.", 4) == 0 || strcmp(dst, "::1") == 0 ||
	       strncmp(dst, "::ffff:127.", 11) == 0 || strcmp(dst, "0.0.0.0") == 0 ||
	       strcmp(dst, "::") == 0;
}

/*
 * An attempt (or denied packets) to dst: the metadata service, or, by a tool with no egress, one
 * that reaches beyond the sandbox (not its own loopback) or that the egress hook refused. A socket
 * alone, or a connect to a test's own server on loopback, is recorded and judged no further.
 */
static size_t attempt_rules(struct detect_state *st, const struct event *ev, const char *dst,
			    int connect, int refused, struct detect_verdict *out, size_t max)
{
	int64_t port = 0;
	size_t k = 0;
	/* Port 53 of the sandbox's DNS gate, which every tool may ask: resolving is not reaching
	 * (dns.* events show what was asked). Anywhere else, port 53 is as any other: in a sandbox
	 * with no egress hook nothing refuses it, and "passed" means nothing was there to judge. */
	int resolving = !refused && event_field_int(ev, "port", &port) && port == 53 &&
			egress_gate_address(dst);

	if (metadata_address(dst) && k < max) {
		detect_verdict_init(&out[k], ev, RULE_NET_METADATA, DETECT_CRITICAL);
		snprintf(out[k].reason, sizeof(out[k].reason),
			 "%s to the cloud metadata service %s", connect ? "an attempt" : "packets",
			 dst);
		k++;
	}
	if (connect && (refused || (!loopback_address(dst) && !resolving)) &&
	    tool_without_network(st, ev) && k < max) {
		detect_verdict_init(&out[k], ev, RULE_TOOL_NETWORK_OUT_OF_SCOPE, DETECT_HIGH);
		snprintf(out[k].reason, sizeof(out[k].reason),
			 "tool %s, whose scope opens no egress, tried %s", ev->tool, dst);
		k++;
	}
	return k;
}

/* One more denial to dst: a burst of them, or a scan of distinct destinations, in the window. */
static size_t denial_rules(struct detect_state *st, const struct event *ev, const char *dst,
			   struct detect_verdict *out, size_t max)
{
	unsigned n, distinct;
	size_t k = 0;

	note_denial(st, ev, dst);
	window_counts(st, ev->ts, &n, &distinct);
	if (n >= st->cfg.deny_burst_count && ev->ts >= st->burst_quiet_until && k < max) {
		detect_verdict_init(&out[k], ev, RULE_NET_DENY_BURST, DETECT_HIGH);
		window_ids(st, ev->ts, &out[k]);
		snprintf(out[k].reason, sizeof(out[k].reason),
			 "%u refused connection attempts within %lld s", n,
			 (long long)(st->cfg.deny_burst_window_ns / 1000000000));
		st->burst_quiet_until = ev->ts + st->cfg.deny_burst_window_ns;
		k++;
	}
	if (distinct >= st->cfg.deny_distinct && ev->ts >= st->scan_quiet_until && k < max) {
		detect_verdict_init(&out[k], ev, RULE_NET_DENY_SCAN, DETECT_HIGH);
		window_ids(st, ev->ts, &out[k]);
		snprintf(out[k].reason, sizeof(out[k].reason),
			 "%u distinct refused destinations within %lld s", distinct,
			 (long long)(st->cfg.deny_burst_window_ns / 1000000000));
		st->scan_quiet_until = ev->ts + st->cfg.deny_burst_window_ns;
		k++;
	}
	return k;
}

size_t detect_rules_net(struct detect_state *st, const struct event *ev, struct detect_verdict *out,
			size_t max)
{
	int connect = strcmp(ev->kind, "net.connect") == 0 || strcmp(ev->kind, "net.sendmsg") == 0;
	int denied = strcmp(ev->kind, "net.denied") == 0;
	char dst[48] = "", hook[16] = "";
	int refused;
	size_t k;

	if ((!connect && !denied) || !event_field_str(ev, "dst", dst, sizeof(dst)))
		return 0;
	refused = event_field_str(ev, "egress_hook", hook, sizeof(hook)) &&
		  strcmp(hook, "refused") == 0;
	k = attempt_rules(st, ev, dst, connect, refused, out, max);
	/* Refused by the egress hook, or dropped at the gate: one denial each. */
	if (connect && !refused)
		return k;
	return k + denial_rules(st, ev, dst, out + k, max - k);
}
