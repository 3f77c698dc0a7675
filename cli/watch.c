/*
 * firebreak watch and unwatch: adopt a cgroup the enforcer did not make (a container's, a VM
 * jailer's) as a sandbox the monitor records and, from Part 5, can stop; and let it go. The
 * monitor checks the cgroup itself (docs/control.md, op watch); this only names it.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "cli.h"
#include "event.h"
#include "macro.h"
#include "policy/policy.h"

static const char watch_usage[] =
	"Usage: firebreak watch CGROUP --name NAME [--policy FILE]\n"
	"Adopts CGROUP (a path under the cgroup v2 mount, absolute or relative to it, outside\n"
	"firebreak/) as sandbox NAME: its processes, sockets, seccomp refusals and resource use "
	"are\n"
	"recorded as a sandbox's are. None of the enforcer's layers apply (no command gate, no\n"
	"egress gate, no seccomp filter of ours). --policy names the policy its detectors use; "
	"its\n"
	"hash is recorded. Only root may adopt a cgroup.\n";

static const char unwatch_usage[] =
	"Usage: firebreak unwatch NAME\n"
	"Stops watching a cgroup adopted with firebreak watch; its processes go on untouched.\n";

/* CGROUP as the monitor wants it: relative to the v2 mount, no leading or trailing '/'. */
static int cgroup_relative(const char *arg, char *buf, size_t size)
{
	const struct cgroup_layout *l;
	size_t n;

	if (arg[0] == '/') {
		if (cgroup_layout(&l) < 0 || !l->v2[0])
			return cli_fail("watch", "no cgroup v2 hierarchy is mounted");
		n = strlen(l->v2);
		if (strncmp(arg, l->v2, n) != 0 || (arg[n] != '/' && arg[n] != '\0'))
			return cli_fail("watch", "%s is not under the cgroup v2 mount %s", arg,
					l->v2);
		arg += n;
		while (*arg == '/')
			arg++;
	}
	if (strscpy(buf, size, arg) < 0)
		return cli_fail("watch", "cgroup path too long");
	for (n = strlen(buf); n > 0 && buf[n - 1] == '/'; n--)
		buf[n - 1] = '\0';
	return 0;
}

/* A control request is one line of at most 64 KiB, JSON-escaped: room for a policy this big. */
#define WATCH_POLICY_MAX (40 * 1024)

/* The file's bytes, NUL-terminated, in *ret (free it); -EFBIG past WATCH_POLICY_MAX. */
static int read_text(const char *path, char **ret)
{
	FILE *f = fopen(path, "re");
	char *buf = f ? malloc(WATCH_POLICY_MAX + 1) : NULL;
	size_t n = buf ? fread(buf, 1, WATCH_POLICY_MAX + 1, f) : 0;

	if (f)
		fclose(f);
	if (!buf || n > WATCH_POLICY_MAX || memchr(buf, '\0', n)) {
		free(buf);
		return -EFBIG;
	}
	buf[n] = '\0';
	*ret = buf;
	return 0;
}

int cli_watch(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "name", required_argument, NULL, 'n' },
		{ "policy", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *name = NULL, *policy_path = NULL;
	struct policy *policy = NULL;
	char rel[256], err[256], *text = NULL;
	json_t *req;
	int c;

	while ((c = getopt_long(argc, argv, "n:p:h", opts, NULL)) != -1) {
		if (c == 'n')
			name = optarg;
		else if (c == 'p')
			policy_path = optarg;
		else
			return cli_usage(c == 'h' ? stdout : stderr, watch_usage);
	}
	if (argc - optind != 1 || !name)
		return cli_usage(stderr, watch_usage);
	if (!event_sandbox_name_valid(name))
		return cli_fail("watch", "'%s' is not a valid sandbox name", name);
	if (cgroup_relative(argv[optind], rel, sizeof(rel)))
		return 1;
	/* The one policy loader: a policy that would not load for create is refused here too.
	 * Its text goes to the monitor, which keeps it for the cgroup's detectors. */
	if (policy_path && policy_load(policy_path, &policy, err, sizeof(err)) < 0)
		return cli_fail("watch", "%s", err);
	if (policy_path && read_text(policy_path, &text) < 0) {
		policy_free(policy);
		return cli_fail("watch", "%s: cannot be sent (at most %d bytes)", policy_path,
				WATCH_POLICY_MAX);
	}
	req = json_pack("{s:s, s:s, s:s}", "op", "watch", "sandbox", name, "cgroup", rel);
	if (req && policy) {
		json_object_set_new(req, "policy_hash", json_string(policy_hash(policy)));
		json_object_set_new(req, "policy", json_string(text));
	}
	policy_free(policy);
	free(text);
	return cli_control_simple(cli, "watch", req);
}

int cli_unwatch(struct cli *cli, int argc, char **argv)
{
	if (argc != 2 || argv[1][0] == '-')
		return cli_usage(argc == 2 && strcmp(argv[1], "--help") == 0 ? stdout : stderr,
				 unwatch_usage);
	return cli_control_simple(cli, "unwatch",
				  json_pack("{s:s, s:s}", "op", "unwatch", "sandbox", argv[1]));
}
