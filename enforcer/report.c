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
	uint64_t sent, acked; /* requests sent and acknowledged so far, in order */
	void (*on_ack)(void *data, uint64_t seq, int ok);
	void *on_ack_data;
	char buf[4096]; /* replies read but not yet taken */
	size_t len;
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
	if (r == 0) {
		rp->pending++;
		rp->sent++;
	}
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

/* Takes every whole reply in the buffer; 0, or -EPROTO if the monitor refused one (printed). */
static int take_replies(struct report *rp)
{
	char *nl;
	int r = 0;

	while (rp->pending > 0 && (nl = memchr(rp->buf, '\n', rp->len))) {
		json_t *reply = json_loadb(rp->buf, (size_t)(nl - rp->buf), 0, NULL);
		int ok = json_is_true(json_object_get(reply, "ok"));

		if (!ok) {
			const char *e = json_string_value(json_object_get(reply, "error"));

			log_error("firebreak: the monitor refused a record: %s",
				  e ? e : "(unreadable reply)");
			r = -EPROTO;
		}
		json_decref(reply);
		rp->pending--;
		rp->acked++;
		rp->len -= (size_t)(nl - rp->buf) + 1;
		memmove(rp->buf, nl + 1, rp->len);
		if (rp->on_ack)
			rp->on_ack(rp->on_ack_data, rp->acked, ok);
	}
	return r;
}

/* Reads what the socket has (waiting up to ms, -1: not at all); 0, -EAGAIN, or -errno. */
static int read_replies(struct report *rp, int ms)
{
	ssize_t n;

	if (rp->len == sizeof(rp->buf))
		return -EPROTO;
	if (ms >= 0) {
		int ready = poll(&(struct pollfd){ .fd = rp->fd, .events = POLLIN }, 1, ms);

		if (ready < 0)
			return errno == EINTR ? -EAGAIN : -errno;
		if (ready == 0)
			return -ETIMEDOUT;
	}
	n = recv(rp->fd, rp->buf + rp->len, sizeof(rp->buf) - rp->len, MSG_DONTWAIT);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? -EAGAIN : -errno;
	if (n == 0)
		return -ECONNRESET;
	rp->len += (size_t)n;
	return 0;
}

int report_wait(struct report *rp)
{
	uint64_t deadline = time_mono_ns() + (uint64_t)REPORT_DEADLINE_MS * NSEC_PER_MSEC;
	int r = take_replies(rp), e;

	while (rp->pending > 0) {
		uint64_t now = time_mono_ns();

		e = read_replies(rp, now < deadline ? (int)((deadline - now + NSEC_PER_MSEC - 1) /
							    NSEC_PER_MSEC)
						    : 0);
		if (e == -ETIMEDOUT) {
			log_error("firebreak: the monitor did not acknowledge %u record(s) within "
				  "%d s (firebreakd hung?)",
				  rp->pending, REPORT_DEADLINE_MS / 1000);
			return e;
		}
		if (e < 0 && e != -EAGAIN)
			return e;
		if ((e = take_replies(rp)) < 0)
			r = e;
	}
	return r;
}

void report_on_ack(struct report *rp, void (*cb)(void *data, uint64_t seq, int ok), void *data)
{
	rp->on_ack = cb;
	rp->on_ack_data = data;
}

uint64_t report_sent(const struct report *rp)
{
	return rp->sent;
}

unsigned report_pending(const struct report *rp)
{
	return rp->pending;
}

int report_fd(const struct report *rp)
{
	return rp->fd;
}

int report_take_acks(struct report *rp)
{
	int r, e;

	while ((e = read_replies(rp, -1)) == 0)
		;
	r = take_replies(rp);
	return e == -EAGAIN ? r : e;
}

int report_alive(struct report *rp)
{
	struct pollfd p = { .fd = rp->fd, .events = POLLIN };

	/* What is owed is read first; then nothing is due from the monitor, and anything readable
	 * is its end (EOF) or an error, which a restart leaves behind. */
	if (rp->pending > 0 && report_wait(rp) < 0)
		return 0;
	return poll(&p, 1, 0) == 0;
}
