/* Loading a policy: the file, its hash, strict JSON, positions for messages, the top level. */
#include "policy.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "macro.h"
#include "policy-internal.h"

static int name_valid(const char *s)
{
	size_t n = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-");

	return n > 0 && n <= POLICY_NAME_MAX && s[n] == '\0';
}

/* The top level's own members: version (this build's, required), name and description. */
static int parse_header(struct policy_parse *ctx, json_t *root)
{
	static const char *const known[] = { "version", "name",	     "description",
					     "sandbox", "tools",     "tests",
					     "egress",	"detectors", "credentials" };
	struct policy *p = ctx->policy;
	_cleanup_free_ char *description = NULL;
	uint64_t version = 0;
	int r;

	if (!json_is_object(root))
		return policy_fail(ctx, "", 0, "a policy must be a JSON object, not %s",
				   policy_type_name(root));
	if ((r = policy_check_keys(ctx, root, "", known, ARRAY_SIZE(known))) < 0)
		return r;
	if (!json_object_get(root, "version"))
		return policy_fail(ctx, "", 0, "missing \"version\" (this build reads version %d)",
				   POLICY_VERSION);
	if ((r = policy_get_uint(ctx, root, "", "version", 0, INT32_MAX, &version)) < 0)
		return r;
	if (version != POLICY_VERSION)
		return policy_fail(ctx, "/version", 0,
				   "unsupported version %llu (this build reads version %d)",
				   (unsigned long long)version, POLICY_VERSION);
	if ((r = policy_get_string(ctx, root, "", "name", 1, &p->name)) < 0 ||
	    (r = policy_get_string(ctx, root, "", "description", 0, &description)) < 0)
		return r;
	if (!name_valid(p->name))
		return policy_fail(ctx, "/name", 0, "\"name\" must be 1-%d of [A-Za-z0-9_.-]",
				   POLICY_NAME_MAX);
	return 0;
}

/*
 * The sections, in the order they are read: a tool's "egress" names rules of the policy's
 * egress, its checks need the sandbox's PATH and environment, credentials name egress hosts and
 * must not take the sandbox's variables, and tests name tools.
 */
static const struct section {
	const char *key;
	int array; /* an array; else an object */
	int required;
	int always; /* read when absent too, for its defaults */
	int (*parse)(struct policy_parse *ctx, json_t *v);
} sections[] = {
	{ "egress", 0, 0, 0, policy_parse_egress },
	{ "detectors", 0, 0, 1, policy_parse_detectors },
	{ "sandbox", 0, 0, 1, policy_parse_sandbox },
	{ "credentials", 0, 0, 0, policy_parse_credentials },
	{ "tools", 0, 1, 1, policy_parse_tools },
	{ "tests", 1, 0, 0, policy_parse_tests },
};

static int parse_top(struct policy_parse *ctx, json_t *root)
{
	char path[JSON_POS_PATH_MAX + 1];
	int r;

	if ((r = parse_header(ctx, root)) < 0)
		return r;
	for (size_t i = 0; i < ARRAY_SIZE(sections); i++) {
		const struct section *s = &sections[i];
		json_t *v = json_object_get(root, s->key);

		policy_path(path, "", s->key);
		if (!v && s->required)
			return policy_fail(ctx, "", 0, "missing \"%s\"", s->key);
		if (v && !(s->array ? json_is_array(v) : json_is_object(v)))
			return policy_fail(ctx, path, 0, "\"%s\" must be %s, not %s", s->key,
					   s->array ? "an array" : "an object",
					   policy_type_name(v));
		if ((v || s->always) && (r = s->parse(ctx, v)) < 0)
			return r;
	}
	return 0;
}

void policy_free(struct policy *p)
{
	if (!p)
		return;
	policy_tools_free(p);
	policy_tests_free(p);
	policy_egress_free(p);
	policy_credentials_free(p);
	policy_strv_free(p->fixed_env);
	policy_strv_free(p->decoy_env);
	policy_strv_free(p->detectors_off);
	for (size_t i = 0; i < p->n_warnings; i++)
		free(p->warnings[i]);
	free(p->warnings);
	free(p->path);
	free(p->name);
	free(p->source);
	free(p);
}

/* Reports a text jansson refused: a syntax error where jansson says, a repeated key at the key. */
static int fail_json(struct policy_parse *ctx, const char *text, size_t len,
		     const json_error_t *jerr)
{
	if (json_error_code(jerr) == json_error_duplicate_key &&
	    json_pos_scan(text, len, &ctx->pos, NULL) == 0) {
		struct json_pos_loc loc;
		const char *path, *key;

		/* The repeat's own position: looking its path up would find the first one. */
		if (json_pos_duplicate(ctx->pos, &path, &loc) == 0) {
			key = strrchr(path, '/');
			snprintf(ctx->err, ctx->errlen, "%s:%u:%u: duplicate key \"%.64s\"",
				 ctx->source, loc.key_line, loc.key_col, key ? key + 1 : path);
			return -EINVAL;
		}
	}
	snprintf(ctx->err, ctx->errlen, "%s:%d:%d: %s", ctx->source,
		 jerr->line > 0 ? jerr->line : 1, jerr->column > 0 ? jerr->column : 1, jerr->text);
	return -EINVAL;
}

int policy_load_text(const char *name, const char *text, size_t len, struct policy **ret, char *err,
		     size_t errlen)
{
	struct policy_parse ctx = { .source = name, .err = err, .errlen = errlen };
	struct json_pos_loc where;
	json_error_t jerr;
	json_t *root;
	int r;

	if (len > POLICY_FILE_MAX) {
		snprintf(err, errlen, "%s: larger than %d bytes", name, POLICY_FILE_MAX);
		return -EFBIG;
	}
	ctx.policy = calloc(1, sizeof(*ctx.policy));
	if (!ctx.policy || !(ctx.policy->source = strdup(name))) {
		free(ctx.policy);
		return -ENOMEM;
	}
	sha256_prefixed_hex(text, len, ctx.policy->hash);

	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		r = fail_json(&ctx, text, len, &jerr);
		goto out;
	}
	r = json_pos_scan(text, len, &ctx.pos, &where);
	if (r == -EINVAL) {
		snprintf(err, errlen,
			 "%s:%u:%u: nested deeper than %d or a key path longer than %d bytes", name,
			 where.line, where.col, JSON_POS_DEPTH_MAX, JSON_POS_PATH_MAX);
		goto out;
	}
	if (r < 0)
		goto out;
	r = parse_top(&ctx, root);
	if (r == 0 && ctx.policy->n_warnings_dropped > 0) {
		/* Past the cap warnings are counted, and the count is the last warning. */
		struct policy *p = ctx.policy;
		char **v = realloc(p->warnings, (p->n_warnings + 1) * sizeof(*v));

		if (!v) {
			r = -ENOMEM;
			goto out;
		}
		p->warnings = v;
		if (asprintf(&v[p->n_warnings], "%s: warning: %zu more warnings not shown", name,
			     p->n_warnings_dropped) < 0) {
			r = -ENOMEM;
			goto out;
		}
		p->n_warnings++;
	}
out:
	json_decref(root);
	json_pos_free(ctx.pos);
	if (r < 0) {
		policy_free(ctx.policy);
		return r;
	}
	*ret = ctx.policy;
	return 0;
}

int policy_load(const char *path, struct policy **ret, char *err, size_t errlen)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t len = 0;

	/* O_NONBLOCK: a FIFO in place of the file must not hang the enforcer. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) < 0) {
		int r = -errno;

		snprintf(err, errlen, "%s: %s", path, strerror(-r));
		return r;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		return -EINVAL;
	}
	if (st.st_size > POLICY_FILE_MAX) {
		snprintf(err, errlen, "%s: larger than %d bytes", path, POLICY_FILE_MAX);
		return -EFBIG;
	}
	/* One byte more than the cap, so a file that grew after fstat() is still caught. */
	buf = malloc(POLICY_FILE_MAX + 1);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n = read(fd, buf + len, POLICY_FILE_MAX + 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int r = -errno;

			snprintf(err, errlen, "%s: %s", path, strerror(-r));
			return r;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > POLICY_FILE_MAX) {
			snprintf(err, errlen, "%s: larger than %d bytes", path, POLICY_FILE_MAX);
			return -EFBIG;
		}
	}
	return policy_load_text(path, buf, len, ret, err, errlen);
}

const char *policy_hash(const struct policy *p)
{
	return p->hash;
}

const char *policy_name(const struct policy *p)
{
	return p->name;
}

const char *policy_source(const struct policy *p)
{
	return p->source;
}

const struct policy_sandbox *policy_sandbox(const struct policy *p)
{
	return &p->sandbox;
}

const struct policy_tool *policy_find_tool(const struct policy *p, const char *tool)
{
	for (size_t i = 0; i < p->n_tools; i++)
		if (strcmp(p->tools[i].name, tool) == 0)
			return &p->tools[i];
	return NULL;
}

int policy_has_tool(const struct policy *p, const char *tool)
{
	return policy_find_tool(p, tool) != NULL;
}

int policy_tool_timeout(const struct policy *p, const char *tool, int64_t *ret_ns)
{
	const struct policy_tool *t = policy_find_tool(p, tool);

	if (!t)
		return -ENOENT;
	*ret_ns = t->call_timeout_ns;
	return 0;
}

size_t policy_test_count(const struct policy *p)
{
	return p->n_tests;
}

const struct policy_test *policy_test(const struct policy *p, size_t i)
{
	return i < p->n_tests ? &p->tests[i].pub : NULL;
}

size_t policy_warning_count(const struct policy *p)
{
	return p->n_warnings;
}

const char *policy_warning(const struct policy *p, size_t i)
{
	return i < p->n_warnings ? p->warnings[i] : NULL;
}
