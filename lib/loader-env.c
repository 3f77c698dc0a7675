#include "loader-env.h"

#include <string.h>

#include "macro.h"

/*
 * Where a variable makes a program load or run something it was not asked to: the loader's
 * (preload, audit modules, library path, tunables), the shells' start-up files, the
 * interpreters' start-up code and module paths, and git's command hooks (a GIT_CONFIG_COUNT
 * config can set core.sshCommand, core.pager or a hooks path just as well). GIT_CONFIG_KEY_n and
 * _VALUE_n do nothing without GIT_CONFIG_COUNT, so that one stands for them.
 */
const struct loader_env loader_env_table[] = {
	{ "LD_PRELOAD", LOADER_ENV_LOADER | LOADER_ENV_VALUE },
	{ "LD_AUDIT", LOADER_ENV_LOADER | LOADER_ENV_VALUE },
	{ "LD_LIBRARY_PATH", LOADER_ENV_LOADER | LOADER_ENV_VALUE },
	{ "GLIBC_TUNABLES", LOADER_ENV_LOADER | LOADER_ENV_VALUE },
	{ "BASH_ENV", LOADER_ENV_VALUE },
	{ "ENV", LOADER_ENV_VALUE },
	{ "PROMPT_COMMAND", LOADER_ENV_VALUE },
	{ "PYTHONSTARTUP", LOADER_ENV_PYTHON | LOADER_ENV_VALUE },
	{ "PYTHONPATH", LOADER_ENV_PYTHON },
	{ "PYTHONHOME", LOADER_ENV_PYTHON },
	{ "PYTHONINSPECT", LOADER_ENV_PYTHON },
	{ "PYTHONUSERBASE", LOADER_ENV_PYTHON },
	{ "PERL5OPT", LOADER_ENV_VALUE },
	{ "PERL5LIB", 0 },
	{ "PERLLIB", 0 },
	{ "RUBYOPT", LOADER_ENV_VALUE },
	{ "RUBYLIB", 0 },
	{ "NODE_OPTIONS", LOADER_ENV_VALUE },
	{ "NODE_PATH", 0 },
	{ "PYTEST_ADDOPTS", LOADER_ENV_PYTHON },
	{ "PYTEST_PLUGINS", LOADER_ENV_PYTHON },
	{ "GIT_SSH_COMMAND", LOADER_ENV_GIT_HOOK | LOADER_ENV_VALUE },
	{ "GIT_SSH", LOADER_ENV_GIT_HOOK | LOADER_ENV_VALUE },
	{ "GIT_EXTERNAL_DIFF", LOADER_ENV_GIT_HOOK | LOADER_ENV_VALUE },
	{ "GIT_PAGER", LOADER_ENV_GIT_HOOK },
	{ "GIT_EDITOR", LOADER_ENV_GIT_HOOK },
	{ "GIT_SEQUENCE_EDITOR", LOADER_ENV_GIT_HOOK },
	{ "GIT_ASKPASS", LOADER_ENV_GIT_HOOK },
	{ "GIT_PROXY_COMMAND", LOADER_ENV_GIT_HOOK | LOADER_ENV_VALUE },
	{ "GIT_EXEC_PATH", LOADER_ENV_GIT_HOOK },
	{ "GIT_TEMPLATE_DIR", LOADER_ENV_GIT_HOOK },
	{ "GIT_CONFIG_COUNT", LOADER_ENV_GIT_HOOK },
	{ "GIT_CONFIG_PARAMETERS", LOADER_ENV_GIT_HOOK },
	{ "GIT_CONFIG_GLOBAL", LOADER_ENV_GIT_HOOK },
	{ "GIT_CONFIG_SYSTEM", LOADER_ENV_GIT_HOOK },
	{ "GIT_CONFIG", LOADER_ENV_GIT_HOOK },
};

size_t loader_env_count(void)
{
	return ARRAY_SIZE(loader_env_table);
}

int loader_env_index(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(loader_env_table); i++)
		if (strcmp(loader_env_table[i].name, name) == 0)
			return (int)i;
	return -1;
}
