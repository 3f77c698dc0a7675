/* The file collector's per-step aggregation (file-agg.h). */
#include "file-agg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"

struct entry {
	char *key; /* "sandbox/step/kind/dir": the map's key */
	char sandbox[FB_NAME_MAX + 1];
	char tool[FB_TOOL_MAX + 1];
	char kind[FB_KIND_MAX + 1];
	const char *dir; /* inside key */
	int64_t step;
	unsigned seen; /* events since the entry was made, up to FILE_AGG_INDIVIDUAL + 1 */
	uint64_t count;
	int64_t first_ts, last_ts, used_ts;
};

struct file_agg {
	struct hashmap *map;
	uint64_t pending;
};

int file_agg_new(struct file_agg **ret)
{
	struct file_agg *a = calloc(1, sizeof(*a));

	if (!a || hashmap_new(&a->map) < 0) {
		free(a);
		return -ENOMEM;
	}
	*ret = a;
	return 0;
}

static void entry_free(struct entry *e)
{
	if (e)
		free(e->key);
	free(e);
}

void file_agg_free(struct file_agg *a)
{
	size_t pos = 0;
	struct entry *e;

	if (!a)
		return;
	while ((e = hashmap_next(a->map, &pos)))
		entry_free(e);
	hashmap_free(a->map);
	free(a);
}

static struct entry *entry_new(const char *key, const char *sandbox, int64_t step, const char *tool,
			       const char *kind, size_t dir_off)
{
	struct entry *e = calloc(1, sizeof(*e));

	if (!e || !(e->key = strdup(key))) {
		free(e);
		return NULL;
	}
	snprintf(e->sandbox, sizeof(e->sandbox), "%s", sandbox);
	snprintf(e->tool, sizeof(e->tool), "%s", tool ? tool : "");
	snprintf(e->kind, sizeof(e->kind), "%s", kind);
	e->dir = e->key + dir_off;
	e->step = step;
	return e;
}

int file_agg_add(struct file_agg *a, const char *sandbox, int64_t step, const char *tool,
		 const char *kind, const char *dir, int64_t ts)
{
	char key[FB_NAME_MAX + FB_KIND_MAX + PATH_MAX + 64];
	struct entry *e;
	int n = snprintf(key, sizeof(key), "%s/%lld/%s/", sandbox, (long long)step, kind);

	if (n < 0 || (size_t)n >= sizeof(key) || strlen(dir) >= sizeof(key) - (size_t)n)
		return 1; /* no room to count it: stored on its own */
	strcpy(key + n, dir);
	if (!(e = hashmap_get(a->map, key))) {
		if (hashmap_size(a->map) >= FILE_AGG_ENTRIES)
			return -ENOSPC;
		if (!(e = entry_new(key, sandbox, step, tool, kind, (size_t)n)))
			return -ENOMEM;
		if (hashmap_put(a->map, e->key, e) < 0) {
			entry_free(e);
			return -ENOMEM;
		}
	}
	e->used_ts = ts;
	if (e->seen < FILE_AGG_INDIVIDUAL) {
		e->seen++;
		return 1;
	}
	if (!e->count)
		e->first_ts = ts;
	e->count++;
	e->last_ts = ts;
	a->pending++;
	return 0;
}

void file_agg_flush(struct file_agg *a, int64_t idle_before,
		    void (*fn)(const struct file_agg_summary *s, void *data), void *data)
{
	size_t pos = 0;
	struct entry *e;

	while ((e = hashmap_next(a->map, &pos))) {
		if (e->count) {
			struct file_agg_summary s = {
				e->sandbox, e->step,  e->tool,	   e->kind,
				e->dir,	    e->count, e->first_ts, e->last_ts
			};

			fn(&s, data);
			a->pending -= e->count;
			e->count = 0;
		}
		if (e->used_ts < idle_before) {
			hashmap_remove(a->map, e->key);
			entry_free(e);
			pos = 0; /* removal reorders the table: start over (flushed ones have no
				    count) */
		}
	}
}

uint64_t file_agg_pending(const struct file_agg *a)
{
	return a->pending;
}
