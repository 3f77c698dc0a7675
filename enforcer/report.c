#include "report.h"

#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>

#include "bounds.h"
#include "log.h"
#include "macro.h"
#include "timeutil.h"
#include "unixsock.h"

/*
 * How long the monitor has to acknowledge what was sent (and to take a send the socket's buffer
 * has no room for): past it the monitor is taken for hung, and the caller hears -ETIMEDOUT rather
 * than waiting for ever (a stopped or wedged firebreakd must not hang a tool call or a destroy).
 */
#define REPORT_DEADLINE_MS 10000

struct report {
	int fd;
	unsigned pending;
};

int report_open(const struct config *cfg, struct report **ret)
{
	char path[PATH_MAX + 32];
	struct report *rp;
	int fd;

	if (config_socket_path(cfg, FB_CONTROL_SOCKET, path, sizeof(path)) < 0)
		return -ENAMETOOLONG;
	fd = unixsock_connect(path);
	if (fd < 0)
		return fd;
	if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO,
		       &(struct timeval){ .tv_sec = REPORT_DEADLINE_MS / 1000 },
		       sizeof(struct timeval)) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	rp = calloc(1, sizeof(*rp));
	if (!rp) {
		close(fd);
		return -ENOMEM;
	}
	rp->fd = fd;
	*ret = rp;
	return 0;
}

void report_close(struct report *rp)
{
	if (!rp)
		return;
	close(rp->fd);
	free(rp);
}

static int send_json(struct report *rp, json_t *obj)
{
	char *text = obj ? json_dumps(obj, JSON_COMPACT) : NULL;
	size_t len;
	int r = 0;

	json_decref(obj);
	if (!text)
		return -ENOMEM;
	len = strlen(text);
	text[len] = '\n'; /* json_dumps leaves room for exactly its NUL */
	if (send(rp->fd, text, len + 1, MSG_NOSIGNAL) != (ssize_t)(len + 1))
		r = -errno ? -errno : -EIO;
	free(text);
	if (r == 0)
		rp->pending++;
	return r;
}

int report_register(struct report *rp, const char *name, const char *state, const char *cgroup,
		    const char *policy_hash)
{
	json_t *req =
		json_pack("{s:s, s:s, s:s}", "op", "register", "sandbox", name, "state", state);

	if (req && cgroup)
		json_object_set_new(req, "cgroup", json_string(cgroup));
	if (req && policy_hash)
		json_object_set_new(req, "policy_hash", json_string(policy_hash));
	return send_json(rp, req);
}

int report_event(struct report *rp, const struct event *ev)
{
	json_t *e = event_to_json(ev);

	if (!e)
		return -ENOMEM;
	return send_json(rp, json_pack("{s:s, s:o}", "op", "event", "event", e));
}

int report_exec_scope(struct report *rp, const char *name, int64_t step, const char *tool,
		      uint64_t cgid, const char *program)
{
	return send_json(rp, json_pack("{s:s, s:s, s:I, s:s, s:I, s:s}", "op", "exec-scope",
				       "sandbox", name, "step", (json_int_t)step, "tool", tool,
				       "cgroup_id", (json_int_t)cgid, "program", program));
}

int report_wait(struct report *rp)
{
	uint64_t deadline = time_mono_ns() + (uint64_t)REPORT_DEADLINE_MS * NSEC_PER_MSEC;
	char buf[4096];
	size_t len = 0;
	int r = 0;

	while (rp->pending > 0) {
		char *nl;
		ssize_t n;

		while (rp->pending > 0 && (nl = memchr(buf, '\n', len))) {
			json_t *reply = json_loadb(buf, (size_t)(nl - buf), 0, NULL);

			if (!json_is_true(json_object_get(reply, "ok"))) {
				const char *e = json_string_value(json_object_get(reply, "error"));

				log_error("firebreak: the monitor refused a record: %s",
					  e ? e : "(unreadable reply)");
				r = -EPROTO;
			}
			json_decref(reply);
			rp->pending--;
			len -= (size_t)(nl - buf) + 1;
			memmove(buf, nl + 1, len);
		}
		if (rp->pending == 0)
			break;
		if (len == sizeof(buf))
			return -EPROTO;
		uint64_t now = time_mono_ns();
		int ready =
			now < deadline
				? poll(&(struct pollfd){ .fd = rp->fd, .events = POLLIN }, 1,
				       (int)((deadline - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC))
				: 0;

		if (ready < 0 && errno == EINTR)
			continue;
		if (ready < 0)
			return -errno;
		if (ready == 0) {
			log_error("firebreak: the monitor did not acknowledge %u record(s) within "
				  "%d s "
				  "(firebreakd hung?)",
				  rp->pending, REPORT_DEADLINE_MS / 1000);
			return -ETIMEDOUT;
		}
		n = read(rp->fd, buf + len, sizeof(buf) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -ECONNRESET;
		len += (size_t)n;
	}
	return r;
}
