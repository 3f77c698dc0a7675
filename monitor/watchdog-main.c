/*
 * The watchdog process (monitor/watchdog.h): it waits on the daemon's pipe and freezes what the
 * daemon watched when the daemon dies or hangs. It keeps nothing but the last complete list of
 * cgroups, and does nothing but cgroup writes and one file, so that it cannot fail the way the
 * daemon did.
 *
 * The pipe carries lines: "h" (heartbeat), "l" (a new list follows), "c REL" (one cgroup of it),
 * "." (the list is complete), "q" (goodbye: the daemon stops cleanly, nothing is frozen).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <jansson.h>

#include "cgroup.h"
#include "log.h"
#include "macro.h"
#include "timeutil.h"
#include "watchdog.h"

#define WATCHDOG_FD 3
#define WATCHDOG_HANG_NS (1500 * NSEC_PER_MSEC)
#define WATCHDOG_LIST_MAX 8192

struct list {
	char **v;
	size_t n;
};

static void list_clear(struct list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

static int list_add(struct list *l, const char *rel)
{
	char **v;

	if (l->n == WATCHDOG_LIST_MAX || !(v = realloc(l->v, (l->n + 1) * sizeof(*v))))
		return -ENOMEM;
	l->v = v;
	if (!(l->v[l->n] = strdup(rel)))
		return -ENOMEM;
	l->n++;
	return 0;
}

/* Freezes every cgroup of the list; writes DIR/watchdog.json (atomically) saying what it did. */
static int freeze_all(const char *dir, const struct list *l, const char *reason, int64_t beat_ts)
{
	int64_t ts = time_now_ns();
	json_t *doc, *arr = json_array();
	char path[4200], tmp[4200];
	int frozen = 0;

	/* Every write first (the whole host's sandboxes stop within microseconds), then confirm. */
	for (size_t i = 0; i < l->n; i++)
		cgroup_freeze(l->v[i], 1, 0);
	for (size_t i = 0; i < l->n; i++) {
		int r = cgroup_freeze(l->v[i], 1, 500);

		frozen += r == 0;
		json_array_append_new(arr, json_pack("{s:s, s:s}", "cgroup", l->v[i], "result",
						     r == 0	       ? "ok"
						     : r == -ETIMEDOUT ? "unconfirmed"
								       : strerror(-r)));
	}
	log_warn("%s: froze %d of %zu watched cgroups", reason, frozen, l->n);
	doc = json_pack("{s:s, s:I, s:I, s:o}", "reason", reason, "last_beat_ts",
			(json_int_t)beat_ts, "frozen_ts", (json_int_t)ts, "cgroups", arr);
	snprintf(path, sizeof(path), "%s/watchdog.json", dir);
	snprintf(tmp, sizeof(tmp), "%s/watchdog.json.tmp", dir);
	if (!doc || json_dump_file(doc, tmp, JSON_COMPACT) < 0 || rename(tmp, path) < 0) {
		log_error("could not write %s: the next firebreakd will not thaw these cgroups",
			  path);
		json_decref(doc);
		return 1;
	}
	json_decref(doc);
	return 0;
}

/*
 * One line from the daemon: "q" (a clean stop: 1, nothing to freeze), "l" then "c CGROUP"
 * lines then "." (the watched list, swapped in whole at the "."); anything else is a beat.
 */
static int take_line(const char *line, struct list *cur, struct list *next, int *building)
{
	if (strcmp(line, "q") == 0) {
		log_info("firebreakd stopped cleanly; nothing frozen");
		list_clear(cur);
		list_clear(next);
		return 1;
	} else if (strcmp(line, "l") == 0) {
		list_clear(next);
		*building = 1;
	} else if (*building && strncmp(line, "c ", 2) == 0) {
		if (list_add(next, line + 2) < 0)
			log_error("watched list too long or out of memory: %s missed", line + 2);
	} else if (*building && strcmp(line, ".") == 0) {
		list_clear(cur);
		*cur = *next;
		memset(next, 0, sizeof(*next));
		*building = 0;
	}
	return 0;
}

int watchdog_main(const char *runtime_dir)
{
	struct list cur = { 0 }, next = { 0 };
	int64_t beat_wall = time_now_ns();
	uint64_t beat = time_mono_ns();
	char buf[8192], line[4200];
	size_t line_len = 0;
	int building = 0;

	prctl(PR_SET_NAME, "fb-watchdog");
	log_set_stamp("firebreak-watchdog");
	for (;;) {
		struct pollfd pfd = { .fd = WATCHDOG_FD, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, 100) < 0 && errno != EINTR) {
			log_errno(-errno, "poll");
			return freeze_all(runtime_dir, &cur, "watchdog error", beat_wall);
		}
		/* What waits is read before the clock is looked at: a watchdog that was itself
		 * descheduled must not mistake its own delay for the daemon's. */
		n = pfd.revents & (POLLIN | POLLHUP | POLLERR) ? read(WATCHDOG_FD, buf, sizeof(buf))
							       : -1;
		if (n == 0 || (n < 0 && pfd.revents && errno != EINTR && errno != EAGAIN))
			return freeze_all(runtime_dir, &cur, "firebreakd exited", beat_wall);
		if (n < 0) {
			if (time_mono_ns() - beat > WATCHDOG_HANG_NS)
				return freeze_all(
					runtime_dir, &cur,
					"firebreakd stopped answering (no heartbeat for 1.5 s)",
					beat_wall);
			continue;
		}
		beat = time_mono_ns();
		beat_wall = time_now_ns();
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] != '\n') {
				if (line_len < sizeof(line) - 1)
					line[line_len++] = buf[i];
				continue;
			}
			line[line_len] = '\0';
			line_len = 0;
			if (take_line(line, &cur, &next, &building))
				return 0;
		}
	}
}
