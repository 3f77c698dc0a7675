#include "detect-internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "loader-env.h"
#include "macro.h"
#include "policy/gate.h"
#include "policy/policy.h"
#include "timeutil.h"

void detect_config_defaults(struct detect_config *c)
{
	c->deny_burst_count = 5;
	c->deny_burst_window_ns = 10 * NSEC_PER_SEC;
	c->deny_distinct = 3;
	c->cpu_window_ns = 10 * NSEC_PER_SEC;
	c->dns_label_max = 40;
	c->dns_names_max = 30;
	c->dns_txt_max = 10;
	c->dns_window_ns = 10 * NSEC_PER_SEC;
	c->http_upload_max = 8 << 20;
	c->http_upload_window_ns = 60 * NSEC_PER_SEC;
	c->http_beacon_count = 6;
	c->http_beacon_jitter = 10;
	c->http_beacon_window_ns = 10 * 60 * NSEC_PER_SEC;
}

const char *detect_severity_name(enum detect_severity s)
{
	static const char *const names[] = { "low", "medium", "high", "critical" };

	return s < _DETECT_SEVERITY_MAX ? names[s] : "?";
}

/* Whether name (a program's base name) is an interpreter: runs code it is given. */
int detect_interpreter(const char *path)
{
	static const char *const exact[] = { "sh",   "bash", "dash", "zsh",	"ksh",	"mksh",
					     "csh",  "tcsh", "fish", "busybox", "node", "nodejs",
					     "deno", "bun",  "pwsh", "Rscript", NULL };
	static const char *const versioned[] = { "python", "perl",  "ruby", "php",
						 "lua",	   "tclsh", "wish", NULL };
	const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

	for (size_t i = 0; exact[i]; i++)
		if (strcmp(name, exact[i]) == 0)
			return 1;
	for (size_t i = 0; versioned[i]; i++) {
		size_t n = strlen(versioned[i]);

		if (strncmp(name, versioned[i], n) == 0 &&
		    name[n + strspn(name + n, "0123456789.")] == '\0')
			return 1;
	}
	return 0;
}

uint64_t detect_name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)(*s | 0x20)) * 1099511628211ull; /* case does not count */
	return h;
}

/* Copies the tool scopes the rules need out of the policy (which the caller keeps). */
static int take_policy(struct detect_state *st, const struct policy *p)
{
	const struct policy_detectors *pd = policy_detectors(p);
	size_t n_off = 0;

	st->have_policy = 1;
	st->cfg.deny_burst_count = pd->deny_burst_count;
	st->cfg.deny_burst_window_ns = pd->deny_burst_window_ns;
	st->cfg.deny_distinct = pd->deny_distinct;
	st->cfg.cpu_window_ns = pd->cpu_window_ns;
	st->cfg.dns_label_max = pd->dns_label_max;
	st->cfg.dns_names_max = pd->dns_names_max;
	st->cfg.dns_txt_max = pd->dns_txt_max;
	st->cfg.dns_window_ns = pd->dns_window_ns;
	st->cfg.http_upload_max = pd->http_upload_max;
	st->cfg.http_upload_window_ns = pd->http_upload_window_ns;
	st->cfg.http_beacon_count = pd->http_beacon_count;
	st->cfg.http_beacon_jitter = pd->http_beacon_jitter;
	st->cfg.http_beacon_window_ns = pd->http_beacon_window_ns;
	memcpy(st->actions, pd->action, sizeof(st->actions));
	st->on_lost = pd->on_lost;
	for (; pd->off && pd->off[n_off]; n_off++)
		;
	if (policy_tool_count(p) &&
	    !(st->tools = calloc(policy_tool_count(p) < DETECT_TOOLS_MAX ? policy_tool_count(p)
									 : DETECT_TOOLS_MAX,
				 sizeof(*st->tools))))
		return -ENOMEM;
	if (n_off && !(st->off = calloc(n_off + 1, sizeof(*st->off))))
		return -ENOMEM;
	for (size_t i = 0; i < n_off; i++)
		if (!(st->off[i] = strdup(pd->off[i])))
			return -ENOMEM;
	for (size_t i = 0; i < policy_tool_count(p) && i < DETECT_TOOLS_MAX; i++) {
		struct detect_tool *t = &st->tools[i];
		const char *progs[DETECT_PROGRAMS_MAX];
		const char *const *children = policy_tool_children(p, i);
		size_t n = policy_tool_programs(p, i, progs, DETECT_PROGRAMS_MAX);

		strscpy(t->name, sizeof(t->name), policy_tool_name(p, i));
		t->network = policy_tool_egress(p, i) != 0;
		t->single_process = policy_tool_single_process(p, i);
		t->has_children = children != NULL;
		for (size_t k = 0; k < loader_env_count() && k < 64; k++)
			if (gate_env_may_start(p, t->name, loader_env_table[k].name))
				t->env_may |= 1ULL << k;
		for (size_t j = 0; j < n; j++) {
			if (!(t->programs[t->n_programs++] = strdup(progs[j])))
				return -ENOMEM;
			t->interpreter |= detect_interpreter(progs[j]);
		}
		for (size_t j = 0; children && children[j] && j < DETECT_PROGRAMS_MAX; j++)
			if (!(t->children[t->n_children++] = strdup(children[j])))
				return -ENOMEM;
		st->n_tools++;
	}
	return 0;
}

int detect_state_new(const struct policy *p, const struct detect_config *c,
		     struct detect_state **ret)
{
	static const enum policy_action defaults[POLICY_SEVERITIES] = {
		POLICY_ACTION_RECORD, POLICY_ACTION_ALERT, POLICY_ACTION_FREEZE, POLICY_ACTION_KILL
	};
	struct detect_state *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	st->cfg = *c;
	memcpy(st->actions, defaults, sizeof(st->actions));
	st->on_lost = POLICY_ACTION_FREEZE;
	for (size_t i = 0; i < DETECT_STEPS_MAX; i++)
		st->steps[i].step = EVENT_STEP_NONE;
	if (p && take_policy(st, p) < 0) {
		detect_state_free(st);
		return -ENOMEM;
	}
	if (st->cfg.deny_burst_count > DETECT_DENIALS_MAX)
		st->cfg.deny_burst_count = DETECT_DENIALS_MAX;
	/* A caller's config is not checked as a policy's is: keep it where the rules can work. */
	if (st->cfg.http_beacon_count > DETECT_BEACON_TIMES)
		st->cfg.http_beacon_count = DETECT_BEACON_TIMES;
	if (st->cfg.http_beacon_count < 3)
		st->cfg.http_beacon_count = 3;
	if (st->cfg.http_upload_window_ns < DETECT_UPLOAD_SLICES)
		st->cfg.http_upload_window_ns = DETECT_UPLOAD_SLICES;
	*ret = st;
	return 0;
}

void detect_state_set_marker(struct detect_state *st, const char *marker)
{
	strscpy(st->marker, sizeof(st->marker), lure_marker_valid(marker) ? marker : "");
}

const char *detect_state_marker(const struct detect_state *st)
{
	return st->marker;
}

void detect_state_free(struct detect_state *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->n_tools; i++) {
		for (size_t j = 0; j < st->tools[i].n_programs; j++)
			free(st->tools[i].programs[j]);
		for (size_t j = 0; j < st->tools[i].n_children; j++)
			free(st->tools[i].children[j]);
	}
	for (size_t i = 0; st->off && st->off[i]; i++)
		free(st->off[i]);
	free(st->off);
	free(st->tools);
	free(st->beacons);
	free(st);
}

enum policy_action detect_action(const struct detect_state *st, enum detect_severity s)
{
	return s < _DETECT_SEVERITY_MAX ? st->actions[s] : POLICY_ACTION_RECORD;
}

enum policy_action detect_verdict_action(const struct detect_state *st,
					 const struct detect_verdict *v)
{
	/* Lost events have their own key: the sandbox's severity table is about what was seen. */
	if (strcmp(v->rule, policy_rule_name(RULE_MONITOR_BLIND)) == 0)
		return st->on_lost;
	return detect_action(st, v->severity);
}

const struct detect_tool *detect_tool(const struct detect_state *st, const char *name)
{
	if (!st->have_policy || !name || !name[0])
		return NULL;
	for (size_t i = 0; i < st->n_tools; i++)
		if (strcmp(st->tools[i].name, name) == 0)
			return &st->tools[i];
	return NULL;
}

void detect_verdict_init(struct detect_verdict *v, const struct event *ev, enum policy_rule rule,
			 enum detect_severity sev)
{
	memset(v, 0, sizeof(*v));
	v->rule = policy_rule_name(rule);
	v->severity = sev;
	v->ts = ev->ts;
	v->step = ev->step;
	strscpy(v->tool, sizeof(v->tool), ev->tool);
	v->event_ids[0] = ev->id;
	v->n_ids = 1;
}

/* The rule classes, one file each (rules-*.c): every event goes through each, in this order. */
static size_t (*const rule_classes[])(struct detect_state *st, const struct event *ev,
				      struct detect_verdict *out, size_t max) = {
	detect_rules_net,      detect_rules_host,      detect_rules_dns,    detect_rules_file,
	detect_rules_behavior, detect_rules_lure,      detect_rules_senses, detect_rules_exec,
	detect_rules_http,     detect_rules_http_flow,
};

size_t detect_event(struct detect_state *st, const struct event *ev, struct detect_verdict *out,
		    size_t max)
{
	size_t n = 0;

	/* The monitor's own records (actions, verdicts, outages) are not evidence. */
	if (ev->source == EVENT_SOURCE_DETECTOR)
		return 0;
	size_t kept = 0;

	for (size_t c = 0; c < ARRAY_SIZE(rule_classes); c++)
		n += rule_classes[c](st, ev, out + n, max - n);
	/* Rules the policy switched off: computed (their state stays exact), not reported. */
	for (size_t i = 0; i < n; i++) {
		int off = 0;

		for (size_t j = 0; st->off && st->off[j] && !off; j++)
			off = strcmp(st->off[j], out[i].rule) == 0;
		if (!off)
			out[kept++] = out[i];
	}
	return kept;
}

int detect_tool_scope(const struct detect_state *st, const char *tool, char *const **programs,
		      size_t *n_programs, char *const **children, size_t *n_children)
{
	const struct detect_tool *t = detect_tool(st, tool);

	if (!t || !t->has_children)
		return 0;
	*programs = t->programs;
	*n_programs = t->n_programs;
	*children = t->children;
	*n_children = t->n_children;
	return 1;
}
