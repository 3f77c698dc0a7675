/*
 * The in-kernel hard rule for execs: a step whose tool declares "children" is confined to the
 * files it may execute (the step's approved program, the tool's programs, its children), and the
 * process tracer kills any other exec in the exec tracepoint, before the new image runs. The
 * enforcer asks for it (op exec-scope) and waits for the answer before the step's tool starts.
 */
#ifndef FB_EXEC_SCOPE_H
#define FB_EXEC_SCOPE_H

#include <stddef.h>
#include <stdint.h>

struct daemon;

struct store_sandbox;

/*
 * Confines step of sb (cgroup id cgid) if its tool declares children: 1 (and *ret_files), 0 if the
 * tool is not confined, -ENOTCONN without a process tracer, or -errno.
 */
int exec_scope_confine(struct daemon *d, const struct store_sandbox *sb, int64_t step,
		       const char *tool, uint64_t cgid, const char *program, size_t *ret_files);

/* The map of confined steps; 0 or -ENOMEM. */
int exec_scope_init(struct daemon *d);

/* Lifts step's confinement (step.end). */
void exec_scope_end(struct daemon *d, const char *sandbox, int64_t step);

void exec_scope_stop(struct daemon *d);

#endif
