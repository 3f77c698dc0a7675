/*
 * The file collector's per-step aggregation: in one step, the first few events of one kind in
 * one directory are individual; the rest only count, and become one "file.summary" per (step,
 * directory, kind) when flushed (periodically, and when the table is full), so ten thousand
 * opens in site-packages are a handful of events and one count. Sensitive paths never come here.
 */
#ifndef FB_FILE_AGG_H
#define FB_FILE_AGG_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "bounds.h"

/* How many events of a kind per step and directory are individual before they are counted. */
#define FILE_AGG_INDIVIDUAL 4
/* A directory deeper than this many components is counted under its ancestor at that depth
 * (/tmp/venv/lib/python3.11/site-packages/pip/_vendor/x: under .../site-packages). */
#define FILE_AGG_DEPTH 5
/* How many (step, directory, kind) entries the table holds: beyond, it is flushed early. */
#define FILE_AGG_ENTRIES 4096

struct file_agg;

/* One entry's count since its last flush. */
struct file_agg_summary {
	const char *sandbox;
	int64_t step;
	const char *tool; /* "" if none */
	const char *kind; /* the kind counted ("file.open") */
	const char *dir;
	uint64_t count;
	int64_t first_ts, last_ts;
};

/* A new empty table; 0 and *ret, or -ENOMEM. */
int file_agg_new(struct file_agg **ret);

/* Frees it (what it still counts is dropped: flush first); accepts NULL. */
void file_agg_free(struct file_agg *a);

/*
 * Notes one event of kind in dir (both copied) at ts: 1 if the event is to be stored on its own,
 * 0 if it was counted instead, -ENOSPC if the table is full (flush, then add again), -ENOMEM.
 */
int file_agg_add(struct file_agg *a, const char *sandbox, int64_t step, const char *tool,
		 const char *kind, const char *dir, int64_t ts);

/*
 * Calls fn for each entry with a count and zeroes it; forgets entries last used before
 * idle_before (INT64_MAX: all of them), so their next events are individual again.
 */
void file_agg_flush(struct file_agg *a, int64_t idle_before,
		    void (*fn)(const struct file_agg_summary *s, void *data), void *data);

/* How many events are counted and not yet flushed. */
uint64_t file_agg_pending(const struct file_agg *a);

#endif
