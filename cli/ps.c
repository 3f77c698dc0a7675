/* firebreak ps: the sandboxes the store knows, with their state and activity. */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "macro.h"
#include "enforcer/state.h"
#include "timeutil.h"

static const char usage_text[] =
	"Usage: firebreak ps [--json]\n"
	"Lists every sandbox: those the monitor's store knows, and those the enforcer runs on "
	"this\n"
	"host (unwatched ones too): name, state, tool-call steps, last event, created. The state\n"
	"is the enforcer's where it has the sandbox (running, or dead: its init is gone, run\n"
	"firebreak gc), else the monitor's.\n"
	"  --json   one JSON object per sandbox per line\n";

/* What the enforcer knows on this host: sandbox names with a state dir, and whether each lives. */
#define PS_LOCAL_MAX 1024
struct local {
	const struct config *cfg;
	char names[PS_LOCAL_MAX][FB_NAME_MAX + 1];
	int alive[PS_LOCAL_MAX];
	int shown[PS_LOCAL_MAX];
	int64_t created[PS_LOCAL_MAX];
	size_t n;
	int json;
};

static int collect_local(const char *name, void *data)
{
	struct local *l = data;
	struct sandbox_state st;

	if (l->n == PS_LOCAL_MAX)
		return 0;
	strscpy(l->names[l->n], sizeof(l->names[0]), name);
	l->alive[l->n] = state_load(l->cfg, name, &st) == 0 && state_init_alive(&st);
	l->created[l->n] = st.created_ts;
	l->n++;
	return 0;
}

/* The enforcer's word on a sandbox's state, or NULL if it does not have it here. */
static const char *local_state(struct local *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++) {
		if (strcmp(l->names[i], name) == 0) {
			l->shown[i] = 1;
			return l->alive[i] ? "running" : "dead";
		}
	}
	return NULL;
}

/* The enforcer knows whether a sandbox lives; the monitor what it did to it (frozen, killed). */
static const char *shown_state(struct local *l, const struct store_sandbox *sb)
{
	const char *local = local_state(l, sb->name);

	if (!local || strcmp(sb->state, "frozen") == 0 || strcmp(sb->state, "killed") == 0)
		return sb->state;
	return local;
}

static int print_text(const struct store_sandbox *sb, void *data)
{
	const char *state = shown_state(data, sb);
	char created[40], last[40];

	time_format_rfc3339(sb->created_ts, created, sizeof(created));
	if (sb->last_ts > 0)
		time_format_rfc3339(sb->last_ts, last, sizeof(last));
	else
		strcpy(last, "-");
	printf("%-24s %-11s %7lld  %-30s %s\n", cli_safe(sb->name), cli_safe(state),
	       (long long)sb->steps, last, created);
	return 0;
}

static int print_json(const struct store_sandbox *sb, void *data)
{
	const char *state = shown_state(data, sb);
	json_t *o = json_pack("{s:I, s:s, s:s, s:I, s:I, s:I, s:o, s:s, s:s}", "id",
			      (json_int_t)sb->id, "name", sb->name, "state", state, "steps",
			      (json_int_t)sb->steps, "created_ts", (json_int_t)sb->created_ts,
			      "updated_ts", (json_int_t)sb->updated_ts, "last_event_ts",
			      sb->last_ts > 0 ? json_integer(sb->last_ts) : json_null(), "cgroup",
			      sb->cgroup, "policy_hash", sb->policy_hash);

	return cli_print_json(o);
}

int cli_ps(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	_cleanup_free_ struct local *l = calloc(1, sizeof(*l));
	struct store *s = NULL;
	int json = 0, c, r;

	if (!l)
		return cli_fail("ps", "out of memory");
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'j')
			json = 1;
		else
			return cli_usage(c == 'h' ? stdout : stderr, usage_text);
	}
	if (optind != argc)
		return cli_usage(stderr, usage_text);
	l->cfg = &cli->cfg;
	l->json = json;
	state_each(&cli->cfg, collect_local, l);
	/* No store (no monitor ever ran here) is fine: the enforcer's sandboxes still show. */
	if (access(cli->cfg.db, F_OK) == 0 && cli_open_store(cli, &s) != 0)
		return 1;
	if (!json)
		printf("%-24s %-11s %7s  %-30s %s\n", "NAME", "STATE", "STEPS", "LAST EVENT",
		       "CREATED");
	r = s ? store_sandbox_list(s, json ? print_json : print_text, l) : 0;
	store_close(s);
	if (r < 0)
		return cli_fail("ps", "cannot read the store: %s", strerror(-r));
	/* The rest are unwatched (or their monitor's store is elsewhere). */
	for (size_t i = 0; i < l->n; i++) {
		char created[40];
		const char *state = l->alive[i] ? "unwatched" : "dead";

		if (l->shown[i])
			continue;
		time_format_rfc3339(l->created[i], created, sizeof(created));
		if (json)
			cli_print_json(json_pack("{s:s, s:s, s:I}", "name", l->names[i], "state",
						 state, "created_ts", (json_int_t)l->created[i]));
		else
			printf("%-24s %-11s %7s  %-30s %s\n", cli_safe(l->names[i]), state, "-",
			       "-", created);
	}
	return 0;
}
