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
	/* Sockets and signals (issue 16): head records, or head and struct proc_trace_more. */
	PROC_TRACE_BIND,   /* bind() to an IPv4/IPv6 address (head) */
	PROC_TRACE_LISTEN, /* a TCP socket of the sandbox entered LISTEN (head: its address) */
	PROC_TRACE_ACCEPT, /* an inbound connection reached ESTABLISHED (head: local; more: peer) */
	PROC_TRACE_SIGNAL, /* a signal a sandbox task sent (more: target, signal, result) */
	PROC_TRACE_RENAME, /* comm changed by prctl or /proc/PID/comm (argv: new comm; path: exe) */
	PROC_TRACE_OOM,	   /* the OOM killer chose a victim (head: it; more: who ran out) */
	PROC_TRACE_KINDS
};

/* An exec's executable (exe_flags). */
#define PROC_TRACE_EXE_MEMFD 1	 /* a memfd ("memfd:" name on an internal shmem/hugetlb mount) */
#define PROC_TRACE_EXE_DELETED 2 /* unlinked (no name left) */
#define PROC_TRACE_EXE_TMPFS 4	 /* on a tmpfs (user space tells the sandbox's own by device) */

/* The environment of a new program: how far the kernel side reads, and what it keeps. */
#define PROC_TRACE_ENV_ENTRIES_MAX 256 /* entries looked at (env_truncated past them) */
#define PROC_TRACE_ENV_ENTRY_MAX 4096  /* bytes of one entry read at once (a longer one: twice) */
#define PROC_TRACE_ENV_NAME_MAX 32     /* a name longer than this is none of the watched ones */
#define PROC_TRACE_ENV_VALUES 4	       /* values kept per exec (the dangerous names only) */
#define PROC_TRACE_ENV_VALUE_MAX 64    /* bytes of each, NUL included */
#define PROC_TRACE_ENV_NAMES_MAX 64    /* watched names (env_mask bits) */

/* A watched variable name (the env_names map's value): its bit and whether its value is kept. */
struct proc_trace_env_name {
	__u32 bit;
	__u32 keep_value;
};

/* What a signal or accept record carries beyond the head (in place of path). */
struct proc_trace_more {
	__u8 peer_addr[16];   /* accept: the remote address */
	__u16 peer_port;      /* accept: the remote port */
	__u16 sig;	      /* signal: its number */
	__s32 result;	      /* signal: the kernel's TRACE_SIGNAL_* result */
	__u64 target_cgid;    /* signal: the target's own cgroup */
	__u32 target_pid;     /* signal: host tgid of the target; oom: of the task that ran out */
	__s32 si_code;	      /* signal: SI_USER (0), SI_QUEUE (-1), SI_TKILL (-6) */
	__u32 target_in;      /* signal: 1 if the target is in the sender's sandbox */
	__u32 group;	      /* signal: 1 for the whole process, 0 for one thread */
	char target_comm[16]; /* signal: the target's; oom: the task's that ran out */
};

/*
 * A watched sandbox: the records the kernel could not reserve room for, per kind (no room in the
 * ring, or past the sandbox's share of it), and the share's token bucket: bytes it may still
 * reserve, as of share_ts (ns, CLOCK_MONOTONIC).
 */
struct proc_trace_watch {
	__u64 lost[PROC_TRACE_KINDS];
	__u64 over_share; /* of lost: records refused for the share, not for want of room */
	__s64 share;
	__u64 share_ts;
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
	 * the ring's room), or the head and more (signal, accept). */
	union {
		char path[PROC_TRACE_PATH_MAX];
		struct proc_trace_more more;
	};
	char argv[PROC_TRACE_ARGV_MAX];
	/* Exec only: the new program's environment and identity. */
	__u64 env_mask;	    /* bit b: the watched name of bit b is in its environment */
	__u64 exe_ino;	    /* the executable's inode */
	__u32 exe_dev;	    /* its superblock's device, kernel encoding (major << 20 | minor) */
	__u16 env_entries;  /* environment entries read */
	__u8 env_truncated; /* 1: there were more than PROC_TRACE_ENV_ENTRIES_MAX */
	__u8 exe_flags;	    /* PROC_TRACE_EXE_* */
	__u8 stdio_socket;  /* bit i: fd i (stdin, stdout, stderr) is an inet or inet6 socket */
	__u8 n_values;	    /* values below (0 unless the record is whole) */
	__u8 value_bit[PROC_TRACE_ENV_VALUES];
	__u8 pad[2];
	char parent_exe[16]; /* the parent's executable's name (who set the environment) */
	__u64 stdin_pipe;    /* the inode of the pipe that is stdin, 0 if it is none */
	__u64 stdout_pipe;   /* the same for stdout */
	/* Only when a dangerous name is set: the record is reserved whole. */
	char values[PROC_TRACE_ENV_VALUES][PROC_TRACE_ENV_VALUE_MAX];
};

/* The size of a record without path and argv (fork, exit and socket records). */
#define PROC_TRACE_HEAD_SIZE __builtin_offsetof(struct proc_trace_event, path)
/* A head and the caller's executable's name in path (connect, sendmsg: a shell's is /dev/tcp). */
#define PROC_TRACE_EXE_NAME_MAX 16
#define PROC_TRACE_ADDR_SIZE (PROC_TRACE_HEAD_SIZE + PROC_TRACE_EXE_NAME_MAX)
/* A head and struct proc_trace_more (signal, accept, oom). */
#define PROC_TRACE_MORE_SIZE (PROC_TRACE_HEAD_SIZE + sizeof(struct proc_trace_more))
/* Everything but the environment's values (an exec without them, escape indicators, rename). */
#define PROC_TRACE_TEXT_SIZE __builtin_offsetof(struct proc_trace_event, values)
/* The least a sandbox may hold of the ring at once: about six execs with their environment. */
#define PROC_TRACE_SHARE_MIN (8 << 10)

#endif
