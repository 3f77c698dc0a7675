/* What the file collector's two halves share: its state (file-events.c) and emission (file-emit.c).
 */
#ifndef FB_FILE_EVENTS_INTERNAL_H
#define FB_FILE_EVENTS_INTERNAL_H

#include <stdint.h>
#include <sys/types.h>

#include "bounds.h"
#include "collectors/collector.h"
#include "file-notify.h"

struct file_agg;
struct hashmap;

/*
 * A pair of fanotify groups and how many watches have their marks in it: one while the kernel
 * gives each sandbox a pair of its own (then one sandbox's flood overflows only its own queue),
 * more once the collector's share of the kernel's group limit is used (file-events.c).
 */
struct file_group {
	struct file_events *fe;
	struct file_notify *notify;
	size_t members;
	int paused[FILE_NOTIFY_GROUPS]; /* not watched until the batch timer fires */
};

/* One watched sandbox: its group and what it lost since it was last reported. */
struct file_watch {
	struct file_events *fe;
	char sandbox[FB_NAME_MAX + 1];
	struct file_group *group;
	uint64_t overflows;  /* the kernel's queue overflowed (each time at least one event) */
	uint64_t store_full; /* events dropped: the store's queue was full */
	uint64_t overflows_seen, store_full_seen;
	uint64_t read_errors; /* reads the kernel failed: the events in them are gone */
	uint64_t read_errors_seen;
	uint64_t proc_gone; /* /proc/N closes of an exited N: the kernel dropped them */
	uint64_t proc_gone_seen;
	uint64_t unresolved; /* events whose directory was gone before they were read */
	uint64_t unresolved_seen;
	int64_t loss_since;
	struct hashmap *mtimes; /* "dev:ino" -> struct file_mtime: mtimes reported as rewritten */
};

/* An mtime a file.utimes reported, so that a later chmod of the file is not taken for one. */
struct file_mtime {
	char key[48];
	int64_t mtime;
};

#define FILE_MTIMES_MAX 32768

/* Forgets the processes looked up (a step ended: its processes' cgroups are gone). */
void file_pids_clear(struct file_events *fe);

/* Forgets w's mtimes. */
void file_mtimes_clear(struct file_watch *w);

/*
 * The process an event came from: its cgroup, looked up through /proc once and kept for
 * FILE_PID_TTL_NS (a process changes cgroup only when moved, and the cache is forgotten when a
 * step ends), so that an event costs no /proc reads; and its pid inside the sandbox. Its comm
 * changes at exec, so it is not kept: read for each event stored on its own.
 */
struct file_pid {
	int32_t pid;
	uint64_t cgid;	 /* 0: not a process of the watched sandbox */
	int32_t nspid;	 /* its pid inside the sandbox */
	int64_t seen_ns; /* when it was looked up */
	int gone;	 /* it was gone then (or not a process of ours to look up) */
};

#define FILE_PID_CACHE 64
#define FILE_PID_TTL_NS (250 * 1000 * 1000LL)

struct file_events {
	struct collector_env env;
	struct file_watch **watches;
	size_t n_watches;
	struct file_group **groups;
	size_t n_groups;
	size_t groups_max; /* group pairs made before sandboxes share them */
	struct file_agg *agg;
	int timer_fd;
	int batch_fd; /* one-shot: when the paused groups are watched again */
	int batch_armed;
	pid_t self;
	struct file_pid pids[FILE_PID_CACHE];
	unsigned n_pids, next_pid;
	/* counters */
	uint64_t stored, summaries, summarized, by_group, outside, unresolved, unattributed;
	uint64_t overflows, store_full, agg_full, watched, watch_failed, read_errors, proc_gone;
	uint64_t link_count, shared, departed, store_waits;
	uint64_t groups_open; /* gauge: group pairs */
};

/* Turns one note of group data into an event of its watch (or a count); file-emit.c. */
void file_emit_note(const struct file_note *note, void *data);

/* Stores one summary the aggregation flushed; data is the collector. */
struct file_agg_summary;
void file_emit_summary(const struct file_agg_summary *s, void *data);

#endif
