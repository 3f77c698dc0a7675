/*
 * The in-kernel hard rule for execs (proc-events.h): the files a confined step may execute, as
 * (device, inode) keys in the tracer's map, and the step's cgroup marked confined. The monitor
 * decides which files (monitor/exec-scope.c); this file only puts them in the kernel and takes
 * them out again.
 */
#include "proc-events.h"

#include <errno.h>
#include <glob.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "proc-events-internal.h"
#include "proc-tracer.h"

#define SCOPE_FILES_MAX 256 /* files one step may execute */

struct proc_scope {
	uint64_t cgid;
	size_t n;
	struct proc_trace_scope_key keys[SCOPE_FILES_MAX];
};

/* Adds the file at path (symlinks followed: python3 is python3.11's inode) once. */
static void add_file(struct proc_scope *c, const char *path)
{
	struct stat st;
	struct proc_trace_scope_key k;

	if (c->n == SCOPE_FILES_MAX || stat(path, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	k.cgid = c->cgid;
	k.dev = ((uint64_t)major(st.st_dev) << 20) | minor(st.st_dev); /* the kernel's dev_t */
	k.ino = st.st_ino;
	for (size_t i = 0; i < c->n; i++)
		if (c->keys[i].dev == k.dev && c->keys[i].ino == k.ino)
			return;
	c->keys[c->n++] = k;
}

static void add_glob(struct proc_scope *c, const char *pattern)
{
	glob_t g;

	if (glob(pattern, GLOB_NOSORT, NULL, &g) != 0)
		return;
	for (size_t i = 0; i < g.gl_pathc; i++)
		add_file(c, g.gl_pathv[i]);
	globfree(&g);
}

void proc_scope_free(struct proc_scope *s)
{
	free(s);
}

void proc_scope_lift(struct proc_events *pe, struct proc_scope *s)
{
	struct proc_tracer *t = pe ? proc_events_tracer(pe) : NULL;

	if (s && t) {
		proc_tracer_scope(t, s->cgid, 0);
		for (size_t i = 0; i < s->n; i++)
			proc_tracer_scope_allow(t, &s->keys[i], 0);
	}
	free(s);
}

int proc_scope_confine(struct proc_events *pe, uint64_t cgid, const char *program,
		       char *const *programs, size_t n_programs, char *const *globs, size_t n_globs,
		       struct proc_scope **ret, size_t *ret_files)
{
	struct proc_tracer *t = proc_events_tracer(pe);
	struct proc_scope *c = calloc(1, sizeof(*c));
	int r = 0;

	if (!c)
		return -ENOMEM;
	c->cgid = cgid;
	if (program)
		add_file(c, program);
	for (size_t i = 0; i < n_programs; i++)
		add_file(c, programs[i]);
	for (size_t i = 0; i < n_globs; i++)
		add_glob(c, globs[i]);
	/* The files first, then the confinement: never a moment with a scope and no files. */
	for (size_t i = 0; i < c->n && r == 0; i++)
		r = proc_tracer_scope_allow(t, &c->keys[i], 1);
	if (r == 0)
		r = proc_tracer_scope(t, c->cgid, 1);
	if (r < 0) {
		proc_scope_lift(pe, c);
		return r;
	}
	*ret_files = c->n;
	*ret = c;
	return 0;
}
