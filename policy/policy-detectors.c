/* The policy's "detectors" section: thresholds, what each severity does, rules switched off. */
#include <errno.h>
#include <string.h>

#include "macro.h"
#include "policy-internal.h"
#include "timeutil.h"

static const char *const rule_names[_RULE_MAX] = {
#define POLICY_RULE_NAME(id, name) [RULE_##id] = name,
	POLICY_DETECTOR_RULES(POLICY_RULE_NAME)
#undef POLICY_RULE_NAME
};

const char *policy_rule_name(enum policy_rule r)
{
	return (size_t)r < _RULE_MAX ? rule_names[r] : "?";
}

int policy_rule_from_name(const char *name)
{
	for (int r = 0; r < _RULE_MAX; r++)
		if (strcmp(name, rule_names[r]) == 0)
			return r;
	return -EINVAL;
}

static const char *const action_names[] = { "record", "alert", "freeze", "quarantine", "kill" };
static const char *const severity_names[POLICY_SEVERITIES] = { "low", "medium", "high",
							       "critical" };

const char *policy_action_name(enum policy_action a)
{
	return (size_t)a < ARRAY_SIZE(action_names) ? action_names[a] : "?";
}

static int rule_known(const char *s)
{
	return policy_rule_from_name(s) >= 0;
}

static void set_defaults(struct policy_detectors *d)
{
	d->deny_burst_count = 5;
	d->deny_burst_window_ns = 10 * NSEC_PER_SEC;
	d->deny_distinct = 3;
	d->cpu_window_ns = 10 * NSEC_PER_SEC;
	d->dns_label_max = 40;
	d->dns_names_max = 30;
	d->dns_txt_max = 10;
	d->dns_window_ns = 10 * NSEC_PER_SEC;
	d->http_upload_max = 8 << 20;
	d->http_upload_window_ns = 60 * NSEC_PER_SEC;
	d->http_beacon_count = 6;
	d->http_beacon_jitter = 10;
	d->http_beacon_window_ns = 10 * 60 * NSEC_PER_SEC;
	d->action[0] = POLICY_ACTION_RECORD;
	d->action[1] = POLICY_ACTION_ALERT;
	d->action[2] = POLICY_ACTION_FREEZE;
	d->action[3] = POLICY_ACTION_KILL;
	/* Fail closed: a sandbox the monitor was blind to is stopped until someone has looked. */
	d->on_lost = POLICY_ACTION_FREEZE;
}

/* "on_lost_events": "freeze", "kill" or "alert" (only those: recording a loss and going on is
 * what fail-closed forbids, and a quarantine still lets a blinded sandbox run). */
static int parse_on_lost(struct policy_parse *ctx, json_t *obj, struct policy_detectors *d)
{
	static const enum policy_action allowed[] = { POLICY_ACTION_FREEZE, POLICY_ACTION_KILL,
						      POLICY_ACTION_ALERT };
	json_t *v = json_object_get(obj, "on_lost_events");

	if (!v)
		return 0;
	for (size_t i = 0; json_is_string(v) && i < ARRAY_SIZE(allowed); i++)
		if (strcmp(json_string_value(v), action_names[allowed[i]]) == 0) {
			d->on_lost = allowed[i];
			return 0;
		}
	return policy_fail(ctx, "/detectors/on_lost_events", 0,
			   "\"on_lost_events\" is \"freeze\", \"kill\" or \"alert\"");
}

static int parse_actions(struct policy_parse *ctx, json_t *obj, struct policy_detectors *d)
{
	char path[JSON_POS_PATH_MAX + 1];
	const char *key;
	json_t *v;
	int r;

	if ((r = policy_check_keys(ctx, obj, "/detectors/actions", severity_names,
				   ARRAY_SIZE(severity_names))) < 0)
		return r;
	json_object_foreach (obj, key, v) {
		size_t sev, a;

		for (sev = 0; strcmp(key, severity_names[sev]) != 0; sev++)
			;
		policy_path(path, "/detectors/actions", key);
		for (a = 0; json_is_string(v) && a < ARRAY_SIZE(action_names); a++)
			if (strcmp(json_string_value(v), action_names[a]) == 0)
				break;
		if (!json_is_string(v) || a == ARRAY_SIZE(action_names))
			return policy_fail(ctx, path, 0,
					   "an action is \"record\", \"alert\", \"freeze\", "
					   "\"quarantine\" or \"kill\"");
		d->action[sev] = (enum policy_action)a;
	}
	return 0;
}

int policy_parse_detectors(struct policy_parse *ctx, json_t *obj)
{
	static const char *const known[] = {
		"deny_burst_count",   "deny_burst_window", "deny_distinct",
		"cpu_window",	      "dns_label_max",	   "dns_names_max",
		"dns_txt_max",	      "dns_window",	   "http_upload_max",
		"http_upload_window", "http_beacon_count", "http_beacon_jitter",
		"http_beacon_window", "actions",	   "off",
		"on_lost_events"
	};
	struct policy *p = ctx->policy;
	struct policy_detectors *d = &p->detectors;
	uint64_t count, distinct, label, names, txt, beacons, jitter;
	size_t n_off = 0;
	json_t *v;
	int r;

	set_defaults(d);
	if (!obj)
		return 0;
	count = d->deny_burst_count;
	distinct = d->deny_distinct;
	label = d->dns_label_max;
	names = d->dns_names_max;
	txt = d->dns_txt_max;
	beacons = d->http_beacon_count;
	jitter = d->http_beacon_jitter;
	if ((r = policy_check_keys(ctx, obj, "/detectors", known, ARRAY_SIZE(known))) < 0 ||
	    (r = policy_get_uint(ctx, obj, "/detectors", "deny_burst_count", 1, 64, &count)) < 0 ||
	    (r = policy_get_uint(ctx, obj, "/detectors", "deny_distinct", 1, 64, &distinct)) < 0 ||
	    (r = policy_get_duration(ctx, obj, "/detectors", "deny_burst_window", NSEC_PER_SEC / 10,
				     &d->deny_burst_window_ns)) < 0 ||
	    (r = policy_get_duration(ctx, obj, "/detectors", "cpu_window", NSEC_PER_SEC / 2,
				     &d->cpu_window_ns)) < 0 ||
	    (r = policy_get_uint(ctx, obj, "/detectors", "dns_label_max", 16, 63, &label)) < 0 ||
	    (r = policy_get_uint(ctx, obj, "/detectors", "dns_names_max", 5, 128, &names)) < 0 ||
	    (r = policy_get_uint(ctx, obj, "/detectors", "dns_txt_max", 2, 128, &txt)) < 0 ||
	    (r = policy_get_duration(ctx, obj, "/detectors", "dns_window", NSEC_PER_SEC,
				     &d->dns_window_ns)) < 0 ||
	    (r = policy_get_size(ctx, obj, "/detectors", "http_upload_max", 1024,
				 &d->http_upload_max)) < 0 ||
	    (r = policy_get_duration(ctx, obj, "/detectors", "http_upload_window", NSEC_PER_SEC,
				     &d->http_upload_window_ns)) < 0 ||
	    (r = policy_get_uint(ctx, obj, "/detectors", "http_beacon_count", 4,
				 POLICY_BEACON_COUNT_MAX, &beacons)) < 0 ||
	    (r = policy_get_uint(ctx, obj, "/detectors", "http_beacon_jitter", 1, 50, &jitter)) <
		    0 ||
	    (r = policy_get_duration(ctx, obj, "/detectors", "http_beacon_window", 5 * NSEC_PER_SEC,
				     &d->http_beacon_window_ns)) < 0 ||
	    (r = policy_get_strings(ctx, obj, "/detectors", "off", 64, rule_known,
				    "not a detector rule (docs/detectors.md lists them)",
				    &p->detectors_off, &n_off)) < 0 ||
	    (r = parse_on_lost(ctx, obj, d)) < 0)
		return r;
	d->deny_burst_count = (unsigned)count;
	d->deny_distinct = (unsigned)distinct;
	d->dns_label_max = (unsigned)label;
	d->dns_names_max = (unsigned)names;
	d->dns_txt_max = (unsigned)txt;
	d->http_beacon_count = (unsigned)beacons;
	d->http_beacon_jitter = (unsigned)jitter;
	d->off = (const char *const *)p->detectors_off;
	v = json_object_get(obj, "actions");
	if (v && !json_is_object(v))
		return policy_fail(ctx, "/detectors/actions", 0, "\"actions\" must be an object");
	return v ? parse_actions(ctx, v, d) : 0;
}

const struct policy_detectors *policy_detectors(const struct policy *p)
{
	return &p->detectors;
}
