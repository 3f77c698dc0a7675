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

/* Where the kernel side counts what it could not record (a per-CPU array). */
enum dns_trace_loss {
	DNS_TRACE_LOST_RING, /* no room in the ring buffer */
	DNS_TRACE_LOST_LOAD, /* the packet's bytes could not be read */
	DNS_TRACE_LOSSES
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
