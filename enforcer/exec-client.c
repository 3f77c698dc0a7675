/*
 * firebreak exec: one tool call, asked of the sandbox's exec launcher (launcher.h), which runs it
 * with our stdin, stdout and stderr as the tool's own. We wait for its answer, pass an interrupt
 * on (the call is killed with it), and exit as the tool did.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "event.h"
#include "launcher-wire.h"
#include "launcher.h"
#include "log.h"
#include "macro.h"
#include "sandbox.h"
#include "state.h"
#include "unixsock.h"

extern char **environ;

/* Why the launcher does not answer, in the words of the sandbox's state. */
static int no_launcher(const struct config *cfg, const char *name, int r)
{
	struct sandbox_state st;

	if (state_load(cfg, name, &st) < 0)
		return log_error("firebreak exec: no sandbox named %s", name), -ENOENT;
	if (!state_init_alive(&st))
		return log_error(
			       "firebreak exec: sandbox %s is dead (its init is gone); destroy it",
			       name),
		       -ESRCH;
	return log_error("firebreak exec: sandbox %s's exec launcher does not answer (%s; see "
			 "%s in its state dir); destroy it and create it again",
			 name, strerror(-r), LAUNCHER_LOG),
	       r;
}

static json_t *request_json(const struct sandbox_exec_request *req)
{
	json_t *argv = json_array(), *env = json_array();
	json_t *o = json_pack("{s:s, s:o, s:o}", "tool", req->tool, "argv", argv, "env", env);

	if (!o)
		return NULL;
	for (char **a = req->argv; *a; a++)
		json_array_append_new(argv, json_string(*a));
	for (char **e = environ; e && *e; e++)
		json_array_append_new(env, json_string(*e));
	if (req->call_id)
		json_object_set_new(o, "call_id", json_string(req->call_id));
	if (req->step >= 0)
		json_object_set_new(o, "step", json_integer(req->step));
	return o;
}

/* The launcher's answer: the exit status (what it says on stderr printed), or -errno. */
static int final_answer(json_t *msg)
{
	const char *text = json_string_value(json_object_get(msg, "stderr"));
	json_t *exit_code = json_object_get(msg, "exit");

	if (!text)
		text = json_string_value(json_object_get(msg, "error"));
	/* The launcher escaped what it quotes of the agent's. */
	if (text && *text)
		fprintf(stderr, "%s%s", text, text[strlen(text) - 1] == '\n' ? "" : "\n");
	if (json_is_integer(exit_code))
		return (int)json_integer_value(exit_code);
	json_t *e = json_object_get(msg, "errno");
	return json_is_integer(e) && json_integer_value(e) > 0 ? -(int)json_integer_value(e) : -EIO;
}

int sandbox_exec(const struct config *cfg, const struct sandbox_exec_request *req)
{
	char path[PATH_MAX + 32];
	_cleanup_close_ int fd = -1, sfd = -1;
	const char *record;
	int64_t step = req->step;
	sigset_t sigs;
	int r, code = -EIO;

	if (!event_sandbox_name_valid(req->name))
		return log_error("firebreak exec: '%s' is not a valid sandbox name", req->name),
		       -EINVAL;
	if ((r = state_path(cfg, req->name, LAUNCHER_SOCKET, path, sizeof(path))) < 0)
		return log_errno(r, "firebreak exec: %s", req->name);
	if ((fd = unixsock_connect_seqpacket(path)) < 0)
		return no_launcher(cfg, req->name, fd);
	/* An interrupted or terminated `firebreak exec` takes its tool call down with it. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	if ((sfd = signalfd(-1, &sigs, SFD_CLOEXEC)) < 0)
		return log_errno(-errno, "firebreak exec: signalfd");
	r = launcher_wire_send(fd, request_json(req), (const int[]){ 0, 1, 2 }, 3);
	if (r == -EMSGSIZE)
		return log_error("firebreak exec: the argv and environment are too large for a "
				 "tool call (at most %d bytes)",
				 LAUNCHER_REQUEST_MAX),
		       r;
	if (r < 0)
		return no_launcher(cfg, req->name, r);
	for (;;) {
		struct pollfd p[2] = { { .fd = fd, .events = POLLIN },
				       { .fd = sfd, .events = POLLIN } };
		int fds[3], nfds;
		json_t *msg;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return log_errno(-errno, "firebreak exec: poll");
		}
		if (p[1].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == sizeof(si))
				launcher_wire_send(fd,
						   json_pack("{s:i}", "signal", (int)si.ssi_signo),
						   NULL, 0);
		}
		if (!(p[0].revents & (POLLIN | POLLHUP)))
			continue;
		r = launcher_wire_recv(fd, &msg, fds, 3, &nfds);
		if (r == -EAGAIN)
			continue;
		for (int i = 0; i < nfds; i++)
			close(fds[i]);
		if (r < 0)
			return log_error("firebreak exec: sandbox %s's exec launcher went away "
					 "during the call (%s)",
					 req->name, strerror(-r)),
			       -ECONNRESET;
		if (json_object_get(msg, "step")) {
			step = json_integer_value(json_object_get(msg, "step"));
			json_decref(msg);
			continue;
		}
		/* Our exit says the step is on record: we wait for the monitor's word on it. */
		if (json_object_get(msg, "recorded")) {
			if (!json_is_true(json_object_get(msg, "recorded")))
				log_warn("firebreak exec: the monitor did not record step %lld",
					 (long long)step);
			json_decref(msg);
			return code;
		}
		code = final_answer(msg);
		record = json_string_value(json_object_get(msg, "record"));
		if (record && strcmp(record, "pending") == 0) {
			json_decref(msg);
			continue;
		}
		if (record && strcmp(record, "failed") == 0)
			log_warn("firebreak exec: the monitor did not record step %lld",
				 (long long)step);
		json_decref(msg);
		return code;
	}
}
