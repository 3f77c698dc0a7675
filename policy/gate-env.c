/*
 * The environment of a call is rebuilt, never inherited: the sandbox's fixed variables, the tool's
 * fixed variables, and only those of the caller's that the tool's env_allow names. A variable on
 * the never-pass list below changes what a program runs (a preloaded library, a startup file,
 * extra options, a config file) and passes only when env_allow names it exactly: a pattern such
 * as "PYTHON*" in env_allow never lets one through.
 */
#include <fnmatch.h>
#include <stdio.h>

#include "gate-internal.h"
#include "lures.h"
#include "macro.h"

struct never_pass {
	const char *pattern; /* fnmatch over the name */
	const char *reason;
};

static const struct never_pass never_pass[] = {
	{ "LD_*", "the dynamic loader preloads or searches libraries it names" },
	{ "GCONV_PATH", "glibc loads iconv modules from it" },
	{ "LOCPATH", "glibc loads locale data from it" },
	{ "NLSPATH", "glibc reads message catalogs from it" },
	{ "MALLOC_*", "tunes or traces glibc's allocator" },
	{ "GLIBC_TUNABLES", "tunes glibc (and has had exploitable parsing bugs)" },
	{ "HOSTALIASES", "redirects host name lookups" },
	{ "RES_OPTIONS", "changes the resolver's behaviour" },
	{ "LOCALDOMAIN", "changes the resolver's search domains" },
	{ "*_OPTIONS",
	  "extra options for a program (NODE_OPTIONS, JAVA_TOOL_OPTIONS, _JAVA_OPTIONS)" },
	{ "PYTHON*", "PYTHONSTARTUP, PYTHONPATH, PYTHONHOME, PYTHONINSPECT... run or load code" },
	{ "PYTEST_ADDOPTS", "extra pytest options, such as -p to load a plugin" },
	{ "PYTEST_PLUGINS", "plugins pytest loads" },
	{ "PIP_*", "pip options: another index, a config file" },
	{ "GIT_*", "GIT_SSH_COMMAND, GIT_CONFIG_*, GIT_EXEC_PATH... make git run programs" },
	{ "BASH_ENV", "a file bash runs first" },
	{ "ENV", "a file sh runs first" },
	{ "BASH_FUNC_*", "exported bash functions, which replace commands" },
	{ "SHELLOPTS", "bash options, e.g. xtrace with PS4" },
	{ "BASHOPTS", "bash options" },
	{ "PS4", "expanded, with command substitution, on every traced line" },
	{ "PROMPT_COMMAND", "a command bash runs before each prompt" },
	{ "IFS", "changes how shells split words" },
	{ "PERL5OPT", "extra perl switches, such as -M to load code" },
	{ "PERL5LIB", "where perl loads modules from" },
	{ "PERLLIB", "where perl loads modules from" },
	{ "PERL5DB", "code perl's debugger runs" },
	{ "RUBYOPT", "extra ruby switches, such as -r to load code" },
	{ "RUBYLIB", "where ruby loads libraries from" },
	{ "NODE_PATH", "where node loads modules from" },
	{ "LUA_INIT*", "Lua code the interpreter runs first" },
	{ "LUA_PATH*", "where Lua loads modules from" },
	{ "LUA_CPATH*", "where Lua loads native modules from" },
	{ "PHPRC", "the php.ini php reads (auto_prepend_file...)" },
	{ "PHP_INI_SCAN_DIR", "more ini files php reads" },
	{ "CLASSPATH", "where Java loads classes from" },
	{ "LESSOPEN", "a command less runs on each file" },
	{ "LESSCLOSE", "a command less runs on each file" },
	{ "CURL_HOME", "where curl reads its .curlrc (options past the gate)" },
	{ "XDG_CONFIG_HOME", "where programs read their config files" },
	{ "SSH_ASKPASS", "a program ssh runs" },
	{ "SUDO_ASKPASS", "a program sudo runs" },
	{ "EDITOR", "a command git, crontab and others run" },
	{ "VISUAL", "a command git and others run" },
	{ "*PAGER",
	  "a command git, man, systemctl and others run (PAGER, GIT_PAGER, MANPAGER...)" },
	{ "LESS", "less options, which can name commands to run" },
	{ "LESSKEY*", "key bindings less reads, which can run commands" },
	{ "OPENSSL_CONF", "an OpenSSL config, which loads engines and providers (code)" },
	{ "OPENSSL_MODULES", "where OpenSSL loads provider modules from" },
	{ "OPENSSL_ENGINES", "where OpenSSL loads engines from" },
	{ "SSL_CERT_FILE", "the CA bundle: a caller's CA can intercept TLS" },
	{ "SSL_CERT_DIR", "the CA directory: a caller's CA can intercept TLS" },
	{ "CURL_CA_BUNDLE", "curl's CA bundle: a caller's CA can intercept TLS" },
	{ "REQUESTS_CA_BUNDLE", "python requests' CA bundle" },
	{ "GEM_*", "where ruby loads gems from" },
	{ "TERMINFO*", "terminal descriptions, parsed by curses programs" },
	{ "PERL_MB_OPT", "options perl's Module::Build runs with" },
	{ "PERL_MM_OPT", "options perl's MakeMaker runs with" },
	{ "NPM_CONFIG_*", "npm options: scripts, another registry" },
	{ "npm_config_*", "npm options: scripts, another registry" },
	{ "WGETRC", "a wgetrc with options past the gate" },
	{ "MANOPT", "man options, which can name commands" },
	{ "BROWSER", "a command programs run to open URLs" },
	{ "*_proxy", "routes traffic through a proxy the caller picks" },
	{ "*_PROXY", "routes traffic through a proxy the caller picks" },
};

struct gate_env {
	char **vector; /* NULL-terminated */
	size_t n;
	char **dropped; /* names, NULL-terminated */
	size_t n_dropped;
};

static const struct never_pass *find_never_pass(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(never_pass); i++)
		if (fnmatch(never_pass[i].pattern, name, 0) == 0)
			return &never_pass[i];
	return NULL;
}

int gate_env_never_pass(const char *name)
{
	return find_never_pass(name) != NULL;
}

/* 1 passes; 0 does not, with the reason in why. */
static int allowed(const struct policy *p, const struct policy_tool *t, const char *name, char *why,
		   size_t whylen)
{
	const struct never_pass *np;

	if (policy_env_fixed(p, t, name)) {
		snprintf(why, whylen,
			 "env: %s is fixed by the policy; the caller's value is dropped", name);
		return 0;
	}
	np = find_never_pass(name);
	for (size_t i = 0; i < t->n_env_allow; i++) {
		const char *a = t->env_allow[i];
		size_t n = strlen(a);

		if (strcmp(a, name) == 0)
			return 1;
		if (!np && a[n - 1] == '*' && strncmp(a, name, n - 1) == 0)
			return 1;
	}
	if (np)
		snprintf(why, whylen, "env: %s is on the never-pass list (%s; %s)", name,
			 np->pattern, np->reason);
	else
		snprintf(why, whylen, "env: %s is not in tool %s's env_allow", name, t->name);
	return 0;
}

int gate_env_allowed(const struct policy *p, const char *tool, const char *name, char *why,
		     size_t whylen)
{
	const struct policy_tool *t = policy_find_tool(p, tool);

	if (!t) {
		snprintf(why, whylen, "%s: tool %s has no scope in this policy",
			 GATE_RULE_UNKNOWN_TOOL, tool);
		return -ENOENT;
	}
	return allowed(p, t, name, why, whylen);
}

int gate_env_may_start(const struct policy *p, const char *tool, const char *name)
{
	const struct policy_tool *t = policy_find_tool(p, tool);
	char why[8];

	return t && (policy_env_fixed(p, t, name) || allowed(p, t, name, why, sizeof(why)) == 1);
}

void gate_env_free(struct gate_env *e)
{
	if (!e)
		return;
	policy_strv_free(e->vector);
	policy_strv_free(e->dropped);
	free(e);
}

char *const *gate_env_vector(const struct gate_env *e)
{
	return e->vector;
}

char *const *gate_env_dropped(const struct gate_env *e)
{
	return e->dropped;
}

/* Sets "NAME=value" (s, taken over), replacing an earlier NAME. */
static void put(struct gate_env *e, char *s)
{
	size_t len = strcspn(s, "=") + 1;

	for (size_t i = 0; i < e->n; i++)
		if (strncmp(e->vector[i], s, len) == 0) {
			free(e->vector[i]);
			e->vector[i] = s;
			return;
		}
	e->vector[e->n++] = s;
}

static int drop(struct gate_env *e, const char *entry)
{
	char *name = strndup(entry, strcspn(entry, "="));

	if (!name)
		return -ENOMEM;
	e->dropped[e->n_dropped++] = name;
	return 0;
}

/* An empty environment with room for the policy's variables and n_caller of the caller's. */
static struct gate_env *env_new(const struct policy *p, const struct policy_tool *t,
				size_t n_caller)
{
	struct gate_env *e = calloc(1, sizeof(*e));
	size_t n_fixed = 0;

	if (!e)
		return NULL;
	while (p->fixed_env && p->fixed_env[n_fixed])
		n_fixed++;
	e->vector = calloc(n_fixed + t->n_env + n_caller + 1, sizeof(*e->vector));
	e->dropped = calloc(n_caller + 1, sizeof(*e->dropped));
	if (!e->vector || !e->dropped) {
		gate_env_free(e);
		return NULL;
	}
	return e;
}

/* The sandbox's fixed variables, then the tool's (which replace any of the same name). */
static int put_fixed(struct gate_env *e, const struct policy *p, const struct policy_tool *t)
{
	char *s;

	for (char **v = p->fixed_env; v && *v; v++) {
		if (!(s = strdup(*v)))
			return -ENOMEM;
		put(e, s);
	}
	for (size_t i = 0; i < t->n_env; i++) {
		if (asprintf(&s, "%s=%s", t->env[i].name, t->env[i].value) < 0)
			return -ENOMEM;
		put(e, s);
	}
	return 0;
}

/* Whether the caller's entry i passes: a valid name env_allow lets through, its first entry. */
static int caller_passes(const struct policy *p, const struct policy_tool *t, char *const envp[],
			 size_t i)
{
	const char *entry = envp[i], *eq = strchr(entry, '=');
	char name[256], why[256];
	int pass;

	if (!eq || (size_t)(eq - entry) >= sizeof(name))
		return 0;
	memcpy(name, entry, (size_t)(eq - entry));
	name[eq - entry] = '\0';
	pass = policy_env_name_valid(name) && strlen(eq + 1) <= GATE_ENV_VALUE_MAX &&
	       allowed(p, t, name, why, sizeof(why)) == 1;
	/* The first of two entries with one name wins, as getenv() reads it. */
	for (size_t k = 0; pass && k < i; k++)
		if (strncmp(envp[k], entry, (size_t)(eq - entry) + 1) == 0)
			pass = 0;
	return pass;
}

/* The caller's entries: each passes or is dropped, by name. */
static int put_caller(struct gate_env *e, const struct policy *p, const struct policy_tool *t,
		      char *const envp[], size_t n_caller)
{
	for (size_t i = 0; i < n_caller; i++) {
		char *s;

		if (!caller_passes(p, t, envp, i)) {
			if (drop(e, envp[i]) < 0)
				return -ENOMEM;
			continue;
		}
		if (!(s = strdup(envp[i])))
			return -ENOMEM;
		put(e, s);
	}
	return 0;
}

int gate_build_env(const struct policy *p, const char *tool, char *const envp[],
		   struct gate_env **ret)
{
	const struct policy_tool *t = policy_find_tool(p, tool);
	struct gate_env *e;
	size_t n_caller = 0;

	if (!t)
		return -ENOENT;
	while (envp && envp[n_caller])
		if (++n_caller > GATE_ENV_MAX)
			return -E2BIG;
	e = env_new(p, t, n_caller);
	if (!e)
		return -ENOMEM;
	if (put_fixed(e, p, t) < 0 || put_caller(e, p, t, envp, n_caller) < 0) {
		gate_env_free(e);
		return -ENOMEM;
	}
	*ret = e;
	return 0;
}

/* NAME=the decoy of variable i: sandbox.decoy_env's, then the credentials' in env. */
static char *decoy_var(const struct policy *p, size_t i, const char *marker)
{
	char value[128], *s;
	const char *name;
	int r;

	if (i < p->n_decoy_env) {
		name = p->decoy_env[i];
		r = lure_decoy_env_text(name, marker, value, sizeof(value));
	} else {
		const struct policy_credential *c = &p->credentials[i - p->n_decoy_env].pub;

		if (!(name = c->env))
			return NULL;
		r = lure_credential_decoy(c->name, c->env, marker, value, sizeof(value));
	}
	return r < 0 || asprintf(&s, "%s=%s", name, value) < 0 ? NULL : s;
}

int gate_env_add_decoys(struct gate_env *e, const struct policy *p, const char *marker)
{
	char *s, **v;

	for (size_t i = 0; i < p->n_decoy_env + p->n_credentials; i++) {
		if (i >= p->n_decoy_env && !p->credentials[i - p->n_decoy_env].pub.env)
			continue;
		if (!(s = decoy_var(p, i, marker)))
			return -ENOMEM;
		/* put() replaces in place or appends: room for one more and the NULL. */
		if (!(v = reallocarray(e->vector, e->n + 2, sizeof(*v)))) {
			free(s);
			return -ENOMEM;
		}
		e->vector = v;
		put(e, s);
		e->vector[e->n] = NULL;
	}
	return 0;
}
