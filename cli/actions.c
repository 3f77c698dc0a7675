/*
 * firebreak freeze, thaw and kill: the kill switch, asked of the monitor (which acts on the
 * sandbox's cgroup at once and records the action with its latency; docs/actions.md).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "event.h"
#include "macro.h"

static const char usage_text[] =
	"Usage: firebreak freeze|thaw|kill|quarantine NAME [--reason TEXT]\n"
	"freeze stops every process of sandbox NAME where it stands (cgroup freezer), thaw lets\n"
	"them go on, kill ends them all (cgroup.kill), quarantine freezes it and takes its link "
	"at\n"
	"the egress gate down (a later thaw does not bring the network back). Works on the\n"
	"enforcer's sandboxes and, but for quarantine, on cgroups adopted with firebreak watch.\n"
	"The action is recorded with its reason and latency.\n";

/* argv[0] is the command: freeze, thaw or kill. */
int cli_action(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "reason", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *cmd = argv[0], *reason = NULL, *error;
	json_t *req, *reply = NULL;
	int c, r;

	while ((c = getopt_long(argc, argv, "r:h", opts, NULL)) != -1) {
		if (c == 'r')
			reason = optarg;
		else
			return cli_usage(c == 'h' ? stdout : stderr, usage_text);
	}
	if (argc - optind != 1)
		return cli_usage(stderr, usage_text);
	if (!event_sandbox_name_valid(argv[optind]))
		return cli_fail(cmd, "'%s' is not a valid sandbox name", argv[optind]);
	req = json_pack("{s:s, s:s}", "op", cmd, "sandbox", argv[optind]);
	if (req && reason)
		json_object_set_new(req, "reason", json_string(reason));
	r = req ? cli_control(cli, req, &reply) : -ENOMEM;
	json_decref(req);
	if (r < 0)
		return 1;
	if (!json_is_true(json_object_get(reply, "ok"))) {
		error = json_string_value(json_object_get(reply, "error"));
		r = cli_fail(cmd, "%s", error ? error : "the monitor refused (no reason given)");
		json_decref(reply);
		return r;
	}
	printf("%s %s: %s (acted in %lld us, confirmed after %lld us)\n", cmd,
	       cli_safe(argv[optind]),
	       cli_safe(json_string_value(json_object_get(reply, "result"))),
	       (long long)json_integer_value(json_object_get(reply, "act_ns")) / 1000,
	       (long long)json_integer_value(json_object_get(reply, "confirm_ns")) / 1000);
	json_decref(reply);
	return 0;
}
