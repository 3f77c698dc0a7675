#include "detect-internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "policy.h"
#include "timeutil.h"

void detect_config_defaults(struct detect_config *c)
{
	c->deny_burst_count = 5;
	c->deny_burst_window_ns = 10 * NSEC_PER_SEC;
	c->deny_distinct = 3;
}

const char *detect_severity_name(enum detect_severity s)
{
	static const char *const names[] = { "low", "medium", "high", "critical" };

	return s < _DETECT_SEVERITY_MAX ? names[s] : "?";
}

int detect_state_new(const struct policy *p, const struct detect_config *c,
		     struct detect_state **ret)
{
	struct detect_state *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	st->cfg = *c;
	if (st->cfg.deny_burst_count > DETECT_DENIALS_MAX)
		st->cfg.deny_burst_count = DETECT_DENIALS_MAX;
	if (p) {
		st->have_policy = 1;
		for (size_t i = 0; i < policy_tool_count(p) && i < DETECT_TOOLS_MAX; i++) {
			strscpy(st->tools[i].name, sizeof(st->tools[i].name), policy_tool_name(p, i));
			st->tools[i].network = policy_tool_egress(p, i) != 0;
			st->n_tools++;
		}
	}
	*ret = st;
	return 0;
}

void detect_state_free(struct detect_state *st)
{
	free(st);
}

void detect_verdict_init(struct detect_verdict *v, const struct event *ev, const char *rule,
			 enum detect_severity sev)
{
	memset(v, 0, sizeof(*v));
	v->rule = rule;
	v->severity = sev;
	v->ts = ev->ts;
	v->step = ev->step;
	strscpy(v->tool, sizeof(v->tool), ev->tool);
	v->event_ids[0] = ev->id;
	v->n_ids = 1;
}

size_t detect_event(struct detect_state *st, const struct event *ev, struct detect_verdict *out,
		    size_t max)
{
	size_t n = 0;

	/* The monitor's own records (actions, verdicts, outages) are not evidence. */
	if (ev->source == EVENT_SOURCE_DETECTOR)
		return 0;
	n += detect_rules_net(st, ev, out + n, max - n);
	n += detect_rules_host(st, ev, out + n, max - n);
	return n;
}

/* Where the value of "key": starts in fields, or NULL. */
static const char *field_value(const char *fields, const char *key)
{
	size_t klen = strlen(key);

	for (const char *p = fields; p && (p = strchr(p, '"')); p++) {
		if (strncmp(p + 1, key, klen) == 0 && p[klen + 1] == '"' && p[klen + 2] == ':')
			return p + klen + 3;
	}
	return NULL;
}

int detect_field_str(const char *fields, const char *key, char *buf, size_t size)
{
	const char *v = fields ? field_value(fields, key) : NULL;
	size_t n = 0;

	if (!v || *v != '"' || size == 0)
		return 0;
	for (v++; *v && *v != '"' && *v != '\\' && n + 1 < size; v++)
		buf[n++] = *v;
	buf[n] = '\0';
	return *v == '"';
}

int detect_field_int(const char *fields, const char *key, int64_t *ret)
{
	const char *v = fields ? field_value(fields, key) : NULL;
	char *end;
	long long x;

	if (!v || (*v != '-' && (*v < '0' || *v > '9')))
		return 0;
	errno = 0;
	x = strtoll(v, &end, 10);
	if (errno || end == v)
		return 0;
	*ret = x;
	return 1;
}
