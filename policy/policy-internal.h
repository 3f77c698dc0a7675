/*
 * The compiled form of a policy, shared by the policy loader (policy*.c) and its one reader, the
 * gate (gate*.c). Everything here is owned by the struct policy it hangs from and is immutable
 * once policy_load() returns.
 */
#ifndef FB_POLICY_INTERNAL_H
#define FB_POLICY_INTERNAL_H

#include <jansson.h>

#include "json-pos.h"
#include "policy.h"

struct policy_flag {
	char *name;	 /* "-q", "--tb", "-maxdepth": as written, without a trailing '=' */
	int takes_value; /* written with a trailing '=' */
};

struct policy_flags {
	struct policy_flag *v;
	size_t n;
};

enum policy_operands {
	POLICY_OPERANDS_NONE,
	POLICY_OPERANDS_ANY,
	POLICY_OPERANDS_LIST, /* each operand matches one of `patterns` */
};

struct policy_command {
	char *program; /* absolute path as written; resolved with realpath() at check time */
	char **prefix; /* fixed leading arguments */
	size_t n_prefix;
	struct policy_flags allow, deny;
	enum policy_operands operands;
	char **patterns;
	size_t n_patterns;
	int short_bundles; /* "-abc" is -a -b -c */
	int abbrev;	   /* "--max" may stand for a unique allowed "--maxfail" */
	unsigned line, col;
};

struct policy_env_var {
	char *name;
	char *value;
};

struct policy_tool {
	char *name;
	int64_t call_timeout_ns;
	char **env_allow; /* exact names, or "PREFIX*" (which never matches a never-pass name) */
	size_t n_env_allow;
	struct policy_env_var *env; /* fixed variables for this tool */
	size_t n_env;
	char **wrappers; /* built-in wrapper names this scope may run */
	size_t n_wrappers;
	char **unsafe_allow; /* built-in unsafe-option names this scope may use */
	size_t n_unsafe_allow;
	struct policy_command *commands;
	size_t n_commands;
	uint64_t egress_rules; /* bit i: egress rule i (policy_egress) is this tool's to reach */
	char **children;       /* programs its processes may exec besides its commands (globs) */
	size_t n_children;
	int has_children;   /* "children" given: execs outside it are findings */
	int single_process; /* the tool never forks: a fork is a finding */
};

struct policy_test_internal {
	struct policy_test pub;
	char *tool;
	char **argv;
	char *env;
	char *rule;
};

struct policy_http_internal {
	struct policy_http pub;
	char **methods, **paths;
	int n_methods_set, n_paths_set; /* given (an empty list is refused) */
};

struct policy_egress_internal {
	struct policy_egress_rule pub;
	char *name, *host, *cidr;
	uint16_t *ports;
	struct policy_http_internal *http;
};

struct policy_credential_internal {
	struct policy_credential pub;
	char *name, *from, *header, *scheme, *env, *file;
	char **hosts;
};

struct policy {
	char *source;
	char *name;
	char hash[SHA256_PREFIXED_HEX_SIZE];
	struct policy_sandbox sandbox;
	char *path;	  /* sandbox.path */
	char **fixed_env; /* "NAME=value", NULL-terminated: PATH, HOME, TMPDIR, sandbox.env */
	char **decoy_env; /* sandbox.decoy_env: names given decoy values, NULL-terminated */
	size_t n_decoy_env;
	struct policy_egress_internal *egress;
	size_t n_egress;
	struct policy_credential_internal *credentials;
	size_t n_credentials;
	struct policy_tool *tools;
	size_t n_tools;
	struct policy_test_internal *tests;
	size_t n_tests;
	struct policy_detectors detectors;
	char **detectors_off;
	char **warnings;
	size_t n_warnings;
	size_t n_warnings_dropped;
};

/* The tool scope named tool, or NULL. */
const struct policy_tool *policy_find_tool(const struct policy *p, const char *tool);

/* What the loader's parts share while reading one file. */
struct policy_parse {
	const char *source;
	struct json_pos *pos;
	struct policy *policy;
	char *err;
	size_t errlen;
};

/* Reads the "detectors" section (NULL: the defaults); 0 or -EINVAL. */
int policy_parse_detectors(struct policy_parse *ctx, json_t *obj);
/* A host rule's "http" object (policy-http.c); e->host and e->ports are parsed already. */
int policy_parse_http(struct policy_parse *ctx, json_t *obj, const char *path,
		      struct policy_egress_internal *e);
void policy_http_free(struct policy_http_internal *h);

/* "an object", "a string", ...: a JSON value's type for messages. */
const char *policy_type_name(const json_t *v);

/*
 * Formats "SOURCE:LINE:COL: message" into the error buffer, at the key of the member at path
 * (at_key) or at its value; returns -EINVAL.
 */
int policy_fail(struct policy_parse *ctx, const char *path, int at_key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Adds "SOURCE:LINE:COL: warning: message"; returns 0 or -ENOMEM. */
int policy_warn(struct policy_parse *ctx, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Refuses any member of obj (at path) not in known (n names), pointing at the first such key in
 * the text. Returns 0 or -EINVAL.
 */
int policy_check_keys(struct policy_parse *ctx, json_t *obj, const char *path,
		      const char *const *known, size_t n);

/* Builds path + "/" + key (escaped) into buf (JSON_POS_PATH_MAX + 1 bytes). */
void policy_path(char *buf, const char *path, const char *key);
/* Builds path + "/" + index into buf. */
void policy_path_index(char *buf, const char *path, size_t index);

/*
 * Typed members. Each takes the object, its path and the key; a member that is absent leaves *ret
 * as it is (the caller's default) unless required, which is then an error at the object.
 */
int policy_get_string(struct policy_parse *ctx, json_t *obj, const char *path, const char *key,
		      int required, char **ret);
int policy_get_bool(struct policy_parse *ctx, json_t *obj, const char *path, const char *key,
		    int *ret);
int policy_get_uint(struct policy_parse *ctx, json_t *obj, const char *path, const char *key,
		    uint64_t min, uint64_t max, uint64_t *ret);
int policy_get_size(struct policy_parse *ctx, json_t *obj, const char *path, const char *key,
		    uint64_t min, uint64_t *ret);
int policy_get_duration(struct policy_parse *ctx, json_t *obj, const char *path, const char *key,
			int64_t min_ns, int64_t *ret);
/*
 * A list of strings, at most max entries, each checked by valid (NULL: any string up to
 * POLICY_STRING_MAX) whose failure is reported as "…: <what>". *ret is NULL-terminated.
 */
int policy_get_strings(struct policy_parse *ctx, json_t *obj, const char *path, const char *key,
		       size_t max, int (*valid)(const char *s), const char *what, char ***ret,
		       size_t *ret_n);

/* Whether s is an environment variable name: [A-Za-z_][A-Za-z0-9_]*, at most 255 bytes. */
int policy_env_name_valid(const char *s);

/*
 * Whether path lies in a place the sandbox can write (/workspace, /tmp, /dev/shm): a program or a
 * search directory there is one the agent could replace, so a policy may not name one.
 */
int policy_path_writable_inside(const char *path);

/*
 * Whether the policy fixes variable name for tool t's calls: sandbox.path's PATH, HOME, TMPDIR,
 * sandbox.env or the tool's env. A fixed name never comes from the caller.
 */
int policy_env_fixed(const struct policy *p, const struct policy_tool *t, const char *name);

/* Parses an object of "NAME": "value" strings at path/key into *ret (*ret_n entries). */
int policy_get_env(struct policy_parse *ctx, json_t *obj, const char *path, const char *key,
		   struct policy_env_var **ret, size_t *ret_n);
void policy_env_free(struct policy_env_var *v, size_t n);

/* Frees a NULL-terminated string vector; accepts NULL. */
void policy_strv_free(char **v);

/* The sections, one file each. */
int policy_parse_sandbox(struct policy_parse *ctx, json_t *obj);
int policy_parse_tools(struct policy_parse *ctx, json_t *obj);
int policy_parse_tests(struct policy_parse *ctx, json_t *arr);
int policy_parse_egress(struct policy_parse *ctx, json_t *obj);
void policy_egress_free(struct policy *p);
int policy_parse_credentials(struct policy_parse *ctx, json_t *obj);
void policy_credentials_free(struct policy *p);
void policy_tools_free(struct policy *p);
void policy_tests_free(struct policy *p);

#endif
