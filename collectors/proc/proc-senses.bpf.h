/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Listeners and accepts, signals and renames, included by proc-trace.bpf.c (the same maps and
 * ring). All three hooks are tracepoints off the syscall path. signal_generate and task_rename
 * fire for every task on the host: each returns after the watched-set lookup for a bystander.
 */
#ifndef FB_PROC_SENSES_BPF_H
#define FB_PROC_SENSES_BPF_H

/* The watched sandbox cgroup cg is in, by its ancestors at the watched levels. */
static __always_inline struct proc_trace_watch *watched_cgroup(struct cgroup *cg, __u64 *ret_cgid)
{
	__u32 lo = level_lo, hi = level_hi;
	int level = BPF_CORE_READ(cg, level);

	for (__u32 l = 1; l <= PROC_TRACE_LEVEL_MAX; l++) {
		struct proc_trace_watch *w;
		struct cgroup *anc = NULL;
		__u64 id;

		if (l < lo)
			continue;
		if (l > hi || (int)l > level)
			break;
		bpf_core_read(&anc, sizeof(anc), &cg->ancestors[l]);
		if (!anc)
			break;
		id = BPF_CORE_READ(anc, kn, id);
		if ((w = bpf_map_lookup_elem(&watched, &id))) {
			*ret_cgid = id;
			return w;
		}
	}
	return NULL;
}

/*
 * A TCP socket of a watched sandbox entering LISTEN, or an inbound connection reaching
 * ESTABLISHED from SYN_RECV. The second runs in softirq, on whatever task the CPU was running:
 * the socket's own cgroup (sk_cgrp_data, inherited from its listener) says whose it is, and the
 * record carries no pid or comm.
 */
/* The socket's own side of a listen or accept record. */
static __always_inline void sock_local(struct proc_trace_event *e, const struct sock *sk,
				       struct cgroup *cg)
{
	e->cgroup_id = BPF_CORE_READ(cg, kn, id);
	e->ppid = 0;
	e->family = BPF_CORE_READ(sk, __sk_common.skc_family);
	e->sock_type = 1 /* SOCK_STREAM */;
	e->protocol = 6;
	e->port = BPF_CORE_READ(sk, __sk_common.skc_num);
	if (e->family == 10 /* AF_INET6 */)
		BPF_CORE_READ_INTO(&e->addr, sk, __sk_common.skc_v6_rcv_saddr);
	else
		BPF_CORE_READ_INTO((__u32 *)e->addr, sk, __sk_common.skc_rcv_saddr);
}

SEC("tp_btf/inet_sock_set_state")
int BPF_PROG(sock_state, const struct sock *sk, const int oldstate, const int newstate)
{
	struct proc_trace_watch *w;
	struct proc_trace_event *e;
	struct cgroup *cg;
	__u64 sb;

	if (newstate != 10 /* TCP_LISTEN */ &&
	    (newstate != 1 /* TCP_ESTABLISHED */ || oldstate != 3 /* TCP_SYN_RECV */))
		return 0;
	if (BPF_CORE_READ(sk, sk_protocol) != 6 /* IPPROTO_TCP */ ||
	    !(cg = BPF_CORE_READ(sk, sk_cgrp_data.cgroup)) || !(w = watched_cgroup(cg, &sb)))
		return 0;
	if (newstate == 10) {
		if (!(e = reserve(w, sb, PROC_TRACE_LISTEN)))
			return 0;
		sock_local(e, sk, cg);
		e->pid = bpf_get_current_pid_tgid() >> 32;
		submit(e);
		return 0;
	}
	if (!(e = reserve(w, sb, PROC_TRACE_ACCEPT)))
		return 0;
	sock_local(e, sk, cg);
	e->pid = 0;
	__builtin_memset(e->comm, 0, sizeof(e->comm));
	__builtin_memset(&e->more, 0, sizeof(e->more));
	e->more.peer_port = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
	if (e->family == 10)
		BPF_CORE_READ_INTO(&e->more.peer_addr, sk, __sk_common.skc_v6_daddr);
	else
		BPF_CORE_READ_INTO((__u32 *)e->more.peer_addr, sk, __sk_common.skc_daddr);
	submit(e);
	return 0;
}

/*
 * A signal a task of a watched sandbox sent: kill, tkill/tgkill, sigqueue (a real siginfo with
 * SI_USER, SI_TKILL or SI_QUEUE). What the kernel sends by itself (SIGCHLD, SIGPIPE, a fault,
 * the tty's ^C, cgroup.kill) comes with no siginfo, the private one or a kernel si_code: skipped.
 * A kill refused for permission never gets here. Where the target is: its own v2 cgroup, and
 * whether that is inside the sender's sandbox.
 */
SEC("tp_btf/signal_generate")
int BPF_PROG(proc_signal, int sig, struct kernel_siginfo *info, struct task_struct *task, int group,
	     int result)
{
	struct proc_trace_watch *w;
	struct proc_trace_event *e;
	struct cgroup *tcg;
	int code;
	__u64 sb;

	/* The cheap tests first: a bystander's signal costs them and one lookup. info is read
	 * through a probe, not directly: some kernels' BTF give the verifier this argument as a
	 * scalar (a 6.18.44 refuses the direct load), and SEND_SIG_PRIV (1) is no pointer. */
	if ((unsigned long)info <= 1 /* SEND_SIG_NOINFO, SEND_SIG_PRIV */)
		return 0;
	code = BPF_CORE_READ(info, si_code);
	if ((code != 0 && code != -1 && code != -6) || !(w = watched_sandbox(&sb)) ||
	    !(e = reserve(w, sb, PROC_TRACE_SIGNAL)))
		return 0;
	e->pid = bpf_get_current_pid_tgid() >> 32;
	e->ppid = 0;
	__builtin_memset(&e->more, 0, sizeof(e->more));
	e->more.sig = (__u16)sig;
	e->more.result = result;
	e->more.si_code = code;
	e->more.group = group;
	e->more.target_pid = BPF_CORE_READ(task, tgid);
	bpf_probe_read_kernel_str(e->more.target_comm, sizeof(e->more.target_comm), task->comm);
	tcg = BPF_CORE_READ(task, cgroups, dfl_cgrp);
	e->more.target_cgid = BPF_CORE_READ(tcg, kn, id);
	e->more.target_in = tcg && within(tcg, sb);
	/* Beyond the sender's own cgroup is what the detectors judge: at once. */
	submit_urgent(e, e->more.target_cgid != e->cgroup_id);
	return 0;
}

/*
 * comm changed (prctl PR_SET_NAME, a write to /proc/PID/comm) in a watched sandbox. exec sets comm
 * through the same tracepoint: in_execve tells those apart. The record: old comm (comm), new comm
 * (argv), the executable's name (path), the renamed thread (ppid holds its tid).
 */
SEC("tp_btf/task_rename")
int BPF_PROG(proc_rename, struct task_struct *task, const char *comm)
{
	struct proc_trace_watch *w;
	struct proc_trace_event *e;
	long n;
	__u64 sb;

	/* The watched-set lookup first: a bystander's rename costs it alone. */
	if (!(w = watched_sandbox(&sb)) || BPF_CORE_READ_BITFIELD_PROBED(task, in_execve) ||
	    !(e = reserve(w, sb, PROC_TRACE_RENAME)))
		return 0;
	e->pid = BPF_CORE_READ(task, tgid);
	e->ppid = BPF_CORE_READ(task, pid);
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), task->comm);
	n = bpf_probe_read_kernel_str(e->argv, 16, comm);
	e->argv_len = n > 0 ? (__u32)n - 1 : 0;
	e->path[0] = '\0';
	bpf_probe_read_kernel_str(e->path, sizeof(e->path),
				  BPF_CORE_READ(task, mm, exe_file, f_path.dentry, d_name.name));
	e->env_mask = 0;
	e->exe_flags = 0;
	e->stdio_socket = 0;
	e->n_values = 0;
	submit_urgent(e, 1);
	return 0;
}

/*
 * The OOM killer chose a victim in a watched sandbox. The memory cgroup's own count of it is
 * kept only in the victim's memcg where the sandbox's memory is a v1 hierarchy (the step's,
 * gone with the step), so the kill is seen here, where it happens, off the syscall path. The
 * victim is rarely the task running (that is the one whose allocation ran out): placed by its
 * own v2 cgroup, its step.
 */
SEC("tp_btf/mark_victim")
int BPF_PROG(proc_oom, struct task_struct *task, uid_t uid)
{
	struct proc_trace_watch *w;
	struct proc_trace_event *e;
	struct cgroup *cg = BPF_CORE_READ(task, cgroups, dfl_cgrp);
	__u64 sb;

	if (!cg || !(w = watched_cgroup(cg, &sb)) || !(e = reserve(w, sb, PROC_TRACE_OOM)))
		return 0;
	e->cgroup_id = BPF_CORE_READ(cg, kn, id);
	e->pid = BPF_CORE_READ(task, tgid);
	e->ppid = BPF_CORE_READ(task, real_parent, tgid);
	e->uid = uid;
	bpf_probe_read_kernel_str(e->comm, sizeof(e->comm), task->comm);
	__builtin_memset(&e->more, 0, sizeof(e->more));
	e->more.target_pid = bpf_get_current_pid_tgid() >> 32;
	bpf_get_current_comm(e->more.target_comm, sizeof(e->more.target_comm));
	submit_urgent(e, 1);
	return 0;
}

#endif
