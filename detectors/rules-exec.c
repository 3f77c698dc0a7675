/*
 * Rules on what an exec says about its program (issue 16, items 6 and 8): loader and interpreter
 * variables nobody allowed (exec.loader-injection), a program with no file behind it or one
 * written to the sandbox's scratch space (exec.drift), and a system daemon's name on a sandbox
 * process (exec.masquerade).
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdline.h"
#include "detect-internal.h"
#include "loader-env.h"
#include "macro.h"

/* The two ends of a pipeline start together: this is generous. */
#define PIPE_WINDOW_NS (10LL * 1000 * 1000 * 1000)

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* The names in "A,B,C" as loader_env bits. */
static uint64_t env_bits(const char *list)
{
	char name[64];
	uint64_t m = 0;

	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");
		int i;

		if (n < sizeof(name)) {
			memcpy(name, p, n);
			name[n] = '\0';
			if ((i = loader_env_index(name)) >= 0 && i < 64)
				m |= 1ULL << i;
		}
		p += n + (p[n] == ',');
	}
	return m;
}

static int image_of(const struct detect_state *st, int32_t pid)
{
	for (size_t k = 1; k <= DETECT_IMAGES_MAX && k <= st->images_next; k++) {
		size_t i = (st->images_next - k) % DETECT_IMAGES_MAX;

		if (st->images[i].pid == pid)
			return (int)i;
	}
	return -1;
}

/*
 * Whether the setter (the program whose environment the new one got) honestly sets variable b:
 * git for its own children (GIT_* hooks and config), a python for a python (pip's build
 * isolation puts its build environment on PYTHONPATH).
 */
static int honest_setter(unsigned b, const char *setter, const char *prog)
{
	unsigned f = loader_env_table[b].flags;

	if ((f & LOADER_ENV_GIT_HOOK) &&
	    (strcmp(setter, "git") == 0 || !strncmp(setter, "git-", 4)))
		return 1;
	return strcmp(loader_env_table[b].name, "PYTHONPATH") == 0 &&
	       strncmp(setter, "python", 6) == 0 && strncmp(prog, "python", 6) == 0;
}

static size_t loader_injection(struct detect_state *st, const struct event *ev, const char *path,
			       struct detect_verdict *v)
{
	const struct detect_tool *t = detect_tool(st, ev->tool);
	char list[512], setter[32] = "", names[160] = "";
	uint64_t env, base = 0, bad = 0;
	int prev = image_of(st, ev->pid), par = image_of(st, ev->ppid);
	size_t slot, n = 0;

	if (!event_field_str(ev, "loader_env", list, sizeof(list)))
		return 0;
	env = env_bits(list);
	/* A re-exec in the same process inherits from its last image; a new one from its parent. */
	if (prev >= 0) {
		base = st->images[prev].env;
		strscpy(setter, sizeof(setter), st->images[prev].name);
	} else {
		base = par >= 0 ? st->images[par].env : 0;
		event_field_str(ev, "parent_exe", setter, sizeof(setter));
	}
	slot = st->images_next++ % DETECT_IMAGES_MAX;
	st->images[slot].pid = ev->pid;
	st->images[slot].env = env;
	strscpy(st->images[slot].name, sizeof(st->images[slot].name), base_name(path));
	if (t && event_field_true(ev, "env_truncated")) {
		/* The gate builds a call's environment from the policy: a few dozen entries. Past
		 * the tracer's 256 is padding, which could hide a variable behind it. */
		detect_verdict_init(v, ev, RULE_EXEC_LOADER_INJECTION, DETECT_HIGH);
		snprintf(v->reason, sizeof(v->reason),
			 "%.100s started with more than 256 environment entries (not all seen)",
			 path);
		return 1;
	}
	if (!t || !(env & ~t->env_may & ~base))
		return 0;
	for (unsigned b = 0; b < loader_env_count() && b < 64; b++)
		if ((env & ~t->env_may & ~base & (1ULL << b)) &&
		    !honest_setter(b, setter, base_name(path))) {
			bad |= 1ULL << b;
			n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s", n ? "," : "",
					      loader_env_table[b].name);
			if (n >= sizeof(names))
				break;
		}
	if (!bad)
		return 0;
	detect_verdict_init(v, ev, RULE_EXEC_LOADER_INJECTION, DETECT_HIGH);
	snprintf(v->reason, sizeof(v->reason),
		 "%.60s started with %.80s, which tool %.30s's environment does not set (set by "
		 "%.16s)",
		 path, names, ev->tool, setter[0] ? setter : "?");
	return 1;
}

static size_t drift(const struct event *ev, const char *path, struct detect_verdict *v)
{
	char origin[16];
	int gone;

	if (!event_field_str(ev, "exe_origin", origin, sizeof(origin)))
		return 0;
	gone = strcmp(origin, "memfd") == 0 || strcmp(origin, "deleted") == 0;
	if (!gone && strcmp(origin, "tmp") != 0 && strcmp(origin, "shm") != 0)
		return 0;
	detect_verdict_init(v, ev, RULE_EXEC_DRIFT, gone ? DETECT_CRITICAL : DETECT_HIGH);
	snprintf(v->reason, sizeof(v->reason), "%.100s ran from %s", path,
		 strcmp(origin, "memfd") == 0	  ? "a memfd (no file behind it)"
		 : strcmp(origin, "deleted") == 0 ? "a deleted file"
		 : strcmp(origin, "tmp") == 0	  ? "the sandbox's /tmp"
						  : "the sandbox's /dev/shm");
	return 1;
}

/* Names a system daemon or kernel thread goes by: nothing a tool call has reason to be called. */
static int daemon_name(const char *name)
{
	static const char *const daemons[] = {
		"sshd",	       "systemd*",	 "kworker*",	"kthreadd",  "ksoftirqd*",
		"migration*",  "rcu_*",		 "cron",	"crond",     "atd",
		"dbus-daemon", "dbus-broker*",	 "containerd*", "dockerd",   "kubelet",
		"rsyslogd",    "syslogd",	 "auditd",	"udevd",     "polkitd",
		"agetty",      "getty",		 "snapd",	"chronyd",   "ntpd",
		"init",	       "NetworkManager", "irq/*",	"watchdog*", "kswapd*",
	};

	for (size_t i = 0; i < ARRAY_SIZE(daemons); i++)
		if (fnmatch(daemons[i], name, 0) == 0)
			return 1;
	return 0;
}

static size_t masquerade(const struct event *ev, const char *path, struct detect_verdict *v)
{
	json_t *f = event_get_fields(ev), *argv0 = json_array_get(json_object_get(f, "argv"), 0);
	const char *a0 = json_string_value(argv0);
	char name[64] = "";

	if (daemon_name(ev->comm)) {
		strscpy(name, sizeof(name), ev->comm);
	} else if (a0) {
		/* "kworker/0:1", "/usr/sbin/sshd", ps's "[kthreadd]" form of a kernel thread, and
		 * the titles daemons give themselves: "sshd: root@pts/0", "sshd: user [priv]". The
		 * first word is the name, its trailing ':' stripped. */
		const char *a = a0 + strspn(a0, " ");
		int bracket = a[0] == '[';
		char arg[64];
		size_t n;

		strscpy(arg, sizeof(arg), a + bracket);
		arg[strcspn(arg, bracket ? "]" : " ")] = '\0';
		if ((n = strlen(arg)) > 1 && arg[n - 1] == ':')
			arg[n - 1] = '\0';
		if (daemon_name(arg) || daemon_name(base_name(arg)))
			strscpy(name, sizeof(name), arg);
	}
	json_decref(f);
	if (!name[0])
		return 0;
	detect_verdict_init(v, ev, RULE_EXEC_MASQUERADE, DETECT_HIGH);
	snprintf(v->reason, sizeof(v->reason), "%.100s runs under the name of a system daemon, %s",
		 path, name);
	return 1;
}

/*
 * A shell or interpreter reading its code from a pipe whose other end is a decoder's or a
 * downloader's stdout, in the same step: `base64 -d | sh`, `curl URL | bash`. The pipe is the
 * one kernel object both execs name (stdin_pipe, stdout_pipe); which of the two execs comes
 * first is the scheduler's choice, so each end waits for the other.
 */
static size_t pipe_to_shell(struct detect_state *st, const struct event *ev, const char *path,
			    struct detect_verdict *v)
{
	json_t *f;
	const char *argv[CMDLINE_ARGS_MAX];
	int64_t in = 0, out = 0, pipe;
	enum cmdline_feed feed = CMDLINE_FEED_NONE;
	int reader = 0;
	size_t argc, slot;

	if (ev->step == EVENT_STEP_NONE ||
	    (!event_field_int(ev, "stdin_pipe", &in) && !event_field_int(ev, "stdout_pipe", &out)))
		return 0;
	event_field_int(ev, "stdout_pipe", &out);
	f = event_get_fields(ev);
	argc = cmdline_from_json(json_object_get(f, "argv"), argv, CMDLINE_ARGS_MAX);
	if (out > 0)
		feed = cmdline_feeder(path, argv, argc);
	if (in > 0 && feed == CMDLINE_FEED_NONE)
		reader = cmdline_code_from_stdin(path, argv, argc);
	json_decref(f);
	if (feed == CMDLINE_FEED_NONE && !reader)
		return 0;
	pipe = reader ? in : out;
	for (size_t i = 0; i < DETECT_PIPES_MAX; i++) {
		int64_t dt = ev->ts - st->pipes[i].ts;

		if (st->pipes[i].pipe != pipe || st->pipes[i].step != ev->step ||
		    (st->pipes[i].feeder != 0) == !reader || dt > PIPE_WINDOW_NS ||
		    dt < -PIPE_WINDOW_NS)
			continue;
		detect_verdict_init(v, ev, RULE_EXEC_PIPE_TO_SHELL, DETECT_HIGH);
		v->event_ids[0] = st->pipes[i].id < ev->id ? st->pipes[i].id : ev->id;
		v->event_ids[1] = st->pipes[i].id < ev->id ? ev->id : st->pipes[i].id;
		v->n_ids = 2;
		snprintf(v->reason, sizeof(v->reason), "%.40s runs code piped from %.40s (%s)",
			 reader ? base_name(path) : st->pipes[i].name,
			 reader ? st->pipes[i].name : base_name(path),
			 (reader ? st->pipes[i].feeder : (int)feed) == CMDLINE_FEED_DECODED
				 ? "decoded"
				 : "downloaded");
		st->pipes[i].pipe = 0;
		return 1;
	}
	slot = st->pipes_next++ % DETECT_PIPES_MAX;
	st->pipes[slot].step = ev->step;
	st->pipes[slot].ts = ev->ts;
	st->pipes[slot].id = ev->id;
	st->pipes[slot].pipe = pipe;
	st->pipes[slot].feeder = reader ? 0 : (int)feed;
	strscpy(st->pipes[slot].name, sizeof(st->pipes[slot].name), base_name(path));
	return 0;
}

static size_t on_rename(const struct event *ev, struct detect_verdict *v)
{
	char to[32], exe[64] = "";

	if (!event_field_str(ev, "new_comm", to, sizeof(to)) || !daemon_name(to))
		return 0;
	event_field_str(ev, "exe", exe, sizeof(exe));
	if (strncmp(exe, to, strlen(to)) == 0) /* the daemon's own program naming itself */
		return 0;
	detect_verdict_init(v, ev, RULE_EXEC_MASQUERADE, DETECT_HIGH);
	snprintf(v->reason, sizeof(v->reason), "%s (pid %d, program %s) renamed itself %s",
		 ev->comm, ev->pid, exe[0] ? exe : "?", to);
	return 1;
}

size_t detect_rules_exec(struct detect_state *st, const struct event *ev,
			 struct detect_verdict *out, size_t max)
{
	char path[256];
	size_t n = 0;

	if (strcmp(ev->kind, "proc.rename") == 0)
		return max ? on_rename(ev, out) : 0;
	if (strcmp(ev->kind, "proc.exec") != 0 || !event_field_str(ev, "path", path, sizeof(path)))
		return 0;
	if (n < max)
		n += drift(ev, path, out + n);
	if (n < max)
		n += masquerade(ev, path, out + n);
	if (n < max)
		n += loader_injection(st, ev, path, out + n);
	if (n < max)
		n += pipe_to_shell(st, ev, path, out + n);
	return n;
}
