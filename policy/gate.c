/*
 * gate_check(): the order of judgement. The tool's scope is found; argv is checked against its
 * caps; argv[0] is resolved the way execvp() would inside the sandbox (its PATH, then realpath());
 * the built-in invariants run on both names; then the scope's pinned programs, their fixed
 * prefixes and their typed argument rules decide. The first refusal ends the check.
 */
#include <stdarg.h>
#include <stdio.h>
#include <sys/stat.h>

#include "gate-internal.h"
#include "macro.h"

static const char *const rules[] = {
	GATE_RULE_ALLOW,	  GATE_RULE_UNKNOWN_TOOL,     GATE_RULE_ARGV,
	GATE_RULE_WRAPPER,	  GATE_RULE_INLINE_CODE,      GATE_RULE_UNSAFE_OPTION,
	GATE_RULE_UNSAFE_OPERAND, GATE_RULE_NOT_IN_SCOPE,     GATE_RULE_PREFIX,
	GATE_RULE_FLAG_DENIED,	  GATE_RULE_FLAG_NOT_ALLOWED, GATE_RULE_FLAG_AMBIGUOUS,
	GATE_RULE_FLAG_VALUE,	  GATE_RULE_OPERAND,	      GATE_RULE_ENV,
};

int gate_rule_known(const char *rule)
{
	for (size_t i = 0; i < ARRAY_SIZE(rules); i++)
		if (strcmp(rules[i], rule) == 0)
			return 1;
	return 0;
}

const char *gate_basename(const char *s)
{
	const char *slash = strrchr(s, '/');

	return slash ? slash + 1 : s;
}

const char *gate_quote(const char *s, char *buf, size_t size)
{
	size_t n = 0, i;

	if (size < 8) {
		if (size)
			buf[0] = '\0';
		return buf;
	}
	buf[n++] = '"';
	for (i = 0; s[i] && i < 64; i++) {
		unsigned char c = (unsigned char)s[i];
		char tmp[8];
		size_t k;

		if (c == '"' || c == '\\')
			k = (size_t)snprintf(tmp, sizeof(tmp), "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			k = (size_t)snprintf(tmp, sizeof(tmp), "\\x%02x", c);
		else
			k = (size_t)snprintf(tmp, sizeof(tmp), "%c", c);
		if (n + k + 5 >= size)
			break;
		memcpy(buf + n, tmp, k);
		n += k;
	}
	if (s[i] && n + 4 < size) {
		memcpy(buf + n, "\xe2\x80\xa6", 3); /* … */
		n += 3;
	}
	buf[n++] = '"';
	buf[n] = '\0';
	return buf;
}

int gate_refuse(struct gate_decision *d, const char *rule, int arg, const char *fmt, ...)
{
	va_list ap;
	int n;

	d->allowed = 0;
	strscpy(d->rule, sizeof(d->rule), rule);
	d->arg = arg;
	n = snprintf(d->message, sizeof(d->message), "%s: ", rule);
	va_start(ap, fmt);
	vsnprintf(d->message + n, sizeof(d->message) - (size_t)n, fmt, ap);
	va_end(ap);
	return 1;
}

/* Appends to the string in buf, cutting what does not fit. */
_printf_(3, 4) static void append(char *buf, size_t size, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	if (n + 1 >= size)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, size - n, fmt, ap);
	va_end(ap);
}

static int executable_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

static int pinned_by_name(const struct policy_tool *t, const char *path)
{
	for (size_t i = 0; i < t->n_commands; i++)
		if (strcmp(t->commands[i].program, path) == 0)
			return 1;
	return 0;
}

/*
 * Resolves argv0 as execvp() would with the sandbox's PATH, then realpath(). Returns 0 with the
 * absolute path in out (PATH_MAX), or -ENOENT with the reason in why.
 */
static int resolve(const struct policy *p, const struct policy_tool *t, const char *argv0,
		   unsigned flags, char *out, char *why, size_t whylen)
{
	char cand[PATH_MAX];
	int found = 0;

	if (strchr(argv0, '/')) {
		if (argv0[0] != '/') {
			snprintf(why, whylen,
				 "is a relative path (the working directory is writable)");
			return -ENOENT;
		}
		if (strscpy(cand, sizeof(cand), argv0) < 0) {
			snprintf(why, whylen, "is longer than PATH_MAX");
			return -ENOENT;
		}
		found = 1;
	}
	/* Two passes over PATH: the files on this host, then (by name) the scope's pins. */
	for (int pass = 0; !found && pass < 2; pass++) {
		const char *dir = p->path;

		if (pass == 1 && !(flags & GATE_RESOLVE_BY_NAME))
			break;
		while (!found && *dir) {
			size_t n = strcspn(dir, ":"), len = n;
			int w;

			/* "/usr/bin/" joins as "/usr/bin": a pin compares as a string by name. */
			while (len > 1 && dir[len - 1] == '/')
				len--;
			w = snprintf(cand, sizeof(cand), "%.*s/%s", (int)len, dir, argv0);

			if (w > 0 && (size_t)w < sizeof(cand))
				found = pass == 0 ? executable_file(cand) : pinned_by_name(t, cand);
			dir += n;
			dir += *dir == ':';
		}
	}
	if (!found) {
		snprintf(why, whylen, "is not found in the sandbox's PATH (%.200s)", p->path);
		return -ENOENT;
	}
	if (realpath(cand, out)) {
		if (executable_file(out))
			return 0;
		snprintf(why, whylen, "is not an executable file");
		return -ENOENT;
	}
	if (errno == ENOENT && (flags & GATE_RESOLVE_BY_NAME)) {
		strcpy(out, cand);
		return 0;
	}
	snprintf(why, whylen, "cannot be resolved: %s", strerror(errno));
	return -ENOENT;
}

/* realpath() of a pinned program into out, or (by name) the program as written; 0 or -ENOENT. */
static int pinned_path(const struct policy_command *c, unsigned flags, char *out)
{
	if (realpath(c->program, out))
		return 0;
	if (errno == ENOENT && (flags & GATE_RESOLVE_BY_NAME))
		return strscpy(out, PATH_MAX, c->program) < 0 ? -ENOENT : 0;
	return -ENOENT;
}

static int prefix_matches(const struct policy_command *c, char *const argv[], size_t argc)
{
	if (argc - 1 < c->n_prefix)
		return 0;
	for (size_t i = 0; i < c->n_prefix; i++)
		if (strcmp(argv[1 + i], c->prefix[i]) != 0)
			return 0;
	return 1;
}

/*
 * The first of the scope's commands whose program is the resolved one, under argv[0]'s name, and
 * whose prefix argv starts with: 1 with d->command set; else 0, with the first command of that
 * program in *ret_first (NULL: none) and whether one was skipped for its name in *ret_renamed.
 */
static int find_command(const struct policy_tool *t, char *const argv[], size_t argc,
			const char *resolved, unsigned flags, struct gate_decision *d,
			const struct policy_command **ret_first, int *ret_renamed)
{
	const char *base = gate_basename(argv[0]);
	char pinned[PATH_MAX];

	for (size_t i = 0; i < t->n_commands; i++) {
		const struct policy_command *c = &t->commands[i];

		if (pinned_path(c, flags, pinned) < 0 || strcmp(pinned, resolved) != 0)
			continue;
		/* A multi-call binary acts on argv[0]'s name: "unxz" is not "xz" though both
		 * resolve to one file. The name must be the pinned one or the real file's. */
		if (strcmp(base, gate_basename(c->program)) != 0 &&
		    strcmp(base, gate_basename(pinned)) != 0) {
			*ret_renamed = 1;
			continue;
		}
		if (!*ret_first)
			*ret_first = c;
		if (prefix_matches(c, argv, argc)) {
			d->command = (int)i;
			return 1;
		}
	}
	return 0;
}

/* Lists the prefixes program may start with in the scope, as far as the line holds. */
static void list_prefixes(const struct policy_tool *t, const char *program, char *want, size_t size)
{
	for (size_t i = 0; i < t->n_commands; i++) {
		const struct policy_command *c = &t->commands[i];

		if (strcmp(c->program, program) != 0)
			continue;
		append(want, size, "%s\"", want[0] ? ", " : "");
		for (size_t j = 0; j < c->n_prefix; j++)
			append(want, size, "%s%s", j ? " " : "", c->prefix[j]);
		append(want, size, "\"");
	}
}

/* The program is pinned but argv does not start with a prefix of its: where they part ways. */
static int refuse_prefix(const struct policy_tool *t, char *const argv[], size_t argc,
			 const char *resolved, const struct policy_command *first,
			 struct gate_decision *d)
{
	char want[200] = "", q[GATE_QUOTE_SIZE], q2[GATE_QUOTE_SIZE];
	size_t k;

	list_prefixes(t, first->program, want, sizeof(want));
	/* The argument where the first such command's prefix parts ways with argv. */
	for (k = 0; k < first->n_prefix && 1 + k < argc; k++)
		if (strcmp(argv[1 + k], first->prefix[k]) != 0)
			break;
	if (1 + k >= argc)
		return gate_refuse(d, GATE_RULE_PREFIX, -1,
				   "the arguments end before the prefix: %s runs in tool %s only "
				   "with its arguments starting %s",
				   gate_quote(resolved, q, sizeof(q)), t->name, want);
	return gate_refuse(d, GATE_RULE_PREFIX, (int)(1 + k),
			   "argument %zu %s: %s runs in tool %s only with its arguments "
			   "starting %s",
			   1 + k, gate_quote(argv[1 + k], q2, sizeof(q2)),
			   gate_quote(resolved, q, sizeof(q)), t->name, want);
}

/* Matches the scope's commands; returns 1 with a refusal, or 0 with d->command set. */
static int match_command(const struct policy_tool *t, char *const argv[], size_t argc,
			 const char *resolved, unsigned flags, struct gate_decision *d)
{
	const struct policy_command *first = NULL;
	char q[GATE_QUOTE_SIZE], q2[GATE_QUOTE_SIZE];
	int renamed = 0;

	if (find_command(t, argv, argc, resolved, flags, d, &first, &renamed))
		return 0;
	if (first)
		return refuse_prefix(t, argv, argc, resolved, first, d);
	if (renamed)
		return gate_refuse(d, GATE_RULE_NOT_IN_SCOPE, 0,
				   "argv[0] %s resolves to a program tool %s pins, under another "
				   "name (a multi-call binary acts on its name)",
				   gate_quote(argv[0], q, sizeof(q)), t->name);
	return gate_refuse(d, GATE_RULE_NOT_IN_SCOPE, 0,
			   "argv[0] %s resolves to %s, which tool %s does not pin",
			   gate_quote(argv[0], q, sizeof(q)), gate_quote(resolved, q2, sizeof(q2)),
			   t->name);
}

/* Everything up to the typed argument rules; returns 1 with a refusal in d. */
static int judge(const struct policy *p, const char *tool, char *const argv[], unsigned flags,
		 struct gate_decision *d)
{
	const struct policy_tool *t = policy_find_tool(p, tool);
	char why[512], q[GATE_QUOTE_SIZE];
	size_t argc = 0;
	int resolved;

	if (!t)
		return gate_refuse(d, GATE_RULE_UNKNOWN_TOOL, -1,
				   "tool %s has no scope in policy %s",
				   gate_quote(tool, q, sizeof(q)), p->name);
	while (argv && argv[argc]) {
		if (strnlen(argv[argc], GATE_ARG_MAX + 1) > GATE_ARG_MAX)
			return gate_refuse(d, GATE_RULE_ARGV, (int)argc,
					   "argument %zu is longer than %d bytes", argc,
					   GATE_ARG_MAX);
		if (++argc > GATE_ARGC_MAX)
			return gate_refuse(d, GATE_RULE_ARGV, -1, "more than %d arguments",
					   GATE_ARGC_MAX);
	}
	if (argc == 0)
		return gate_refuse(d, GATE_RULE_ARGV, -1, "no program given");
	if (!argv[0][0])
		return gate_refuse(d, GATE_RULE_ARGV, 0, "argv[0] \"\" names no program");

	resolved = resolve(p, t, argv[0], flags, d->program, why, sizeof(why)) == 0;
	if (!resolved)
		d->program[0] = '\0';
	if (gate_check_invariants(t, argv, argc, resolved ? d->program : NULL, d))
		return 1;
	if (!resolved)
		return gate_refuse(d, GATE_RULE_NOT_IN_SCOPE, 0, "argv[0] %s %s",
				   gate_quote(argv[0], q, sizeof(q)), why);
	if (match_command(t, argv, argc, d->program, flags, d))
		return 1;
	return gate_check_arguments(&t->commands[d->command], argv, argc,
				    1 + t->commands[d->command].n_prefix, d);
}

int gate_check(const struct policy *p, const char *tool, char *const argv[], unsigned flags,
	       struct gate_decision *ret)
{
	struct gate_decision *d = calloc(1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	d->command = -1;
	d->arg = -1;
	memcpy(d->policy_hash, p->hash, sizeof(d->policy_hash));
	if (!judge(p, tool, argv, flags, d)) {
		char q[GATE_QUOTE_SIZE];

		d->allowed = 1;
		d->arg = -1;
		strcpy(d->rule, GATE_RULE_ALLOW);
		snprintf(d->message, sizeof(d->message),
			 "%s: tool %s runs %s (command %d of its scope)", GATE_RULE_ALLOW, tool,
			 gate_quote(d->program, q, sizeof(q)), d->command);
	}
	*ret = *d;
	free(d);
	return 0;
}

int gate_run_test(const struct policy *p, const struct policy_test *t, unsigned flags,
		  struct gate_decision *ret)
{
	struct gate_decision d = { .command = -1, .arg = -1 };
	int r;

	if (t->env) {
		memcpy(d.policy_hash, p->hash, sizeof(d.policy_hash));
		r = gate_env_allowed(p, t->tool, t->env, d.message, sizeof(d.message));
		d.allowed = r == 1;
		strcpy(d.rule, r == 1	      ? GATE_RULE_ALLOW
			       : r == -ENOENT ? GATE_RULE_UNKNOWN_TOOL
					      : GATE_RULE_ENV);
		if (r == 1)
			snprintf(d.message, sizeof(d.message), "%s: %s passes into tool %s's calls",
				 GATE_RULE_ALLOW, t->env, t->tool);
	} else if ((r = gate_check(p, t->tool, (char *const *)t->argv, flags, &d)) < 0) {
		return r;
	}
	*ret = d;
	return d.allowed == t->expect_allow && (!t->rule || strcmp(t->rule, d.rule) == 0);
}
