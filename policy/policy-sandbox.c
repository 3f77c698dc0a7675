/* The "sandbox" section: resource caps, identity, PATH and the fixed environment. */
#include <stdio.h>

#include "lures.h"
#include "macro.h"
#include "policy-internal.h"
#include "timeutil.h"

/* 0: not set; the enforcer gives each sandbox an identity of its own (enforcer/state.h). */
#define DEFAULT_UID 0
#define DEFAULT_GID 0
#define DEFAULT_MEMORY (512ULL << 20)
#define DEFAULT_PIDS 256
#define DEFAULT_CPU 1.0
#define DEFAULT_WORKSPACE (256ULL << 20)
#define DEFAULT_TMP (64ULL << 20)
#define DEFAULT_HOME (64ULL << 20)
#define DEFAULT_OPEN_FILES 1024
#define DEFAULT_WALL_CLOCK (2 * 3600 * NSEC_PER_SEC)
#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"
#define SANDBOX_HOME LURE_HOME /* its own tmpfs, with the decoys (lures.h) */
#define SANDBOX_TMPDIR "/tmp"

/* cpu.max cannot express less than 1ms per 100ms period. */
#define CPU_MIN 0.01
#define CPU_MAX 4096.0

int policy_env_name_valid(const char *s)
{
	size_t n;

	if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_'))
		return 0;
	n = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
	return s[n] == '\0' && n <= 255;
}

int policy_path_writable_inside(const char *path)
{
	static const char *const writable[] = { "/workspace", "/tmp", "/dev/shm", "/var/tmp",
						LURE_HOME };

	for (size_t i = 0; i < ARRAY_SIZE(writable); i++) {
		size_t n = strlen(writable[i]);

		if (strncmp(path, writable[i], n) == 0 && (path[n] == '\0' || path[n] == '/'))
			return 1;
	}
	return 0;
}

void policy_env_free(struct policy_env_var *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].name);
		free(v[i].value);
	}
	free(v);
}

int policy_get_env(struct policy_parse *ctx, json_t *obj, const char *path, const char *key,
		   struct policy_env_var **ret, size_t *ret_n)
{
	char vpath[JSON_POS_PATH_MAX + 1], epath[JSON_POS_PATH_MAX + 1];
	struct policy_env_var *v;
	json_t *env = json_object_get(obj, key), *e;
	const char *name;
	size_t n = 0;

	policy_path(vpath, path, key);
	if (!env)
		return 0;
	if (!json_is_object(env))
		return policy_fail(ctx, vpath, 0, "\"%s\" must be an object of strings", key);
	if (json_object_size(env) > POLICY_ENV_MAX)
		return policy_fail(ctx, vpath, 0, "\"%s\" has more than %d variables", key,
				   POLICY_ENV_MAX);
	json_object_foreach (env, name, e) {
		policy_path(epath, vpath, name);
		if (!policy_env_name_valid(name))
			return policy_fail(
				ctx, epath, 1,
				"\"%.64s\" is not a variable name ([A-Za-z_][A-Za-z0-9_]*)", name);
		if (!json_is_string(e))
			return policy_fail(ctx, epath, 0, "the value of \"%s\" must be a string",
					   name);
		if (json_string_length(e) > POLICY_STRING_MAX)
			return policy_fail(ctx, epath, 0,
					   "the value of \"%s\" is longer than %d bytes", name,
					   POLICY_STRING_MAX);
		if (strcmp(name, "PATH") == 0)
			return policy_fail(
				ctx, epath, 1,
				"PATH is set by \"sandbox\".\"path\", not by an env object");
	}
	v = calloc(json_object_size(env) + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	json_object_foreach (env, name, e) {
		v[n].name = strdup(name);
		v[n].value = strdup(json_string_value(e));
		n++;
		if (!v[n - 1].name || !v[n - 1].value) {
			policy_env_free(v, n);
			return -ENOMEM;
		}
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

static int path_valid(struct policy_parse *ctx, const char *path)
{
	_cleanup_free_ char *copy = strdup(path);
	char *save = NULL;

	if (!copy)
		return -ENOMEM;
	if (!path[0] || path[0] == ':' || path[strlen(path) - 1] == ':' || strstr(path, "::"))
		return policy_fail(ctx, "/sandbox/path", 0,
				   "\"path\" must be absolute directories separated by ':', none "
				   "empty (an empty one means the working directory)");
	for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		if (dir[0] != '/' || strstr(dir, "/./") || strstr(dir, "/../") ||
		    (strlen(dir) >= 2 && strcmp(dir + strlen(dir) - 2, "/.") == 0) ||
		    (strlen(dir) >= 3 && strcmp(dir + strlen(dir) - 3, "/..") == 0))
			return policy_fail(
				ctx, "/sandbox/path", 0,
				"\"path\" entry \"%.200s\" must be an absolute directory "
				"without . or ..",
				dir);
		if (policy_path_writable_inside(dir))
			return policy_fail(
				ctx, "/sandbox/path", 0,
				"\"path\" entry \"%.200s\" is writable inside the sandbox: "
				"the agent could plant programs there",
				dir);
	}
	return 0;
}

int policy_env_fixed(const struct policy *p, const struct policy_tool *t, const char *name)
{
	size_t len = strlen(name);

	for (char **e = p->fixed_env; e && *e; e++)
		if (strncmp(*e, name, len) == 0 && (*e)[len] == '=')
			return 1;
	for (size_t i = 0; i < t->n_env; i++)
		if (strcmp(t->env[i].name, name) == 0)
			return 1;
	return 0;
}

/* PATH, HOME and TMPDIR, then sandbox.env (which may replace HOME or TMPDIR). */
static int build_fixed_env(struct policy *p, const struct policy_env_var *env, size_t n)
{
	char **v = calloc(3 + n + 1, sizeof(*v));
	size_t k = 0;

	if (!v)
		return -ENOMEM;
	p->fixed_env = v;
	if (asprintf(&v[k++], "PATH=%s", p->path) < 0 ||
	    asprintf(&v[k++], "HOME=%s", SANDBOX_HOME) < 0 ||
	    asprintf(&v[k++], "TMPDIR=%s", SANDBOX_TMPDIR) < 0) {
		v[k - 1] = NULL;
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(env[i].name), j;
		char *s;

		if (asprintf(&s, "%s=%s", env[i].name, env[i].value) < 0)
			return -ENOMEM;
		for (j = 0; j < k; j++)
			if (strncmp(v[j], s, len + 1) == 0)
				break;
		if (j < k)
			free(v[j]);
		else
			k++;
		v[j] = s;
	}
	p->sandbox.env = (const char *const *)v;
	return 0;
}

/*
 * sandbox.decoy_env: names every call gets a decoy value for (lib/lures.h), so that a process
 * that dumps its environment finds something worth taking, which carries the marker. A name the
 * policy gives a real value (PATH, HOME, TMPDIR, sandbox.env) cannot also be a decoy.
 */
static int sandbox_decoy_env(struct policy_parse *ctx, json_t *obj, struct policy *p)
{
	char path[64];
	int r;

	if ((r = policy_get_strings(ctx, obj, "/sandbox", "decoy_env", POLICY_ENV_MAX,
				    policy_env_name_valid, "not a variable name", &p->decoy_env,
				    &p->n_decoy_env)) < 0)
		return r;
	for (size_t i = 0; i < p->n_decoy_env; i++) {
		size_t n = strlen(p->decoy_env[i]);

		for (char **v = p->fixed_env; v && *v; v++) {
			if (strncmp(*v, p->decoy_env[i], n) != 0 || (*v)[n] != '=')
				continue;
			snprintf(path, sizeof(path), "/sandbox/decoy_env/%zu", i);
			return policy_fail(ctx, path, 0,
					   "\"%s\" has a real value in the sandbox's environment",
					   p->decoy_env[i]);
		}
	}
	return 0;
}

static int sandbox_defaults(struct policy *p)
{
	p->sandbox = (struct policy_sandbox){
		.uid = DEFAULT_UID,
		.gid = DEFAULT_GID,
		.memory_bytes = DEFAULT_MEMORY,
		.pids = DEFAULT_PIDS,
		.cpu = DEFAULT_CPU,
		.workspace_bytes = DEFAULT_WORKSPACE,
		.tmp_bytes = DEFAULT_TMP,
		.home_bytes = DEFAULT_HOME,
		.open_files = DEFAULT_OPEN_FILES,
		.wall_clock_ns = DEFAULT_WALL_CLOCK,
	};
	p->path = strdup(DEFAULT_PATH);
	return p->path ? 0 : -ENOMEM;
}

/* The typed members: identity, caps, the wall clock and PATH. */
static int sandbox_members(struct policy_parse *ctx, json_t *obj, struct policy *p)
{
	static const char *const known[] = { "uid",  "gid",  "memory",	   "swap",
					     "pids", "cpu",  "io",	   "workspace",
					     "tmp",  "home", "open_files", "wall_clock",
					     "path", "env",  "decoy_env",  "description" };
	struct policy_sandbox *sb = &p->sandbox;
	_cleanup_free_ char *description = NULL;
	uint64_t uid = sb->uid, gid = sb->gid, pids = sb->pids, open_files = sb->open_files;
	int r;

	if ((r = policy_check_keys(ctx, obj, "/sandbox", known, ARRAY_SIZE(known))) < 0 ||
	    (r = policy_get_string(ctx, obj, "/sandbox", "description", 0, &description)) < 0 ||
	    (r = policy_get_uint(ctx, obj, "/sandbox", "uid", 1, UINT32_MAX - 1, &uid)) < 0 ||
	    (r = policy_get_uint(ctx, obj, "/sandbox", "gid", 1, UINT32_MAX - 1, &gid)) < 0 ||
	    (r = policy_get_size(ctx, obj, "/sandbox", "memory", 4ULL << 20, &sb->memory_bytes)) <
		    0 ||
	    (r = policy_get_bool(ctx, obj, "/sandbox", "swap", &sb->swap)) < 0 ||
	    (r = policy_get_uint(ctx, obj, "/sandbox", "pids", 1, 4194304, &pids)) < 0 ||
	    (r = policy_get_size(ctx, obj, "/sandbox", "workspace", 1ULL << 20,
				 &sb->workspace_bytes)) < 0 ||
	    (r = policy_get_size(ctx, obj, "/sandbox", "tmp", 1ULL << 20, &sb->tmp_bytes)) < 0 ||
	    (r = policy_get_size(ctx, obj, "/sandbox", "home", 1ULL << 20, &sb->home_bytes)) < 0 ||
	    (r = policy_get_uint(ctx, obj, "/sandbox", "open_files", 16, 1048576, &open_files)) <
		    0 ||
	    (r = policy_get_duration(ctx, obj, "/sandbox", "wall_clock", NSEC_PER_SEC,
				     &sb->wall_clock_ns)) < 0 ||
	    (r = policy_get_string(ctx, obj, "/sandbox", "path", 0, &p->path)) < 0 ||
	    (r = path_valid(ctx, p->path)) < 0)
		return r;
	sb->uid = (uint32_t)uid;
	sb->gid = (uint32_t)gid;
	sb->pids = (uint32_t)pids;
	sb->open_files = (uint32_t)open_files;
	return 0;
}

static int sandbox_cpu(struct policy_parse *ctx, json_t *obj, struct policy_sandbox *sb)
{
	json_t *v = json_object_get(obj, "cpu");

	if (!v)
		return 0;
	if (!json_is_number(v))
		return policy_fail(ctx, "/sandbox/cpu", 0,
				   "\"cpu\" must be a number of cores such as 1 or 0.5");
	sb->cpu = json_number_value(v);
	if (!(sb->cpu >= CPU_MIN && sb->cpu <= CPU_MAX))
		return policy_fail(ctx, "/sandbox/cpu", 0,
				   "\"cpu\" must be from %.2f to %.0f cores", CPU_MIN, CPU_MAX);
	return 0;
}

static int sandbox_io(struct policy_parse *ctx, json_t *obj, struct policy_sandbox *sb)
{
	static const char *const io_known[] = { "read_bps", "write_bps" };
	json_t *v = json_object_get(obj, "io");
	int r;

	if (!v)
		return 0;
	if (!json_is_object(v))
		return policy_fail(ctx, "/sandbox/io", 0, "\"io\" must be an object");
	if ((r = policy_check_keys(ctx, v, "/sandbox/io", io_known, ARRAY_SIZE(io_known))) < 0 ||
	    (r = policy_get_size(ctx, v, "/sandbox/io", "read_bps", 4096, &sb->io_read_bps)) < 0 ||
	    (r = policy_get_size(ctx, v, "/sandbox/io", "write_bps", 4096, &sb->io_write_bps)) < 0)
		return r;
	return 0;
}

int policy_parse_sandbox(struct policy_parse *ctx, json_t *obj)
{
	struct policy *p = ctx->policy;
	struct policy_env_var *env = NULL;
	size_t n_env = 0;
	int r;

	if ((r = sandbox_defaults(p)) < 0)
		return r;
	if (obj && ((r = sandbox_members(ctx, obj, p)) < 0 ||
		    (r = sandbox_cpu(ctx, obj, &p->sandbox)) < 0 ||
		    (r = sandbox_io(ctx, obj, &p->sandbox)) < 0 ||
		    (r = policy_get_env(ctx, obj, "/sandbox", "env", &env, &n_env)) < 0))
		return r;
	p->sandbox.path = p->path;
	r = build_fixed_env(p, env, n_env);
	policy_env_free(env, n_env);
	if (r == 0 && obj)
		r = sandbox_decoy_env(ctx, obj, p);
	return r;
}
