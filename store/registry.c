#include "registry.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "cgroup.h"
#include "hashmap.h"
#include "log.h"
#include "macro.h"

struct registry {
	struct hashmap *by_name; /* name -> struct store_sandbox (the key lives in the value) */
	struct hashmap *steps;	 /* "sandbox/step" -> struct step_entry (key inside) */
	struct hashmap *cgroups; /* cgroup id (decimal) -> struct cgroup_entry (key inside) */
	struct hashmap *watches; /* sandbox name -> struct watch_entry (key inside) */
	int64_t next_id;
	uint64_t generation; /* bumped whenever a cgroup entry is freed or replaced */
};

struct step_entry {
	char key[FB_NAME_MAX + 24];
	char tool[FB_TOOL_MAX + 1];
	uint64_t cgid;
};

struct watch_entry {
	char name[FB_NAME_MAX + 1];
	uint64_t cgid;
	unsigned level;
};

struct cgroup_entry {
	char key[24];
	char sandbox[FB_NAME_MAX + 1];
	int64_t step;
	char tool[FB_TOOL_MAX + 1];
};

int registry_new(struct registry **ret)
{
	struct registry *r = calloc(1, sizeof(*r));

	if (!r || hashmap_new(&r->by_name) < 0 || hashmap_new(&r->steps) < 0 ||
	    hashmap_new(&r->cgroups) < 0 || hashmap_new(&r->watches) < 0) {
		if (r) {
			hashmap_free(r->by_name);
			hashmap_free(r->steps);
			hashmap_free(r->cgroups);
		}
		free(r);
		return -ENOMEM;
	}
	r->next_id = 1;
	*ret = r;
	return 0;
}

void registry_free(struct registry *r)
{
	size_t pos = 0;
	void *v;

	if (!r)
		return;
	while ((v = hashmap_next(r->by_name, &pos)))
		free(v);
	hashmap_free(r->by_name);
	pos = 0;
	while ((v = hashmap_next(r->steps, &pos)))
		free(v);
	hashmap_free(r->steps);
	pos = 0;
	while ((v = hashmap_next(r->cgroups, &pos)))
		free(v);
	hashmap_free(r->cgroups);
	pos = 0;
	while ((v = hashmap_next(r->watches, &pos)))
		free(v);
	hashmap_free(r->watches);
	free(r);
}

static int put(struct registry *r, const struct store_sandbox *sb, struct store_sandbox **ret)
{
	struct store_sandbox *copy = malloc(sizeof(*copy));

	if (!copy)
		return -ENOMEM;
	*copy = *sb;
	if (hashmap_put(r->by_name, copy->name, copy) < 0) {
		free(copy);
		return -ENOMEM;
	}
	if (sb->id >= r->next_id)
		r->next_id = sb->id + 1;
	if (ret)
		*ret = copy;
	return 0;
}

static int load_one(const struct store_sandbox *sb, void *data)
{
	return put(data, sb, NULL);
}

int registry_load(struct registry *r, struct store *s)
{
	int ret = store_sandbox_list(s, load_one, r);

	if (ret < 0)
		return ret;
	log_info("%zu sandboxes known from the store", hashmap_size(r->by_name));
	return 0;
}

struct store_sandbox *registry_find(struct registry *r, const char *name)
{
	return hashmap_get(r->by_name, name);
}

int registry_add(struct registry *r, const char *name, int64_t now_ns, struct store_sandbox **ret)
{
	struct store_sandbox sb = { 0 };

	if (registry_find(r, name))
		return -EEXIST;
	if (strscpy(sb.name, sizeof(sb.name), name) < 0)
		return -ENAMETOOLONG;
	sb.id = r->next_id;
	strcpy(sb.state, "registered");
	sb.created_ts = now_ns;
	sb.updated_ts = now_ns;
	return put(r, &sb, ret);
}

size_t registry_count(struct registry *r)
{
	return hashmap_size(r->by_name);
}

struct store_sandbox *registry_next(struct registry *r, size_t *pos)
{
	return hashmap_next(r->by_name, pos);
}

static void step_key(char *buf, size_t size, const char *sandbox, int64_t step)
{
	snprintf(buf, size, "%s/%lld", sandbox, (long long)step);
}

int registry_step_start(struct registry *r, const char *sandbox, int64_t step, const char *tool,
			uint64_t cgid)
{
	struct step_entry *e = calloc(1, sizeof(*e));
	char key[sizeof(e->key)];

	if (!e)
		return -ENOMEM;
	step_key(key, sizeof(key), sandbox, step);
	free(hashmap_remove(r->steps, key));
	memcpy(e->key, key, sizeof(key));
	strscpy(e->tool, sizeof(e->tool), tool);
	e->cgid = cgid;
	if (hashmap_put(r->steps, e->key, e) < 0) {
		free(e);
		return -ENOMEM;
	}
	return cgid ? registry_cgroup_put(r, cgid, sandbox, step, tool) : 0;
}

void registry_step_end(struct registry *r, const char *sandbox, int64_t step)
{
	char key[FB_NAME_MAX + 24];

	struct step_entry *e;

	step_key(key, sizeof(key), sandbox, step);
	e = hashmap_remove(r->steps, key);
	if (e && e->cgid) {
		char ckey[24];

		snprintf(ckey, sizeof(ckey), "%llu", (unsigned long long)e->cgid);
		free(hashmap_remove(r->cgroups, ckey));
		r->generation++;
	}
	free(e);
}

int registry_sole_step(struct registry *r, const char *sandbox, int64_t *ret_step,
		       const char **ret_tool)
{
	size_t pos = 0, n = strlen(sandbox);
	struct step_entry *e, *found = NULL;

	while ((e = hashmap_next(r->steps, &pos))) {
		if (strncmp(e->key, sandbox, n) != 0 || e->key[n] != '/')
			continue;
		if (found)
			return 0;
		found = e;
	}
	if (!found)
		return 0;
	*ret_step = strtoll(found->key + n + 1, NULL, 10);
	*ret_tool = found->tool;
	return 1;
}

const char *registry_step_tool(struct registry *r, const char *sandbox, int64_t step)
{
	char key[FB_NAME_MAX + 24];
	struct step_entry *e;

	step_key(key, sizeof(key), sandbox, step);
	e = hashmap_get(r->steps, key);
	return e ? e->tool : NULL;
}

int registry_cgroup_put(struct registry *r, uint64_t cgid, const char *sandbox, int64_t step,
			const char *tool)
{
	struct cgroup_entry *e = calloc(1, sizeof(*e));

	if (!e)
		return -ENOMEM;
	snprintf(e->key, sizeof(e->key), "%llu", (unsigned long long)cgid);
	strscpy(e->sandbox, sizeof(e->sandbox), sandbox);
	e->step = step;
	if (tool)
		strscpy(e->tool, sizeof(e->tool), tool);
	free(hashmap_remove(r->cgroups, e->key));
	r->generation++;
	if (hashmap_put(r->cgroups, e->key, e) < 0) {
		free(e);
		return -ENOMEM;
	}
	return 0;
}

int registry_cgroup_get(struct registry *r, uint64_t cgid, const char **ret_sandbox,
			int64_t *ret_step, const char **ret_tool)
{
	char key[24];
	struct cgroup_entry *e;

	snprintf(key, sizeof(key), "%llu", (unsigned long long)cgid);
	e = hashmap_get(r->cgroups, key);
	if (!e)
		return 0;
	*ret_sandbox = e->sandbox;
	*ret_step = e->step;
	*ret_tool = e->tool[0] ? e->tool : NULL;
	return 1;
}

int registry_live(const struct store_sandbox *sb)
{
	return strcmp(sb->state, "running") == 0 || strcmp(sb->state, "frozen") == 0;
}

int registry_adopted(const struct store_sandbox *sb)
{
	static const char own[] = CGROUP_ROOT_NAME "/";

	return sb->cgroup[0] && strncmp(sb->cgroup, own, sizeof(own) - 1) != 0;
}

struct store_sandbox *registry_adopted_holding(struct registry *r, const char *rel)
{
	struct store_sandbox *sb;
	size_t pos = 0;

	while ((sb = hashmap_next(r->by_name, &pos)))
		if (registry_live(sb) && registry_adopted(sb) && cgroup_within(rel, sb->cgroup))
			return sb;
	return NULL;
}

struct store_sandbox *registry_adopted_overlapping(struct registry *r, const char *rel)
{
	struct store_sandbox *sb;
	size_t pos = 0;

	while ((sb = hashmap_next(r->by_name, &pos)))
		if (registry_live(sb) && registry_adopted(sb) &&
		    (cgroup_within(rel, sb->cgroup) || cgroup_within(sb->cgroup, rel)))
			return sb;
	return NULL;
}

int registry_watch_put(struct registry *r, const char *name, uint64_t cgid, unsigned level)
{
	struct watch_entry *e = calloc(1, sizeof(*e));

	if (!e)
		return -ENOMEM;
	strscpy(e->name, sizeof(e->name), name);
	e->cgid = cgid;
	e->level = level;
	free(hashmap_remove(r->watches, e->name));
	if (hashmap_put(r->watches, e->name, e) < 0) {
		free(e);
		return -ENOMEM;
	}
	return 0;
}

int registry_watched(struct registry *r, const char *name)
{
	return hashmap_get(r->watches, name) != NULL;
}

int registry_watch_take(struct registry *r, const char *name, uint64_t *ret_cgid,
			unsigned *ret_level)
{
	struct watch_entry *e = hashmap_remove(r->watches, name);

	if (!e)
		return 0;
	*ret_cgid = e->cgid;
	*ret_level = e->level;
	free(e);
	return 1;
}

uint64_t registry_generation(struct registry *r)
{
	return r->generation;
}
