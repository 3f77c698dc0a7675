/* What the firebreak CLI's commands share. Exit codes: 0 ok, 1 error (one line), 2 usage. */
#ifndef FB_CLI_H
#define FB_CLI_H

#include "config.h"
#include "store/store.h"

#define EXIT_USAGE 2

struct cli {
	struct config cfg;
	const char *prog;
};

struct cli_command {
	const char *name;
	const char *summary;
	int (*run)(struct cli *cli, int argc, char **argv);
	/*
	 * The enforcer's commands act as root on what the runtime dir holds (state, policy, seccomp
	 * filter, namespaces to join); the agent may control the harness's environment, so these
	 * take the runtime dir, the store and the config only from flags or the root-owned default
	 * config, never from FIREBREAK_* variables.
	 */
	int privileged;
};

/* The commands, one file each. */
int cli_ps(struct cli *cli, int argc, char **argv);
int cli_timeline(struct cli *cli, int argc, char **argv);
int cli_incidents(struct cli *cli, int argc, char **argv);
int cli_trace(struct cli *cli, int argc, char **argv);
int cli_register(struct cli *cli, int argc, char **argv);
int cli_status(struct cli *cli, int argc, char **argv);
int cli_trace_syscalls(struct cli *cli, int argc, char **argv);
int cli_watch(struct cli *cli, int argc, char **argv);
int cli_unwatch(struct cli *cli, int argc, char **argv);
int cli_action(struct cli *cli, int argc, char **argv); /* freeze, thaw, kill */
int cli_create(struct cli *cli, int argc, char **argv);
int cli_exec(struct cli *cli, int argc, char **argv);
int cli_destroy(struct cli *cli, int argc, char **argv);
int cli_gc(struct cli *cli, int argc, char **argv);
int cli_policy(struct cli *cli, int argc, char **argv);
int cli_export(struct cli *cli, int argc, char **argv);
int cli_replay(struct cli *cli, int argc, char **argv);

/* Opens the store read-only, printing one line on failure; returns 0 or 1 (the exit code). */
int cli_open_store(struct cli *cli, struct store **ret);

/*
 * Sends one control request (a JSON object, borrowed) and reads its reply into *ret (the caller
 * decrefs). Returns 0, or -errno after printing one line.
 */
int cli_control(struct cli *cli, json_t *req, json_t **ret);

/*
 * Sends req (taken; NULL: out of memory) and checks the reply says ok; returns the exit code,
 * having printed the monitor's reason for a refusal.
 */
int cli_control_simple(struct cli *cli, const char *cmd, json_t *req);

/* Prints one event as a timeline line: time, step, tool, what happened (cli/timeline.c). */
void cli_print_event(const struct event *ev);

/* Prints o (taken; NULL: out of memory) as one compact JSON line; 0 or -ENOMEM. */
int cli_print_json(json_t *o);

/* Prints "firebreak CMD: message" to stderr; returns 1. */
int cli_fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * s (NULL reads as "") escaped for a terminal (lib/term-safe.h), for a printf argument: valid
 * until CLI_SAFE_SLOTS more calls, freed by the CLI. Every string a sandbox, a bundle or the
 * monitor's reply may have chosen goes through this (or term_safe) before it is printed.
 */
#define CLI_SAFE_SLOTS 16
const char *cli_safe(const char *s);

/* Prints usage text for a command to f. */
int cli_usage(FILE *f, const char *text);

/* What cli_options() returns when the command is to go on. */
#define CLI_CONTINUE (-1)

struct option;

/*
 * Reads a command's options with getopt_long (shortopts, opts): -h or --help prints usage to
 * stdout and stops with 0; an option opts does not know prints it to stderr and stops with
 * EXIT_USAGE; any other goes to on_option(c, optarg, data), which returns CLI_CONTINUE or the exit
 * code to stop with. Then exactly `operands` operands must follow (-1: any number). Returns
 * CLI_CONTINUE, or the exit code.
 */
int cli_options(int argc, char **argv, const char *shortopts, const struct option *opts,
		const char *usage, int operands,
		int (*on_option)(int c, const char *arg, void *data), void *data);

#endif
