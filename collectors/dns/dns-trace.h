/* What the DNS tracer's kernel side (dns-trace.bpf.c) and user side (dns-trace.c) share. */
#ifndef FB_DNS_TRACE_H
#define FB_DNS_TRACE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/*
 * Bytes of a DNS message a record carries: a classic UDP message's whole size (RFC 1035). A
 * longer one (EDNS, TCP) is cut there; the record says how long it was.
 */
#define DNS_TRACE_PAYLOAD_MAX 512
#define DNS_TRACE_PORT 53

/* A record's flags. */
#define DNS_TRACE_F_INGRESS 1 /* an answer coming in (from port 53), not a query going out */
#define DNS_TRACE_F_TCP 2     /* over TCP: the payload starts with the message's 2-byte length */
#define DNS_TRACE_F_IPV6 4

/*
 * Where the kernel side counts what it did not record, in all (a per-CPU array): the watched
 * sandbox's own entry counts its RING and OVER_SHARE records too (struct dns_trace_watch).
 */
enum dns_trace_loss {
	DNS_TRACE_LOST_RING,	   /* a watched sandbox's message, no room in the ring buffer */
	DNS_TRACE_LOST_LOAD,	   /* the packet's bytes could not be read */
	DNS_TRACE_LOST_OVER_SHARE, /* a watched sandbox's message past its share of the ring */
	DNS_TRACE_UNOWNED,	   /* a message through the hooks of no watched cgroup: not kept */
	DNS_TRACE_LOSSES
};

#define DNS_TRACE_WATCH_MAX 4096  /* sandboxes watched at once */
#define DNS_TRACE_LEVEL_MAX 16	  /* the deepest cgroup level a watched one may sit at */
#define DNS_TRACE_SANDBOX_LEVEL 2 /* firebreak/NAME, the enforcer's sandboxes */
/* The least a sandbox may hold of the ring at once: about 13 messages. */
#define DNS_TRACE_SHARE_MIN (8 << 10)

/*
 * A watched sandbox (the map's key: its cgroup's id): its messages the kernel did not record
 * (no room in the ring, or past its share of it) and its token bucket: bytes it may still
 * reserve, as of share_ts (ns, CLOCK_MONOTONIC; collectors/share.bpf.h).
 */
struct dns_trace_watch {
	__u64 lost;
	__u64 over_share; /* of lost: refused for the share, not for want of room */
	__s64 share;
	__u64 share_ts;
};

struct dns_trace_event {
	__u64 ts;	 /* ns, CLOCK_BOOTTIME */
	__u64 cgroup_id; /* the socket's cgroup (its step's) */
	__u32 pid;	 /* a query's sending task (host tgid); 0 for answers (softirq) */
	__u32 flags;	 /* DNS_TRACE_F_* */
	__u32 wire_len;	 /* the L4 payload's length as sent or received */
	__u32 cap_len;	 /* of it, the bytes in payload */
	__u16 sport, dport;
	__u8 saddr[16], daddr[16]; /* IPv4 in the first 4 bytes */
	char comm[16];		   /* queries only */
	__u8 payload[DNS_TRACE_PAYLOAD_MAX];
};

#endif
