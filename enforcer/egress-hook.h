/* Types and constants the per-tool egress hook's kernel side (egress-hook.bpf.c) and user side
 * (egress-hook.c) share: fixed-width, nothing else. */
#ifndef FB_EGRESS_HOOK_H
#define FB_EGRESS_HOOK_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define EGRESS_HOOK_TOOLS_MAX 60   /* tools with their own source address on a sandbox's /26 */
#define EGRESS_HOOK_STEPS_MAX 1024 /* tool calls of one sandbox running at once */
#define EGRESS_HOOK_CIDRS_MAX 256  /* (CIDR, protocol, port) entries of one sandbox */

/* One tool: where its packets come from (the gate tells tools apart by it) and its rules. */
struct egress_hook_tool {
	__u32 src4; /* network order */
	__u32 src6[4];
	__u64 rules; /* bit i: egress rule i of the policy */
};

/* LPM key: protocol and port first (always matched whole), then the address's prefix. */
struct egress_hook_key4 {
	__u32 prefixlen; /* 32 + the CIDR's prefix */
	__u8 proto;
	__u8 pad;
	__u16 port; /* network order */
	__u32 addr; /* network order */
};

struct egress_hook_key6 {
	__u32 prefixlen; /* 32 + the CIDR's prefix */
	__u8 proto;
	__u8 pad;
	__u16 port;
	__u32 addr[4];
};

/* A host rule's (protocol, port): its addresses are the gate's to know (the DNS gate). */
struct egress_hook_hostport {
	__u8 proto;
	__u8 pad;
	__u16 port; /* network order */
};

/* The sandbox's DNS gate, which every tool may ask. */
struct egress_hook_config {
	__u32 gate4; /* network order */
	__u32 gate6[4];
};

/* Counters, per CPU: refused connects and sends, by family. */
enum { EGRESS_HOOK_REFUSED4, EGRESS_HOOK_REFUSED6, EGRESS_HOOK_UNKNOWN_STEP, EGRESS_HOOK_COUNTERS };

#endif
