/*
 * firebreak export and firebreak replay (docs/replay.md): an incident or a sandbox as a portable
 * bundle; its recorded events through the same detectors again, with the recorded policy (the
 * verdicts must be the recorded ones: any difference is a determinism bug) or another (what it
 * would have done instead, and when); and a candidate policy over a whole store's history.
 * Replay reads a store or bundles; it never touches a live sandbox, the gate or the kernel.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "hashmap.h"
#include "store/incident.h"
#include "macro.h"
#include "policy/policy.h"
#include "detectors/replay.h"
#include "store/store-bundle.h"
#include "timeutil.h"

static const char export_usage[] =
	"Usage: firebreak export INCIDENT|SANDBOX -o FILE\n"
	"Writes a self-contained bundle (a SQLite file of the store's schema): the sandbox, its "
	"steps,\n"
	"events, verdicts, actions and incidents (for an incident, up to its end), and the exact\n"
	"policies with their hashes. `firebreak replay FILE` reads it on any machine.\n";

static const char replay_usage[] =
	"Usage: firebreak replay INCIDENT|SANDBOX|BUNDLE [--policy FILE] [--json] [--summary]\n"
	"                        [--pace fast|real|Nx]\n"
	"       firebreak replay --all [--policy FILE] [--json] [BUNDLE...]\n"
	"Feeds the recorded events through the same detectors, in the order the monitor saw them, "
	"and\n"
	"prints the timeline with the replayed verdicts and the causal summary.\n"
	"  (no --policy)   the recorded policy: the verdicts must equal the recorded ones; any\n"
	"                  difference is printed as a determinism bug and the exit status is 1\n"
	"  --policy FILE   another policy: prints the verdicts added, removed and changed, and "
	"the\n"
	"                  earliest point where it would have acted, and how\n"
	"  --all           every sandbox of the store (or the BUNDLEs): per rule, what fired\n"
	"  --summary       the verdicts and the summary only, not every event\n"
	"  --pace P        fast (default), real (the recorded pace), or Nx (N times faster)\n"
	"A BUNDLE is a file path (write ./NAME for a file named like a sandbox).\n";

static int one_incident(const struct store_incident *i, void *data)
{
	*(struct store_incident *)data = *i;
	return 1;
}

/* The sandbox a target names in s: an incident id, a sandbox name; *inc set for an incident. */
static int find_target(struct store *s, const char *target, struct store_sandbox *sb,
		       struct store_incident *inc)
{
	char *end;
	long long id;

	memset(inc, 0, sizeof(*inc));
	errno = 0;
	id = strtoll(target, &end, 10);
	if (!errno && end != target && !*end && id > 0) {
		struct store_incident found = { 0 };

		store_incident_list(s, id, one_incident, &found);
		if (found.id != id)
			return -ENOENT;
		*inc = found;
		return store_sandbox_find(s, found.sandbox, sb);
	}
	return store_sandbox_find(s, target, sb);
}

int cli_export(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = { { "help", no_argument, NULL, 'h' },
					      { "output", required_argument, NULL, 'o' },
					      { 0 } };
	struct store_bundle_spec spec = { .made_ts = time_now_ns() };
	const char *out = NULL;
	struct store_sandbox sb;
	struct store_incident inc;
	struct store *s = NULL;
	unsigned char *bytes = NULL;
	size_t len = 0;
	int c, fd, r;

	while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		if (c == 'h')
			return cli_usage(stdout, export_usage), 0;
		if (c == 'o')
			out = optarg;
		else
			return cli_usage(stderr, export_usage), EXIT_USAGE;
	}
	if (optind != argc - 1 || !out)
		return cli_usage(stderr, export_usage), EXIT_USAGE;
	if (cli_open_store(cli, &s))
		return 1;
	if ((r = find_target(s, argv[optind], &sb, &inc)) < 0) {
		store_close(s);
		return cli_fail("export", "no incident or sandbox %s", argv[optind]);
	}
	spec.sandbox_id = sb.id;
	spec.incident_id = inc.id;
	spec.until = inc.end_ts;
	r = store_bundle_make(s, &spec, &bytes, &len);
	store_close(s);
	if (r < 0)
		return cli_fail("export", "could not make the bundle: %s", strerror(-r));
	/* What sandboxes did is sensitive: the bundle is its maker's alone. */
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || write(fd, bytes, len) != (ssize_t)len || fsync(fd) < 0) {
		r = -errno;
		sqlite3_free(bytes);
		if (fd >= 0)
			close(fd);
		return cli_fail("export", "%s: %s", out, strerror(-r));
	}
	close(fd);
	sqlite3_free(bytes);
	printf("bundle %s: sandbox %s%s%s, %zu bytes, schema %d\n", cli_safe(out),
	       cli_safe(sb.name), inc.id ? ", incident " : "", inc.id ? cli_safe(argv[optind]) : "",
	       len, store_latest_version());
	return 0;
}

/* How events are shown as they are replayed. */
struct show {
	int json, quiet;
	double pace;   /* 0: as fast as it goes; 1: the recorded pace; N: N times faster */
	int64_t since; /* print from here (an incident's window) */
	int64_t last_ts;
	uint64_t last_mono;
};

static void print_verdict(const struct replay_verdict *v, int json, const char *tag)
{
	if (json) {
		json_t *o = replay_verdict_json(v);

		if (o) {
			json_object_set_new(o, "kind", json_string(tag));
			json_object_set_new(o, "tag", json_string(tag));
		}
		cli_print_json(o);
		return;
	}
	printf("%*s%s %s (%s) -> %s: %s\n", 2, "", tag, cli_safe(v->rule), cli_safe(v->severity),
	       cli_safe(v->action), cli_safe(v->reason));
}

static int on_event(const struct event *ev, const struct replay_verdict *v, size_t n, void *data)
{
	struct show *sh = data;

	if (sh->quiet || ev->ts < sh->since) {
		for (size_t i = 0; !sh->quiet && i < n; i++)
			print_verdict(&v[i], sh->json, "REPLAYED");
		return 0;
	}
	/* The recorded pace, or a multiple of it: wait for the event's moment. */
	if (sh->pace > 0 && sh->last_ts) {
		int64_t gap = (int64_t)((double)(ev->ts - sh->last_ts) / sh->pace);
		uint64_t due = sh->last_mono + (gap > 0 ? (uint64_t)gap : 0);
		uint64_t now = time_mono_ns();

		if (due > now && due - now < 60 * NSEC_PER_SEC) {
			struct timespec t = { (time_t)((due - now) / NSEC_PER_SEC),
					      (long)((due - now) % NSEC_PER_SEC) };
			nanosleep(&t, NULL);
		}
	}
	sh->last_ts = ev->ts;
	sh->last_mono = time_mono_ns();
	if (sh->json) {
		char *text;

		if (event_to_text(ev, &text) == 0) {
			puts(text);
			free(text);
		}
	} else {
		cli_print_event(ev);
	}
	for (size_t i = 0; i < n; i++)
		print_verdict(&v[i], sh->json, "REPLAYED");
	return 0;
}

/* The comparison of one sandbox's replay with its record; the number of differences. */
static size_t compare(const char *name, const struct replay_result *res, int what_if, int json)
{
	size_t diffs = 0;

	if (!what_if) {
		size_t n = res->n_recorded > res->n_replayed ? res->n_recorded : res->n_replayed;

		for (size_t i = 0; i < n; i++) {
			const struct replay_verdict *a =
				i < res->n_recorded ? &res->recorded[i] : NULL;
			const struct replay_verdict *b =
				i < res->n_replayed ? &res->replayed[i] : NULL;

			if (!replay_differs(res, i))
				continue;
			diffs++;
			if (json) {
				cli_print_json(json_pack(
					"{s:s, s:s, s:I, s:s, s:s}", "kind", "determinism_bug",
					"sandbox", name, "index", (json_int_t)i, "recorded",
					a ? a->rule : "", "replayed", b ? b->rule : ""));
				continue;
			}
			printf("DETERMINISM BUG in %s, verdict %zu: recorded %s%s%s, replayed "
			       "%s%s%s\n",
			       cli_safe(name), i + 1, cli_safe(a ? a->rule : "nothing"),
			       a ? " " : "", cli_safe(a ? a->severity : ""),
			       cli_safe(b ? b->rule : "nothing"), b ? " " : "",
			       cli_safe(b ? b->severity : ""));
		}
		return diffs;
	}
	/* Another policy: what it adds, removes and changes, finding by finding. */
	for (size_t i = 0; i < res->n_replayed; i++) {
		const struct replay_verdict *b = &res->replayed[i], *a;

		if (!replay_changed(res, i, &a))
			continue;
		diffs++;
		if (!json)
			printf("%s %s: %s (%s) -> %s at event %" PRId64 "%s%s%s\n",
			       a ? "CHANGED" : "ADDED", cli_safe(name), cli_safe(b->rule),
			       cli_safe(b->severity), cli_safe(b->action), b->at_id,
			       a ? " (was " : "", cli_safe(a ? a->severity : ""), a ? ")" : "");
		else
			print_verdict(b, 1, a ? "changed" : "added");
	}
	for (size_t j = 0; j < res->n_recorded; j++) {
		const struct replay_verdict *a = &res->recorded[j];

		if (!replay_removed(res, j))
			continue;
		diffs++;
		if (!json)
			printf("REMOVED %s: %s (%s), recorded at event %" PRId64 "\n",
			       cli_safe(name), cli_safe(a->rule), cli_safe(a->severity), a->at_id);
		else
			print_verdict(a, 1, "removed");
	}
	return diffs;
}

/* The earliest point each acted: the recorded run, and the replay under the other policy. */
static void when_acted(const struct replay_result *res, int json)
{
	const struct replay_verdict *ra = replay_first_stop(res->recorded, res->n_recorded);
	const struct replay_verdict *rb = replay_first_stop(res->replayed, res->n_replayed);

	if (json) {
		cli_print_json(json_pack(
			"{s:s, s:o, s:o}", "kind", "first_action", "recorded",
			ra ? json_pack("{s:s, s:s, s:I, s:I}", "action", ra->action, "rule",
				       ra->rule, "trigger_ts", (json_int_t)ra->ts, "step",
				       (json_int_t)ra->step)
			   : json_null(),
			"would_have",
			rb ? json_pack("{s:s, s:s, s:I, s:I, s:I}", "action", rb->action, "rule",
				       rb->rule, "trigger_ts", (json_int_t)rb->ts, "step",
				       (json_int_t)rb->step, "at_event", (json_int_t)rb->at_id)
			   : json_null()));
		return;
	}
	if (!rb) {
		printf("the new policy would not have acted%s\n",
		       ra ? " (the recorded one did)" : " (nor did the recorded one)");
		return;
	}
	printf("the new policy would have acted at event %" PRId64 " (step %" PRId64
	       "): %s, by %s: %s\n",
	       rb->at_id, rb->step, cli_safe(rb->action), cli_safe(rb->rule), cli_safe(rb->reason));
	if (!ra)
		printf("  the recorded policy did not act at all\n");
	else if (rb->ts < ra->ts)
		printf("  %.3f ms earlier than the recorded %s (step %" PRId64 ", by %s)\n",
		       (double)(ra->ts - rb->ts) / 1e6, cli_safe(ra->action), ra->step,
		       cli_safe(ra->rule));
	else if (rb->ts > ra->ts)
		printf("  %.3f ms later than the recorded %s (step %" PRId64 ", by %s)\n",
		       (double)(rb->ts - ra->ts) / 1e6, cli_safe(ra->action), ra->step,
		       cli_safe(ra->rule));
	else
		printf("  at the same event as the recorded %s (by %s)\n", cli_safe(ra->action),
		       cli_safe(ra->rule));
}

static int open_source(struct cli *cli, const char *target, struct store **s, int *is_bundle)
{
	struct stat st;
	char err[256];
	int r;

	*is_bundle = stat(target, &st) == 0 && S_ISREG(st.st_mode);
	if (!*is_bundle)
		return cli_open_store(cli, s) ? -EIO : 0;
	if ((r = store_bundle_open(target, s, err, sizeof(err))) < 0) {
		cli_fail("replay", "%s: refused: %s", target, err);
		return r;
	}
	return 0;
}

static int only_sandbox(const struct store_sandbox *sb, void *data)
{
	*(struct store_sandbox *)data = *sb;
	return 1;
}

/* Per rule, across sandboxes: what was recorded and what the replay fired. */
struct rule_count {
	char rule[48];
	uint64_t recorded, replayed;
};

static void count_rules(struct hashmap *h, const struct replay_result *res)
{
	for (int side = 0; side < 2; side++) {
		const struct replay_verdict *v = side ? res->replayed : res->recorded;
		size_t n = side ? res->n_replayed : res->n_recorded;

		for (size_t i = 0; i < n; i++) {
			struct rule_count *c = hashmap_get(h, v[i].rule);

			if (!c && (c = calloc(1, sizeof(*c)))) {
				strscpy(c->rule, sizeof(c->rule), v[i].rule);
				if (hashmap_put(h, c->rule, c) < 0) {
					free(c);
					c = NULL;
				}
			}
			if (c)
				side ? c->replayed++ : c->recorded++;
		}
	}
}

struct all {
	struct store *s;
	const struct policy *policy;
	struct hashmap *rules;
	int json;
	uint64_t sandboxes, events, diffs, missing;
	double secs;
};

static int replay_one(const struct store_sandbox *sb, void *data)
{
	struct all *a = data;
	struct replay_opts o = { .policy = a->policy };
	struct replay_result res;
	uint64_t t0 = time_mono_ns();

	if (replay_sandbox(a->s, sb, &o, &res) < 0)
		return cli_fail("replay", "sandbox %s could not be replayed", sb->name), -EIO;
	a->secs += (double)(time_mono_ns() - t0) / 1e9;
	a->sandboxes++;
	a->events += res.events;
	a->missing += res.missing_policy;
	a->diffs += compare(sb->name, &res, a->policy != NULL, a->json);
	count_rules(a->rules, &res);
	replay_result_free(&res);
	return 0;
}

static int replay_all(struct cli *cli, const struct policy *policy, int json, char **bundles,
		      int n_bundles)
{
	struct all a = { .policy = policy, .json = json };
	struct rule_count *c;
	size_t pos = 0;
	int r = 0;

	if (hashmap_new(&a.rules) < 0)
		return cli_fail("replay", "out of memory");
	if (n_bundles == 0) {
		if (cli_open_store(cli, &a.s))
			return 1;
		r = store_sandbox_list(a.s, replay_one, &a);
		store_close(a.s);
	}
	for (int i = 0; i < n_bundles && r >= 0; i++) {
		char err[256];

		if (store_bundle_open(bundles[i], &a.s, err, sizeof(err)) < 0) {
			cli_fail("replay", "%s: refused: %s", bundles[i], err);
			r = -EBADMSG;
			break;
		}
		r = store_sandbox_list(a.s, replay_one, &a);
		store_close(a.s);
	}
	while ((c = hashmap_next(a.rules, &pos))) {
		if (json)
			cli_print_json(json_pack("{s:s, s:s, s:I, s:I}", "kind", "rule", "rule",
						 c->rule, "recorded", (json_int_t)c->recorded,
						 "replayed", (json_int_t)c->replayed));
		else
			printf("%-28s recorded %6" PRIu64 "   %s %6" PRIu64 "\n", cli_safe(c->rule),
			       c->recorded, policy ? "would fire" : "replayed", c->replayed);
		free(c);
	}
	hashmap_free(a.rules);
	if (json)
		cli_print_json(json_pack("{s:s, s:I, s:I, s:I, s:I, s:f}", "kind", "summary",
					 "sandboxes", (json_int_t)a.sandboxes, "events",
					 (json_int_t)a.events, "differences", (json_int_t)a.diffs,
					 "missing_policies", (json_int_t)a.missing, "seconds",
					 a.secs));
	else
		printf("%" PRIu64 " sandboxes, %" PRIu64 " events in %.3f s: %" PRIu64 " %s%s\n",
		       a.sandboxes, a.events, a.secs, a.diffs,
		       policy ? "verdicts differ from the recorded ones" : "determinism bugs",
		       a.missing ? " (some recorded policies were missing)" : "");
	if (r < 0)
		return 1;
	return !policy && (a.diffs || a.missing) ? 1 : 0;
}

enum { OPT_POLICY = 256, OPT_JSON, OPT_PACE, OPT_ALL, OPT_SUMMARY };

/* What the options ask for. */
struct replay_args {
	struct show sh;
	const char *policy_path;
	int all;
};

static int on_option(int c, const char *arg, void *data)
{
	struct replay_args *a = data;
	char *end;

	switch (c) {
	case OPT_POLICY:
		a->policy_path = arg;
		break;
	case OPT_JSON:
		a->sh.json = 1;
		break;
	case OPT_ALL:
		a->all = 1;
		break;
	case OPT_SUMMARY:
		a->sh.quiet = 1;
		break;
	case OPT_PACE:
		if (strcmp(arg, "fast") == 0)
			a->sh.pace = 0;
		else if (strcmp(arg, "real") == 0)
			a->sh.pace = 1;
		else if ((a->sh.pace = strtod(arg, &end)) <= 0 || strcmp(end, "x") != 0)
			return cli_fail("replay", "--pace: fast, real or Nx (2x, 0.5x)"),
			       EXIT_USAGE;
		break;
	default:
		return cli_usage(stderr, replay_usage);
	}
	return CLI_CONTINUE;
}

/* The summary line of one sandbox's replay (JSON: an object of kind "summary"). */
static void print_summary(struct store *s, const struct store_sandbox *sb,
			  const struct store_incident *inc, const struct replay_result *res,
			  const struct replay_args *a, size_t diffs, double secs)
{
	int other = a->policy_path != NULL; /* another policy than the recorded one */

	if (a->sh.json) {
		cli_print_json(
			json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:s, s:b, s:f}", "kind",
				  "summary", "sandbox", sb->name, "events", (json_int_t)res->events,
				  "fed", (json_int_t)res->fed, "epochs", (json_int_t)res->epochs,
				  "recorded", (json_int_t)res->n_recorded, "replayed",
				  (json_int_t)res->n_replayed, "differences", (json_int_t)diffs,
				  "policy", other ? a->policy_path : "recorded", "missing_policy",
				  res->missing_policy, "seconds", secs));
		return;
	}
	if (inc->id) {
		struct incident_story story;

		if (!other && incident_story(s, inc, &story) == 0)
			printf("\n== %s\n", story.text);
	}
	printf("replay of %s: %" PRIu64 " events (%" PRIu64 " fed to %u detector state%s) in "
	       "%.3f s; %zu verdicts recorded, %zu replayed: %s\n",
	       cli_safe(sb->name), res->events, res->fed, res->epochs, res->epochs == 1 ? "" : "s",
	       secs, res->n_recorded, res->n_replayed,
	       other   ? (diffs ? "the new policy differs" : "the new policy agrees")
	       : diffs ? "DETERMINISM BUG"
		       : "identical");
}

/* Replays the sandbox of one store or bundle, compares and summarises; returns the exit code. */
static int replay_and_report(struct store *s, const struct store_sandbox *sb,
			     const struct store_incident *inc, const struct policy *policy,
			     struct replay_args *a, int is_bundle)
{
	struct replay_opts o = { .on_event = on_event, .data = &a->sh, .policy = policy };
	struct replay_result res;
	uint64_t t0;
	size_t diffs;
	double secs;
	int r, rc;

	/* An incident's timeline is printed from its start (the detectors see it all). */
	if (inc->id) {
		struct incident_story story;

		if (incident_story(s, inc, &story) == 0)
			a->sh.since = story.since;
	}
	t0 = time_mono_ns();
	r = replay_sandbox(s, sb, &o, &res);
	if (r < 0)
		return cli_fail("replay", "could not replay %s: %s", sb->name, strerror(-r));
	secs = (double)(time_mono_ns() - t0) / 1e9;
	diffs = compare(sb->name, &res, policy != NULL, a->sh.json);
	if (policy)
		when_acted(&res, a->sh.json);
	print_summary(s, sb, inc, &res, a, diffs, secs);
	if (res.missing_policy)
		cli_fail("replay", "a recorded policy of %s is not in %s: replayed without it",
			 sb->name, is_bundle ? "the bundle" : "the store");
	rc = !policy && (diffs || res.missing_policy) ? 1 : 0;
	replay_result_free(&res);
	return rc;
}

/* Replays target: an incident or a sandbox of the store, or a bundle's one sandbox. */
static int replay_target(struct cli *cli, const char *target, const struct policy *policy,
			 struct replay_args *a)
{
	struct store_incident inc = { 0 };
	struct store_sandbox sb;
	struct store *s = NULL;
	int is_bundle, r;

	if (open_source(cli, target, &s, &is_bundle) < 0)
		return 1;
	r = is_bundle ? store_sandbox_list(s, only_sandbox, &sb)
		      : find_target(s, target, &sb, &inc);
	if (r < 0 || (is_bundle && r == 0)) {
		store_close(s);
		return cli_fail("replay", "no incident or sandbox %s", target);
	}
	r = replay_and_report(s, &sb, &inc, policy, a, is_bundle);
	store_close(s);
	return r;
}

int cli_replay(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "policy", required_argument, NULL, OPT_POLICY },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "pace", required_argument, NULL, OPT_PACE },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "summary", no_argument, NULL, OPT_SUMMARY },
		{ 0 },
	};
	struct replay_args a = { .sh = { 0 } };
	struct policy *policy = NULL;
	char err[256];
	int rc;

	rc = cli_options(argc, argv, "h", opts, replay_usage, -1, on_option, &a);
	if (rc != CLI_CONTINUE)
		return rc;
	if (a.policy_path && policy_load(a.policy_path, &policy, err, sizeof(err)) < 0)
		return cli_fail("replay", "%s", err);
	if (a.all)
		rc = replay_all(cli, policy, a.sh.json, argv + optind, argc - optind);
	else if (optind != argc - 1)
		rc = cli_usage(stderr, replay_usage);
	else
		rc = replay_target(cli, argv[optind], policy, &a);
	policy_free(policy);
	return rc;
}
