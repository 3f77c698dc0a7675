// SPDX-License-Identifier: GPL-2.0
/*
 * What the collectors' kernel halves share about watched sandboxes: which watched cgroup a task
 * or a packet belongs to, and each sandbox's share of a ring buffer that all sandboxes fill. One
 * sandbox's flood must not take the ring from the others (a loss freezes the sandbox it is
 * counted for, docs/collectors.md), so each watched sandbox has a token bucket in its own map
 * entry, and what it sends past it is refused before anything is reserved and counted as its
 * own loss. Included once by each NAME-trace.bpf.c that has watched sandboxes (the process and
 * the DNS tracers), after vmlinux.h and the BPF helpers.
 */
#ifndef FB_SHARE_BPF_H
#define FB_SHARE_BPF_H

/* Each sandbox's share of the ring: bytes per second, and the most it may reserve at once (0:
 * no share, the ring is first come first served). Set by user space before load. */
const volatile __u64 share_rate = 0;
const volatile __u64 share_burst = 0;
/* Past this much unread data in the ring, a sandbox that has spent half its burst or more is
 * refused: the rest of the ring is kept for the sandboxes that are not flooding it. */
const volatile __u64 share_reserve_at = 0;

/*
 * The levels watched cgroups sit at, shallowest and deepest (user space keeps them,
 * bpf_levels_set): with only the enforcer's sandboxes both are 2 and a lookup is one; an adopted
 * cgroup elsewhere widens the range, never past max. Watched cgroups never nest (firebreakd
 * refuses it), so the first hit is the only one.
 */
volatile __u32 level_lo = 2;
volatile __u32 level_hi = 2;

/*
 * The watched map's entry of the cgroup at one of the watched levels that skb's socket (skb
 * NULL: the current task) is in, and that cgroup's id in *ret_cgid; NULL if none is watched. A
 * constant skb at each inlined call leaves only its own helper in the program.
 */
static __always_inline void *share_watched(void *map, struct __sk_buff *skb, __u32 max,
					   __u64 *ret_cgid)
{
	__u32 lo = level_lo, hi = level_hi;

	for (__u32 level = 1; level <= max; level++) {
		void *w;
		__u64 id;

		if (level < lo)
			continue;
		if (level > hi)
			break;
		id = skb ? bpf_skb_ancestor_cgroup_id(skb, level)
			 : bpf_get_current_ancestor_cgroup_id(level);
		if (!id) /* the cgroup is shallower than that */
			break;
		w = bpf_map_lookup_elem(map, &id);
		if (w) {
			*ret_cgid = id;
			return w;
		}
	}
	return NULL;
}

/*
 * Whether a record of size bytes goes past the sandbox's share of ring (1: refused, counted in
 * *over), with its bucket *share bytes as of *share_ts (ns, CLOCK_MONOTONIC). Each sandbox may
 * reserve share_rate bytes a second, share_burst at once; and once the ring is past
 * share_reserve_at (the reader is behind: on a busy host the floods take the CPU it needs),
 * only a sandbox with half its burst or more left, one that is not the flood, may still
 * reserve. The bucket is read and written without a lock: two CPUs of one sandbox can overspend
 * it by a record each, which the burst absorbs.
 */
static __always_inline int share_over(__s64 *share, __u64 *share_ts, __u64 *over, void *ring,
				      __u32 size)
{
	__u64 now, elapsed;
	__s64 s;

	if (!share_rate)
		return 0;
	now = bpf_ktime_get_ns();
	elapsed = now - *share_ts;
	s = *share;
	if (elapsed >= 1000000000ULL)
		s = (__s64)share_burst;
	else
		s += (__s64)(elapsed * share_rate / 1000000000ULL);
	if (s > (__s64)share_burst)
		s = (__s64)share_burst;
	size += 8; /* the ring's own header */
	/* The bucket before its time, never the other way round: another CPU of the sandbox that
	 * sees the new time then sees the new bucket (x86 keeps stores in order, and the reader
	 * loads the time first). The other order, on a fresh entry (bucket 0, time 0), let a second
	 * CPU read the first one's time with the bucket still at 0 and refuse a record of a sandbox
	 * that had sent nothing: a false loss, and the sandbox frozen as one the monitor went blind
	 * to (bench_kill's "missed kill", 1 trial in ~900). */
	if (s < (__s64)size) {
		*share = s;
		*share_ts = now;
		__sync_fetch_and_add(over, 1);
		return 1;
	}
	/* Refused for want of room, a record is still paid for: a sandbox that floods a starved
	 * reader stays below half its burst, and so stays out of the reserved half. */
	*share = s - size;
	*share_ts = now;
	if (s < (__s64)(share_burst / 2) &&
	    bpf_ringbuf_query(ring, BPF_RB_AVAIL_DATA) > share_reserve_at) {
		__sync_fetch_and_add(over, 1);
		return 1;
	}
	return 0;
}

#endif
