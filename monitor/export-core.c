/* The core's side of the exporter: its state file, its life, its counters. */
#include "export.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon.h"
#include "macro.h"
#include "timeutil.h"

int export_start(struct daemon *d)
{
	char path[PATH_MAX + 32], dir[PATH_MAX];
	int r;

	d->export_state_fd = -1;
	d->export_child = (struct child){ .name = "exporter", .flag = "--exporter", .argv = d->argv,
					  .loop = d->loop, .pidfd = -1 };
	if (!d->cfg.otlp.host[0] && !d->cfg.loki.host[0])
		return 0;
	/* Beside the store: where the exporter got to survives a restart of the machine. */
	strscpy(dir, sizeof(dir), d->cfg.db);
	snprintf(path, sizeof(path), "%s/export.state", dirname(dir));
	d->export_state_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (d->export_state_fd < 0)
		return log_errno(-errno, "exporter state %s", path);
	if ((r = child_start(&d->export_child, &d->export_state_fd, 1)) < 0)
		return log_errno(r, "exporter");
	log_info("exporter child %d: %s%s%s%s%s%s", (int)d->export_child.pid,
		 d->cfg.otlp.host[0] ? "OTLP to " : "", d->cfg.otlp.host,
		 d->cfg.otlp.host[0] ? d->cfg.otlp.path : "", d->cfg.loki.host[0] ? " Loki to " : "",
		 d->cfg.loki.host, d->cfg.loki.host[0] ? d->cfg.loki.path : "");
	return 0;
}

void export_tick(struct daemon *d)
{
	int r;

	if (d->export_state_fd < 0 || !child_due(&d->export_child))
		return;
	if ((r = child_start(&d->export_child, &d->export_state_fd, 1)) < 0) {
		log_errno(r, "exporter");
		d->export_child.restart_at_ns = (int64_t)time_mono_ns() + 10 * (int64_t)NSEC_PER_SEC;
	}
}

void export_stop(struct daemon *d)
{
	child_stop(&d->export_child);
	if (d->export_state_fd >= 0)
		close(d->export_state_fd);
	d->export_state_fd = -1;
}

json_t *export_stats_json(struct daemon *d)
{
	char buf[EXPORT_STATE_SIZE];
	struct export_state s = { 0 };
	ssize_t n;

	if (d->export_state_fd < 0)
		return json_object();
	n = pread(d->export_state_fd, buf, sizeof(buf), 0);
	/* The exporter rewrites the record as this reads it: a torn or unparsable read falls back
	 * to the last good one, and counters never go back (Prometheus would see a reset). */
	if (n > 0 && export_state_decode(buf, (size_t)n, &s) == 0) {
		struct export_state *l = &d->export_last;

#define KEEP_MAX(f) l->f = s.f > l->f ? s.f : l->f
		KEEP_MAX(loki_after);
		KEEP_MAX(otlp_after);
		KEEP_MAX(loki_pushes);
		KEEP_MAX(loki_lines);
		KEEP_MAX(loki_errors);
		KEEP_MAX(otlp_pushes);
		KEEP_MAX(otlp_spans);
		KEEP_MAX(otlp_errors);
#undef KEEP_MAX
	}
	s = d->export_last;
	return json_pack("{s:{s:b, s:I, s:I, s:I, s:I}, s:{s:b, s:I, s:I, s:I, s:I}, s:i, s:I}",
			 "otlp", "on", d->cfg.otlp.host[0] != 0, "pushes",
			 (json_int_t)s.otlp_pushes, "spans", (json_int_t)s.otlp_spans, "errors",
			 (json_int_t)s.otlp_errors, "after", (json_int_t)s.otlp_after, "loki", "on",
			 d->cfg.loki.host[0] != 0, "pushes", (json_int_t)s.loki_pushes, "lines",
			 (json_int_t)s.loki_lines, "errors", (json_int_t)s.loki_errors, "after",
			 (json_int_t)s.loki_after, "child_pid", (int)d->export_child.pid, "restarts",
			 (json_int_t)d->export_child.restarts);
}
