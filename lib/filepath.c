/* What a path inside a sandbox is (filepath.h). */
#include "filepath.h"

#include <stdlib.h>
#include <string.h>

#include "macro.h"

static const char *base_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/*
 * Whether s ends with suffix, or starts with prefix: what fnmatch("*.pem") and fnmatch("id_rsa*")
 * asked, without fnmatch, which was most of this file's cost in the file collector (every event
 * it reads is classed).
 */
static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && memcmp(s + n - k, suffix, k) == 0;
}

static int starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int in_list(const char *name, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(name, list[i]) == 0)
			return 1;
	return 0;
}

/* Whether path has the component sequence seg ("/.ssh/") somewhere, or ends with it less '/'. */
static int has_dir(const char *path, const char *seg)
{
	return strstr(path, seg) != NULL;
}

static unsigned credential(const char *path, const char *base)
{
	static const char *const names[] = {
		".netrc", ".git-credentials", ".pgpass", ".env",
		".npmrc", ".pypirc",	      ".boto",	 ".s3cfg",
	};
	static const char *const dirs[] = {
		"/.ssh/",
		"/.aws/",
		"/.gnupg/",
		"/.kube/",
		"/.docker/config.json",
		"/.azure/",
		"/.config/gcloud/",
		"/secrets/kubernetes.io/serviceaccount/",
	};

	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
		if (has_dir(path, dirs[i]))
			return FILEPATH_CREDENTIAL;
	/* "credentials" and "token" alone are too common a name: they count only in the places
	 * above. */
	if (in_list(base, names, ARRAY_SIZE(names)) || strncmp(base, ".env.", 5) == 0)
		return FILEPATH_CREDENTIAL;
	/* A CA bundle vendored in a package (pip's certifi) is no one's key. */
	if (ends_with(base, ".pem") && !strstr(path, "-packages/"))
		return FILEPATH_CREDENTIAL;
	if (starts_with(base, "id_rsa") || starts_with(base, "id_dsa") ||
	    starts_with(base, "id_ecdsa") || starts_with(base, "id_ed25519"))
		return FILEPATH_CREDENTIAL;
	return 0;
}

static unsigned persistence(const char *path, const char *base)
{
	static const char *const rc[] = {
		".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
		".zshrc",  ".zshenv",	    ".zprofile",   ".zlogin",	   ".kshrc",
		".cshrc",  ".tcshrc",	    ".inputrc",	   "bash.bashrc",
	};
	const char *hooks = strstr(path, "/.git/hooks/");
	unsigned c = 0;

	if (in_list(base, rc, ARRAY_SIZE(rc)) || strcmp(path, "/etc/profile") == 0 ||
	    strncmp(path, "/etc/profile.d/", 15) == 0)
		c |= FILEPATH_SHELL_RC;
	if (ends_with(base, ".pth") || strcmp(base, "sitecustomize.py") == 0 ||
	    strcmp(base, "usercustomize.py") == 0)
		c |= FILEPATH_PYTHON_HOOK;
	if (hooks && !strchr(hooks + 12, '/') && hooks[12] && !ends_with(base, ".sample"))
		c |= FILEPATH_GIT_HOOK;
	if (strncmp(path, "/var/spool/cron/", 16) == 0 || strncmp(path, "/etc/cron", 9) == 0 ||
	    strcmp(base, "crontab") == 0)
		c |= FILEPATH_CRON;
	if (strstr(path, "/.ssh/authorized_keys"))
		c |= FILEPATH_LOGIN_KEY;
	return c;
}

static unsigned history(const char *base)
{
	static const char *const names[] = {
		".bash_history",   ".zsh_history",    ".sh_history",   ".history",
		".python_history", ".mysql_history",  ".psql_history", ".node_repl_history",
		".lesshst",	   ".sqlite_history",
	};

	return in_list(base, names, ARRAY_SIZE(names)) ? FILEPATH_HISTORY : 0;
}

int32_t filepath_proc_pid(const char *path)
{
	char *end;
	long n;

	if (strncmp(path, "/proc/", 6) != 0 || path[6] < '1' || path[6] > '9')
		return 0;
	n = strtol(path + 6, &end, 10);
	if ((*end != '/' && *end) || n <= 0 || n > INT32_MAX)
		return 0;
	return (int32_t)n;
}

static unsigned kernel(const char *path, const char *base)
{
	static const char *const masked[] = { "/proc/kcore",	  "/proc/keys",
					      "/proc/timer_list", "/proc/sched_debug",
					      "/proc/kallsyms",	  "/proc/kmem",
					      "/proc/kpageflags", "/proc/sysrq-trigger" };
	static const char *const peek[] = { "environ", "mem",  "maps",	  "smaps",
					    "pagemap", "auxv", "syscall", "stack" };

	if (in_list(path, masked, ARRAY_SIZE(masked)) || strncmp(path, "/sys/", 5) == 0)
		return FILEPATH_KERNEL;
	if (filepath_proc_pid(path) && in_list(base, peek, ARRAY_SIZE(peek)))
		return FILEPATH_PROC_PEEK;
	return 0;
}

static unsigned site_dir(const char *path)
{
	const char *s = strrchr(path, '/');
	size_t n;

	if (!s)
		return 0;
	n = (size_t)(s - path);
	if ((n >= 14 && strncmp(s - 14, "/site-packages", 14) == 0) ||
	    (n >= 14 && strncmp(s - 14, "/dist-packages", 14) == 0))
		return FILEPATH_SITE_DIR;
	return 0;
}

unsigned filepath_class(const char *path)
{
	const char *base = base_of(path);

	return credential(path, base) | persistence(path, base) | history(base) |
	       kernel(path, base) | site_dir(path);
}
