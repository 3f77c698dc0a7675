/*
 * Behaviour rules, judged against the calling tool's scope in the policy: a program executed
 * outside the tool's allowed children (the lesson's git inside run_tests), an interpreter started
 * by a tool that is not one, a fork by a tool declared single-process (the lesson's grep), a step
 * that outlived its tool call (the enforcer had to kill what it left).
 */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "detect-internal.h"
#include "macro.h"

/* "/usr/bin/python3" allows "/usr/bin/python3" and "/usr/bin/python3.11" (what it links to). */
static int program_match(const char *allowed, const char *path)
{
	size_t n = strlen(allowed);

	return strncmp(allowed, path, n) == 0 && path[n + strspn(path + n, "0123456789.")] == '\0';
}

static const char *step_program(const struct detect_state *st, int64_t step)
{
	for (size_t i = 0; i < DETECT_STEPS_MAX; i++)
		if (st->steps[i].step == step && step != EVENT_STEP_NONE)
			return st->steps[i].program;
	return NULL;
}

/* Whether tool t may run path: its own programs, the step's approved one, or its children. */
static int in_scope(const struct detect_tool *t, const char *step_prog, const char *path)
{
	if (step_prog && strcmp(step_prog, path) == 0)
		return 1;
	for (size_t i = 0; i < t->n_programs; i++)
		if (program_match(t->programs[i], path))
			return 1;
	for (size_t i = 0; i < t->n_children; i++)
		if (fnmatch(t->children[i], path, FNM_PATHNAME) == 0)
			return 1;
	return 0;
}

static size_t on_exec(struct detect_state *st, const struct event *ev, struct detect_verdict *v)
{
	const struct detect_tool *t = detect_tool(st, ev->tool);
	char path[256];
	const char *prog;

	if (!t || !event_field_str(ev, "path", path, sizeof(path)))
		return 0;
	prog = step_program(st, ev->step);
	if (in_scope(t, prog, path))
		return 0;
	if (t->has_children) {
		detect_verdict_init(v, ev, RULE_BEHAVIOR_EXEC_OUT_OF_SCOPE, DETECT_HIGH);
		snprintf(v->reason, sizeof(v->reason),
			 "tool %s ran %.100s, which is neither its program nor one of its children",
			 t->name, path);
		return 1;
	}
	if (detect_interpreter(path) && !t->interpreter) {
		detect_verdict_init(v, ev, RULE_BEHAVIOR_INTERPRETER, DETECT_HIGH);
		snprintf(v->reason, sizeof(v->reason),
			 "tool %s, which runs no interpreter, started %.100s", t->name, path);
		return 1;
	}
	return 0;
}

size_t detect_rules_behavior(struct detect_state *st, const struct event *ev,
			     struct detect_verdict *out, size_t max)
{
	const struct detect_tool *t;

	if (max == 0 || !st->have_policy)
		return 0;
	if (strcmp(ev->kind, "step.start") == 0 && ev->step != EVENT_STEP_NONE) {
		/* The program the gate approved is the step's own, whatever its path spells. */
		size_t i = st->steps_next++ % DETECT_STEPS_MAX;

		st->steps[i].step = ev->step;
		if (!event_field_str(ev, "program", st->steps[i].program,
				     sizeof(st->steps[i].program)))
			st->steps[i].program[0] = '\0';
		return 0;
	}
	if (strcmp(ev->kind, "proc.exec") == 0 && ev->step != EVENT_STEP_NONE)
		return on_exec(st, ev, out);
	if (strcmp(ev->kind, "proc.fork") == 0 && ev->step != EVENT_STEP_NONE &&
	    (t = detect_tool(st, ev->tool)) && t->single_process) {
		detect_verdict_init(out, ev, RULE_BEHAVIOR_FORK, DETECT_HIGH);
		snprintf(out->reason, sizeof(out->reason),
			 "tool %s, declared single-process, forked", t->name);
		return 1;
	}
	/* A boolean: true is the only value that matters, and it needs no parsing. */
	if (strcmp(ev->kind, "step.end") == 0 && event_field_true(ev, "leftover_killed")) {
		detect_verdict_init(out, ev, RULE_BEHAVIOR_STEP_OUTLIVED, DETECT_MEDIUM);
		snprintf(out->reason, sizeof(out->reason),
			 "step %lld left processes running after its tool call ended (killed)",
			 (long long)ev->step);
		return 1;
	}
	return 0;
}
