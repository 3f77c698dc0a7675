// SPDX-License-Identifier: GPL-2.0
/*
 * The flight recorder: every syscall entry of one sandbox, with its six raw arguments. It is an
 * escalation, loaded only on demand: a sys_enter tracepoint puts every task on the host on the
 * slow syscall path while it is attached, whatever this filter says (KERNEL-NOTES.md). One
 * object per recorded sandbox; the sandbox's cgroup id is set before load.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "syscall-trace.h"

const volatile __u64 sandbox_cgid = 0;
/* Its level (as in proc-trace.h): 2 for firebreak/NAME, anything for an adopted cgroup. */
const volatile __u32 sandbox_level = 2;
const volatile __u64 wakeup_bytes = 64 << 10;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} sys_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} sys_lost SEC(".maps");

SEC("tp_btf/sys_enter")
int BPF_PROG(sys_enter, struct pt_regs *regs, long id)
{
	struct syscall_trace_event *e;
	__u64 pid_tgid;
	__u32 zero = 0;

	if (bpf_get_current_ancestor_cgroup_id(sandbox_level) != sandbox_cgid)
		return 0;
	e = bpf_ringbuf_reserve(&sys_events, sizeof(*e), 0);
	if (!e) {
		__u64 *n = bpf_map_lookup_elem(&sys_lost, &zero);

		if (n)
			*n += 1;
		return 0;
	}
	pid_tgid = bpf_get_current_pid_tgid();
	e->ts = bpf_ktime_get_boot_ns();
	e->cgroup_id = bpf_get_current_cgroup_id();
	e->nr = id;
	/* x86-64's syscall argument registers */
	e->args[0] = BPF_CORE_READ(regs, di);
	e->args[1] = BPF_CORE_READ(regs, si);
	e->args[2] = BPF_CORE_READ(regs, dx);
	e->args[3] = BPF_CORE_READ(regs, r10);
	e->args[4] = BPF_CORE_READ(regs, r8);
	e->args[5] = BPF_CORE_READ(regs, r9);
	e->pid = pid_tgid >> 32;
	e->tid = (__u32)pid_tgid;
	e->uid = (__u32)bpf_get_current_uid_gid();
	e->pad = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, bpf_ringbuf_query(&sys_events, BPF_RB_AVAIL_DATA) >= wakeup_bytes
				      ? BPF_RB_FORCE_WAKEUP
				      : BPF_RB_NO_WAKEUP);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
