/* firebreak create, exec, destroy, gc: the enforcer's commands. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "event.h"
#include "log.h"
#include "macro.h"
#include "enforcer/sandbox.h"

static const char create_usage[] =
	"Usage: firebreak create NAME --policy FILE [--unwatched] [--uplink IFACE] [--timings]\n"
	"Builds sandbox NAME: cgroup firebreak/NAME with the policy's caps, held by an init in "
	"new\n"
	"mount, pid, net, ipc, uts and cgroup namespaces, and registers it with the monitor.\n"
	"  --policy FILE   the policy (see docs/policy.md); it is copied, later edits change "
	"nothing\n"
	"  --unwatched     create it even with no monitor running (only to test the enforcer)\n"
	"  --uplink IFACE  when this create brings the egress gate up, connect it to the host\n"
	"                  through IFACE with NAT (allowlisted destinations only); without it\n"
	"                  (and without gate_uplink in the config) sandboxes are fully offline\n"
	"  --timings       print how long each phase of the create took, on stderr\n";

static const char exec_usage[] =
	"Usage: firebreak exec NAME --tool TOOL [--step N] [--call-id ID] -- PROG [ARGS...]\n"
	"Runs one tool call in sandbox NAME if TOOL's scope in the policy allows PROG ARGS; exits\n"
	"with its status (128+N if killed by signal N), 126 with one line naming the rule that\n"
	"refused it, or 125 if the sandbox was frozen while it ran (the call is held there).\n"
	"  --tool TOOL     the calling tool (gen_ai.tool.name)\n"
	"  --step N        the step number (default: the sandbox's next)\n"
	"  --call-id ID    the tool call's id (gen_ai.tool.call.id), to join the agent's trace\n";

static const char destroy_usage[] = "Usage: firebreak destroy NAME\n"
				    "Kills whatever runs in sandbox NAME and removes its cgroups, "
				    "namespaces, mounts and state.\n";

static const char gc_usage[] =
	"Usage: firebreak gc\n"
	"Removes what crashed runs left behind: sandboxes whose init is gone\n"
	"and cgroups under firebreak/ without a sandbox.\n";

static int only_help(int argc, char **argv, const char *usage_text)
{
	static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, { 0 } };
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1)
		return cli_usage(c == 'h' ? stdout : stderr, usage_text);
	return -1;
}

int cli_create(struct cli *cli, int argc, char **argv)
{
	enum { OPT_POLICY = 256, OPT_UNWATCHED, OPT_UPLINK, OPT_TIMINGS };
	static const struct option opts[] = {
		{ "policy", required_argument, NULL, OPT_POLICY },
		{ "unwatched", no_argument, NULL, OPT_UNWATCHED },
		{ "uplink", required_argument, NULL, OPT_UPLINK },
		{ "timings", no_argument, NULL, OPT_TIMINGS },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *policy = NULL;
	unsigned flags = 0;
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == OPT_POLICY) {
			policy = optarg;
		} else if (c == OPT_UNWATCHED) {
			flags |= SANDBOX_CREATE_UNWATCHED;
		} else if (c == OPT_TIMINGS) {
			flags |= SANDBOX_CREATE_TIMINGS;
		} else if (c == OPT_UPLINK) {
			char err[160];

			if (config_set(&cli->cfg, "gate_uplink", optarg, err, sizeof(err)) < 0) {
				fprintf(stderr, "firebreak create: --uplink: %s\n", err);
				return EXIT_USAGE;
			}
		} else {
			return cli_usage(c == 'h' ? stdout : stderr, create_usage);
		}
	}
	if (optind + 1 != argc || !policy)
		return cli_usage(stderr, create_usage);
	return sandbox_create(&cli->cfg, argv[optind], policy, flags) < 0 ? 1 : 0;
}

int cli_exec(struct cli *cli, int argc, char **argv)
{
	enum { OPT_TOOL = 256, OPT_STEP, OPT_CALL_ID };
	static const struct option opts[] = {
		{ "tool", required_argument, NULL, OPT_TOOL },
		{ "step", required_argument, NULL, OPT_STEP },
		{ "call-id", required_argument, NULL, OPT_CALL_ID },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct sandbox_exec_request req = { .step = -1 };
	char *end;
	int c, r;

	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
		return cli_usage(stdout, exec_usage);
	/* NAME comes first; then our options; '+' stops at "--" or the first operand, so PROG's
	 * own options are never taken for ours. */
	if (argc < 2 || argv[1][0] == '-')
		return cli_usage(stderr, exec_usage);
	req.name = argv[1];
	argv++;
	argc--;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_TOOL:
			req.tool = optarg;
			break;
		case OPT_STEP:
			errno = 0;
			req.step = strtoll(optarg, &end, 10);
			if (errno || *end || req.step < 0 || req.step > FB_STEP_MAX)
				return cli_usage(stderr, exec_usage);
			break;
		case OPT_CALL_ID:
			req.call_id = optarg;
			break;
		default:
			return cli_usage(c == 'h' ? stdout : stderr, exec_usage);
		}
	}
	if (!req.tool)
		return cli_usage(stderr, exec_usage);
	if (optind < argc && strcmp(argv[optind], "--") == 0)
		optind++;
	if (optind >= argc)
		return cli_usage(stderr, exec_usage);
	if (!event_tool_name_valid(req.tool))
		return cli_fail("exec", "'%s' is not a valid tool name", req.tool);
	if (req.call_id && strlen(req.call_id) > FB_CALL_ID_MAX)
		return cli_fail("exec", "--call-id is longer than %d", FB_CALL_ID_MAX);
	req.argv = argv + optind;
	r = sandbox_exec(&cli->cfg, &req);
	return r < 0 ? 1 : r;
}

int cli_destroy(struct cli *cli, int argc, char **argv)
{
	int r = only_help(argc, argv, destroy_usage);

	if (r >= 0)
		return r;
	if (optind + 1 != argc)
		return cli_usage(stderr, destroy_usage);
	return sandbox_destroy(&cli->cfg, argv[optind]) < 0 ? 1 : 0;
}

int cli_gc(struct cli *cli, int argc, char **argv)
{
	int r = only_help(argc, argv, gc_usage);

	if (r >= 0)
		return r;
	if (optind != argc)
		return cli_usage(stderr, gc_usage);
	r = sandbox_gc(&cli->cfg);
	if (r < 0)
		return 1;
	printf("firebreak gc: removed %d leftover sandbox%s\n", r, r == 1 ? "" : "es");
	return 0;
}
