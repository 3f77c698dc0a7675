/* The daemon's side of the watchdog (monitor/watchdog.h): starting it, feeding it, recovering. */
#include "watchdog.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "actions.h"
#include "daemon.h"
#include "macro.h"
#include "timeutil.h"

/* A previous watchdog may still be freezing when its daemon's successor starts: wait this long. */
#define WATCHDOG_LOCK_WAIT_MS 3000

/* Takes DIR/watchdog.lock, which a live watchdog holds; returns the fd or -errno. */
static int take_lock(struct daemon *d)
{
	char path[PATH_MAX + 32];
	int fd;

	snprintf(path, sizeof(path), "%s/watchdog.lock", d->cfg->runtime_dir);
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0)
		return -errno;
	for (int waited = 0; flock(fd, LOCK_EX | LOCK_NB) < 0; waited += 10) {
		if (errno != EWOULDBLOCK || waited >= WATCHDOG_LOCK_WAIT_MS) {
			int r = errno == EWOULDBLOCK ? -EBUSY : -errno;

			close(fd);
			return r;
		}
		usleep(10000);
	}
	return fd;
}

static struct store_sandbox *find_by_cgroup(struct daemon *d, const char *rel)
{
	struct store_sandbox *sb;
	size_t pos = 0;

	while ((sb = registry_next(d->registry, &pos)))
		if (strcmp(sb->cgroup, rel) == 0)
			return sb;
	return NULL;
}

/* One cgroup the previous watchdog froze: the outage and the freeze on its timeline; a thaw. */
static void recover_one(struct daemon *d, const char *rel, const char *result, const char *reason,
			int64_t beat_ts, int64_t frozen_ts)
{
	struct action_request rq = { .kind = ACTION_FREEZE,
				     .requested_by = "watchdog",
				     .reason = reason,
				     .trigger_ts = beat_ts };
	struct store_sandbox *sb = find_by_cgroup(d, rel);
	struct writer_op op;

	if (!sb) {
		log_warn("the watchdog froze %s, which no sandbox of this store is: left frozen",
			 rel);
		return;
	}
	writer_event_init(&op, sb, time_now_ns(), EVENT_STEP_NONE, NULL, EVENT_SOURCE_MONITOR,
			  "monitor.outage");
	sink_submit_event(d->sink, &op,
			  json_pack("{s:s, s:I, s:I, s:s}", "reason", reason, "since",
				    (json_int_t)beat_ts, "until", (json_int_t)time_now_ns(),
				    "watchdog", result));
	action_record(d, sb, &rq, frozen_ts, 0, frozen_ts - beat_ts, 0, result, NULL);
	/* Frozen by a verdict or an operator before the outage: that stands. */
	if (strcmp(sb->state, "running") != 0)
		return;
	rq.kind = ACTION_THAW;
	rq.requested_by = "recovery";
	rq.reason = "firebreakd watches again";
	rq.trigger_ts = 0;
	action_apply(d, sb, &rq, NULL);
}

/* Reads DIR/watchdog.json, left by a watchdog that froze its daemon's cgroups; then removes it. */
static void recover(struct daemon *d)
{
	char path[PATH_MAX + 32];
	json_t *doc, *arr, *c;
	json_error_t jerr;
	const char *reason = "?";
	json_int_t beat = 0, frozen = 0;
	size_t i;

	snprintf(path, sizeof(path), "%s/watchdog.json", d->cfg->runtime_dir);
	if (access(path, F_OK) < 0)
		return;
	doc = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc ||
	    json_unpack_ex(doc, &jerr, 0, "{s:s, s:I, s:I, s:o}", "reason", &reason, "last_beat_ts",
			   &beat, "frozen_ts", &frozen, "cgroups", &arr) < 0 ||
	    !json_is_array(arr)) {
		log_error("%s: %s; the cgroups it names stay frozen (firebreak thaw)", path,
			  jerr.text);
		json_decref(doc);
		unlink(path);
		return;
	}
	log_warn("the previous watchdog froze %zu cgroups (%s); recording the outage and thawing",
		 json_array_size(arr), reason);
	json_array_foreach (arr, i, c) {
		const char *rel = json_string_value(json_object_get(c, "cgroup"));
		const char *result = json_string_value(json_object_get(c, "result"));

		if (rel && result)
			recover_one(d, rel, result, reason, beat, frozen);
	}
	json_decref(doc);
	unlink(path);
}

/* The list the watchdog freezes: every running or frozen sandbox's cgroup, as pipe lines. */
static char *watched_list(struct daemon *d)
{
	struct store_sandbox *sb;
	size_t pos = 0, len = 0, cap = 4096;
	char *buf = malloc(cap);

	if (!buf)
		return NULL;
	len = (size_t)snprintf(buf, cap, "l\n");
	while ((sb = registry_next(d->registry, &pos))) {
		size_t need;
		char *nb;

		if (!sb->cgroup[0] || !registry_live(sb))
			continue;
		need = len + strlen(sb->cgroup) + 8;
		if (need > cap) {
			if (!(nb = realloc(buf, need * 2)))
				return free(buf), NULL;
			buf = nb;
			cap = need * 2;
		}
		len += (size_t)snprintf(buf + len, cap - len, "c %s\n", sb->cgroup);
	}
	if (len + 3 > cap) {
		char *nb = realloc(buf, len + 3);

		if (!nb)
			return free(buf), NULL;
		buf = nb;
	}
	memcpy(buf + len, ".\n", 3);
	return buf;
}

/* The daemon's end of the link to its watchdog. */
struct watchdog_link {
	int fd; /* the pipe, or -1 */
	pid_t pid;
	char *sent; /* the watched list as last sent */
	uint64_t restarts;
};

static int spawn(struct daemon *d, int lock_fd)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int r = -errno;

		close(p[0]);
		close(p[1]);
		return r;
	}
	if (pid == 0) {
		/* Fresh state by exec: nothing of the daemon's threads, maps or store crosses. */
		if (dup2(p[0], 3) < 0 || dup2(lock_fd, 4) < 0)
			_exit(127);
		execl("/proc/self/exe", "firebreakd", "--watchdog", d->cfg->runtime_dir,
		      (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	fcntl(p[1], F_SETFL, O_NONBLOCK);
	d->watchdog->fd = p[1];
	d->watchdog->pid = pid;
	free(d->watchdog->sent);
	d->watchdog->sent = NULL;
	log_info("watchdog %d started: if firebreakd dies or hangs for 1.5 s, its sandboxes freeze",
		 (int)pid);
	return 0;
}

int watchdog_start(struct daemon *d)
{
	int lock_fd, r;

	if (!d->watchdog) {
		if (!(d->watchdog = calloc(1, sizeof(*d->watchdog))))
			return -ENOMEM;
		d->watchdog->fd = -1;
	}
	lock_fd = take_lock(d);

	if (lock_fd < 0)
		return log_errno(lock_fd,
				 "watchdog lock in %s (is another watchdog still freezing?)",
				 d->cfg->runtime_dir);
	recover(d);
	r = spawn(d, lock_fd);
	close(lock_fd); /* the watchdog holds it now */
	if (r < 0)
		return log_errno(r, "start the watchdog");
	watchdog_tick(d);
	return 0;
}

/* The watchdog is gone (it froze everything, or crashed): reap it, recover, start another. */
static void restart(struct daemon *d)
{
	int status;

	close(d->watchdog->fd);
	d->watchdog->fd = -1;
	if (d->watchdog->pid > 0)
		waitpid(d->watchdog->pid, &status, 0);
	d->watchdog->pid = 0;
	d->watchdog->restarts++;
	log_warn("the watchdog is gone; starting another");
	watchdog_start(d);
}

static int send_text(struct daemon *d, const char *text)
{
	size_t len = strlen(text), off = 0;

	while (off < len) {
		ssize_t n = write(d->watchdog->fd, text + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		off += (size_t)n;
	}
	return 0;
}

void watchdog_tick(struct daemon *d)
{
	char *list;
	int r;

	if (!d->watchdog || d->watchdog->fd < 0)
		return;
	list = watched_list(d);
	if (list && (!d->watchdog->sent || strcmp(list, d->watchdog->sent) != 0)) {
		r = send_text(d, list);
		free(d->watchdog->sent);
		d->watchdog->sent = r == 0 ? list : NULL;
	} else {
		free(list);
		r = send_text(d, "h\n");
	}
	if (r == -EPIPE)
		restart(d);
	else if (r < 0 && r != -EAGAIN)
		log_warn_errno(r, "watchdog heartbeat");
}

void watchdog_stop(struct daemon *d)
{
	int status;

	if (!d->watchdog)
		return;
	if (d->watchdog->fd < 0)
		goto out;
	fcntl(d->watchdog->fd, F_SETFL, 0);
	send_text(d, "q\n");
	close(d->watchdog->fd);
	d->watchdog->fd = -1;
	if (d->watchdog->pid > 0)
		waitpid(d->watchdog->pid, &status, 0);
out:
	free(d->watchdog->sent);
	free(d->watchdog);
	d->watchdog = NULL;
}
