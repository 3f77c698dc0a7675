// SPDX-License-Identifier: GPL-2.0
/*
 * DNS of watched sandboxes: the UDP and TCP port-53 payloads their sockets send (queries) and
 * receive (answers), copied up to DNS_TRACE_PAYLOAD_MAX bytes into a ring buffer with the
 * socket's cgroup. The programs are cgroup_skb hooks, attached by user space to each watched
 * sandbox's cgroup only: no other task on the host runs them. They never drop a packet (they
 * return 1); judging is the gate's and the egress hook's work. Each message is the sandbox's
 * whose watched cgroup its socket is in, before anything is reserved: what it loses (no room,
 * or past its share of the ring, collectors/share.bpf.h) is counted in its own map entry, so
 * one sandbox's flood blinds the monitor to that sandbox only.
 */
#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "collectors/share.bpf.h"
#include "dns-trace.h"

#define IPPROTO_TCP_ 6
#define IPPROTO_UDP_ 17
#define IP_OFFSET_MASK 0x1fff

const volatile __u64 wakeup_bytes = 16 << 10;
/* What one record takes in the ring: its 8-byte header and itself, rounded up to 8. */
#define DNS_RECORD_ROOM ((sizeof(struct dns_trace_event) + 8 + 7) / 8 * 8)

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} dns_events SEC(".maps");

/* The watched sandboxes, by their cgroup's id; user space fills it as it watches them. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, DNS_TRACE_WATCH_MAX);
	__type(key, __u64);
	__type(value, struct dns_trace_watch);
} dns_watched SEC(".maps");

/* Messages lost, per reason: global, read by firebreakd as memory (proc-trace.bpf.c's lost_total).
 */
__u64 dns_lost_total[DNS_TRACE_LOSSES];

/* What the headers say, before a record is reserved (a whole record exceeds the BPF stack). */
struct head {
	__u32 flags;
	__u16 sport, dport;
	__u8 saddr[16], daddr[16];
};

static __always_inline void count_loss(__u32 what)
{
	if (what < DNS_TRACE_LOSSES)
		__sync_fetch_and_add(&dns_lost_total[what], 1);
}

/* The packet's L4 header offset and protocol, and its addresses; 0, or -1 if not IP or a
 * fragment past the first (whose port is not in it). */
static __always_inline int l3(struct __sk_buff *skb, struct head *h, __u32 *ret_off,
			      __u8 *ret_proto)
{
	struct ipv6hdr ip6;
	struct iphdr ip;

	if (skb->protocol == bpf_htons(0x0800)) {
		if (bpf_skb_load_bytes(skb, 0, &ip, sizeof(ip)) < 0 ||
		    (bpf_ntohs(ip.frag_off) & IP_OFFSET_MASK))
			return -1;
		__builtin_memcpy(h->saddr, &ip.saddr, 4);
		__builtin_memcpy(h->daddr, &ip.daddr, 4);
		*ret_off = (__u32)ip.ihl * 4;
		*ret_proto = ip.protocol;
		return 0;
	}
	if (skb->protocol == bpf_htons(0x86dd)) {
		/* Extension headers are not followed: DNS stub resolvers send none. */
		if (bpf_skb_load_bytes(skb, 0, &ip6, sizeof(ip6)) < 0)
			return -1;
		__builtin_memcpy(h->saddr, &ip6.saddr, 16);
		__builtin_memcpy(h->daddr, &ip6.daddr, 16);
		h->flags |= DNS_TRACE_F_IPV6;
		*ret_off = sizeof(ip6);
		*ret_proto = ip6.nexthdr;
		return 0;
	}
	return -1;
}

/* The ports and the payload's offset after the L4 header at off; 0, or -1. */
static __always_inline int l4(struct __sk_buff *skb, struct head *h, __u32 off, __u8 proto,
			      __u32 *ret_payload)
{
	struct udphdr udp;
	struct tcphdr tcp;

	if (proto == IPPROTO_UDP_) {
		if (bpf_skb_load_bytes(skb, off, &udp, sizeof(udp)) < 0)
			return -1;
		h->sport = bpf_ntohs(udp.source);
		h->dport = bpf_ntohs(udp.dest);
		*ret_payload = off + sizeof(udp);
		return 0;
	}
	if (proto == IPPROTO_TCP_) {
		if (bpf_skb_load_bytes(skb, off, &tcp, sizeof(tcp)) < 0)
			return -1;
		h->sport = bpf_ntohs(tcp.source);
		h->dport = bpf_ntohs(tcp.dest);
		h->flags |= DNS_TRACE_F_TCP;
		*ret_payload = off + (__u32)tcp.doff * 4;
		return 0;
	}
	return -1;
}

static __always_inline int capture(struct __sk_buff *skb, int ingress)
{
	struct head h = { .flags = ingress ? DNS_TRACE_F_INGRESS : 0 };
	struct dns_trace_watch *w;
	struct dns_trace_event *e;
	__u32 off, payload, len, n;
	__u64 avail, sb;
	__u8 proto;

	if (l3(skb, &h, &off, &proto) < 0 || off > 60 || l4(skb, &h, off, proto, &payload) < 0)
		return 1;
	if ((ingress ? h.sport : h.dport) != DNS_TRACE_PORT || payload >= skb->len)
		return 1; /* not DNS, or a segment with no payload (TCP handshake, ACKs) */
	len = skb->len - payload;
	/* Between a watch's map entry and its hooks (both ways round) there is no one's record. */
	if (!(w = share_watched(&dns_watched, skb, DNS_TRACE_LEVEL_MAX, &sb))) {
		count_loss(DNS_TRACE_UNOWNED);
		return 1;
	}
	if (share_over(&w->share, &w->share_ts, &w->over_share, &dns_events, sizeof(*e))) {
		__sync_fetch_and_add(&w->lost, 1);
		count_loss(DNS_TRACE_LOST_OVER_SHARE);
		return 1;
	}
	e = bpf_ringbuf_reserve(&dns_events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&w->lost, 1);
		count_loss(DNS_TRACE_LOST_RING);
		return 1;
	}
	n = len < DNS_TRACE_PAYLOAD_MAX ? len : DNS_TRACE_PAYLOAD_MAX;
	/* 1..DNS_TRACE_PAYLOAD_MAX (a power of two) in a form the verifier can follow: the barrier
	 * keeps the compiler from folding the mask away. */
	asm volatile("" : "+r"(n));
	n = ((n - 1) & (DNS_TRACE_PAYLOAD_MAX - 1)) + 1;
	if (bpf_skb_load_bytes(skb, payload, e->payload, n) < 0) {
		bpf_ringbuf_discard(e, 0);
		count_loss(DNS_TRACE_LOST_LOAD);
		return 1;
	}
	e->ts = bpf_ktime_get_boot_ns();
	e->cgroup_id = bpf_skb_cgroup_id(skb);
	e->flags = h.flags;
	e->wire_len = len;
	e->cap_len = n;
	e->sport = h.sport;
	e->dport = h.dport;
	__builtin_memcpy(e->saddr, h.saddr, sizeof(e->saddr));
	__builtin_memcpy(e->daddr, h.daddr, sizeof(e->daddr));
	e->pid = 0;
	__builtin_memset(e->comm, 0, sizeof(e->comm));
	if (!ingress) { /* a query is sent in its task's context (sendmsg, connect's first data) */
		e->pid = bpf_get_current_pid_tgid() >> 32;
		bpf_get_current_comm(e->comm, sizeof(e->comm));
	}
	/*
	 * Wake the reader once, when this record makes the waiting data cross the watermark; a
	 * timer drains the rest. Waking on every record past it (while the reader is behind) was
	 * the costliest path: 7.7 µs a packet in a burst, against 0.48 µs (bench_dns.sh, in the
	 * kernel's test runner).
	 */
	avail = bpf_ringbuf_query(&dns_events, BPF_RB_AVAIL_DATA);
	bpf_ringbuf_submit(e, avail >= wakeup_bytes && avail < wakeup_bytes + DNS_RECORD_ROOM
				      ? BPF_RB_FORCE_WAKEUP
				      : BPF_RB_NO_WAKEUP);
	return 1;
}

SEC("cgroup_skb/egress")
int dns_egress(struct __sk_buff *skb)
{
	return capture(skb, 0);
}

SEC("cgroup_skb/ingress")
int dns_ingress(struct __sk_buff *skb)
{
	return capture(skb, 1);
}

char LICENSE[] SEC("license") = "GPL";
