/*
 * The detectors: deterministic rules over one sandbox's event stream, no model at run time. Each
 * is a pure function of the events fed to it, in order, and of its own state, so a replay of the
 * same events gives the same verdicts (Part 8). docs/detectors.md lists the rules and defaults.
 *
 * The rules take the event model's events (const struct event *) and read kind-specific fields
 * through its typed accessors (event_field_str/int/true, lib/event.h), never the fields' text.
 */
#ifndef FB_DETECT_H
#define FB_DETECT_H

#include <stddef.h>
#include <stdint.h>

#include "bounds.h"
#include "event.h"
#include "policy/policy.h"

struct policy;

enum detect_severity {
	DETECT_LOW,	 /* recorded */
	DETECT_MEDIUM,	 /* an alert: opens or extends an incident */
	DETECT_HIGH,	 /* freeze, by default */
	DETECT_CRITICAL, /* kill, by default */
	_DETECT_SEVERITY_MAX
};

#define DETECT_IDS_MAX 8

struct detect_verdict {
	const char *rule; /* a static rule id, "net.metadata" */
	enum detect_severity severity;
	int64_t ts;   /* the triggering event's */
	int64_t step; /* its step, EVENT_STEP_NONE if none */
	char tool[FB_TOOL_MAX + 1];
	int64_t event_ids[DETECT_IDS_MAX]; /* the triggering events, oldest first */
	size_t n_ids;
	char reason[256];
};

/* The thresholds (docs/detectors.md gives the defaults, detect_config_defaults sets them). */
struct detect_config {
	unsigned deny_burst_count;    /* refused or dropped connection attempts ... */
	int64_t deny_burst_window_ns; /* ... within this window: a burst */
	unsigned deny_distinct;	      /* distinct refused destinations within the window: a scan */
	int64_t cpu_window_ns;	      /* throttled half of such a window or more: saturated */
	unsigned dns_label_max;	      /* a query's label longer than this is suspicious */
	unsigned dns_names_max;	      /* distinct names under one parent within the DNS window */
	unsigned dns_txt_max;	      /* TXT or NULL queries within the DNS window */
	int64_t dns_window_ns;
	uint64_t http_upload_max;      /* bytes one tool may send through the L7 proxy ... */
	int64_t http_upload_window_ns; /* ... within this window */
	unsigned http_beacon_count;    /* requests of one tool to one host at near-constant ... */
	unsigned http_beacon_jitter;   /* ... intervals (stddev under this % of the mean) ... */
	int64_t http_beacon_window_ns; /* ... all within this window: a beacon */
};

void detect_config_defaults(struct detect_config *c);

const char *detect_severity_name(enum detect_severity s);

/* One sandbox's detectors and their state. */
struct detect_state;

/*
 * New state for a sandbox under policy p (borrowed, may be NULL: the rules that need a tool's
 * scope then stay quiet, and c and the default actions apply); with a policy, its "detectors"
 * section overrides c. 0 or -ENOMEM.
 */
int detect_state_new(const struct policy *p, const struct detect_config *c,
		     struct detect_state **ret);

void detect_state_free(struct detect_state *st);

/*
 * The sandbox's decoys' marker (lib/lures.h; anything else clears it): seen leaving, it is
 * exfiltration. Replay sets the one the live state had (its detectors.start marker says).
 */
void detect_state_set_marker(struct detect_state *st, const char *marker);

/* The marker set, "" if none. */
const char *detect_state_marker(const struct detect_state *st);

/* What a verdict of severity s does under the sandbox's policy (or the defaults). */
enum policy_action detect_action(const struct detect_state *st, enum detect_severity s);

/* What verdict v does: by its severity, except monitor.blind, which does "on_lost_events". */
enum policy_action detect_verdict_action(const struct detect_state *st,
					 const struct detect_verdict *v);

/*
 * Feeds one event (its id set); writes up to max verdicts to out and returns how many. The same
 * events in the same order always give the same verdicts.
 */
size_t detect_event(struct detect_state *st, const struct event *ev, struct detect_verdict *out,
		    size_t max);

/*
 * Tool tool's exec scope under the sandbox's policy: its commands' programs and its "children"
 * globs (borrowed from st). Returns 1 if the tool declares children (its execs are confined),
 * 0 if not (or no policy, or no such tool).
 */
int detect_tool_scope(const struct detect_state *st, const char *tool, char *const **programs,
		      size_t *n_programs, char *const **children, size_t *n_children);

#endif
