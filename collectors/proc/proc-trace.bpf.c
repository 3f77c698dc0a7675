// SPDX-License-Identifier: GPL-2.0
/*
 * Process exec, fork and exit of watched sandboxes only. The hooks are the sched tracepoints
 * (tp_btf), off the syscall path: bystanders pay nothing measurable (KERNEL-NOTES.md), and the
 * in-kernel filter drops every task whose sandbox-level cgroup is not watched before anything is
 * reserved. Records go through a ring buffer that wakes the reader only past a watermark; the
 * reader also drains on a timer. A reservation that fails is counted per kind, never silent.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "collectors/share.bpf.h"
#include "proc-trace.h"

const volatile __u64 wakeup_bytes = 64 << 10;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PROC_TRACE_WATCH_MAX);
	__type(key, __u64); /* a sandbox's cgroup id */
	__type(value, struct proc_trace_watch);
} watched SEC(".maps");

/* Steps whose execs are confined (the hard rule), and the files each may execute. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PROC_TRACE_SCOPES_MAX);
	__type(key, __u64); /* a step's cgroup id */
	__type(value, __u32);
} scoped SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PROC_TRACE_SCOPE_KEYS_MAX);
	__type(key, struct proc_trace_scope_key);
	__type(value, __u8);
} scope_allow SEC(".maps");

/* The processes of watched sandboxes (tgid -> the sandbox's cgroup id), noted at fork and exec,
 * forgotten at exit: so a process that moves itself out of its sandbox is still known as its. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, PROC_TRACE_TASKS_MAX);
	__type(key, __u32);
	__type(value, __u64);
} sandbox_tasks SEC(".maps");

/*
 * Where each process of a watched sandbox is, as the kernel saw it: tgid -> its own v2 cgroup
 * (its step's), written at fork, exec and cgroup move, and kept after it exits (the LRU makes
 * room). The seccomp collector attributes a refusal by it: the audit record carries only the
 * pid, and a process that exited at once has no /proc entry left to read. A new process outside
 * the sandboxes drops a recycled pid's entry at its fork.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, PROC_TRACE_TASKS_MAX);
	__type(key, __u32);
	__type(value, __u64);
} task_cgroups SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22);
} events SEC(".maps");

/*
 * Records lost, per kind, all sandboxes together: global (the skeleton's mmapped .bss), so that
 * firebreakd's check after every drain is a memory load, not a map lookup per kind (those were
 * 750 bpf() calls a second at rest, most of its syscalls). An atomic add, on the loss path only.
 */
__u64 lost_total[PROC_TRACE_KINDS];

static __always_inline struct proc_trace_watch *watched_sandbox(__u64 *ret_cgid)
{
	return share_watched(&watched, NULL, PROC_TRACE_LEVEL_MAX, ret_cgid);
}

/* Fills a reserved record's head. */
static __always_inline void head_init(struct proc_trace_event *e, __u64 sb_cgid, __u32 kind)
{
	e->ts = bpf_ktime_get_boot_ns();
	e->cgroup_id = bpf_get_current_cgroup_id();
	e->sandbox_cgid = sb_cgid;
	e->kind = kind;
	e->uid = (__u32)bpf_get_current_uid_gid();
	e->exit_code = 0;
	e->argv_len = 0;
	e->family = e->sock_type = e->protocol = e->port = 0;
	e->hook_retval = 0;
	e->flags = 0;
	__builtin_memset(e->addr, 0, sizeof(e->addr));
	bpf_get_current_comm(e->comm, sizeof(e->comm));
}

/* A failed reservation, counted for the sandbox and in the total. */
static __always_inline void count_lost(struct proc_trace_watch *w, __u32 kind)
{
	if (kind >= PROC_TRACE_KINDS)
		return;
	__sync_fetch_and_add(&lost_total[kind], 1);
	__sync_fetch_and_add(&w->lost[kind], 1);
}

/* Whether a record of size bytes is past the sandbox's share of the ring (share.bpf.h). */
static __always_inline int over_share(struct proc_trace_watch *w, __u32 size)
{
	return share_over(&w->share, &w->share_ts, &w->over_share, &events, size);
}

static __always_inline __u32 record_size(__u32 kind)
{
	return kind == PROC_TRACE_EXEC || kind == PROC_TRACE_RENAME ||
			       (kind >= PROC_TRACE_UNIX && kind <= PROC_TRACE_CGROUP)
		       ? PROC_TRACE_TEXT_SIZE
	       : kind == PROC_TRACE_SIGNAL || kind == PROC_TRACE_ACCEPT || kind == PROC_TRACE_OOM
		       ? PROC_TRACE_MORE_SIZE
	       : kind == PROC_TRACE_CONNECT || kind == PROC_TRACE_SENDMSG ? PROC_TRACE_ADDR_SIZE
									  : PROC_TRACE_HEAD_SIZE;
}

/*
 * A record's room in the ring. Its size follows from the kind, a constant at each (inlined)
 * call, as the verifier wants: the head alone for fork, exit and sockets; the head and struct
 * proc_trace_more for signals and accepts; path and argv too for exec, rename and the escape
 * indicators. An exec that carries environment values reserves itself whole (reserve_whole).
 */
static __always_inline struct proc_trace_event *reserve(struct proc_trace_watch *w, __u64 sb_cgid,
							__u32 kind)
{
	struct proc_trace_event *e;

	if (over_share(w, record_size(kind))) {
		count_lost(w, kind);
		return NULL;
	}
	e = bpf_ringbuf_reserve(&events, record_size(kind), 0);
	if (!e) {
		count_lost(w, kind);
		return NULL;
	}
	head_init(e, sb_cgid, kind);
	return e;
}

static __always_inline struct proc_trace_event *reserve_whole(struct proc_trace_watch *w,
							      __u64 sb_cgid, __u32 kind)
{
	struct proc_trace_event *e;

	if (over_share(w, sizeof(*e))) {
		count_lost(w, kind);
		return NULL;
	}
	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count_lost(w, kind);
		return NULL;
	}
	head_init(e, sb_cgid, kind);
	return e;
}

static __always_inline void submit_urgent(struct proc_trace_event *e, int urgent)
{
	/* Wake the reader only once enough is waiting: a wakeup per record is the costliest
	 * choice there is (KERNEL-NOTES.md); the reader drains on a short timer besides. A
	 * connect the egress hook refused, or one to the metadata service, is the exception: rare
	 * in honest work and what the detectors act on, it wakes the reader at once. */
	__u64 flags = urgent || bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes
			      ? BPF_RB_FORCE_WAKEUP
			      : BPF_RB_NO_WAKEUP;

	bpf_ringbuf_submit(e, flags);
}

static __always_inline void submit(struct proc_trace_event *e)
{
	submit_urgent(e, 0);
}

/*
 * The hard rule: in a confined step (its tool declares "children"), a file that is not one the
 * step may execute gets the task SIGKILL here, after the kernel has loaded the new image and
 * before it returns to user space: not one instruction of it runs. For a script, bprm->file is
 * already its interpreter. The kill does not depend on room in the ring.
 */
static __always_inline int out_of_scope(struct linux_binprm *bprm)
{
	struct proc_trace_scope_key k = { .cgid = bpf_get_current_cgroup_id() };
	struct inode *inode;
	dev_t dev;

	if (!bpf_map_lookup_elem(&scoped, &k.cgid))
		return 0;
	inode = BPF_CORE_READ(bprm, file, f_inode);
	k.ino = BPF_CORE_READ(inode, i_ino);
	dev = BPF_CORE_READ(inode, i_sb, s_dev);
	k.dev = dev;
	if (bpf_map_lookup_elem(&scope_allow, &k))
		return 0;
	bpf_send_signal(9 /* SIGKILL */);
	return 1;
}

/* The exec record's tail (proc-exec.bpf.h): environment, executable, stdio. */
#include "proc-exec.bpf.h"

SEC("tp_btf/sched_process_exec")
int BPF_PROG(proc_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct proc_trace_watch *w;
	struct proc_trace_event *e;
	struct env_scratch *s;
	unsigned long start, end, len;
	int killed;
	__u32 zero = 0;
	__u64 sb;

	if (!(w = watched_sandbox(&sb)))
		return 0;
	{
		__u32 tgid = BPF_CORE_READ(p, tgid);
		__u64 cg = bpf_get_current_cgroup_id();

		bpf_map_update_elem(&sandbox_tasks, &tgid, &sb, BPF_ANY);
		bpf_map_update_elem(&task_cgroups, &tgid, &cg, BPF_ANY);
	}
	killed = out_of_scope(bprm);
	if (!(s = bpf_map_lookup_elem(&env_scratch, &zero)))
		return 0;
	env_scan(p, s);
	if (s->n_values) {
		if (!(e = reserve_whole(w, sb, PROC_TRACE_EXEC)))
			return 0;
		exec_values(e, s);
	} else if ((e = reserve(w, sb, PROC_TRACE_EXEC))) {
		e->n_values = 0;
	} else {
		return 0;
	}
	e->flags = killed ? PROC_TRACE_F_KILLED : 0;
	e->path[0] = '\0';
	e->pid = BPF_CORE_READ(p, tgid);
	e->ppid = BPF_CORE_READ(p, real_parent, tgid);
	bpf_probe_read_kernel_str(e->path, sizeof(e->path), BPF_CORE_READ(bprm, filename));
	start = BPF_CORE_READ(p, mm, arg_start);
	end = BPF_CORE_READ(p, mm, arg_end);
	len = end > start ? end - start : 0;
	if (len > PROC_TRACE_ARGV_MAX)
		len = PROC_TRACE_ARGV_MAX;
	if (len > 0 &&
	    bpf_probe_read_user(e->argv, len & (PROC_TRACE_ARGV_MAX - 1) ?: PROC_TRACE_ARGV_MAX,
				(void *)start) == 0)
		e->argv_len = (__u32)len;
	exec_tail(e, s, p, bprm);
	/* A memfd or deleted program, or a shell with a socket for stdio: acted on at once. */
	submit_urgent(e, e->stdio_socket ||
				 (e->exe_flags & (PROC_TRACE_EXE_MEMFD | PROC_TRACE_EXE_DELETED)));
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(proc_fork, struct task_struct *parent, struct task_struct *child)
{
	struct proc_trace_watch *w;
	struct proc_trace_event *e;
	__u64 sb;

	/* New processes only; threads share their process's identity. */
	if (BPF_CORE_READ(child, pid) != BPF_CORE_READ(child, tgid))
		return 0;
	{
		__u32 tgid = BPF_CORE_READ(child, tgid);
		/* The child's own cgroup: with CLONE_INTO_CGROUP it is not its parent's. */
		__u64 cg = BPF_CORE_READ(child, cgroups, dfl_cgrp, kn, id);

		if (!(w = watched_sandbox(&sb))) {
			bpf_map_delete_elem(&task_cgroups, &tgid);
			return 0;
		}
		bpf_map_update_elem(&sandbox_tasks, &tgid, &sb, BPF_ANY);
		bpf_map_update_elem(&task_cgroups, &tgid, &cg, BPF_ANY);
	}
	e = reserve(w, sb, PROC_TRACE_FORK);
	if (!e)
		return 0;
	e->pid = BPF_CORE_READ(child, tgid);
	e->ppid = BPF_CORE_READ(parent, tgid);
	submit(e);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(proc_exit, struct task_struct *p)
{
	struct proc_trace_watch *w;
	struct proc_trace_event *e;
	__u64 sb;

	if (BPF_CORE_READ(p, pid) != BPF_CORE_READ(p, tgid))
		return 0;
	{
		__u32 tgid = BPF_CORE_READ(p, tgid);

		bpf_map_delete_elem(&sandbox_tasks, &tgid);
	}
	if (!(w = watched_sandbox(&sb)))
		return 0;
	e = reserve(w, sb, PROC_TRACE_EXIT);
	if (!e)
		return 0;
	e->pid = BPF_CORE_READ(p, tgid);
	e->ppid = BPF_CORE_READ(p, real_parent, tgid);
	e->exit_code = BPF_CORE_READ(p, exit_code);
	submit(e);
	return 0;
}

/*
 * Sockets and where they go: cgroup hooks, attached (by link, so they go when the monitor goes)
 * to each watched sandbox's cgroup after the enforcer's egress hook, which they only watch: they
 * always pass, and read the verdict the egress hook already gave (bpf_get_retval).
 */
SEC("cgroup/sock_create")
int sock_create(struct bpf_sock *sk)
{
	struct proc_trace_watch *w;
	struct proc_trace_event *e;
	__u64 sb;

	if (!(w = watched_sandbox(&sb)) || !(e = reserve(w, sb, PROC_TRACE_SOCKET)))
		return 1;
	e->pid = bpf_get_current_pid_tgid() >> 32;
	e->ppid = 0;
	e->family = (__u16)sk->family;
	e->sock_type = (__u16)sk->type;
	e->protocol = (__u16)sk->protocol;
	submit(e);
	return 1;
}

/* v6 is a constant: a connect4 program may not even read user_ip6. */
static __always_inline int sock_addr(struct bpf_sock_addr *ctx, __u32 kind, const int v6)
{
	struct proc_trace_watch *w;
	struct proc_trace_event *e;
	__u64 sb;

	if (!(w = watched_sandbox(&sb)) || !(e = reserve(w, sb, kind)))
		return 1;
	e->pid = bpf_get_current_pid_tgid() >> 32;
	e->ppid = 0;
	e->family = (__u16)ctx->user_family;
	e->sock_type = (__u16)ctx->type;
	e->protocol = (__u16)ctx->protocol;
	e->port = bpf_ntohs((__u16)ctx->user_port);
	if (!v6) {
		__u32 a = ctx->user_ip4;

		__builtin_memcpy(e->addr, &a, 4);
	} else {
		__u32 a[4];

		a[0] = ctx->user_ip6[0];
		a[1] = ctx->user_ip6[1];
		a[2] = ctx->user_ip6[2];
		a[3] = ctx->user_ip6[3];
		__builtin_memcpy(e->addr, a, 16);
	}
	e->hook_retval = bpf_get_retval();
	/* Who asked, by its executable (comm a process may rename): for a shell, only /dev/tcp
	 * and /dev/udp connect, and that is a reverse shell's first move. */
	if (kind != PROC_TRACE_BIND) {
		struct task_struct *task = (struct task_struct *)bpf_get_current_task();

		e->path[0] = '\0';
		bpf_probe_read_kernel_str(
			e->path, PROC_TRACE_EXE_NAME_MAX,
			BPF_CORE_READ(task, mm, exe_file, f_path.dentry, d_name.name));
	}
	/* 169.254.169.254, as the address's bytes in network order. */
	submit_urgent(e, e->hook_retval || (!v6 && e->addr[0] == 169 && e->addr[1] == 254 &&
					    e->addr[2] == 169 && e->addr[3] == 254));
	return 1;
}

SEC("cgroup/connect4")
int connect4(struct bpf_sock_addr *ctx)
{
	return sock_addr(ctx, PROC_TRACE_CONNECT, 0);
}

SEC("cgroup/connect6")
int connect6(struct bpf_sock_addr *ctx)
{
	return sock_addr(ctx, PROC_TRACE_CONNECT, 1);
}

SEC("cgroup/sendmsg4")
int sendmsg4(struct bpf_sock_addr *ctx)
{
	return sock_addr(ctx, PROC_TRACE_SENDMSG, 0);
}

SEC("cgroup/sendmsg6")
int sendmsg6(struct bpf_sock_addr *ctx)
{
	return sock_addr(ctx, PROC_TRACE_SENDMSG, 1);
}

SEC("cgroup/bind4")
int bind4(struct bpf_sock_addr *ctx)
{
	return sock_addr(ctx, PROC_TRACE_BIND, 0);
}

SEC("cgroup/bind6")
int bind6(struct bpf_sock_addr *ctx)
{
	return sock_addr(ctx, PROC_TRACE_BIND, 1);
}

/*
 * The escape indicators: a unix socket path asked for (the monitor's sockets live on the host; user
 * space flags those), a /proc/sys write, a cgroup changed from inside. Each is rare in honest work
 * and wakes the reader at once.
 */
extern void *bpf_cast_to_kern_ctx(void *obj) __ksym;

/* libbpf 1.1 does not know the unix sections: these load as sock_addr programs, and user space
 * sets their attach types (PROC_TRACE_ATTACH_UNIX_*) before loading. */
_Static_assert(BPF_CGROUP_UNIX_CONNECT == PROC_TRACE_ATTACH_UNIX_CONNECT, "unix connect attach");
_Static_assert(BPF_CGROUP_UNIX_SENDMSG == PROC_TRACE_ATTACH_UNIX_SENDMSG, "unix sendmsg attach");

static __always_inline int unix_addr(struct bpf_sock_addr *ctx, __u32 flags)
{
	struct bpf_sock_addr_kern *sa = bpf_cast_to_kern_ctx(ctx);
	struct proc_trace_watch *w;
	struct proc_trace_event *e;
	__u32 len;
	__u64 sb;

	if (!(w = watched_sandbox(&sb)) || !(e = reserve(w, sb, PROC_TRACE_UNIX)))
		return 1;
	e->pid = bpf_get_current_pid_tgid() >> 32;
	e->ppid = 0;
	e->family = 1 /* AF_UNIX */;
	e->sock_type = (__u16)ctx->type;
	e->flags = flags;
	/* sun_path as given, without its 2-byte family; an abstract name starts with a NUL. */
	len = sa->uaddrlen > 2 ? sa->uaddrlen - 2 : 0;
	if (len > sizeof(((struct sockaddr_un *)0)->sun_path))
		len = sizeof(((struct sockaddr_un *)0)->sun_path);
	e->argv_len = len;
	__builtin_memset(e->path, 0, 128);
	bpf_probe_read_kernel(e->path, sizeof(((struct sockaddr_un *)0)->sun_path),
			      ((struct sockaddr_un *)sa->uaddr)->sun_path);
	submit_urgent(e, 1);
	return 1;
}

SEC("cgroup/connect4")
int connect_unix(struct bpf_sock_addr *ctx)
{
	return unix_addr(ctx, 0);
}

SEC("cgroup/sendmsg4")
int sendmsg_unix(struct bpf_sock_addr *ctx)
{
	return unix_addr(ctx, PROC_TRACE_F_SENDMSG);
}

/*
 * A sandbox has no use for writing a sysctl (it holds no capability; the kernel checks that before
 * this hook runs), so a write that gets here came from a process that has gained privilege: it is
 * refused (EPERM) and reported. Reads pass.
 */
SEC("cgroup/sysctl")
int sysctl_write(struct bpf_sysctl *ctx)
{
	struct proc_trace_watch *w;
	struct proc_trace_event *e;
	long n;
	__u64 sb;

	if (!ctx->write)
		return 1;
	if (!(w = watched_sandbox(&sb)) || !(e = reserve(w, sb, PROC_TRACE_SYSCTL)))
		return 0;
	e->pid = bpf_get_current_pid_tgid() >> 32;
	e->ppid = 0;
	e->path[0] = '\0';
	bpf_sysctl_get_name(ctx, e->path, sizeof(e->path), 0);
	n = bpf_sysctl_get_new_value(ctx, e->argv, PROC_TRACE_SYSCTL_VALUE_MAX);
	/* -E2BIG: the value was longer and is cut; the copy holds what fit. */
	e->argv_len = n >= 0 ? (__u32)n : n == -7 ? PROC_TRACE_SYSCTL_VALUE_MAX - 1 : 0;
	e->hook_retval = -1 /* -EPERM */;
	submit_urgent(e, 1);
	return 0;
}

/*
 * cgroup changes made from inside a watched sandbox, on the v2 hierarchy (id 0) only: the enforcer
 * itself joins a step's cgroups on the v1 hierarchies from inside the sandbox, and nothing of the
 * sandbox's own may touch v2, where its identity, freeze and kill live. These tracepoints are off
 * the syscall path and fire for cgroup changes only.
 */
static __always_inline void cgroup_change(struct cgroup *cgrp, const char *path, __u32 flags,
					  __u32 moved)
{
	struct proc_trace_watch *w;
	struct proc_trace_event *e;
	__u64 sb;

	if (BPF_CORE_READ(cgrp, root, hierarchy_id) != 0 || !(w = watched_sandbox(&sb)) ||
	    !(e = reserve(w, sb, PROC_TRACE_CGROUP)))
		return;
	e->pid = bpf_get_current_pid_tgid() >> 32;
	e->ppid = moved;
	e->flags = flags;
	e->path[0] = '\0';
	bpf_probe_read_kernel_str(e->path, sizeof(e->path), path);
	submit_urgent(e, 1);
}

SEC("tp_btf/cgroup_mkdir")
int BPF_PROG(cg_mkdir, struct cgroup *cgrp, const char *path)
{
	cgroup_change(cgrp, path, PROC_TRACE_F_CG_MKDIR, 0);
	return 0;
}

SEC("tp_btf/cgroup_rmdir")
int BPF_PROG(cg_rmdir, struct cgroup *cgrp, const char *path)
{
	cgroup_change(cgrp, path, PROC_TRACE_F_CG_RMDIR, 0);
	return 0;
}

/*
 * The tracepoint fires after the move, so a task that moved itself is in its new cgroup already:
 * one of the host's (pid namespace level 0) that did is a process entering the sandbox from
 * outside (a runtime, an operator's shell), not one inside leaving or rearranging it. The
 * enforcer's tools are born in their sandbox's pid namespace.
 */
/* Whether cgroup cg is the cgroup of id id, or under it. */
static __always_inline int within(struct cgroup *cg, __u64 id)
{
	int level = BPF_CORE_READ(cg, level);

	for (int i = 0; i <= PROC_TRACE_LEVEL_MAX; i++) {
		struct cgroup *anc = NULL;

		if (i > level)
			break;
		bpf_core_read(&anc, sizeof(anc), &cg->ancestors[i]);
		if (anc && BPF_CORE_READ(anc, kn, id) == id)
			return 1;
	}
	return 0;
}

/*
 * A process of a sandbox moved out of it, to a cgroup outside (the escape from freeze and kill):
 * recorded as the sandbox's, whoever did the move. 1 if it was one.
 */
static __always_inline int left_sandbox(struct cgroup *dst, const char *path,
					struct task_struct *task)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	struct proc_trace_watch *w;
	struct proc_trace_event *e;
	__u64 *sb = bpf_map_lookup_elem(&sandbox_tasks, &tgid), id;

	if (!sb || within(dst, *sb))
		return 0;
	id = *sb;
	if (!(w = bpf_map_lookup_elem(&watched, &id)) || !(e = reserve(w, id, PROC_TRACE_CGROUP)))
		return 1;
	e->cgroup_id = id; /* the sandbox's own: the task is no longer in any of its cgroups */
	e->pid = bpf_get_current_pid_tgid() >> 32;
	e->ppid = tgid;
	e->flags = PROC_TRACE_F_CG_ATTACH | PROC_TRACE_F_CG_LEFT;
	e->path[0] = '\0';
	bpf_probe_read_kernel_str(e->path, sizeof(e->path), path);
	submit_urgent(e, 1);
	return 1;
}

SEC("tp_btf/cgroup_attach_task")
int BPF_PROG(cg_attach, struct cgroup *dst, const char *path, struct task_struct *task,
	     bool threadgroup)
{
	if (BPF_CORE_READ(dst, root, hierarchy_id) == 0) {
		__u32 tgid = BPF_CORE_READ(task, tgid);
		__u64 cg = BPF_CORE_READ(dst, kn, id);

		/* A watched process moved (to another step, or out): where it is now. */
		if (bpf_map_lookup_elem(&task_cgroups, &tgid))
			bpf_map_update_elem(&task_cgroups, &tgid, &cg, BPF_ANY);
		if (left_sandbox(dst, path, task))
			return 0;
	}
	if (BPF_CORE_READ(task, tgid) == (__u32)(bpf_get_current_pid_tgid() >> 32) &&
	    BPF_CORE_READ(task, thread_pid, level) == 0)
		return 0;
	cgroup_change(dst, path, PROC_TRACE_F_CG_ATTACH, BPF_CORE_READ(task, tgid));
	return 0;
}

/* Listeners, accepts, signals and renames (proc-senses.bpf.h). */
#include "proc-senses.bpf.h"

char LICENSE[] SEC("license") = "GPL";
