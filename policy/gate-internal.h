/* What the gate's files (gate*.c) share. */
#ifndef FB_GATE_INTERNAL_H
#define FB_GATE_INTERNAL_H

#include "gate.h"
#include "policy-internal.h"

/* Writes a refusal into d: rule, arg and "RULE: message"; returns 1 (refused). */
int gate_refuse(struct gate_decision *d, const char *rule, int arg, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * Quotes s for a one-line message: JSON-style escapes for quotes, backslashes and control bytes,
 * cut at 64 bytes with "…". Returns buf.
 */
const char *gate_quote(const char *s, char *buf, size_t size);
#define GATE_QUOTE_SIZE 96

/* The last path component of s. */
const char *gate_basename(const char *s);

/*
 * The built-in invariants (gate-invariants.c): wrappers by the basename of argv[0] and of the
 * resolved program (resolved may be NULL), then inline code and unsafe options and operands of
 * the programs the gate knows. Returns 1 with the refusal in d, or 0.
 */
int gate_check_invariants(const struct policy_tool *t, char *const argv[], size_t argc,
			  const char *resolved, struct gate_decision *d);

/*
 * The scope's typed rules for argv[start..argc) (gate-flags.c), the arguments after command c's
 * prefix: flags by deny > allow > default deny, and operands. Returns 1 with the refusal in d, or
 * 0.
 */
int gate_check_arguments(const struct policy_command *c, char *const argv[], size_t argc,
			 size_t start, struct gate_decision *d);

#endif
