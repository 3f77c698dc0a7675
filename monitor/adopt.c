#include "adopt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "exec-scope.h"
#include "daemon.h"
#include "macro.h"
#include "policies.h"
#include "policy/policy.h"
#include "records.h"
#include "collectors/dns/dns-events.h"
#include "collectors/lure/lure-events.h"
#include "collectors/file/file-events.h"
#include "collectors/http/http-events.h"
#include "collectors/proc/proc-events.h"
#include "collectors/syscall/syscall-events.h"
#include "timeutil.h"
#include "verdicts.h"

/*
 * Why rel cannot be adopted, or NULL: it must be a plain relative path to an existing v2 cgroup,
 * outside firebreak/ (the enforcer's), not holding firebreakd (a kill switch over the monitor
 * itself), and not the root.
 */
static const char *cgroup_refusal(const char *rel, size_t max)
{
	char dir[PATH_MAX], self[PATH_MAX];
	const char *p = rel;
	struct stat st;

	if (!*rel)
		return "the root cgroup cannot be adopted";
	if (strlen(rel) >= max)
		return "cgroup path too long";
	for (const char *c = rel; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return "control characters in the cgroup path";
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return "the cgroup path must be relative to the hierarchy's root, with no "
			       "empty, '.' or '..' parts";
		p += n;
		if (*p == '/' && *++p == '\0')
			return "the cgroup path must not end in '/'";
	}
	if (cgroup_within(rel, CGROUP_ROOT_NAME))
		return "firebreak/ holds the enforcer's sandboxes; they are watched already";
	if (cgroup_level(rel) > proc_events_level_max())
		return "the cgroup is nested too deep to trace";
	if (cgroup_v2_dir(rel, dir, sizeof(dir)) < 0 || stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return "no such cgroup";
	if (strlen(dir) + sizeof("/cgroup.procs") > sizeof(self))
		return "cgroup path too long";
	snprintf(self, sizeof(self), "%s/cgroup.procs", dir);
	if (access(self, F_OK) < 0)
		return "not a cgroup";
	if (cgroup_of_pid(0, self, sizeof(self)) < 0)
		return "cannot tell which cgroup firebreakd is in";
	if (cgroup_within(self, rel))
		return "the cgroup holds firebreakd itself";
	return NULL;
}

/* Registers name (new, or adopted before and not live) for cgroup rel: the registry's entry. */
static int take_name(struct daemon *d, const struct adopt_watch *w, const char *hash,
		     struct store_sandbox **ret, const char **why)
{
	struct store_sandbox *sb = registry_find(d->registry, w->name), saved;
	int created = 0, r;

	if (!sb) {
		if ((r = registry_add(d->registry, w->name, time_now_ns(), &sb)) < 0)
			return *why = "cannot add the sandbox", r;
		created = 1;
	}
	saved = *sb;
	strcpy(sb->cgroup, w->cgroup);
	strcpy(sb->state, "running");
	if (hash)
		strcpy(sb->policy_hash, hash);
	sb->updated_ts = time_now_ns();
	if ((r = adopt_collectors_watch(d, sb)) < 0) {
		*sb = saved;
		if (created)
			strcpy(sb->state, "destroyed"); /* the registry cannot forget a name */
		log_errno(r, "watch %s as %s", w->cgroup, w->name);
		return *why = "the cgroup could not be traced", r;
	}
	*ret = sb;
	return 0;
}

int adopt_collectors_watch(struct daemon *d, const struct store_sandbox *sb)
{
	int r = proc_events_watch(d->proc, sb);

	if (r < 0)
		return r;
	lure_events_watch(d->lures, sb);
	dns_events_watch(d->dns, sb);	 /* its sockets' DNS, if it has any way out */
	adopt_http_watch(d, sb);	 /* its proxy's log, if it has a link to the gate */
	file_events_watch(d->files, sb); /* an adopted cgroup has no mounts of its own to mark */
	return 0;
}

void adopt_collectors_unwatch(struct daemon *d, const struct store_sandbox *sb)
{
	syscall_events_set(d->syscalls, sb, 0);
	proc_events_unwatch(d->proc, sb);
	lure_events_unwatch(d->lures, sb);
	dns_events_unwatch(d->dns, sb);
	file_events_unwatch(d->files, sb);
	http_events_unwatch(d->http_log, sb);
}

void adopt_http_watch(struct daemon *d, const struct store_sandbox *sb)
{
	/* The policy names the tools, by the index their source addresses are made from. */
	struct policy *p = d->http_log ? policies_for(d, sb) : NULL;

	http_events_watch(d->http_log, sb, p);
	policy_free(p);
}

int adopt_watch(struct daemon *d, const struct adopt_watch *w, struct store_sandbox **ret,
		const char **ret_why, char *err, size_t errlen)
{
	const char *hash = w->policy_hash;
	struct store_sandbox *sb, *other;
	char text_hash[72];
	uint64_t cgid = 0;
	int r;

	*ret_why = err;
	if (!event_sandbox_name_valid(w->name))
		return *ret_why = "invalid sandbox name", -EINVAL;
	if (hash && strlen(hash) >= sizeof(sb->policy_hash))
		return *ret_why = "policy_hash too long", -EINVAL;
	if ((*ret_why = cgroup_refusal(w->cgroup, sizeof(sb->cgroup))))
		return -EINVAL;
	*ret_why = err;
	/* The policy's text, for its detectors: loaded by the one loader, kept by its hash. */
	if (w->policy) {
		if ((r = policies_take_text(d, w->policy, strlen(w->policy), text_hash, err,
					    errlen)) < 0)
			return r;
		if (hash && strcmp(hash, text_hash) != 0)
			return *ret_why = "policy_hash is not the hash of the policy sent", -EINVAL;
		hash = text_hash;
	}
	sb = registry_find(d->registry, w->name);
	if (sb && !registry_adopted(sb) && sb->cgroup[0])
		return *ret_why = "the name belongs to a sandbox the enforcer made", -EEXIST;
	if (sb && registry_live(sb)) {
		if (strcmp(sb->cgroup, w->cgroup) != 0)
			return *ret_why = "the name is watching another cgroup", -EEXIST;
		*ret = sb; /* again: no change */
		return 0;
	}
	/* One task, one sandbox: watched cgroups must not nest. */
	if ((other = registry_adopted_overlapping(d->registry, w->cgroup)))
		return *ret_why = "the cgroup is inside, or holds, another adopted sandbox",
		       -EEXIST;
	if ((r = take_name(d, w, hash, &sb, ret_why)) < 0)
		return r;
	cgroup_id(w->cgroup, &cgid);
	log_info("sandbox %s adopted: cgroup %s (id %llu)", w->name, w->cgroup,
		 (unsigned long long)cgid);
	record_event(d, sb, "sandbox.watch",
		     json_pack("{s:s, s:I, s:i, s:s*}", "cgroup", w->cgroup, "cgroup_id",
			       (json_int_t)cgid, "level", (int)cgroup_level(w->cgroup),
			       "policy_hash", hash));
	*ret = sb;
	return 0;
}

/* Stops watching sb (adopted, running) and stores its new state. */
static void release(struct daemon *d, struct store_sandbox *sb, const char *state, const char *kind)
{
	adopt_collectors_unwatch(d, sb);
	strcpy(sb->state, state); /* before its detectors go: its last events find none */
	sb->updated_ts = time_now_ns();
	verdicts_forget(d, sb->name);
	log_info("sandbox %s (adopted cgroup %s): %s", sb->name, sb->cgroup, state);
	record_event(d, sb, kind, json_pack("{s:s}", "cgroup", sb->cgroup));
}

int adopt_unwatch(struct daemon *d, const char *name, struct store_sandbox **ret,
		  const char **ret_why)
{
	struct store_sandbox *sb = registry_find(d->registry, name);

	if (!sb)
		return *ret_why = "unknown sandbox", -ENOENT;
	if (!registry_adopted(sb))
		return *ret_why = "not an adopted cgroup (firebreak destroy ends a sandbox)",
		       -EINVAL;
	/* A killed one is still watched until it is let go: its hooks, its entries in the
	 * tracers' maps (which a bench of 1660 adopted-and-killed cgroups once filled). It stays
	 * "killed" on record. */
	if (registry_live(sb))
		release(d, sb, "unwatched", "sandbox.unwatch");
	else if (strcmp(sb->state, "killed") == 0 && registry_watched(d->registry, sb->name))
		release(d, sb, "killed", "sandbox.unwatch");
	*ret = sb;
	return 0;
}

void adopt_reap(struct daemon *d)
{
	struct store_sandbox *sb;
	char dir[PATH_MAX];
	size_t pos = 0;

	while ((sb = registry_next(d->registry, &pos))) {
		/* A killed one too: its cgroup removed, what watched it goes as well. */
		if (!registry_adopted(sb) ||
		    !(registry_live(sb) || (strcmp(sb->state, "killed") == 0 &&
					    registry_watched(d->registry, sb->name))))
			continue;
		if (cgroup_v2_dir(sb->cgroup, dir, sizeof(dir)) == 0 && access(dir, F_OK) < 0 &&
		    errno == ENOENT) {
			release(d, sb, "destroyed", "sandbox.gone");
			record_sandbox(d, sb);
		}
	}
}

struct scan_ctx {
	struct daemon *d;
	int changed;
};

/*
 * A cgroup under firebreak/ that the store does not know as running: re-adopt it, if this
 * runtime dir's enforcer made it (its state dir, enforcer/state.h, says so) and not --unwatched:
 * firebreak/ is the host's, and another firebreakd's sandboxes are not ours to record.
 */
static int scan_one(const char *name, void *data)
{
	struct scan_ctx *x = data;
	struct daemon *d = x->d;
	struct store_sandbox *sb = registry_find(d->registry, name);
	const char *was = sb ? sb->state : "unknown";
	char state[PATH_MAX];

	/* Running, frozen or killed: the store knows it is (or was made) live. */
	if (!event_sandbox_name_valid(name) ||
	    (sb && (registry_live(sb) || strcmp(sb->state, "killed") == 0)))
		return 0;
	if (sb && registry_adopted(sb)) /* an adopted name cannot also be ours */
		return 0;
	if (config_sandbox_path(d->cfg, name, "state.json", state, sizeof(state)) < 0 ||
	    access(state, F_OK) < 0)
		return 0;
	/* Created --unwatched on purpose (to test the enforcer alone): not ours to record. */
	{
		json_t *doc = json_load_file(state, 0, NULL);
		int unwatched = json_is_true(json_object_get(doc, "unwatched"));

		json_decref(doc);
		if (unwatched)
			return 0;
	}
	if (!sb && registry_add(d->registry, name, time_now_ns(), &sb) < 0)
		return 0;
	snprintf(sb->cgroup, sizeof(sb->cgroup), CGROUP_ROOT_NAME "/%s", name);
	strcpy(sb->state, "running");
	sb->updated_ts = time_now_ns();
	log_warn("sandbox %s: its cgroup runs but the store said %s; watching it again", name, was);
	record_sandbox(d, sb);
	record_event(d, sb, "sandbox.readopt",
		     json_pack("{s:s, s:s}", "cgroup", sb->cgroup, "store_state", was));
	x->changed++;
	return 0;
}

int adopt_scan(struct daemon *d)
{
	struct scan_ctx x = { d, 0 };
	struct store_sandbox *sb;
	char dir[PATH_MAX];
	size_t pos = 0;

	/* Running in the store, gone from the host: the monitor missed the end. */
	while ((sb = registry_next(d->registry, &pos))) {
		if (!registry_live(sb) || !sb->cgroup[0] ||
		    cgroup_v2_dir(sb->cgroup, dir, sizeof(dir)) < 0 || access(dir, F_OK) == 0)
			continue;
		strcpy(sb->state, "destroyed");
		sb->updated_ts = time_now_ns();
		log_info("sandbox %s: its cgroup %s is gone; marked destroyed", sb->name,
			 sb->cgroup);
		record_sandbox(d, sb);
		record_event(d, sb, "sandbox.gone", json_pack("{s:s}", "cgroup", sb->cgroup));
		x.changed++;
	}
	cgroup_list_children(CGROUP_ROOT_NAME, scan_one, &x);
	return x.changed;
}

/* A step found running at start-up, to be confined again once the tracer runs. */
struct resumed_step {
	char sandbox[FB_NAME_MAX + 1];
	int64_t step;
	char tool[FB_TOOL_MAX + 1];
	uint64_t cgid;
	char program[256];
};

/* The steps found running at start-up, until the tracer confines them again. */
struct resumed_steps {
	struct resumed_step *v;
	size_t n;
};

struct load_ctx {
	struct daemon *d;
	const struct store_sandbox *sb;
};

static int load_step(int64_t step, const char *tool, const char *fields, void *data)
{
	struct load_ctx *x = data;
	struct daemon *d = x->d;
	json_t *f = json_loads(fields, 0, NULL);
	const char *rel = json_string_value(json_object_get(f, "cgroup"));
	const char *program = json_string_value(json_object_get(f, "program"));
	uint64_t want = (uint64_t)json_integer_value(json_object_get(f, "cgroup_id")), cgid = 0;
	struct resumed_step *v;

	/* Still there, and the same cgroup (not a step number reused after a restart of ours). */
	if (!rel || !want || cgroup_id(rel, &cgid) < 0 || cgid != want) {
		json_decref(f);
		return 0;
	}
	registry_step_start(d->registry, x->sb->name, step, tool, cgid);
	v = realloc(d->resumed->v, (d->resumed->n + 1) * sizeof(*v));
	if (v) {
		d->resumed->v = v;
		v = &v[d->resumed->n++];
		memset(v, 0, sizeof(*v));
		strscpy(v->sandbox, sizeof(v->sandbox), x->sb->name);
		v->step = step;
		strscpy(v->tool, sizeof(v->tool), tool);
		v->cgid = cgid;
		if (program)
			strscpy(v->program, sizeof(v->program), program);
	}
	json_decref(f);
	return 0;
}

int adopt_load_steps(struct daemon *d, struct store *s)
{
	struct store_sandbox *sb;
	size_t pos = 0;
	int r;

	if (!d->resumed && !(d->resumed = calloc(1, sizeof(*d->resumed))))
		return -ENOMEM;
	while ((sb = registry_next(d->registry, &pos))) {
		struct load_ctx x = { d, sb };

		if (!registry_live(sb) || registry_adopted(sb))
			continue;
		if ((r = store_open_steps(s, sb->id, load_step, &x)) < 0)
			return r;
	}
	if (d->resumed->n)
		log_info("%zu steps found still running; their tools are known again",
			 d->resumed->n);
	return 0;
}

void adopt_resume_steps(struct daemon *d)
{
	struct resumed_step *v = d->resumed ? d->resumed->v : NULL;

	for (size_t i = 0; v && i < d->resumed->n; i++) {
		struct store_sandbox *sb = registry_find(d->registry, v[i].sandbox);
		size_t files = 0;
		int r;

		if (!sb || !registry_live(sb))
			continue;
		r = exec_scope_confine(d, sb, v[i].step, v[i].tool, v[i].cgid,
				       v[i].program[0] ? v[i].program : NULL, &files);
		if (r > 0)
			log_info("sandbox %s step %lld: its execs are confined again (%zu files)",
				 sb->name, (long long)v[i].step, files);
		else if (r < 0)
			log_warn_errno(r,
				       "sandbox %s step %lld: its exec scope could not be restored",
				       sb->name, (long long)v[i].step);
	}
	adopt_forget_steps(d);
}

void adopt_http_steps(struct daemon *d)
{
	struct resumed_step *v = d->resumed ? d->resumed->v : NULL;

	/* Since when is not known: any of its tool's proxy log lines up to now can be its. */
	for (size_t i = 0; v && i < d->resumed->n; i++)
		http_events_step_start(d->http_log, v[i].sandbox, v[i].step, v[i].tool, 0);
}

void adopt_forget_steps(struct daemon *d)
{
	if (d->resumed)
		free(d->resumed->v);
	free(d->resumed);
	d->resumed = NULL;
}
