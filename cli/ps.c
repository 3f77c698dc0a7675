/* firebreak ps: the sandboxes the store knows, with their state and activity. */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "macro.h"
#include "timeutil.h"

static const char usage_text[] =
	"Usage: firebreak ps [--json]\n"
	"Lists every sandbox in the store: name, state, tool-call steps, last event, created.\n"
	"  --json   one JSON object per sandbox per line\n";

static int print_text(const struct store_sandbox *sb, void *data)
{
	char created[40], last[40];

	time_format_rfc3339(sb->created_ts, created, sizeof(created));
	if (sb->last_ts > 0)
		time_format_rfc3339(sb->last_ts, last, sizeof(last));
	else
		strcpy(last, "-");
	printf("%-24s %-11s %7lld  %-30s %s\n", sb->name, sb->state, (long long)sb->steps, last,
	       created);
	return 0;
}

static int print_json(const struct store_sandbox *sb, void *data)
{
	json_t *o = json_pack("{s:I, s:s, s:s, s:I, s:I, s:I, s:o, s:s, s:s}", "id",
			      (json_int_t)sb->id, "name", sb->name, "state", sb->state, "steps",
			      (json_int_t)sb->steps, "created_ts", (json_int_t)sb->created_ts,
			      "updated_ts", (json_int_t)sb->updated_ts, "last_event_ts",
			      sb->last_ts > 0 ? json_integer(sb->last_ts) : json_null(), "cgroup",
			      sb->cgroup, "policy_hash", sb->policy_hash);
	char *text = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;

	json_decref(o);
	if (!text)
		return -ENOMEM;
	puts(text);
	free(text);
	return 0;
}

int cli_ps(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct store *s = NULL;
	int json = 0, c, r;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'j')
			json = 1;
		else
			return cli_usage(c == 'h' ? stdout : stderr, usage_text);
	}
	if (optind != argc)
		return cli_usage(stderr, usage_text);
	if (cli_open_store(cli, &s) != 0)
		return 1;
	if (!json)
		printf("%-24s %-11s %7s  %-30s %s\n", "NAME", "STATE", "STEPS", "LAST EVENT",
		       "CREATED");
	r = store_sandbox_list(s, json ? print_json : print_text, NULL);
	store_close(s);
	if (r < 0)
		return cli_fail("ps", "cannot read the store: %s", strerror(-r));
	return 0;
}
