/* What the process tracer's kernel side (proc-trace.bpf.c) and user side (proc-trace.c) share. */
#ifndef FB_PROC_TRACE_H
#define FB_PROC_TRACE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define PROC_TRACE_PATH_MAX 256
#define PROC_TRACE_ARGV_MAX 512		/* bytes of argv (NUL-separated) an exec event carries */
#define PROC_TRACE_WATCH_MAX 4096	/* sandboxes watched at once */
#define PROC_TRACE_SCOPES_MAX 4096	/* steps whose execs are confined at once */
#define PROC_TRACE_SCOPE_KEYS_MAX 65536 /* their allowed files, all steps together */

/* A record's flags. */
#define PROC_TRACE_F_KILLED 1	  /* exec: outside its step's exec scope, SIGKILL before it ran */
#define PROC_TRACE_F_SENDMSG 2	  /* unix: a datagram sent, not a connect */
#define PROC_TRACE_F_CG_MKDIR 4	  /* cgroup: a cgroup made */
#define PROC_TRACE_F_CG_RMDIR 8	  /* cgroup: a cgroup removed */
#define PROC_TRACE_F_CG_ATTACH 16 /* cgroup: a task moved into a cgroup (ppid: that task) */
#define PROC_TRACE_F_CG_LEFT 32	  /* cgroup: ... out of its sandbox (the record is the sandbox's) */
#define PROC_TRACE_TASKS_MAX 65536 /* the sandboxes' processes, as far as the tracer knows */

/* The attach types of the unix socket hooks (Linux 6.7), which this libbpf does not name. */
#define PROC_TRACE_ATTACH_UNIX_CONNECT 49
#define PROC_TRACE_ATTACH_UNIX_SENDMSG 50

/* Bytes of a sysctl's new value a sysctl record carries (in argv). */
#define PROC_TRACE_SYSCTL_VALUE_MAX 64

/* A file a confined step may execute: the step's cgroup, the file's device (kernel encoding,
 * major << 20 | minor) and inode. */
struct proc_trace_scope_key {
	__u64 cgid;
	__u64 dev;
	__u64 ino;
};
/*
 * The cgroup level of a sandbox the enforcer made: / is 0, firebreak 1, firebreak/NAME 2. A cgroup
 * adopted by `firebreak watch` can sit at any level up to PROC_TRACE_LEVEL_MAX.
 */
#define PROC_TRACE_SANDBOX_LEVEL 2
#define PROC_TRACE_LEVEL_MAX 16

enum proc_trace_kind {
	PROC_TRACE_EXEC,
	PROC_TRACE_FORK,
	PROC_TRACE_EXIT,
	PROC_TRACE_SOCKET,  /* socket() in a watched sandbox */
	PROC_TRACE_CONNECT, /* connect() to an IPv4/IPv6 address */
	PROC_TRACE_SENDMSG, /* sendmsg() with a destination (unconnected UDP) */
	/* The escape indicators, rare in honest work: they carry text (path) and reserve a whole
	 * record. */
	PROC_TRACE_UNIX,   /* connect() or sendmsg() to a unix socket path (path, argv_len) */
	PROC_TRACE_SYSCTL, /* a write to a /proc/sys file, refused (path: its name) */
	PROC_TRACE_CGROUP, /* a cgroup made, removed or joined on the v2 hierarchy (path) */
	PROC_TRACE_KINDS
};

/* A watched sandbox: the records the kernel could not reserve room for, per kind. */
struct proc_trace_watch {
	__u64 lost[PROC_TRACE_KINDS];
};

struct proc_trace_event {
	__u64 ts;	    /* ns, CLOCK_BOOTTIME (bpf_ktime_get_boot_ns) */
	__u64 cgroup_id;    /* the task's own cgroup (its step) */
	__u64 sandbox_cgid; /* the watched cgroup it is in (the sandbox's, or an adopted one) */
	__u32 kind;
	__u32 pid; /* host tgid */
	__u32 ppid;
	__u32 uid;
	__s32 exit_code; /* exit: the wait status */
	__u32 argv_len;
	/* socket: family, type, protocol; connect and sendmsg: family, type, protocol of the
	 * socket, the destination, and whether the sandbox's egress hook refused it (retval). */
	__u16 family;
	__u16 sock_type;
	__u16 protocol;
	__u16 port;
	__u8 addr[16];
	__s32 hook_retval;
	__u32 flags; /* PROC_TRACE_F_* */
	char comm[16];
	/* Exec and escape-indicator records only: the rest reserve the head alone (an eighth of
	 * the ring's room). */
	char path[PROC_TRACE_PATH_MAX];
	char argv[PROC_TRACE_ARGV_MAX];
};

/* The size of a record without path and argv (fork, exit and socket records). */
#define PROC_TRACE_HEAD_SIZE __builtin_offsetof(struct proc_trace_event, path)

#endif
