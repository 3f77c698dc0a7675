/* What the collectors share (collector.h). */
#include "collector.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cgroup.h"
#include "config.h"
#include "event.h"
#include "store/registry.h"
#include "store/sink.h"
#include "store/store.h"
#include "timeutil.h"

/* The step cgroup of sandbox sb_dir (a directory under firebreak/) whose id is cgid, if any. */
static int find_step(struct registry *r, const char *sandbox, const char *dir, uint64_t cgid)
{
	char sub[PATH_MAX + 600];
	struct dirent *c;
	struct stat st;
	DIR *dc = opendir(dir);
	int found = 0;

	if (!dc)
		return 0;
	while (!found && (c = readdir(dc))) {
		char *end;
		long long n;

		if (c->d_type != DT_DIR || strncmp(c->d_name, "step-", 5) != 0)
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, c->d_name);
		n = strtoll(c->d_name + 5, &end, 10);
		if (*end || stat(sub, &st) < 0 || (uint64_t)st.st_ino != cgid)
			continue;
		registry_cgroup_put(r, cgid, sandbox, n, registry_step_tool(r, sandbox, n));
		found = 1;
	}
	closedir(dc);
	return found;
}

/*
 * The registry knows the steps the enforcer reported; a record can arrive before that report,
 * so a miss looks the id up under firebreak/ and remembers what it found. A step found so,
 * before its report, has no tool (NULL) until the report replaces the entry: the process
 * tracer's records wait for it, the syscall recorder's are the sandbox's, step unknown.
 */
int collector_resolve(struct registry *r, uint64_t cgid, const char **ret_sandbox,
		      int64_t *ret_step, const char **ret_tool)
{
	char root[PATH_MAX], dir[PATH_MAX + 300];
	struct dirent *s;
	struct stat st;
	DIR *ds;
	int found = 0;

	if (registry_cgroup_get(r, cgid, ret_sandbox, ret_step, ret_tool))
		return 1;
	if (cgroup_v2_dir(CGROUP_ROOT_NAME, root, sizeof(root)) < 0 || !(ds = opendir(root)))
		return 0;
	while (!found && (s = readdir(ds))) {
		if (s->d_type != DT_DIR || s->d_name[0] == '.' || !registry_find(r, s->d_name))
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", root, s->d_name);
		if (stat(dir, &st) == 0 && (uint64_t)st.st_ino == cgid) {
			registry_cgroup_put(r, cgid, s->d_name, EVENT_STEP_NONE, NULL);
			found = 1;
		} else {
			found = find_step(r, s->d_name, dir, cgid);
		}
	}
	closedir(ds);
	return found && registry_cgroup_get(r, cgid, ret_sandbox, ret_step, ret_tool);
}

int collector_sandbox_init(const struct config *cfg, const struct store_sandbox *sb, pid_t *ret)
{
	char path[PATH_MAX];
	json_t *doc;
	json_int_t pid;

	if (config_sandbox_path(cfg, sb->name, "state.json", path, sizeof(path)) < 0)
		return -ENAMETOOLONG;
	if (!(doc = json_load_file(path, 0, NULL)))
		return -ENOENT;
	pid = json_integer_value(json_object_get(doc, "init_pid"));
	json_decref(doc);
	if (pid <= 0 || pid > INT32_MAX)
		return -ENOENT;
	*ret = (pid_t)pid;
	return 0;
}

int collector_sandbox_init_alive(const struct store_sandbox *sb, pid_t pid)
{
	char rel[sizeof(sb->cgroup)];

	return cgroup_of_pid(pid, rel, sizeof(rel)) == 0 && strcmp(rel, sb->cgroup) == 0;
}

size_t collector_loss_everywhere(const struct collector_env *env, const char *stage,
				 const char *count_key, uint64_t count)
{
	const int64_t now = time_now_ns();
	struct store_sandbox *sb;
	size_t pos = 0, n = 0;

	while ((sb = registry_next(env->registry, &pos))) {
		struct writer_op op;

		if (!registry_live(sb))
			continue;
		writer_event_init(&op, sb, now, EVENT_STEP_NONE, NULL, EVENT_SOURCE_MONITOR,
				  "monitor.loss");
		if (sink_submit_event(env->sink, &op,
				      json_pack("{s:s, s:I, s:b}", "stage", stage, count_key,
						(json_int_t)count, "unattributed", 1)) == 0)
			n++;
	}
	return n;
}
