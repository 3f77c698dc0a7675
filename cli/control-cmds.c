/*
 * firebreak register, status and trace-syscalls: short requests to the monitor's control socket.
 * (watch and unwatch are in watch.c.)
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "event.h"
#include "macro.h"

static const char register_usage[] =
	"Usage: firebreak register NAME\n"
	"Registers a sandbox name with the monitor so that trace lines naming it are accepted.\n"
	"(firebreak create does this itself; this is for harnesses that isolate on their own.)\n";

static const char status_usage[] =
	"Usage: firebreak status [--json]\n"
	"Asks the monitor whether it is running, and prints its counters.\n";

/* Parses [--json] [--help] and the expected number of arguments; returns -1 to go on. */
static int parse_simple(int argc, char **argv, int nargs, const char *usage_text, int *json)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (c == 'j' && json)
			*json = 1;
		else
			return cli_usage(c == 'h' ? stdout : stderr, usage_text);
	}
	if (argc - optind != nargs)
		return cli_usage(stderr, usage_text);
	return -1;
}

static int reply_error(const char *cmd, json_t *reply)
{
	const char *err = json_string_value(json_object_get(reply, "error"));

	return cli_fail(cmd, "the monitor refused: %s", err ? err : "(no reason given)");
}

int cli_control_simple(struct cli *cli, const char *cmd, json_t *req)
{
	json_t *reply = NULL;
	int r;

	r = req ? cli_control(cli, req, &reply) : (cli_fail(cmd, "out of memory"), -ENOMEM);
	json_decref(req);
	if (r < 0)
		return 1;
	r = json_is_true(json_object_get(reply, "ok")) ? 0 : reply_error(cmd, reply);
	json_decref(reply);
	return r;
}

int cli_register(struct cli *cli, int argc, char **argv)
{
	int r;

	if ((r = parse_simple(argc, argv, 1, register_usage, NULL)) >= 0)
		return r;
	if (!event_sandbox_name_valid(argv[optind]))
		return cli_fail("register",
				"'%s' is not a valid sandbox name (1-%d of "
				"[A-Za-z0-9_.-], not starting with . or -)",
				argv[optind], FB_NAME_MAX);
	return cli_control_simple(
		cli, "register",
		json_pack("{s:s, s:s}", "op", "register", "sandbox", argv[optind]));
}

int cli_status(struct cli *cli, int argc, char **argv)
{
	json_t *req, *reply = NULL, *stats;
	int json = 0, r;
	char *text;

	if ((r = parse_simple(argc, argv, 0, status_usage, &json)) >= 0)
		return r;
	req = json_pack("{s:s}", "op", "stats");
	r = req ? cli_control(cli, req, &reply) : -ENOMEM;
	json_decref(req);
	if (r < 0)
		return 1;
	stats = json_object_get(reply, "stats");
	if (!json_is_true(json_object_get(reply, "ok")) || !stats) {
		r = reply_error("status", reply);
		json_decref(reply);
		return r;
	}
	text = json_dumps(stats, json ? JSON_COMPACT | JSON_PRESERVE_ORDER
				      : JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (!json)
		printf("firebreakd is running (store %s)\n", cli->cfg.db);
	puts(text ? text : "{}");
	free(text);
	json_decref(reply);
	return 0;
}

static const char trace_syscalls_usage[] =
	"Usage: firebreak trace-syscalls NAME on|off\n"
	"Switches the monitor's syscall flight recorder for sandbox NAME: every syscall its "
	"processes\n"
	"make becomes a sys.enter event (number, name, raw arguments). An escalation: while it is "
	"on,\n"
	"every process on this host takes the slow syscall path.\n";

int cli_trace_syscalls(struct cli *cli, int argc, char **argv)
{
	const char *name, *sw;
	int r;

	if ((r = parse_simple(argc, argv, 2, trace_syscalls_usage, NULL)) >= 0)
		return r;
	name = argv[optind];
	sw = argv[optind + 1];
	if (strcmp(sw, "on") != 0 && strcmp(sw, "off") != 0)
		return cli_fail("trace-syscalls", "say on or off, not '%s'", sw);
	return cli_control_simple(cli, "trace-syscalls",
				  json_pack("{s:s, s:s, s:b}", "op", "trace-syscalls", "sandbox",
					    name, "on", strcmp(sw, "on") == 0));
}
