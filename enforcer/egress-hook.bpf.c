// SPDX-License-Identifier: GPL-2.0
/*
 * Per-tool egress, in the kernel, per step cgroup. Attached to a sandbox's cgroup, these hooks run
 * for every connect() and every unconnected sendmsg() of its tool calls: the step's cgroup id
 * names the tool (registered by `firebreak exec` before the call starts); the destination must be
 * in the part of the task's allowlist that tool may reach, or the call fails with EPERM and not
 * one packet leaves. An allowed socket is bound to the tool's own source address, so that the
 * gate, which enforces the task's allowlist and knows the addresses the DNS gate handed out, can
 * hold each tool to its own rules too.
 */
#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "egress-hook.h"

#define AF_INET 2
#define AF_INET6 10
#define IPPROTO_TCP 6
#define IPPROTO_UDP 17

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EGRESS_HOOK_STEPS_MAX);
	__type(key, __u64);   /* the step's cgroup id */
	__type(value, __u32); /* the tool's index */
} step_tool SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, EGRESS_HOOK_TOOLS_MAX);
	__type(key, __u32);
	__type(value, struct egress_hook_tool);
} tools SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, EGRESS_HOOK_CIDRS_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct egress_hook_key4);
	__type(value, __u64); /* the rules that cover this (CIDR, protocol, port) */
} cidr4 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LPM_TRIE);
	__uint(max_entries, EGRESS_HOOK_CIDRS_MAX);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct egress_hook_key6);
	__type(value, __u64);
} cidr6 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, EGRESS_HOOK_CIDRS_MAX);
	__type(key, struct egress_hook_hostport);
	__type(value, __u64); /* the host rules with this (protocol, port) */
} hostports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct egress_hook_config);
} hook_config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, EGRESS_HOOK_COUNTERS);
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

static __always_inline void count(__u32 which)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &which);

	if (c)
		*c += 1;
}

static __always_inline const struct egress_hook_tool *current_tool(void)
{
	__u64 cg = bpf_get_current_cgroup_id();
	__u32 *idx = bpf_map_lookup_elem(&step_tool, &cg);

	if (!idx) {
		count(EGRESS_HOOK_UNKNOWN_STEP);
		return NULL; /* not a registered tool call: nothing leaves */
	}
	return bpf_map_lookup_elem(&tools, idx);
}

static __always_inline __u64 host_rules(__u8 proto, __u16 port)
{
	struct egress_hook_hostport k = { .proto = proto, .port = port };
	__u64 *v = bpf_map_lookup_elem(&hostports, &k);

	return v ? *v : 0;
}

/* 1: allowed (and bound to the tool's address when bind is set); 0: refused, EPERM. */
static __always_inline int check4(struct bpf_sock_addr *ctx, int bind)
{
	const struct egress_hook_tool *t = current_tool();
	struct egress_hook_config *cfg;
	struct egress_hook_key4 k = {};
	__u32 zero = 0;
	__u64 rules = 0, *v;
	__u8 proto = ctx->protocol;
	__u16 port = (__u16)ctx->user_port;

	/* The sandbox's own loopback (127/8 in its own network namespace): nothing leaves, so
	 * there is no egress to judge; a tool's tests may run a server there and talk to it. */
	if ((bpf_ntohl(ctx->user_ip4) >> 24) == 127)
		return 1;
	if (!t) {
		count(EGRESS_HOOK_REFUSED4);
		return 0;
	}
	cfg = bpf_map_lookup_elem(&hook_config, &zero);
	/* Every tool may ask the DNS gate; what it answers is the gate's business. */
	if (cfg && ctx->user_ip4 == cfg->gate4 && port == bpf_htons(53))
		return 1;
	k.prefixlen = 64;
	k.proto = proto;
	k.port = port;
	k.addr = ctx->user_ip4;
	v = bpf_map_lookup_elem(&cidr4, &k);
	if (v)
		rules |= *v;
	rules |= host_rules(proto, port);
	if (!(rules & t->rules)) {
		count(EGRESS_HOOK_REFUSED4);
		return 0;
	}
	if (bind) {
		struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = t->src4 };

		if (bpf_bind(ctx, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
			count(EGRESS_HOOK_REFUSED4);
			return 0;
		}
	} else {
		ctx->msg_src_ip4 = t->src4;
	}
	return 1;
}

/* ::1 and ::ffff:127.0.0.0/104: the sandbox's own loopback, as 127/8 is for IPv4. */
static __always_inline int loopback6(__u32 a0, __u32 a1, __u32 a2, __u32 a3)
{
	return a0 == 0 && a1 == 0 &&
	       ((a2 == 0 && a3 == bpf_htonl(1)) ||
		(a2 == bpf_htonl(0xffff) && (bpf_ntohl(a3) >> 24) == 127));
}

static __always_inline int check6(struct bpf_sock_addr *ctx, int bind)
{
	const struct egress_hook_tool *t = current_tool();
	struct egress_hook_config *cfg;
	struct egress_hook_key6 k = {};
	__u32 zero = 0;
	__u64 rules = 0, *v;
	__u8 proto = ctx->protocol;
	__u16 port = (__u16)ctx->user_port;
	__u32 a0 = ctx->user_ip6[0], a1 = ctx->user_ip6[1], a2 = ctx->user_ip6[2],
	      a3 = ctx->user_ip6[3];

	if (loopback6(a0, a1, a2, a3))
		return 1;
	if (!t) {
		count(EGRESS_HOOK_REFUSED6);
		return 0;
	}
	/* v4-mapped destinations would leave with the sandbox's own address, past the tool's:
	 * refused, as any tool can use AF_INET for IPv4. */
	if (a0 == 0 && a1 == 0 && a2 == bpf_htonl(0xffff)) {
		count(EGRESS_HOOK_REFUSED6);
		return 0;
	}
	cfg = bpf_map_lookup_elem(&hook_config, &zero);
	if (cfg && port == bpf_htons(53) && a0 == cfg->gate6[0] && a1 == cfg->gate6[1] &&
	    a2 == cfg->gate6[2] && a3 == cfg->gate6[3])
		return 1;
	k.prefixlen = 32 + 128;
	k.proto = proto;
	k.port = port;
	k.addr[0] = a0;
	k.addr[1] = a1;
	k.addr[2] = a2;
	k.addr[3] = a3;
	v = bpf_map_lookup_elem(&cidr6, &k);
	if (v)
		rules |= *v;
	rules |= host_rules(proto, port);
	if (!(rules & t->rules)) {
		count(EGRESS_HOOK_REFUSED6);
		return 0;
	}
	if (bind) {
		struct sockaddr_in6 sa = { .sin6_family = AF_INET6 };

		sa.sin6_addr.in6_u.u6_addr32[0] = t->src6[0];
		sa.sin6_addr.in6_u.u6_addr32[1] = t->src6[1];
		sa.sin6_addr.in6_u.u6_addr32[2] = t->src6[2];
		sa.sin6_addr.in6_u.u6_addr32[3] = t->src6[3];
		if (bpf_bind(ctx, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
			count(EGRESS_HOOK_REFUSED6);
			return 0;
		}
	} else {
		ctx->msg_src_ip6[0] = t->src6[0];
		ctx->msg_src_ip6[1] = t->src6[1];
		ctx->msg_src_ip6[2] = t->src6[2];
		ctx->msg_src_ip6[3] = t->src6[3];
	}
	return 1;
}

SEC("cgroup/connect4")
int egress_connect4(struct bpf_sock_addr *ctx)
{
	return check4(ctx, 1);
}

SEC("cgroup/connect6")
int egress_connect6(struct bpf_sock_addr *ctx)
{
	return check6(ctx, 1);
}

SEC("cgroup/sendmsg4")
int egress_sendmsg4(struct bpf_sock_addr *ctx)
{
	return check4(ctx, 0);
}

SEC("cgroup/sendmsg6")
int egress_sendmsg6(struct bpf_sock_addr *ctx)
{
	return check6(ctx, 0);
}

char LICENSE[] SEC("license") = "GPL";
