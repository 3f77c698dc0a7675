/* firebreak destroy and firebreak gc: nothing of a sandbox stays on the host. */
#include <signal.h>
#include <stdio.h>

#include "egress-dns.h"
#include "egress-proxy.h"
#include "egress.h"
#include "launcher.h"
#include "log.h"
#include "macro.h"
#include "report.h"
#include "sandbox.h"
#include "state.h"
#include "timeutil.h"

#define DESTROY_TIMEOUT_MS 5000

static void record_destroyed(const struct config *cfg, const char *name, const char *why)
{
	struct report *rp = NULL;
	struct event ev;
	json_t *f;

	/* Best effort: a sandbox is destroyed whether or not a monitor hears of it. */
	if (report_open(cfg, &rp) < 0)
		return;
	event_init(&ev);
	ev.ts = time_now_ns();
	strscpy(ev.sandbox, sizeof(ev.sandbox), name);
	ev.source = EVENT_SOURCE_ENFORCER;
	strcpy(ev.kind, "sandbox.destroyed");
	f = json_pack("{s:s}", "why", why);
	if (f)
		event_set_fields(&ev, f);
	json_decref(f);
	report_register(rp, name, "destroyed", NULL, NULL);
	report_event(rp, &ev);
	if (report_wait(rp) < 0)
		log_warn("firebreak: the monitor did not record that %s was destroyed", name);
	event_clear(&ev);
	report_close(rp);
}

/* Kills and removes everything of name; quiet about parts that are already gone. */
static int remove_sandbox(const struct config *cfg, const char *name)
{
	char rel[128];
	struct sandbox_state st = { 0 };
	int r, found = 0;

	/* No new call starts, and the running ones are answered as interrupted. */
	launcher_stop(cfg, name);
	if (state_load(cfg, name, &st) == 0) {
		found = 1;
		/* The cgroup kill below takes the init too; this covers an init outside it. */
		if (state_init_alive(&st))
			kill(st.init_pid, SIGKILL);
	}
	snprintf(rel, sizeof(rel), CGROUP_ROOT_NAME "/%s", name);
	r = cgroup_remove(rel, DESTROY_TIMEOUT_MS);
	if (st.link > 0) {
		egress_proxy_stop(cfg, name);
		egress_dns_stop(cfg, name);
		egress_detach(cfg, name, st.link);
		egress_gate_down_if_idle(cfg);
	}
	if (r == 0)
		found = 1;
	else if (r != -ENOENT)
		return r;
	r = state_remove(cfg, name);
	if (r == 0)
		found = 1;
	else if (r != -ENOENT)
		return log_errno(r, "firebreak: remove the state of %s", name);
	/* The shared parent cgroups go with the last sandbox. */
	cgroup_prune(CGROUP_ROOT_NAME);
	return found ? 0 : -ENOENT;
}

int sandbox_destroy(const struct config *cfg, const char *name)
{
	int r;

	if (!event_sandbox_name_valid(name))
		return log_error("firebreak destroy: '%s' is not a valid sandbox name", name),
		       -EINVAL;
	r = remove_sandbox(cfg, name);
	if (r == -ENOENT)
		return log_error("firebreak destroy: no sandbox named %s", name), r;
	if (r < 0)
		return log_errno(r, "firebreak destroy: %s", name);
	record_destroyed(cfg, name, "destroy");
	return 0;
}

struct gc_ctx {
	const struct config *cfg;
	int removed;
	int err;
};

static int gc_state(const char *name, void *data)
{
	struct gc_ctx *g = data;
	struct sandbox_state st;

	/* A sandbox whose init is gone is a shell: its namespaces died with the init. */
	if (state_load(g->cfg, name, &st) == 0 && state_init_alive(&st))
		return 0;
	if (remove_sandbox(g->cfg, name) == 0) {
		log_info("firebreak gc: removed %s (its init was gone)", name);
		record_destroyed(g->cfg, name, "gc");
		g->removed++;
	} else {
		g->err = -EIO;
	}
	return 0;
}

static int gc_cgroup(const char *name, void *data)
{
	struct gc_ctx *g = data;
	struct sandbox_state st;

	char rel[128];

	if (state_load(g->cfg, name, &st) == 0)
		return 0; /* a live sandbox (gc_state kept it) */
	/* Cgroup names are host-wide, state is per runtime dir: a cgroup with processes may be a
	 * live sandbox of another runtime dir. Only an empty one is certainly a leftover. */
	snprintf(rel, sizeof(rel), CGROUP_ROOT_NAME "/%s", name);
	if (cgroup_populated(rel) == 1) {
		log_info("firebreak gc: left " CGROUP_ROOT_NAME
			 "/%s alone: it has processes and no "
			 "state here (another runtime dir's sandbox?)",
			 name);
		return 0;
	}
	if (remove_sandbox(g->cfg, name) == 0) {
		log_info("firebreak gc: removed cgroup " CGROUP_ROOT_NAME "/%s (no sandbox state)",
			 name);
		g->removed++;
	} else {
		g->err = -EIO;
	}
	return 0;
}

int sandbox_gc(const struct config *cfg)
{
	struct gc_ctx g = { .cfg = cfg };
	int r;

	if ((r = state_each(cfg, gc_state, &g)) < 0)
		return log_errno(r, "firebreak gc: list sandboxes");
	r = cgroup_list_children(CGROUP_ROOT_NAME, gc_cgroup, &g);
	if (r < 0 && r != -ENOENT)
		return log_errno(r, "firebreak gc: list cgroups");
	cgroup_prune(CGROUP_ROOT_NAME);
	/* A gate with no sandbox link left (a crash between create's steps) goes too. */
	egress_gate_down_if_idle(cfg);
	return g.err < 0 ? g.err : g.removed;
}
