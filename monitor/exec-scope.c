#include "exec-scope.h"

#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "control.h"
#include "daemon.h"
#include "hashmap.h"
#include "macro.h"
#include "collectors/proc/proc-tracer.h"
#include "verdicts.h"

#define SCOPE_FILES_MAX 256 /* files one step may execute */

/* One confined step: what was put in the kernel's maps, to take it out again. */
struct confined {
	char key[FB_NAME_MAX + 24]; /* "sandbox/step", the map's key */
	uint64_t cgid;
	size_t n;
	struct proc_trace_scope_key keys[SCOPE_FILES_MAX];
};

/* Adds the file at path (symlinks followed: python3 is python3.11's inode) once. */
static void add_file(struct confined *c, const char *path)
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

static void add_glob(struct confined *c, const char *pattern)
{
	glob_t g;

	if (glob(pattern, GLOB_NOSORT, NULL, &g) != 0)
		return;
	for (size_t i = 0; i < g.gl_pathc; i++)
		add_file(c, g.gl_pathv[i]);
	globfree(&g);
}

static void lift(struct daemon *d, struct confined *c)
{
	if (d->proc_tracer) {
		proc_tracer_scope(d->proc_tracer, c->cgid, 0);
		for (size_t i = 0; i < c->n; i++)
			proc_tracer_scope_allow(d->proc_tracer, &c->keys[i], 0);
	}
	free(c);
}

int exec_scope_confine(struct daemon *d, const struct store_sandbox *sb, int64_t step,
		       const char *tool, uint64_t cgid, const char *program, size_t *ret_files)
{
	char *const *programs, *const *children;
	size_t n_programs, n_children;
	struct detect_state *st;
	struct confined *c;
	int r = 0;

	if (!d->proc_tracer)
		return -ENOTCONN;
	st = verdicts_detectors(d, sb);
	if (!st || !detect_tool_scope(st, tool, &programs, &n_programs, &children, &n_children))
		return 0;
	if (!(c = calloc(1, sizeof(*c))))
		return -ENOMEM;
	snprintf(c->key, sizeof(c->key), "%s/%lld", sb->name, (long long)step);
	c->cgid = cgid;
	if (program)
		add_file(c, program);
	for (size_t i = 0; i < n_programs; i++)
		add_file(c, programs[i]);
	for (size_t i = 0; i < n_children; i++)
		add_glob(c, children[i]);
	/* The files first, then the confinement: never a moment with a scope and no files. */
	for (size_t i = 0; i < c->n && r == 0; i++)
		r = proc_tracer_scope_allow(d->proc_tracer, &c->keys[i], 1);
	if (r == 0)
		r = proc_tracer_scope(d->proc_tracer, c->cgid, 1);
	if (r == 0) {
		exec_scope_end(d, sb->name, step); /* a step number reused: the old scope goes */
		r = hashmap_put(d->exec_scopes, c->key, c);
	}
	if (r < 0) {
		lift(d, c);
		return r;
	}
	*ret_files = c->n;
	return 1;
}

void exec_scope_op(struct daemon *d, struct lineserver *ls, uint64_t token, uint64_t lineno,
		   json_t *req)
{
	const char *op, *name, *tool, *program;
	struct store_sandbox *sb;
	json_int_t step, cgid;
	json_error_t jerr;
	size_t files = 0;
	int r;

	if (json_unpack_ex(req, &jerr, JSON_STRICT, "{s:s, s:s, s:I, s:s, s:I, s:s}", "op", &op,
			   "sandbox", &name, "step", &step, "tool", &tool, "cgroup_id", &cgid,
			   "program", &program) < 0)
		return control_refuse(d, ls, token, lineno, jerr.text);
	if (!(sb = registry_find(d->registry, name)) || !registry_live(sb))
		return control_refuse(d, ls, token, lineno, "unknown or stopped sandbox");
	r = exec_scope_confine(d, sb, step, tool, (uint64_t)cgid, program, &files);
	if (r == -ENOTCONN)
		return control_refuse(d, ls, token, lineno, "the process tracer is not running");
	if (r < 0)
		return control_refuse(d, ls, token, lineno, "the exec scope could not be set");
	if (r == 0)
		return control_reply_json(ls, token, json_pack("{s:b, s:b}", "ok", 1, "confined", 0));
	control_reply_json(ls, token,
			   json_pack("{s:b, s:b, s:I}", "ok", 1, "confined", 1, "files",
				     (json_int_t)files));
}

void exec_scope_end(struct daemon *d, const char *sandbox, int64_t step)
{
	char key[FB_NAME_MAX + 24];
	struct confined *c;

	if (!d->exec_scopes)
		return;
	snprintf(key, sizeof(key), "%s/%lld", sandbox, (long long)step);
	if ((c = hashmap_remove(d->exec_scopes, key)))
		lift(d, c);
}

void exec_scope_stop(struct daemon *d)
{
	struct confined *c;
	size_t pos = 0;

	while (d->exec_scopes && (c = hashmap_next(d->exec_scopes, &pos)))
		free(c); /* the tracer and its maps are going anyway */
	hashmap_free(d->exec_scopes);
	d->exec_scopes = NULL;
}
