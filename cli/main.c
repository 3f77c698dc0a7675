/* firebreak: the CLI (and, from Part 2, the enforcer). docs/cli.md. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "cli.h"
#include "log.h"
#include "macro.h"
#include "term-safe.h"
#include "unixsock.h"

static const struct cli_command commands[] = {
	{ "ps", "list the sandboxes the store knows", cli_ps, 0 },
	{ "timeline", "print one sandbox's events in time order", cli_timeline, 0 },
	{ "incidents", "list the incidents the detectors opened, with their causal story",
	  cli_incidents, 0 },
	{ "trace", "send a tool-call trace (JSON lines on stdin) and check every ack", cli_trace,
	  0 },
	{ "register", "register a sandbox name with the monitor", cli_register, 0 },
	{ "status", "ask the monitor whether it runs, and for its counters", cli_status, 0 },
	{ "trace-syscalls", "switch a sandbox's syscall flight recorder on or off",
	  cli_trace_syscalls, 0 },
	{ "watch", "adopt a cgroup the enforcer did not make (a container's) for monitoring",
	  cli_watch, 0 },
	{ "unwatch", "stop watching a cgroup adopted with watch", cli_unwatch, 0 },
	{ "freeze", "freeze every process of a sandbox (the kill switch, reversible)", cli_action,
	  0 },
	{ "thaw", "let a frozen sandbox's processes go on", cli_action, 0 },
	{ "kill", "kill every process of a sandbox", cli_action, 0 },
	{ "quarantine", "freeze a sandbox and cut its network at the gate", cli_action, 0 },
	{ "create", "build a sandbox from a policy", cli_create, 1 },
	{ "exec", "run one tool call in a sandbox, through the per-tool command gate", cli_exec,
	  1 },
	{ "destroy", "kill a sandbox and remove everything of it", cli_destroy, 1 },
	{ "gc", "remove what crashed runs left behind", cli_gc, 1 },
	{ "policy", "check a policy file and run its test vectors", cli_policy, 0 },
	{ "export", "write an incident or a sandbox as a portable bundle", cli_export, 0 },
	{ "replay", "feed recorded events through the detectors again, with any policy", cli_replay,
	  0 },
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: firebreak [--config FILE] [--db PATH] [--runtime-dir DIR] COMMAND [ARGS]\n"
		"\nCommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f,
		"\n'firebreak COMMAND --help' tells more. Environment (read-only commands only;\n"
		"create, exec, destroy and gc take flags or the config file, never the\n"
		"environment): FIREBREAK_CONFIG, FIREBREAK_DB, FIREBREAK_RUNTIME_DIR.\n"
		"Exit codes: 0 ok, 1 error, 2 usage.\n");
}

int cli_print_json(json_t *o)
{
	char *text = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;

	json_decref(o);
	if (!text)
		return -ENOMEM;
	puts(text);
	free(text);
	return 0;
}

const char *cli_safe(const char *s)
{
	static char *slots[CLI_SAFE_SLOTS];
	static unsigned next;
	char **slot = &slots[next++ % CLI_SAFE_SLOTS];

	free(*slot);
	*slot = term_safe_dup(s);
	return *slot ? *slot : "(out of memory)";
}

int cli_fail(const char *cmd, const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	va_list ap;
	int n;

	/* The message may quote a name, a path or the monitor's reply: one line, escaped. */
	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "firebreak %s: %s\n", cmd, n < 0 ? "(out of memory)" : cli_safe(msg));
	return 1;
}

int cli_usage(FILE *f, const char *text)
{
	fputs(text, f);
	return f == stdout ? 0 : EXIT_USAGE;
}

int cli_options(int argc, char **argv, const char *shortopts, const struct option *opts,
		const char *usage, int operands,
		int (*on_option)(int c, const char *arg, void *data), void *data)
{
	int c, rc;

	while ((c = getopt_long(argc, argv, shortopts, opts, NULL)) != -1) {
		if (c == 'h')
			return cli_usage(stdout, usage);
		if (c == '?' || c == ':')
			return cli_usage(stderr, usage);
		if ((rc = on_option(c, optarg, data)) != CLI_CONTINUE)
			return rc;
	}
	if (operands >= 0 && optind + operands != argc)
		return cli_usage(stderr, usage);
	return CLI_CONTINUE;
}

int cli_open_store(struct cli *cli, struct store **ret)
{
	int r = store_open(cli->cfg.db, STORE_READ_ONLY, ret);

	if (r == -ENOENT)
		return cli_fail("store", "%s does not exist (has firebreakd run with this --db?)",
				cli->cfg.db);
	if (r < 0)
		return cli_fail("store", "cannot open %s: %s", cli->cfg.db, strerror(-r));
	return 0;
}

int cli_control(struct cli *cli, json_t *req, json_t **ret)
{
	char path[PATH_MAX + 32], buf[FB_CONTROL_MSG_MAX + 2];
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int fd = -1;
	size_t len = 0;
	json_error_t jerr;
	json_t *reply;

	if (config_socket_path(&cli->cfg, FB_CONTROL_SOCKET, path, sizeof(path)) < 0)
		return -ENAMETOOLONG;
	fd = unixsock_connect(path);
	if (fd < 0) {
		cli_fail("control", "no monitor answers at %s: %s", path, strerror(-fd));
		return fd;
	}
	text = json_dumps(req, JSON_COMPACT);
	if (!text)
		return -ENOMEM;
	if (dprintf(fd, "%s\n", text) < 0) {
		cli_fail("control", "send: %m");
		return -EIO;
	}
	shutdown(fd, SHUT_WR);
	while (len < sizeof(buf) - 1) {
		ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
		if (memchr(buf, '\n', len))
			break;
	}
	buf[len] = '\0';
	reply = json_loads(buf, JSON_DISABLE_EOF_CHECK, &jerr);
	if (!reply || !json_is_object(reply)) {
		json_decref(reply);
		cli_fail("control", "the monitor gave no valid reply");
		return -EPROTO;
	}
	*ret = reply;
	return 0;
}

/* The options before the command name. */
struct global {
	const char *config_path, *db, *runtime;
	int required; /* the config file named must exist */
};

/* Reads the global options up to the command name; returns CLI_CONTINUE or the exit code. */
static int parse_global(int argc, char **argv, struct global *g)
{
	enum { OPT_DB = 256, OPT_RUNTIME };
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "db", required_argument, NULL, OPT_DB },
		{ "runtime-dir", required_argument, NULL, OPT_RUNTIME },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	/* '+': options stop at the command name; the command parses the rest. */
	while ((c = getopt_long(argc, argv, "+c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			g->config_path = optarg;
			g->required = 1;
			break;
		case OPT_DB:
			g->db = optarg;
			break;
		case OPT_RUNTIME:
			g->runtime = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	return CLI_CONTINUE;
}

static const struct cli_command *find_command(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (strcmp(name, commands[i].name) == 0)
			return &commands[i];
	return NULL;
}

/*
 * The configuration: the file (FIREBREAK_CONFIG only for a command that is not privileged), then
 * the environment (likewise), then the flags. Returns CLI_CONTINUE or the exit code.
 */
static int configure(struct cli *cli, const struct cli_command *cmd, struct global *g)
{
	char err[160];

	if (cmd && !cmd->privileged && !g->required && secure_getenv("FIREBREAK_CONFIG")) {
		g->config_path = secure_getenv("FIREBREAK_CONFIG");
		g->required = 1;
	}
	if (config_load(&cli->cfg, g->config_path, g->required) < 0)
		return 1;
	if (!cmd || !cmd->privileged)
		config_apply_env(&cli->cfg);
	if ((g->db && config_set(&cli->cfg, "db", g->db, err, sizeof(err)) < 0) ||
	    (g->runtime &&
	     config_set(&cli->cfg, "runtime_dir", g->runtime, err, sizeof(err)) < 0)) {
		fprintf(stderr, "firebreak: %s\n", err);
		return EXIT_USAGE;
	}
	return CLI_CONTINUE;
}

int main(int argc, char **argv)
{
	struct cli cli = { .prog = "firebreak" };
	struct global g = { .config_path = FB_DEFAULT_CONFIG };
	const struct cli_command *cmd;
	int rc;

	config_defaults(&cli.cfg);
	log_max_level = LOG_LEVEL_ERROR;
	if ((rc = parse_global(argc, argv, &g)) != CLI_CONTINUE)
		return rc;
	cmd = find_command(argv[optind]);
	if ((rc = configure(&cli, cmd, &g)) != CLI_CONTINUE)
		return rc;
	if (cmd) {
		argv += optind;
		argc -= optind;
		optind = 0; /* getopt starts over for the command */
		return cmd->run(&cli, argc, argv);
	}
	if (strcmp(argv[optind], "help") == 0) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "firebreak: unknown command '%s'\n", argv[optind]);
	usage(stderr);
	return EXIT_USAGE;
}
