/*
 * Cgroups for sandboxes and their steps, on whatever shape the host has. The v2 hierarchy gives
 * identity (the cgroup id every kernel event carries), freeze and kill; each resource controller
 * (memory, pids, cpu, io) is used from v2 where the host enables it there, else from its v1
 * hierarchy. Callers name a cgroup by its path relative to every hierarchy's root
 * ("firebreak/task-42/step-3") and never see which backend holds a controller.
 */
#ifndef FB_CGROUP_H
#define FB_CGROUP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CGROUP_ROOT_NAME "firebreak"
/* Hierarchies a cgroup can live in: v2 plus the v1 controllers we use. */
#define CGROUP_MAX_HIERARCHIES 6

struct cgroup_caps {
	uint64_t memory_bytes; /* 0 = no cap */
	int no_swap;	       /* also cap memory+swap at memory_bytes */
	uint64_t pids;	       /* 0 = no cap */
	uint64_t cpu_quota_us; /* per cpu_period_us; 0 = no cap */
	uint64_t cpu_period_us;
	uint64_t io_read_bps; /* per block device; 0 = no cap */
	uint64_t io_write_bps;
};

/* Which hierarchy provides what, as probed from /proc/self/mountinfo; for logs and docs. */
struct cgroup_layout {
	char v2[128];	  /* the cgroup2 mount, "" if none */
	char memory[128]; /* the mount holding each controller, v2's or a v1 one; "" if none */
	char pids[128];
	char cpu[128];
	char io[128];
	int memory_v2, pids_v2, cpu_v2, io_v2;
};

/* Probes the host once (cached); returns 0 and the layout, or -ENODEV without a v2 hierarchy. */
int cgroup_layout(const struct cgroup_layout **ret);

/*
 * Creates rel in every hierarchy (parents as needed) and applies caps (NULL: none, e.g. a step,
 * which inherits its sandbox's). Returns 0, -EEXIST if it exists already in v2, or -errno.
 */
int cgroup_create(const char *rel, const struct cgroup_caps *caps);

/*
 * Creates step cgroup rel (a child of a sandbox's) in v2 only: identity, freeze and kill. In the
 * resource hierarchies a step's processes are in its sandbox's cgroup, whose caps they share, by
 * birth: the exec launcher that forks them lives there (cgroup_join_resources). Joining a v1
 * cgroup is a cgroup.procs write, which holds the host's cgroup_mutex through an RCU grace
 * period after the machine was idle (10-20 ms, stalling every cgroup mkdir, rmdir and clone
 * into a cgroup on the host): a step cgroup there would cost that on every tool call. So where
 * memory is a v1 controller a step has no memory peak of its own. 0, -EEXIST, or -errno.
 */
int cgroup_create_step(const char *rel);

/* Opens step rel's v2 directory, for clone3's CLONE_INTO_CGROUP (born there, no migration): the
 * fd or -errno. */
int cgroup_open_step(const char *rel);

/* Moves the caller into rel in every hierarchy but v2 (the resource controllers there): 0 or
 * -errno. */
int cgroup_join_resources(const char *rel);

/* Moves pid into rel in every hierarchy; 0 or -errno. */
int cgroup_attach(const char *rel, pid_t pid);

/* Opens rel's v2 cgroup.kill for writing (held by a sandbox's init for its wall clock). */
int cgroup_open_kill(const char *rel);

/*
 * Freezes (on) or thaws rel and everything below it (v2 cgroup.freeze; the v1 freezer is never
 * needed, since a v2 hierarchy is required) and, with timeout_ms > 0, waits that long for
 * cgroup.events to confirm it. 0 (done, confirmed if asked), -ETIMEDOUT (asked, not confirmed
 * yet: a task in uninterruptible sleep), or -errno.
 */
int cgroup_freeze(const char *rel, int on, int timeout_ms);

/* Whether cgroup.events says rel is frozen: 1, 0, or -errno. */
int cgroup_frozen(const char *rel);

/* Waits up to timeout_ms until rel and below hold no process (cgroup.events): 0 or -ETIMEDOUT. */
int cgroup_wait_empty(const char *rel, int timeout_ms);

/* rel's file in the v2 hierarchy, open for reading (pread it again for a fresh value); fd or
 * -errno. */
int cgroup_v2_open(const char *rel, const char *file);

/* rel's cgroup.events, open for reading (poll it for POLLPRI: it changed); fd or -errno. */
int cgroup_events_open(const char *rel);

/* The value of "key N" in the keyed file open at fd (cpu.stat's "usage_usec"): 0, or -errno
 * (-ENODATA: no such key in its first 511 bytes). */
int cgroup_keyed_u64(int fd, const char *key, uint64_t *ret);

/* Whether the cgroup.events open at fd says "key want" now ("populated", '0'): 1, 0, or -errno
 * (-ENODATA: no such key). Reading it is what rearms POLLPRI. */
int cgroup_events_has(int fd, const char *key, char want);

/* Kills every process in rel and below (cgroup.kill; v1 freezer, SIGKILL, thaw without it). */
int cgroup_kill(const char *rel);

/* Whether any process is in rel or below: 1, 0, or -errno. */
int cgroup_populated(const char *rel);

/* Kills what is left, waits up to timeout_ms for rel to empty, removes it and its children in
 * every hierarchy. -ENOENT if it did not exist anywhere. */
int cgroup_remove(const char *rel, int timeout_ms);

/* Removes rel in every hierarchy where it is empty (no children, no processes); never kills.
 * For the shared parent "firebreak", which goes with the last sandbox. */
void cgroup_prune(const char *rel);

/* Writes the v2 directory of rel into buf; 0 or -errno. */
int cgroup_v2_dir(const char *rel, char *buf, size_t size);

/*
 * The v2 cgroup process pid (0: the caller) is in, relative to the hierarchy's root ("" at the
 * root), from /proc/PID/cgroup; 0, -ENOENT (no such process, or no v2 line) or -ENAMETOOLONG.
 */
int cgroup_of_pid(pid_t pid, char *buf, size_t size);

/* Whether cgroup rel is ancestor or below it ("x/y" is below "x"; "xy" is not). */
int cgroup_within(const char *rel, const char *ancestor);

/* How deep rel sits below the root: "firebreak" is at level 1, "firebreak/NAME" at 2. */
unsigned cgroup_level(const char *rel);

/* The v2 cgroup id of rel (what BPF's bpf_get_current_cgroup_id returns). */
int cgroup_id(const char *rel, uint64_t *ret);

/* The peak memory of rel since its creation, from whichever hierarchy holds memory. */
int cgroup_memory_peak(const char *rel, uint64_t *ret);

/* Calls cb once with the name of each child cgroup of rel in any hierarchy. */
int cgroup_list_children(const char *rel, int (*cb)(const char *name, void *data), void *data);

/*
 * What a cgroup used, from whichever hierarchy holds each controller (lib/cgroup-stats.c). A
 * field the host cannot tell stays 0 and its bit in `have` stays clear.
 */
enum {
	CGROUP_HAVE_CPU = 1 << 0,
	CGROUP_HAVE_THROTTLE = 1 << 1,
	CGROUP_HAVE_MEMORY = 1 << 2,
	CGROUP_HAVE_PIDS = 1 << 3,
	CGROUP_HAVE_IO = 1 << 4,
	CGROUP_HAVE_PSI = 1 << 5,
};

struct cgroup_stats {
	unsigned have;
	uint64_t cpu_usage_us;
	uint64_t cpu_nr_throttled;
	uint64_t cpu_throttled_us;
	uint64_t memory_current;
	uint64_t memory_peak;
	uint64_t memory_max_hits; /* times the limit was hit */
	uint64_t memory_oom;
	uint64_t memory_oom_kill;
	uint64_t memory_max; /* its limit; 0: none */
	uint64_t pids_current;
	uint64_t pids_max;	/* its limit; 0: none */
	uint64_t pids_max_hits; /* forks refused at the limit */
	uint64_t io_read_bytes;
	uint64_t io_write_bytes;
	/* Pressure stall, avg10, in hundredths of a percent. */
	uint64_t psi_cpu_some;
	uint64_t psi_memory_some;
	uint64_t psi_memory_full;
	uint64_t psi_io_some;
	uint64_t psi_io_full;
};

/* Reads what rel used; 0, -ENOENT (no such cgroup), or -errno. */
int cgroup_read_stats(const char *rel, struct cgroup_stats *ret);

/* Whether the v1 freezer or the v2 hierarchy are the kill path: for tests and docs. */
const char *cgroup_describe(void);

#endif
