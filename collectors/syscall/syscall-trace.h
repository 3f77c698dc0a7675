/* What the syscall flight recorder's kernel side and user side share. */
#ifndef FB_SYSCALL_TRACE_H
#define FB_SYSCALL_TRACE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

struct syscall_trace_event {
	__u64 ts;	 /* ns, CLOCK_BOOTTIME */
	__u64 cgroup_id; /* the task's own cgroup (its step) */
	__s64 nr;
	__u64 args[6];
	__u32 pid; /* host tgid */
	__u32 tid;
	__u32 uid;
	__u32 pad;
	char comm[16];
};

#endif
