#include "exec-scope.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "detectors/detect.h"
#include "hashmap.h"
#include "macro.h"
#include "collectors/proc/proc-events.h"
#include "verdicts.h"

/* One confined step: its key, and what the process collector put in the kernel. */
struct confined {
	char key[FB_NAME_MAX + 24]; /* "sandbox/step", the map's key */
	struct proc_scope *scope;
};

static void lift(struct daemon *d, struct confined *c)
{
	proc_scope_lift(d->proc, c->scope);
	free(c);
}

int exec_scope_confine(struct daemon *d, const struct store_sandbox *sb, int64_t step,
		       const char *tool, uint64_t cgid, const char *program, size_t *ret_files)
{
	char *const *programs, *const *children;
	size_t n_programs, n_children;
	struct detect_state *st;
	struct confined *c;
	int r;

	if (!d->proc)
		return -ENOTCONN;
	st = verdicts_detectors(d, sb);
	if (!st || !detect_tool_scope(st, tool, &programs, &n_programs, &children, &n_children))
		return 0;
	if (!(c = calloc(1, sizeof(*c))))
		return -ENOMEM;
	snprintf(c->key, sizeof(c->key), "%s/%lld", sb->name, (long long)step);
	r = proc_scope_confine(d->proc, cgid, program, programs, n_programs, children, n_children,
			       &c->scope, ret_files);
	if (r == 0) {
		exec_scope_end(d, sb->name, step); /* a step number reused: the old scope goes */
		r = hashmap_put(d->exec_scopes, c->key, c);
	}
	if (r < 0) {
		lift(d, c);
		return r;
	}
	return 1;
}

int exec_scope_init(struct daemon *d)
{
	return hashmap_new(&d->exec_scopes);
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

	while (d->exec_scopes && (c = hashmap_next(d->exec_scopes, &pos))) {
		proc_scope_free(c->scope); /* the tracer and its maps are going anyway */
		free(c);
	}
	hashmap_free(d->exec_scopes);
	d->exec_scopes = NULL;
}
