/* firebreak incidents: what the detectors flagged, one incident per sandbox, with its story. */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "store/incident.h"
#include "macro.h"
#include "timeutil.h"

static const char usage_text[] =
	"Usage: firebreak incidents [--json]\n"
	"Lists the incidents, newest first: the sandbox, the highest severity of its verdicts, "
	"how\n"
	"many, and the causal story (coerced @ step N, ran cmd @ N, egress denied @ N, flagged @ "
	"N,\n"
	"killed @ N). firebreak timeline SANDBOX --incident ID prints one incident's events.\n";

struct list_ctx {
	struct store *s;
	int json;
	int failed;
};

static int print_one(const struct store_incident *inc, void *data)
{
	struct list_ctx *x = data;
	struct incident_story st;
	char opened[40];

	if (incident_story(x->s, inc, &st) < 0) {
		x->failed = 1;
		st.text[0] = '\0';
	}
	if (x->json) {
		json_t *o = json_pack(
			"{s:I, s:s, s:s, s:s, s:I, s:I, s:o, s:I, s:s, s:s}", "id",
			(json_int_t)inc->id, "sandbox", inc->sandbox, "severity", inc->severity,
			"state", inc->state, "opened_ts", (json_int_t)inc->opened_ts, "start_ts",
			(json_int_t)st.since, "end_ts",
			inc->end_ts ? json_integer((json_int_t)inc->end_ts) : json_null(),
			"detections", (json_int_t)inc->detections, "first_verdict", inc->summary,
			"story", st.text);

		return cli_print_json(o);
	}
	time_format_rfc3339(inc->opened_ts, opened, sizeof(opened));
	printf("%-6lld %-24s %-9s %-7s %4lld  %s\n       %s\n", (long long)inc->id,
	       cli_safe(inc->sandbox), cli_safe(inc->severity), cli_safe(inc->state),
	       (long long)inc->detections, opened, cli_safe(st.text[0] ? st.text : inc->summary));
	return 0;
}

int cli_incidents(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct list_ctx x = { 0 };
	int c, r;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'j')
			x.json = 1;
		else
			return cli_usage(c == 'h' ? stdout : stderr, usage_text);
	}
	if (optind != argc)
		return cli_usage(stderr, usage_text);
	if (cli_open_store(cli, &x.s) != 0)
		return 1;
	if (!x.json)
		printf("%-6s %-24s %-9s %-7s %4s  %s\n", "ID", "SANDBOX", "SEVERITY", "STATE",
		       "VERD", "OPENED");
	r = store_incident_list(x.s, 0, print_one, &x);
	store_close(x.s);
	if (r < 0 || x.failed)
		return cli_fail("incidents", "cannot read the store: %s",
				strerror(r < 0 ? -r : EIO));
	return 0;
}
