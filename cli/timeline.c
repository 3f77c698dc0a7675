/* firebreak timeline: one sandbox's events in time order, one line each. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>

#include "cli.h"
#include "event-describe.h"
#include "store/incident.h"
#include "macro.h"
#include "term-safe.h"
#include "timeutil.h"

static const char usage_text[] =
	"Usage: firebreak timeline SANDBOX [--json] [--since T] [--until T] [--step N[-M]]\n"
	"                          [--incident ID]\n"
	"Prints the sandbox's events in time order: time, step, tool, what happened.\n"
	"  --json       one event per line in the event model's JSON\n"
	"  --since T    from T: ns since the epoch, RFC 3339 (2026-11-29T21:00:00Z) or an age "
	"(15m)\n"
	"  --until T    before T, in the same forms\n"
	"  --step N[-M] only step N, or steps N to M\n"
	"  --incident ID  the incident's story first, then its events from its start (the coerced\n"
	"               call, else the first trigger)\n";

void cli_print_event(const struct event *ev)
{
	char ts[40], step[24], what[1024];
	char safe_tool[sizeof(ev->tool) * TERM_SAFE_MAX_EXPANSION];
	char safe_what[sizeof(what) * TERM_SAFE_MAX_EXPANSION];

	time_format_rfc3339(ev->ts, ts, sizeof(ts));
	if (ev->step != EVENT_STEP_NONE)
		snprintf(step, sizeof(step), "step %" PRId64, ev->step);
	else
		strcpy(step, "-");
	event_describe(ev, what, sizeof(what));
	/* Every string in an event may be the sandbox's: escaped, so it cannot drive the
	 * terminal or forge a line. */
	printf("%s  %-10s %-14s %s\n", ts, step,
	       term_safe(ev->tool[0] ? ev->tool : "-", safe_tool, sizeof(safe_tool)),
	       term_safe(what, safe_what, sizeof(safe_what)));
}

static int print_text(const struct event *ev, void *data)
{
	cli_print_event(ev);
	return 0;
}

static int print_json(const struct event *ev, void *data)
{
	char *text;
	int r = event_to_text(ev, &text);

	if (r < 0)
		return r;
	puts(text);
	free(text);
	return 0;
}

static int parse_steps(const char *s, int64_t *lo, int64_t *hi)
{
	char *end;
	long long a, b;

	errno = 0;
	a = strtoll(s, &end, 10);
	if (errno || end == s || a < 0)
		return -EINVAL;
	b = a;
	if (*end == '-') {
		const char *p = end + 1;

		b = strtoll(p, &end, 10);
		if (errno || end == p || b < a)
			return -EINVAL;
	}
	if (*end)
		return -EINVAL;
	*lo = a;
	*hi = b;
	return 0;
}

static int find_incident(const struct store_incident *inc, void *data)
{
	*(struct store_incident *)data = *inc;
	return 1;
}

/* --incident: checks it is the sandbox's, prints its story (text: a first line; JSON: nothing
 * extra, the events speak) and starts the query where the incident starts. */
static int print_story(struct store *s, const struct store_sandbox *sb, int64_t id, int json,
		       struct store_timeline_query *q)
{
	struct store_incident inc = { 0 };
	struct incident_story st;
	char safe[sizeof(inc.summary) * TERM_SAFE_MAX_EXPANSION];
	int r = store_incident_list(s, id, find_incident, &inc);

	if (r < 0)
		return cli_fail("timeline", "cannot read the store: %s", strerror(-r));
	if (inc.id != id || inc.sandbox_id != sb->id)
		return cli_fail("timeline", "sandbox %s has no incident %lld", sb->name,
				(long long)id);
	if ((r = incident_story(s, &inc, &st)) < 0)
		return cli_fail("timeline", "cannot read the store: %s", strerror(-r));
	if (!json)
		printf("incident %lld (%s, %lld verdicts): %s\n", (long long)id, inc.severity,
		       (long long)inc.detections,
		       term_safe(st.text[0] ? st.text : inc.summary, safe, sizeof(safe)));
	if (!q->since || q->since < st.since)
		q->since = st.since;
	return 0;
}

enum { OPT_JSON = 256, OPT_SINCE, OPT_UNTIL, OPT_STEP, OPT_INCIDENT };

/* What the options ask for. */
struct timeline_args {
	struct store_timeline_query q;
	int64_t incident;
	int json;
};

static int on_option(int c, const char *arg, void *data)
{
	struct timeline_args *a = data;

	switch (c) {
	case OPT_JSON:
		a->json = 1;
		break;
	case OPT_SINCE:
	case OPT_UNTIL:
		if (time_parse(arg, time_now_ns(), c == OPT_SINCE ? &a->q.since : &a->q.until) <
		    0) {
			fprintf(stderr, "firebreak timeline: bad time '%s'\n", arg);
			return EXIT_USAGE;
		}
		break;
	case OPT_STEP:
		if (parse_steps(arg, &a->q.step_lo, &a->q.step_hi) < 0) {
			fprintf(stderr, "firebreak timeline: bad step range '%s'\n", arg);
			return EXIT_USAGE;
		}
		break;
	case OPT_INCIDENT:
		if (parse_steps(arg, &a->incident, &a->incident) < 0 || a->incident <= 0) {
			fprintf(stderr, "firebreak timeline: bad incident id '%s'\n", arg);
			return EXIT_USAGE;
		}
		break;
	default:
		return cli_usage(stderr, usage_text);
	}
	return CLI_CONTINUE;
}

/* Prints sandbox name's timeline from the store (after the incident's story, if asked). */
static int print_timeline(struct store *s, struct cli *cli, const char *name,
			  struct timeline_args *a)
{
	struct store_sandbox sb;
	int r = store_sandbox_find(s, name, &sb);

	if (r == -ENOENT)
		return cli_fail("timeline", "no sandbox named '%s' in %s", name, cli->cfg.db);
	if (r < 0)
		return cli_fail("timeline", "cannot read the store: %s", strerror(-r));
	a->q.sandbox_id = sb.id;
	if (a->incident && (r = print_story(s, &sb, a->incident, a->json, &a->q)) != 0)
		return r;
	r = store_timeline(s, &a->q, a->json ? print_json : print_text, NULL);
	if (fflush(stdout) != 0)
		return cli_fail("timeline", "write: %m");
	if (r < 0)
		return cli_fail("timeline", "cannot read the store: %s", strerror(-r));
	return 0;
}

int cli_timeline(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "since", required_argument, NULL, OPT_SINCE },
		{ "until", required_argument, NULL, OPT_UNTIL },
		{ "step", required_argument, NULL, OPT_STEP },
		{ "incident", required_argument, NULL, OPT_INCIDENT },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct timeline_args a = { .q = { .step_lo = EVENT_STEP_NONE } };
	struct store *s = NULL;
	int rc;

	rc = cli_options(argc, argv, "h", opts, usage_text, 1, on_option, &a);
	if (rc != CLI_CONTINUE)
		return rc;
	if (cli_open_store(cli, &s) != 0)
		return 1;
	rc = print_timeline(s, cli, argv[optind], &a);
	store_close(s);
	return rc;
}
