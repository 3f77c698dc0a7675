/* The "tools" section: one scope per tool, each a list of commands with typed argument rules. */
#include <stdio.h>

#include "event.h"
#include "gate.h"
#include "macro.h"
#include "policy-internal.h"
#include "timeutil.h"

#define STR_(x) #x
#define STR(x) STR_(x)
#define DEFAULT_CALL_TIMEOUT (5 * 60 * NSEC_PER_SEC)

static void flags_free(struct policy_flags *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->v[i].name);
	free(f->v);
}

static void command_free(struct policy_command *c)
{
	free(c->program);
	policy_strv_free(c->prefix);
	flags_free(&c->allow);
	flags_free(&c->deny);
	policy_strv_free(c->patterns);
}

static void tool_free(struct policy_tool *t)
{
	free(t->name);
	policy_strv_free(t->env_allow);
	policy_env_free(t->env, t->n_env);
	policy_strv_free(t->wrappers);
	policy_strv_free(t->unsafe_allow);
	policy_strv_free(t->children);
	for (size_t i = 0; i < t->n_commands; i++)
		command_free(&t->commands[i]);
	free(t->commands);
}

void policy_tools_free(struct policy *p)
{
	for (size_t i = 0; i < p->n_tools; i++)
		tool_free(&p->tools[i]);
	free(p->tools);
	p->tools = NULL;
	p->n_tools = 0;
}

/* "-q", "--tb=", "-maxdepth=": one or two dashes, a letter or digit, then [A-Za-z0-9_.-]. */
static int flag_spec_valid(const char *s)
{
	size_t dashes = s[0] == '-' ? (s[1] == '-' ? 2 : 1) : 0, n;
	const char *name = s + dashes;

	if (dashes == 0 || !((*name >= 'a' && *name <= 'z') || (*name >= 'A' && *name <= 'Z') ||
			     (*name >= '0' && *name <= '9')))
		return 0;
	n = strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-");
	return name[n] == '\0' || (name[n] == '=' && name[n + 1] == '\0');
}

static int parse_flag_list(struct policy_parse *ctx, json_t *flags, const char *path,
			   const char *key, struct policy_flags *ret)
{
	char **names = NULL, lpath[JSON_POS_PATH_MAX + 1], epath[JSON_POS_PATH_MAX + 1];
	size_t n = 0;
	int r;

	r = policy_get_strings(ctx, flags, path, key, POLICY_FLAGS_MAX, flag_spec_valid,
			       "a flag is one or two dashes and a name ([A-Za-z0-9_.-]), with a "
			       "trailing '=' if it takes a value",
			       &names, &n);
	if (r < 0 || !names)
		return r;
	policy_path(lpath, path, key);
	ret->v = calloc(n + 1, sizeof(*ret->v));
	if (!ret->v) {
		policy_strv_free(names);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(names[i]);

		ret->v[i].takes_value = names[i][len - 1] == '=';
		if (ret->v[i].takes_value)
			names[i][len - 1] = '\0';
		ret->v[i].name = names[i];
	}
	ret->n = n;
	free(names);
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < i; j++)
			if (strcmp(ret->v[j].name, ret->v[i].name) == 0) {
				policy_path_index(epath, lpath, i);
				return policy_fail(ctx, epath, 0,
						   "\"%s\" is listed twice in \"%s\"",
						   ret->v[i].name, key);
			}
	return 0;
}

static int program_valid(const char *s)
{
	return s[0] == '/' && !strstr(s, "/./") && !strstr(s, "/../") && !strstr(s, "//") &&
	       s[strlen(s) - 1] != '/' && !policy_path_writable_inside(s) &&
	       !(strlen(s) >= 2 && strcmp(s + strlen(s) - 2, "/.") == 0) &&
	       !(strlen(s) >= 3 && strcmp(s + strlen(s) - 3, "/..") == 0);
}

static int nonempty(const char *s)
{
	return s[0] != '\0';
}

static int pattern_valid(const char *s)
{
	return s[0] != '\0' && strlen(s) <= POLICY_PATTERN_MAX;
}

/* Defaults, the position for messages, and the command's typed members. */
static int command_members(struct policy_parse *ctx, json_t *obj, const char *path,
			   struct policy_command *c)
{
	static const char *const known[] = { "program",	      "prefix", "flags",      "operands",
					     "short_bundles", "abbrev", "description" };
	_cleanup_free_ char *description = NULL;
	struct json_pos_loc loc;
	int r;

	c->short_bundles = 1;
	c->abbrev = 1;
	c->operands = POLICY_OPERANDS_NONE;
	if (json_pos_lookup(ctx->pos, path, &loc) == 0) {
		c->line = loc.line;
		c->col = loc.col;
	}
	if (!json_is_object(obj))
		return policy_fail(ctx, path, 0, "a command must be an object");
	if ((r = policy_check_keys(ctx, obj, path, known, ARRAY_SIZE(known))) < 0 ||
	    (r = policy_get_string(ctx, obj, path, "program", 1, &c->program)) < 0 ||
	    (r = policy_get_string(ctx, obj, path, "description", 0, &description)) < 0 ||
	    (r = policy_get_strings(ctx, obj, path, "prefix", POLICY_PREFIX_MAX, nonempty,
				    "a prefix argument may not be empty", &c->prefix,
				    &c->n_prefix)) < 0 ||
	    (r = policy_get_bool(ctx, obj, path, "short_bundles", &c->short_bundles)) < 0 ||
	    (r = policy_get_bool(ctx, obj, path, "abbrev", &c->abbrev)) < 0)
		return r;
	return 0;
}

/* The pinned program: a path the sandbox cannot replace; on this host, ideally. */
static int command_program(struct policy_parse *ctx, const char *path, const char *tool,
			   const struct policy_command *c)
{
	char fpath[JSON_POS_PATH_MAX + 1];

	policy_path(fpath, path, "program");
	if (!program_valid(c->program))
		return policy_fail(ctx, fpath, 0,
				   "\"program\" must be an absolute path without . or .., outside "
				   "/workspace and /tmp: \"%.200s\"",
				   c->program);
	if (access(c->program, X_OK) < 0)
		return policy_warn(ctx, fpath,
				   "tool %s: %s is not an executable on this host; test vectors "
				   "resolve it by name only",
				   tool, c->program);
	return 0;
}

/* "flags": {"allow": [...], "deny": [...]}; a flag in both is denied, with a warning. */
static int command_flags(struct policy_parse *ctx, json_t *obj, const char *path,
			 struct policy_command *c)
{
	static const char *const flags_known[] = { "allow", "deny" };
	char fpath[JSON_POS_PATH_MAX + 1];
	json_t *v = json_object_get(obj, "flags");
	int r;

	policy_path(fpath, path, "flags");
	if (!v)
		return 0;
	if (!json_is_object(v))
		return policy_fail(ctx, fpath, 0,
				   "\"flags\" must be an object with \"allow\" and \"deny\"");
	if ((r = policy_check_keys(ctx, v, fpath, flags_known, ARRAY_SIZE(flags_known))) < 0 ||
	    (r = parse_flag_list(ctx, v, fpath, "allow", &c->allow)) < 0 ||
	    (r = parse_flag_list(ctx, v, fpath, "deny", &c->deny)) < 0)
		return r;
	for (size_t i = 0; i < c->allow.n; i++)
		for (size_t j = 0; j < c->deny.n; j++)
			if (strcmp(c->allow.v[i].name, c->deny.v[j].name) == 0 &&
			    (r = policy_warn(ctx, fpath,
					     "\"%s\" is both allowed and denied: deny wins",
					     c->deny.v[j].name)) < 0)
				return r;
	return 0;
}

/* "operands": "any", "none" (the default) or a list of patterns. */
static int command_operands(struct policy_parse *ctx, json_t *obj, const char *path,
			    struct policy_command *c)
{
	char opath[JSON_POS_PATH_MAX + 1];
	json_t *v = json_object_get(obj, "operands");
	const char *word = json_string_value(v);
	int r;

	policy_path(opath, path, "operands");
	if (!v)
		return 0;
	if (json_is_array(v)) {
		if ((r = policy_get_strings(
			     ctx, obj, path, "operands", POLICY_OPERANDS_MAX, pattern_valid,
			     "an operand pattern is 1 to " STR(POLICY_PATTERN_MAX) " bytes",
			     &c->patterns, &c->n_patterns)) < 0)
			return r;
		c->operands = POLICY_OPERANDS_LIST;
	} else if (word && strcmp(word, "any") == 0) {
		c->operands = POLICY_OPERANDS_ANY;
	} else if (word && strcmp(word, "none") == 0) {
		c->operands = POLICY_OPERANDS_NONE;
	} else {
		return policy_fail(ctx, opath, 0,
				   "\"operands\" must be \"any\", \"none\" or a list of patterns");
	}
	return 0;
}

static int parse_command(struct policy_parse *ctx, json_t *obj, const char *path, const char *tool,
			 struct policy_command *c)
{
	int r;

	if ((r = command_members(ctx, obj, path, c)) < 0 ||
	    (r = command_program(ctx, path, tool, c)) < 0 ||
	    (r = command_flags(ctx, obj, path, c)) < 0 ||
	    (r = command_operands(ctx, obj, path, c)) < 0)
		return r;
	return 0;
}

static int env_allow_valid(const char *s)
{
	size_t n = strlen(s);
	char copy[256];

	if (n >= 2 && s[n - 1] == '*' && n - 1 < sizeof(copy)) {
		memcpy(copy, s, n - 1);
		copy[n - 1] = '\0';
		return policy_env_name_valid(copy);
	}
	return policy_env_name_valid(s);
}

/* A "children" entry: an absolute path, where * may stand for part of a name (python3*). */
static int child_pattern_valid(const char *s)
{
	return s[0] == '/' && !strstr(s, "/../") && !strstr(s, "/./") && strlen(s) < PATH_MAX;
}

/* The tool's name, its shape and its typed members. */
static int tool_members(struct policy_parse *ctx, const char *path, json_t *obj,
			struct policy_tool *t)
{
	static const char *const known[] = { "call_timeout",  "env_allow",    "env",
					     "wrappers",      "unsafe_allow", "commands",
					     "description",   "egress",	      "children",
					     "single_process" };
	_cleanup_free_ char *description = NULL;
	int r;

	if (!event_tool_name_valid(t->name))
		return policy_fail(ctx, path, 1,
				   "tool name \"%.64s\" must be 1-%d of [A-Za-z0-9_.:-]", t->name,
				   FB_TOOL_MAX);
	if (!json_is_object(obj))
		return policy_fail(ctx, path, 0, "tool \"%s\" must be an object", t->name);
	if ((r = policy_check_keys(ctx, obj, path, known, ARRAY_SIZE(known))) < 0 ||
	    (r = policy_get_string(ctx, obj, path, "description", 0, &description)) < 0 ||
	    (r = policy_get_duration(ctx, obj, path, "call_timeout", 100 * NSEC_PER_MSEC,
				     &t->call_timeout_ns)) < 0 ||
	    (r = policy_get_env(ctx, obj, path, "env", &t->env, &t->n_env)) < 0 ||
	    (r = policy_get_strings(ctx, obj, path, "env_allow", POLICY_ENV_MAX, env_allow_valid,
				    "not a variable name (a trailing * matches a prefix)",
				    &t->env_allow, &t->n_env_allow)) < 0 ||
	    (r = policy_get_strings(ctx, obj, path, "wrappers", POLICY_NAMES_MAX,
				    gate_wrapper_known,
				    "not a built-in wrapper (docs/policy.md lists them)",
				    &t->wrappers, &t->n_wrappers)) < 0 ||
	    (r = policy_get_strings(ctx, obj, path, "unsafe_allow", POLICY_NAMES_MAX,
				    gate_unsafe_known,
				    "not a built-in unsafe option (docs/policy.md lists them)",
				    &t->unsafe_allow, &t->n_unsafe_allow)) < 0 ||
	    (r = policy_get_strings(ctx, obj, path, "children", POLICY_COMMANDS_MAX,
				    child_pattern_valid,
				    "not an absolute program path (a * matches within a name)",
				    &t->children, &t->n_children)) < 0 ||
	    (r = policy_get_bool(ctx, obj, path, "single_process", &t->single_process)) < 0)
		return r;
	t->has_children = json_object_get(obj, "children") != NULL;
	return 0;
}

/* A call_timeout past the sandbox's wall clock never ends a call: the wall clock does. */
static int tool_call_timeout(struct policy_parse *ctx, const char *path,
			     const struct policy_tool *t)
{
	char vpath[JSON_POS_PATH_MAX + 1];

	if (t->call_timeout_ns <= ctx->policy->sandbox.wall_clock_ns)
		return 0;
	policy_path(vpath, path, "call_timeout");
	return policy_warn(ctx, vpath,
			   "tool %s: call_timeout is longer than the sandbox's wall_clock, which "
			   "ends the call first",
			   t->name);
}

/* env_allow may not name what the policy fixes, and a never-pass name earns a warning. */
static int tool_env_allow(struct policy_parse *ctx, const char *path, const struct policy_tool *t)
{
	char vpath[JSON_POS_PATH_MAX + 1], epath[JSON_POS_PATH_MAX + 1];
	int r;

	policy_path(vpath, path, "env_allow");
	for (size_t i = 0; i < t->n_env_allow; i++) {
		const char *v = t->env_allow[i];

		policy_path_index(epath, vpath, i);
		if (policy_env_fixed(ctx->policy, t, v))
			return policy_fail(
				ctx, epath, 0,
				"\"%s\" is fixed by the policy (sandbox.path, HOME, TMPDIR "
				"or an env object) and cannot come from the caller",
				v);
		if (gate_env_never_pass(v) &&
		    (r = policy_warn(
			     ctx, epath,
			     "tool %s: env_allow passes %s from the caller, which is on the "
			     "never-pass list (it can make a program run other code)",
			     t->name, v)) < 0)
			return r;
	}
	return 0;
}

/* What the scope lets past the built-in invariants is worth a warning each. */
static int tool_exemptions(struct policy_parse *ctx, const char *path, const struct policy_tool *t)
{
	char vpath[JSON_POS_PATH_MAX + 1];
	int r;

	policy_path(vpath, path, "wrappers");
	for (size_t i = 0; i < t->n_wrappers; i++)
		if ((r = policy_warn(ctx, vpath,
				     "tool %s may run the wrapper %s, which runs programs the gate "
				     "does not check",
				     t->name, t->wrappers[i])) < 0)
			return r;
	policy_path(vpath, path, "unsafe_allow");
	for (size_t i = 0; i < t->n_unsafe_allow; i++)
		if ((r = policy_warn(ctx, vpath, "tool %s turns off the built-in refusal of %s",
				     t->name, t->unsafe_allow[i])) < 0)
			return r;
	return 0;
}

/* The part of the task's allowlist this tool may reach (none unless named). */
static int tool_egress(struct policy_parse *ctx, const char *path, json_t *obj,
		       struct policy_tool *t)
{
	const struct policy *p = ctx->policy;
	char vpath[JSON_POS_PATH_MAX + 1], epath[JSON_POS_PATH_MAX + 1];
	char **egress = NULL;
	size_t n_egress = 0, j;
	int r;

	r = policy_get_strings(ctx, obj, path, "egress", POLICY_EGRESS_MAX, NULL, NULL, &egress,
			       &n_egress);
	policy_path(vpath, path, "egress");
	for (size_t i = 0; r == 0 && i < n_egress; i++) {
		for (j = 0; j < p->n_egress; j++)
			if (strcmp(p->egress[j].name, egress[i]) == 0)
				break;
		policy_path_index(epath, vpath, i);
		if (j == p->n_egress)
			r = policy_fail(ctx, epath, 0,
					"\"%s\" is not a rule of the policy's \"egress\"",
					egress[i]);
		else
			t->egress_rules |= 1ULL << j;
	}
	policy_strv_free(egress);
	return r;
}

static int tool_commands(struct policy_parse *ctx, const char *path, json_t *obj,
			 struct policy_tool *t)
{
	char vpath[JSON_POS_PATH_MAX + 1], epath[JSON_POS_PATH_MAX + 1];
	json_t *cmds = json_object_get(obj, "commands"), *e;
	size_t i;
	int r;

	policy_path(vpath, path, "commands");
	if (!cmds)
		return policy_fail(ctx, path, 0, "tool \"%s\" is missing \"commands\"", t->name);
	if (!json_is_array(cmds) || json_array_size(cmds) == 0)
		return policy_fail(ctx, vpath, 0, "\"commands\" must be a non-empty array");
	if (json_array_size(cmds) > POLICY_COMMANDS_MAX)
		return policy_fail(ctx, vpath, 0, "\"commands\" has more than %d entries",
				   POLICY_COMMANDS_MAX);
	t->commands = calloc(json_array_size(cmds), sizeof(*t->commands));
	if (!t->commands)
		return -ENOMEM;
	json_array_foreach (cmds, i, e) {
		policy_path_index(epath, vpath, i);
		t->n_commands++;
		if ((r = parse_command(ctx, e, epath, t->name, &t->commands[i])) < 0)
			return r;
	}
	return 0;
}

static int parse_tool(struct policy_parse *ctx, const char *name, json_t *obj,
		      struct policy_tool *t)
{
	char path[JSON_POS_PATH_MAX + 1];
	int r;

	policy_path(path, "/tools", name);
	t->call_timeout_ns = DEFAULT_CALL_TIMEOUT;
	if (!(t->name = strdup(name)))
		return -ENOMEM;
	if ((r = tool_members(ctx, path, obj, t)) < 0 ||
	    (r = tool_call_timeout(ctx, path, t)) < 0 || (r = tool_env_allow(ctx, path, t)) < 0 ||
	    (r = tool_exemptions(ctx, path, t)) < 0 || (r = tool_egress(ctx, path, obj, t)) < 0 ||
	    (r = tool_commands(ctx, path, obj, t)) < 0)
		return r;
	return 0;
}

int policy_parse_tools(struct policy_parse *ctx, json_t *obj)
{
	struct policy *p = ctx->policy;
	const char *name;
	json_t *v;
	int r;

	if (json_object_size(obj) == 0)
		return policy_fail(ctx, "/tools", 0, "\"tools\" must name at least one tool");
	if (json_object_size(obj) > POLICY_TOOLS_MAX)
		return policy_fail(ctx, "/tools", 0, "\"tools\" has more than %d tools",
				   POLICY_TOOLS_MAX);
	p->tools = calloc(json_object_size(obj), sizeof(*p->tools));
	if (!p->tools)
		return -ENOMEM;
	json_object_foreach (obj, name, v) {
		p->n_tools++;
		if ((r = parse_tool(ctx, name, v, &p->tools[p->n_tools - 1])) < 0)
			return r;
	}
	return 0;
}

size_t policy_tool_count(const struct policy *p)
{
	return p->n_tools;
}

const char *policy_tool_name(const struct policy *p, size_t i)
{
	return i < p->n_tools ? p->tools[i].name : NULL;
}

int policy_tool_index(const struct policy *p, const char *tool)
{
	for (size_t i = 0; i < p->n_tools; i++)
		if (strcmp(p->tools[i].name, tool) == 0)
			return (int)i;
	return -ENOENT;
}

uint64_t policy_tool_egress(const struct policy *p, size_t i)
{
	return i < p->n_tools ? p->tools[i].egress_rules : 0;
}

size_t policy_tool_programs(const struct policy *p, size_t i, const char **out, size_t max)
{
	size_t n = 0;

	if (i >= p->n_tools)
		return 0;
	for (size_t c = 0; c < p->tools[i].n_commands && n < max; c++)
		out[n++] = p->tools[i].commands[c].program;
	return n;
}

const char *const *policy_tool_children(const struct policy *p, size_t i)
{
	static const char *const none[] = { NULL };

	if (i >= p->n_tools || !p->tools[i].has_children)
		return NULL;
	return p->tools[i].children ? (const char *const *)p->tools[i].children : none;
}

int policy_tool_single_process(const struct policy *p, size_t i)
{
	return i < p->n_tools && p->tools[i].single_process;
}
