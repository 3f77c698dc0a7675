/*
 * The loader and interpreter start-up variables an exec is searched for (issue 16, item 6): the
 * one table the process tracer (which fills its kernel map from it) and the detectors (which
 * judge the names it reports) share. A name's index is its bit in the tracer's env_mask.
 */
#ifndef FB_LOADER_ENV_H
#define FB_LOADER_ENV_H

#include <stddef.h>

/* A variable's classes. */
#define LOADER_ENV_VALUE 1    /* dangerous: its value (cut) is reported too */
#define LOADER_ENV_LOADER 2   /* read by the dynamic loader (ld.so, glibc) */
#define LOADER_ENV_GIT_HOOK 4 /* makes git run a command (or rewrites its config) */
#define LOADER_ENV_PYTHON 8   /* read by python at start-up */

struct loader_env {
	const char *name;
	unsigned flags;
};

/* The table, and how many it has (at most 64). */
extern const struct loader_env loader_env_table[];
size_t loader_env_count(void);

/* The index of name in the table, or -1. */
int loader_env_index(const char *name);

#endif
