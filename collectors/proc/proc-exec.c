/*
 * What an exec record says beyond path and argv (issue 16, item 6): the loader and interpreter
 * variables the new program got (names; a cut value for the dangerous ones), where its executable
 * is (exe_origin) and whether its stdio is an inet socket. The sandbox's own writable mounts are
 * told by device: their st_dev, read once per sandbox through its init's root.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "collectors/collector.h"
#include "loader-env.h"
#include "macro.h"
#include "proc-events-internal.h"
#include "store/store.h"

#define PROC_MOUNTS_CACHE 64 /* sandboxes whose mounts' devices are remembered */

/* The sandbox's writable mounts, as exe_origin names them. */
static const char *const writable[] = { "workspace", "tmp", "shm" };
static const char *const writable_dir[] = { "workspace", "tmp", "dev/shm" };

struct proc_mounts {
	struct {
		int64_t sandbox_id; /* 0: empty */
		dev_t dev[ARRAY_SIZE(writable)];
	} at[PROC_MOUNTS_CACHE];
	size_t next;
};

int proc_mounts_new(struct proc_mounts **ret)
{
	return (*ret = calloc(1, sizeof(**ret))) ? 0 : -ENOMEM;
}

void proc_mounts_free(struct proc_mounts *m)
{
	free(m);
}

/* The cache slot of sb, filled now if it is not there; NULL if its init is not to be found. */
static int mounts_of(struct proc_mounts *m, const struct config *cfg,
		     const struct store_sandbox *sb, size_t *ret)
{
	char path[64];
	struct stat st;
	pid_t init;
	size_t i;

	for (i = 0; i < PROC_MOUNTS_CACHE; i++)
		if (m->at[i].sandbox_id == sb->id) {
			*ret = i;
			return 1;
		}
	if (collector_sandbox_init(cfg, sb, &init) < 0 || !collector_sandbox_init_alive(sb, init))
		return 0;
	i = m->next++ % PROC_MOUNTS_CACHE;
	m->at[i].sandbox_id = sb->id;
	for (size_t k = 0; k < ARRAY_SIZE(writable); k++) {
		snprintf(path, sizeof(path), "/proc/%d/root/%s", (int)init, writable_dir[k]);
		m->at[i].dev[k] = stat(path, &st) == 0 ? st.st_dev : (dev_t)-1;
	}
	*ret = i;
	return 1;
}

/* Where the program's file is: memfd, deleted, the sandbox's workspace, tmp or shm, or host. */
static const char *exe_origin(struct proc_mounts *m, const struct config *cfg,
			      const struct store_sandbox *sb, const struct proc_trace_event *e)
{
	dev_t dev = makedev(e->exe_dev >> 20, e->exe_dev & 0xfffff);
	size_t i;

	if (e->exe_flags & PROC_TRACE_EXE_MEMFD)
		return "memfd";
	if (e->exe_flags & PROC_TRACE_EXE_DELETED)
		return "deleted";
	if (!(e->exe_flags & PROC_TRACE_EXE_TMPFS))
		return "host";
	if (!mounts_of(m, cfg, sb, &i))
		return "tmpfs"; /* a tmpfs, but whose is not known any more */
	for (size_t k = 0; k < ARRAY_SIZE(writable); k++)
		if (m->at[i].dev[k] == dev)
			return writable[k];
	return "host";
}

/* "LD_PRELOAD,PYTHONPATH" and {"LD_PRELOAD": "/tmp/x.so"}: what the kernel found. */
static void env_fields(json_t *f, const struct proc_trace_event *e)
{
	char names[512];
	size_t n = 0;
	json_t *values;

	names[0] = '\0';
	for (size_t b = 0; b < loader_env_count() && b < 64; b++)
		if (e->env_mask & (1ULL << b))
			n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s", n ? "," : "",
					      loader_env_table[b].name);
	json_object_set_new(f, "loader_env", json_string(names));
	if (e->env_truncated)
		json_object_set_new(f, "env_truncated", json_true());
	if (!e->n_values)
		return;
	values = json_object();
	for (unsigned k = 0; k < e->n_values && k < PROC_TRACE_ENV_VALUES; k++) {
		unsigned b = e->value_bit[k];

		if (b < loader_env_count())
			json_object_set_new(
				values, loader_env_table[b].name,
				json_stringn(e->values[k],
					     strnlen(e->values[k], PROC_TRACE_ENV_VALUE_MAX)));
	}
	json_object_set_new(f, "loader_env_values", values);
}

void proc_exec_fields(json_t *f, struct proc_mounts *m, const struct config *cfg,
		      const struct store_sandbox *sb, const struct proc_trace_event *e)
{
	char stdio[24];
	size_t n = 0;

	if (!f)
		return;
	env_fields(f, e);
	json_object_set_new(f, "exe_origin", json_string(exe_origin(m, cfg, sb, e)));
	stdio[0] = '\0';
	for (int i = 0; i < 3; i++)
		if (e->stdio_socket & (1 << i))
			n += (size_t)snprintf(stdio + n, sizeof(stdio) - n, "%s%s", n ? "," : "",
					      i == 0   ? "stdin"
					      : i == 1 ? "stdout"
						       : "stderr");
	if (n)
		json_object_set_new(f, "stdio_socket", json_string(stdio));
	/* Which pipe, by inode: the two ends of one pipeline step (exec.pipe-to-shell). */
	if (e->stdin_pipe)
		json_object_set_new(f, "stdin_pipe", json_integer((json_int_t)e->stdin_pipe));
	if (e->stdout_pipe)
		json_object_set_new(f, "stdout_pipe", json_integer((json_int_t)e->stdout_pipe));
	json_object_set_new(
		f, "parent_exe",
		json_stringn(e->parent_exe, strnlen(e->parent_exe, sizeof(e->parent_exe))));
}
