/*
 * Rules on the socket and signal senses: a signal beyond the sender's step, an inbound
 * connection from beyond loopback, and the reverse shell (a shell or interpreter whose stdio is
 * an inet socket; a shell started by a process, or its child, shortly after that process's
 * connect beyond loopback was refused; a shell's own connect beyond loopback, which only
 * /dev/tcp makes; an exec whose arguments carry a reverse shell's signature, lib/cmdline.h).
 */
#include <stdio.h>
#include <string.h>

#include "cmdline.h"
#include "detect-internal.h"
#include "macro.h"

/* A shell started this soon after its own (or its parent's) refused connect is a reverse shell's
 * second try, not honest work. */
#define REVERSE_SHELL_WINDOW_NS (10LL * 1000 * 1000 * 1000)

/* 127.0.0.0/8, ::1 and v4-mapped loopback. */
static int loopback(const char *a)
{
	return strncmp(a, "127.", 4) == 0 || strcmp(a, "::1") == 0 ||
	       strncmp(a, "::ffff:127.", 11) == 0;
}

static int shell(const char *path)
{
	static const char *const shells[] = { "sh",  "bash", "dash", "zsh",  "ksh",
					      "ash", "mksh", "csh",  "tcsh", "fish" };
	const char *name = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;

	for (size_t i = 0; i < ARRAY_SIZE(shells); i++)
		if (strcmp(name, shells[i]) == 0)
			return 1;
	return 0;
}

static size_t on_signal(const struct event *ev, struct detect_verdict *v)
{
	char where[16], name[16] = "?", target[32] = "?";
	int outside;

	if (ev->step == EVENT_STEP_NONE || !event_field_str(ev, "where", where, sizeof(where)) ||
	    strcmp(where, "same-step") == 0)
		return 0;
	outside = strcmp(where, "outside") == 0;
	event_field_str(ev, "signal_name", name, sizeof(name));
	event_field_str(ev, "target_comm", target, sizeof(target));
	detect_verdict_init(v, ev, RULE_SIGNAL_BEYOND_STEP,
			    outside ? DETECT_CRITICAL : DETECT_HIGH);
	snprintf(v->reason, sizeof(v->reason), "%s (pid %d) sent %s to %s, %s", ev->comm, ev->pid,
		 name, target,
		 outside			 ? "a process outside its sandbox"
		 : strcmp(where, "sandbox") == 0 ? "a process of the sandbox outside any step"
						 : "a process of another step");
	return 1;
}

/*
 * Signals the process tracer cannot see, because the kernel refuses them before a signal is
 * generated, from the seccomp filter (enforcer/seccomp.c): a refused kill, tkill or tgkill is
 * one aimed at the sandbox's init (pid 1: the only ones the filter refuses), a logged kill is
 * kill(-1) (the only one it logs). Init holds the sandbox: signalling it is tamper.
 */
static size_t on_seccomp_signal(const struct event *ev, struct detect_verdict *v)
{
	const int refused = strcmp(ev->kind, "seccomp.denied") == 0;
	char name[16];

	if (ev->step == EVENT_STEP_NONE || !event_field_str(ev, "name", name, sizeof(name)) ||
	    !(strcmp(name, "kill") == 0 ||
	      (refused && (strcmp(name, "tkill") == 0 || strcmp(name, "tgkill") == 0))))
		return 0;
	detect_verdict_init(v, ev, RULE_SIGNAL_BEYOND_STEP,
			    refused ? DETECT_CRITICAL : DETECT_HIGH);
	snprintf(v->reason, sizeof(v->reason),
		 refused ? "%s (pid %d) signalled the sandbox's init (%s of pid 1, refused)"
			 : "%s (pid %d) signalled every process it may (%s -1)",
		 ev->comm, ev->pid, name);
	return 1;
}

static size_t on_accept(const struct event *ev, struct detect_verdict *v)
{
	char peer[48];
	int64_t port = 0;

	if (!event_field_str(ev, "peer_address", peer, sizeof(peer)) || loopback(peer))
		return 0;
	event_field_int(ev, "port", &port);
	detect_verdict_init(v, ev, RULE_NET_UNEXPECTED_LISTENER, DETECT_HIGH);
	snprintf(v->reason, sizeof(v->reason),
		 "the sandbox accepted a connection from %s on port %lld", peer, (long long)port);
	return 1;
}

/* Remembers a connect beyond loopback that the egress hook refused. */
static void note_refused(struct detect_state *st, const struct event *ev)
{
	char hook[16], dst[48];
	size_t i;

	if (!event_field_str(ev, "egress_hook", hook, sizeof(hook)) || strcmp(hook, "refused") ||
	    !event_field_str(ev, "dst", dst, sizeof(dst)) || loopback(dst))
		return;
	i = st->refused_next++ % DETECT_REFUSED_MAX;
	st->refused[i].pid = ev->pid;
	st->refused[i].ts = ev->ts;
	st->refused[i].id = ev->id;
}

/*
 * A connect or sendmsg beyond loopback by a process whose executable is a shell (or busybox
 * running as one: comm is its applet): a shell has no socket call but /dev/tcp and /dev/udp. A
 * lookup the egress hook passed to the DNS gate (port 53) is the name of the host that follows,
 * judged when its connect comes.
 */
static size_t shell_connect(const struct event *ev, struct detect_verdict *v)
{
	char exe[32], dst[48], hook[16] = "";
	int64_t port = 0;

	if (!event_field_str(ev, "exe", exe, sizeof(exe)) ||
	    !(shell(exe) || (strcmp(exe, "busybox") == 0 && shell(ev->comm))) ||
	    !event_field_str(ev, "dst", dst, sizeof(dst)) || loopback(dst) ||
	    strcmp(dst, "0.0.0.0") == 0 || strcmp(dst, "::") == 0)
		return 0;
	event_field_str(ev, "egress_hook", hook, sizeof(hook));
	event_field_int(ev, "port", &port);
	if (strcmp(hook, "passed") == 0 && port == 53)
		return 0;
	detect_verdict_init(v, ev, RULE_NET_REVERSE_SHELL, DETECT_CRITICAL);
	snprintf(v->reason, sizeof(v->reason),
		 "the shell %s (pid %d) connected to %s port %lld itself (/dev/tcp)%s", exe,
		 ev->pid, dst, (long long)port, strcmp(hook, "refused") == 0 ? ", refused" : "");
	return 1;
}

/* An exec whose arguments are a reverse shell (lib/cmdline.h). */
static size_t signature(const struct event *ev, const char *path, struct detect_verdict *v)
{
	const char *argv[CMDLINE_ARGS_MAX];
	char why[160];
	json_t *f;
	size_t argc;
	int hit;

	if (!cmdline_may_reverse_shell(path)) /* most execs: no argv decoded */
		return 0;
	f = event_get_fields(ev);
	argc = cmdline_from_json(json_object_get(f, "argv"), argv, CMDLINE_ARGS_MAX);
	hit = cmdline_reverse_shell(path, argv, argc, why, sizeof(why));
	json_decref(f);
	if (!hit)
		return 0;
	detect_verdict_init(v, ev, RULE_NET_REVERSE_SHELL, DETECT_CRITICAL);
	snprintf(v->reason, sizeof(v->reason), "%.60s: %s", path, why);
	return 1;
}

static size_t on_exec(struct detect_state *st, const struct event *ev, struct detect_verdict *v)
{
	char path[256], stdio[24];

	if (!event_field_str(ev, "path", path, sizeof(path)))
		return 0;
	if (signature(ev, path, v))
		return 1;
	if (event_field_str(ev, "stdio_socket", stdio, sizeof(stdio)) &&
	    (shell(path) || detect_interpreter(path))) {
		detect_verdict_init(v, ev, RULE_NET_REVERSE_SHELL, DETECT_CRITICAL);
		snprintf(v->reason, sizeof(v->reason), "%.100s started with an inet socket as %s",
			 path, stdio);
		return 1;
	}
	if (!shell(path))
		return 0;
	for (size_t i = 0; i < DETECT_REFUSED_MAX; i++) {
		if (!st->refused[i].pid || ev->ts - st->refused[i].ts > REVERSE_SHELL_WINDOW_NS ||
		    ev->ts < st->refused[i].ts ||
		    (st->refused[i].pid != ev->pid && st->refused[i].pid != ev->ppid))
			continue;
		detect_verdict_init(v, ev, RULE_NET_REVERSE_SHELL, DETECT_CRITICAL);
		v->event_ids[0] = st->refused[i].id;
		v->event_ids[1] = ev->id;
		v->n_ids = 2;
		snprintf(v->reason, sizeof(v->reason),
			 "%.100s started by pid %d right after its connect beyond loopback was "
			 "refused",
			 path, st->refused[i].pid);
		st->refused[i].pid = 0; /* once per refusal */
		return 1;
	}
	return 0;
}

size_t detect_rules_senses(struct detect_state *st, const struct event *ev,
			   struct detect_verdict *out, size_t max)
{
	if (max == 0)
		return 0;
	if (strcmp(ev->kind, "signal.sent") == 0)
		return on_signal(ev, out);
	if (strncmp(ev->kind, "seccomp.", 8) == 0)
		return on_seccomp_signal(ev, out);
	if (strcmp(ev->kind, "net.accept") == 0)
		return on_accept(ev, out);
	if (strcmp(ev->kind, "net.connect") == 0)
		note_refused(st, ev);
	if (strcmp(ev->kind, "net.connect") == 0 || strcmp(ev->kind, "net.sendmsg") == 0)
		return shell_connect(ev, out);
	if (strcmp(ev->kind, "proc.exec") == 0)
		return on_exec(st, ev, out);
	return 0;
}
