/*
 * A command's typed argument rules: flags (joined --flag=value, separate --flag value for flags
 * declared with '=', bundled -abc, unique-prefix abbreviations of long flags, "--") and operands.
 * Every argument is read as getopt_long and argparse read it, so that what the gate judges is
 * what the program will see. The refusal reported follows the fixed precedence: a denied flag
 * anywhere outranks any other finding; otherwise the first finding in argument order.
 */
#include <stdio.h>

#include "gate-internal.h"
#include "macro.h"

struct findings {
	struct gate_decision *d;
	uint64_t match_work;	    /* glob cells computed so far, against GATE_MATCH_BUDGET */
	struct gate_decision deny;  /* the first denied flag, if any */
	struct gate_decision other; /* the first other refusal, if any */
	int have_deny, have_other;
};

static const struct policy_flag *find(const struct policy_flags *fl, const char *name, size_t n)
{
	for (size_t i = 0; i < fl->n; i++)
		if (strlen(fl->v[i].name) == n && strncmp(fl->v[i].name, name, n) == 0)
			return &fl->v[i];
	return NULL;
}

static int is_long(const char *s)
{
	return s[0] == '-' && s[1] == '-' && s[2];
}

/* The first denied long flag that name[0..n) abbreviates, or NULL. */
static const struct policy_flag *abbreviates_denied(const struct policy_flags *deny,
						    const char *name, size_t n)
{
	for (size_t i = 0; i < deny->n; i++)
		if (is_long(deny->v[i].name) && strncmp(deny->v[i].name, name, n) == 0)
			return &deny->v[i];
	return NULL;
}

/* Records a denied flag: "argument N "ARG": WHAT is denied for this command". */
static void denied(struct findings *f, int arg, const char *what, char *const argv[])
{
	char q[GATE_QUOTE_SIZE];

	if (f->have_deny)
		return;
	f->have_deny = 1;
	f->deny = *f->d;
	gate_refuse(&f->deny, GATE_RULE_FLAG_DENIED, arg,
		    "argument %d %s: %s is denied for this command", arg,
		    gate_quote(argv[arg], q, sizeof(q)), what);
}

static void other(struct findings *f, const char *rule, int arg, const char *what,
		  char *const argv[])
{
	char q[GATE_QUOTE_SIZE];

	if (f->have_other)
		return;
	f->have_other = 1;
	f->other = *f->d;
	gate_refuse(&f->other, rule, arg, "argument %d %s %s", arg,
		    gate_quote(argv[arg], q, sizeof(q)), what);
}

/* "--name", "--name=value", "--nam" (an abbreviation). Returns how many arguments it used. */
static size_t long_flag(const struct policy_command *c, char *const argv[], size_t argc, size_t i,
			struct findings *f)
{
	const char *a = argv[i];
	size_t n = strcspn(a, "=");
	int has_value = a[n] == '=';
	const struct policy_flag *fl, *dn;
	char msg[160];

	if (n <= 2) {
		/* "--=x": getopt_long would take an empty name as a prefix of every option. */
		other(f, GATE_RULE_FLAG_NOT_ALLOWED, (int)i, "names no flag", argv);
		return 1;
	}
	if ((dn = find(&c->deny, a, n))) {
		denied(f, (int)i, dn->name, argv);
		/* Its value, if it takes one, is not a flag to judge. */
		return dn->takes_value && !has_value ? 2 : 1;
	}
	/* An exact allowed flag is that flag (argparse and getopt_long take an exact name before
	 * any abbreviation): pytest's --co is --co, not a prefix of --config-file. Only a name
	 * that is no flag of the scope is judged as an abbreviation. */
	fl = find(&c->allow, a, n);
	if (!fl && c->abbrev && (dn = abbreviates_denied(&c->deny, a, n))) {
		/* The program may take it as dn: refuse it as dn, ambiguous or not. */
		snprintf(msg, sizeof(msg), "it abbreviates %s, which", dn->name);
		denied(f, (int)i, msg, argv);
		return dn->takes_value && !has_value ? 2 : 1;
	}
	if (!fl && c->abbrev) {
		size_t matches = 0;

		for (size_t k = 0; k < c->allow.n; k++)
			if (is_long(c->allow.v[k].name) && strncmp(c->allow.v[k].name, a, n) == 0) {
				fl = &c->allow.v[k];
				matches++;
			}
		if (matches > 1) {
			other(f, GATE_RULE_FLAG_AMBIGUOUS, (int)i,
			      "abbreviates more than one allowed flag", argv);
			return 1;
		}
	}
	if (!fl) {
		other(f, GATE_RULE_FLAG_NOT_ALLOWED, (int)i,
		      "is not an allowed flag of this command", argv);
		return 1;
	}
	if (fl->takes_value && !has_value) {
		if (i + 1 >= argc) {
			snprintf(msg, sizeof(msg), "is %s, which needs a value", fl->name);
			other(f, GATE_RULE_FLAG_VALUE, (int)i, msg, argv);
			return 1;
		}
		return 2;
	}
	if (!fl->takes_value && has_value) {
		snprintf(msg, sizeof(msg), "gives a value to %s, which takes none", fl->name);
		other(f, GATE_RULE_FLAG_VALUE, (int)i, msg, argv);
	}
	return 1;
}

/* The argument as a whole flag ("-x", "-maxdepth"): 1 with the arguments it used in *used, or 0
 * if the command names no such flag. */
static int whole_short(const struct policy_command *c, char *const argv[], size_t argc, size_t i,
		       struct findings *f, size_t *used)
{
	const char *a = argv[i];
	const struct policy_flag *fl;

	if ((fl = find(&c->deny, a, strlen(a)))) {
		denied(f, (int)i, fl->name, argv);
		*used = fl->takes_value ? 2 : 1;
		return 1;
	}
	if (!(fl = find(&c->allow, a, strlen(a))))
		return 0;
	*used = fl->takes_value && i + 1 < argc ? 2 : 1;
	if (fl->takes_value && i + 1 >= argc)
		other(f, GATE_RULE_FLAG_VALUE, (int)i, "needs a value", argv);
	return 1;
}

/* Not a bundle, but a program without bundles may still read "-pfoo" as -p foo. */
static size_t unbundled(const struct policy_command *c, char *const argv[], size_t i,
			struct findings *f)
{
	const char *a = argv[i];
	char first[3] = { '-', a[1], '\0' }, msg[160];
	const struct policy_flag *fl = find(&c->deny, first, 2);

	if (fl) {
		snprintf(msg, sizeof(msg), "it may be read as %s with a joined value, and %s",
			 fl->name, fl->name);
		denied(f, (int)i, msg, argv);
		return 1;
	}
	other(f, GATE_RULE_FLAG_NOT_ALLOWED, (int)i, "is not an allowed flag of this command",
	      argv);
	return 1;
}

/* A bundle: each letter is a flag, until one that takes a value takes the rest. */
static size_t bundle(const struct policy_command *c, char *const argv[], size_t argc, size_t i,
		     struct findings *f)
{
	const char *a = argv[i];
	const struct policy_flag *fl;
	char msg[160];

	for (size_t j = 1; a[j]; j++) {
		char one[3] = { '-', a[j], '\0' };

		if ((fl = find(&c->deny, one, 2))) {
			snprintf(msg, sizeof(msg), "%s (letter %zu of the bundle)", fl->name, j);
			denied(f, (int)i, msg, argv);
			if (fl->takes_value)
				return a[j + 1] ? 1 : 2;
			continue;
		}
		fl = find(&c->allow, one, 2);
		if (!fl) {
			if (a[2] == '\0')
				snprintf(msg, sizeof(msg),
					 "is not an allowed flag of this command");
			else
				snprintf(msg, sizeof(msg),
					 "holds %s (letter %zu), not an allowed flag", one, j);
			other(f, GATE_RULE_FLAG_NOT_ALLOWED, (int)i, msg, argv);
			continue;
		}
		if (fl->takes_value) {
			if (a[j + 1])
				return 1;
			if (i + 1 >= argc) {
				snprintf(msg, sizeof(msg), "ends with %s, which needs a value",
					 one);
				other(f, GATE_RULE_FLAG_VALUE, (int)i, msg, argv);
				return 1;
			}
			return 2;
		}
	}
	return 1;
}

/* "-x", "-xvalue", "-abc", or a whole single-dash word ("-maxdepth"). Returns arguments used. */
static size_t short_flags(const struct policy_command *c, char *const argv[], size_t argc, size_t i,
			  struct findings *f)
{
	size_t used;

	if (whole_short(c, argv, argc, i, f, &used))
		return used;
	if (!c->short_bundles)
		return unbundled(c, argv, i, f);
	return bundle(c, argv, argc, i, f);
}

/*
 * Operand patterns: '?' is one character and '*' any run of characters, neither crossing '/';
 * '**' is any run, '/' included; everything else is literal. No wildcard produces a '.' that
 * begins a path component, so "tests" + '/' + '**' cannot reach "tests/../../etc" nor ".git",
 * and "https:" + '//' + '**' takes any URL of that scheme. (Spelt so to stay out of C comments.)
 * Matching is a dynamic programme over pattern tokens and operand bytes, O(pattern x operand), its
 * total work per call capped by GATE_MATCH_BUDGET.
 */
static int glob_match(const char *pat, const char *s, size_t n, char *row, char *next)
{
	memset(row, 0, n + 1);
	row[0] = 1;
	for (const char *p = pat; *p;) {
		int star = p[0] == '*', globstar = star && p[1] == '*', any = 0;

		memset(next, 0, n + 1);
		for (size_t j = 0; j <= n; j++) {
			/* s[j - 1] is a character a wildcard may take. */
			int takeable = j > 0 && !(s[j - 1] == '.' && (j == 1 || s[j - 2] == '/')) &&
				       (globstar || s[j - 1] != '/');

			if (star)
				next[j] = row[j] || (j > 0 && next[j - 1] && takeable);
			else if (*p == '?')
				next[j] = j > 0 && row[j - 1] && takeable;
			else
				next[j] = j > 0 && row[j - 1] && s[j - 1] == *p;
			any |= next[j];
		}
		p += globstar ? 2 : 1;
		memcpy(row, next, n + 1);
		if (!any)
			return 0;
	}
	return row[n];
}

static void operand(const struct policy_command *c, char *const argv[], size_t i,
		    struct findings *f)
{
	char row[GATE_OPERAND_MATCH_MAX + 1], next[GATE_OPERAND_MATCH_MAX + 1];
	size_t n;

	switch (c->operands) {
	case POLICY_OPERANDS_ANY:
		return;
	case POLICY_OPERANDS_NONE:
		other(f, GATE_RULE_OPERAND, (int)i, "is an operand; this command takes none", argv);
		return;
	case POLICY_OPERANDS_LIST:
		n = strlen(argv[i]);
		if (n > GATE_OPERAND_MATCH_MAX) {
			other(f, GATE_RULE_OPERAND, (int)i,
			      "is longer than an operand pattern can match", argv);
			return;
		}
		for (size_t k = 0; k < c->n_patterns; k++) {
			f->match_work += (uint64_t)(strlen(c->patterns[k]) + 1) * (n + 1);
			if (f->match_work > GATE_MATCH_BUDGET) {
				other(f, GATE_RULE_OPERAND, (int)i,
				      "exceeds the work the gate spends matching operands", argv);
				return;
			}
			if (glob_match(c->patterns[k], argv[i], n, row, next))
				return;
		}
		other(f, GATE_RULE_OPERAND, (int)i,
		      "matches none of this command's operand patterns", argv);
		return;
	}
}

int gate_check_arguments(const struct policy_command *c, char *const argv[], size_t argc,
			 size_t start, struct gate_decision *d)
{
	struct findings f = { .d = d };
	int after_dd = 0;

	for (size_t i = start; i < argc;) {
		const char *a = argv[i];

		if (after_dd || a[0] != '-' || a[1] == '\0') {
			operand(c, argv, i, &f);
			i++;
		} else if (strcmp(a, "--") == 0) {
			after_dd = 1;
			i++;
		} else if (a[1] == '-') {
			i += long_flag(c, argv, argc, i, &f);
		} else {
			i += short_flags(c, argv, argc, i, &f);
		}
	}
	if (f.have_deny)
		*d = f.deny;
	else if (f.have_other)
		*d = f.other;
	return f.have_deny || f.have_other;
}
