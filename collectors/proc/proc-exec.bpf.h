/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The exec record's tail, included by proc-trace.bpf.c (one object: the same maps and ring):
 * which loader and interpreter start-up variables the new program's environment holds (and, for
 * the dangerous ones, a cut value), what its executable is (memfd, deleted, on a tmpfs), and
 * whether its stdin, stdout or stderr is an inet socket (a reverse shell's mark).
 *
 * The environment is read from the new image (mm->env_start..env_end; the kernel has just
 * written it, so its pages are present), one entry at a time with bpf_probe_read_user_str (the
 * kernel's word-at-a-time copy), at most PROC_TRACE_ENV_ENTRIES_MAX entries through bpf_loop.
 * A name is looked up in env_names, which user space fills (collectors/proc/proc-env.c): the
 * names live in one table, the kernel side knows only bits.
 */
#ifndef FB_PROC_EXEC_BPF_H
#define FB_PROC_EXEC_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PROC_TRACE_ENV_NAMES_MAX);
	__type(key, char[PROC_TRACE_ENV_NAME_MAX]);
	__type(value, struct proc_trace_env_name);
} env_names SEC(".maps");

/* One CPU's working room: an entry, the name being looked up, and what was found so far. */
struct env_scratch {
	char buf[PROC_TRACE_ENV_ENTRY_MAX];
	char key[PROC_TRACE_ENV_NAME_MAX];
	unsigned long p, end;
	__u64 mask;
	__u32 entries;
	__u32 n_values;
	__u8 truncated;
	__u8 value_bit[PROC_TRACE_ENV_VALUES];
	char values[PROC_TRACE_ENV_VALUES][PROC_TRACE_ENV_VALUE_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct env_scratch);
} env_scratch SEC(".maps");

/* The entry in s->buf (n bytes with its NUL): a watched name? Then its bit, and maybe its value. */
static __always_inline void env_match(struct env_scratch *s, long n)
{
	struct proc_trace_env_name *nm;
	char c0 = s->buf[0];
	long vlen;
	__u32 j, k;

	/* The first letters of the watched names: everything else costs one compare. */
	if (c0 != 'L' && c0 != 'G' && c0 != 'B' && c0 != 'E' && c0 != 'P' && c0 != 'R' && c0 != 'N')
		return;
	__builtin_memset(s->key, 0, sizeof(s->key));
	for (j = 0; j < PROC_TRACE_ENV_NAME_MAX; j++) {
		char ch = s->buf[j];

		if (ch == '=' || ch == '\0')
			break;
		s->key[j] = ch;
	}
	if (j >= PROC_TRACE_ENV_NAME_MAX || s->buf[j] != '=')
		return;
	if (!(nm = bpf_map_lookup_elem(&env_names, s->key)))
		return;
	s->mask |= 1ULL << (nm->bit & 63);
	if (!nm->keep_value || s->n_values >= PROC_TRACE_ENV_VALUES)
		return;
	k = s->n_values & (PROC_TRACE_ENV_VALUES - 1);
	bpf_probe_read_kernel(s->values[k], PROC_TRACE_ENV_VALUE_MAX, s->buf + j + 1);
	vlen = n - 2 - (long)j; /* n counts the NUL; the value starts after the '=' */
	if (vlen < 0)
		vlen = 0;
	if (vlen > PROC_TRACE_ENV_VALUE_MAX - 1)
		vlen = PROC_TRACE_ENV_VALUE_MAX - 1;
	s->values[k][vlen & (PROC_TRACE_ENV_VALUE_MAX - 1)] = '\0';
	s->value_bit[k] = (__u8)nm->bit;
	s->n_values++;
}

/* One entry (bpf_loop's callback): 1 stops the walk. */
static long env_entry(__u32 i, void *ctx)
{
	__u32 zero = 0;
	struct env_scratch *s = bpf_map_lookup_elem(&env_scratch, &zero);
	long n;

	if (!s || s->p >= s->end)
		return 1;
	n = bpf_probe_read_user_str(s->buf, sizeof(s->buf), (void *)s->p);
	if (n <= 0)
		return 1;
	s->entries++;
	/* A longer entry is read in pieces: the next starts where this copy was cut. */
	s->p += n < (long)sizeof(s->buf) ? n : n - 1;
	env_match(s, n);
	return 0;
}

static __always_inline void env_scan(struct task_struct *p, struct env_scratch *s)
{
	s->p = BPF_CORE_READ(p, mm, env_start);
	s->end = BPF_CORE_READ(p, mm, env_end);
	s->mask = 0;
	s->entries = 0;
	s->n_values = 0;
	s->truncated = 0;
	bpf_loop(PROC_TRACE_ENV_ENTRIES_MAX, env_entry, NULL, 0);
	s->truncated = s->p < s->end;
}

/* Whether file f is a socket of an inet family. */
static __always_inline int inet_socket_file(struct file *f)
{
	struct socket *sock;
	__u16 fam;

	if (!f || (BPF_CORE_READ(f, f_inode, i_mode) & 0170000) != 0140000 /* S_IFSOCK */)
		return 0;
	sock = BPF_CORE_READ(f, private_data);
	fam = BPF_CORE_READ(sock, sk, __sk_common.skc_family);
	return fam == 2 /* AF_INET */ || fam == 10 /* AF_INET6 */;
}

static __always_inline __u8 stdio_sockets(struct task_struct *p)
{
	struct fdtable *fdt = BPF_CORE_READ(p, files, fdt);
	struct file **fds = BPF_CORE_READ(fdt, fd);
	unsigned max = BPF_CORE_READ(fdt, max_fds);
	__u8 bits = 0;

	for (unsigned i = 0; i < 3 && i < max; i++) {
		struct file *f = NULL;

		bpf_probe_read_kernel(&f, sizeof(f), &fds[i]);
		if (inet_socket_file(f))
			bits |= 1 << i;
	}
	return bits;
}

/* The inode of fd i's pipe (an anonymous one, on pipefs; a named FIFO is a file), or 0. */
static __always_inline __u64 stdio_pipe(struct file **fds, unsigned max, unsigned i)
{
	struct file *f = NULL;
	struct inode *inode;

	if (i >= max)
		return 0;
	bpf_probe_read_kernel(&f, sizeof(f), &fds[i]);
	if (!f)
		return 0;
	inode = BPF_CORE_READ(f, f_inode);
	if ((BPF_CORE_READ(inode, i_mode) & 0170000) != 0010000 /* S_IFIFO */ ||
	    BPF_CORE_READ(inode, i_sb, s_magic) != 0x50495045 /* PIPEFS_MAGIC */)
		return 0;
	return BPF_CORE_READ(inode, i_ino);
}

/* stdin and stdout as pipes: which pipe joins a decoder or downloader to a shell. */
static __always_inline void stdio_pipes(struct proc_trace_event *e, struct task_struct *p)
{
	struct fdtable *fdt = BPF_CORE_READ(p, files, fdt);
	struct file **fds = BPF_CORE_READ(fdt, fd);
	unsigned max = BPF_CORE_READ(fdt, max_fds);

	e->stdin_pipe = stdio_pipe(fds, max, 0);
	e->stdout_pipe = stdio_pipe(fds, max, 1);
}

/*
 * The program's own file: for a script, the script (bprm->executable, where the kernel has one),
 * not its interpreter. A memfd is an unlinked shmem file named "memfd:..."; a deleted one has no
 * link left; a tmpfs one may be the sandbox's (user space compares the device).
 */
static __always_inline void exe_identity(struct proc_trace_event *e, struct linux_binprm *bprm)
{
	struct file *f = NULL;
	struct inode *inode;
	char name[8] = {};

	if (bpf_core_field_exists(bprm->executable))
		f = BPF_CORE_READ(bprm, executable);
	if (!f)
		f = BPF_CORE_READ(bprm, file);
	inode = BPF_CORE_READ(f, f_inode);
	e->exe_ino = BPF_CORE_READ(inode, i_ino);
	e->exe_dev = BPF_CORE_READ(inode, i_sb, s_dev);
	e->exe_flags = 0;
	bpf_probe_read_kernel(name, 6, BPF_CORE_READ(f, f_path.dentry, d_name.name));
	if (name[0] == 'm' && name[1] == 'e' && name[2] == 'm' && name[3] == 'f' &&
	    name[4] == 'd' && name[5] == ':')
		e->exe_flags |= PROC_TRACE_EXE_MEMFD;
	else if (BPF_CORE_READ(inode, i_nlink) == 0)
		e->exe_flags |= PROC_TRACE_EXE_DELETED;
	if (BPF_CORE_READ(inode, i_sb, s_magic) == 0x01021994 /* TMPFS_MAGIC */)
		e->exe_flags |= PROC_TRACE_EXE_TMPFS;
}

static __always_inline void exec_tail(struct proc_trace_event *e, struct env_scratch *s,
				      struct task_struct *p, struct linux_binprm *bprm)
{
	e->env_mask = s->mask;
	e->env_entries = (__u16)s->entries;
	e->env_truncated = s->truncated;
	e->stdio_socket = stdio_sockets(p);
	stdio_pipes(e, p);
	exe_identity(e, bprm);
	e->parent_exe[0] = '\0';
	bpf_probe_read_kernel_str(
		e->parent_exe, sizeof(e->parent_exe),
		BPF_CORE_READ(p, real_parent, mm, exe_file, f_path.dentry, d_name.name));
}

/* The values, into a record reserved whole (reserve_whole): only it has room for them. */
static __always_inline void exec_values(struct proc_trace_event *e, struct env_scratch *s)
{
	e->n_values =
		(__u8)(s->n_values > PROC_TRACE_ENV_VALUES ? PROC_TRACE_ENV_VALUES : s->n_values);
	__builtin_memcpy(e->value_bit, s->value_bit, sizeof(e->value_bit));
	__builtin_memcpy(e->values, s->values, sizeof(e->values));
}

#endif
