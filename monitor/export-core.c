/* The core's side of the exporter: its state file, its life, its counters. */
#include "export.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "child.h"
#include "counters.h"
#include "daemon.h"
#include "macro.h"
#include "timeutil.h"

/* The core's side: the exporter child and its state file. */
struct export_core {
	const struct config *cfg;
	struct child child;
	int state_fd;		  /* its state file, or -1 (no endpoint) */
	struct export_state last; /* as last read whole: counters only grow */
};

int export_start(struct daemon *d)
{
	char path[PATH_MAX + 32], dir[PATH_MAX];
	struct export_core *x;
	int r;

	if (!(x = d->export = calloc(1, sizeof(*x))))
		return -ENOMEM;
	x->cfg = d->cfg;
	x->state_fd = -1;
	x->child = (struct child){ .name = "exporter",
				   .flag = "--exporter",
				   .argv = d->self->argv,
				   .loop = d->loop,
				   .pidfd = -1 };
	if (!d->cfg->otlp.host[0] && !d->cfg->loki.host[0])
		return 0;
	/* Beside the store: where the exporter got to survives a restart of the machine. */
	strscpy(dir, sizeof(dir), d->cfg->db);
	snprintf(path, sizeof(path), "%s/export.state", dirname(dir));
	x->state_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (x->state_fd < 0)
		return log_errno(-errno, "exporter state %s", path);
	if ((r = child_start(&x->child, &x->state_fd, 1)) < 0)
		return log_errno(r, "exporter");
	log_info("exporter child %d: %s%s%s%s%s%s", (int)x->child.pid,
		 d->cfg->otlp.host[0] ? "OTLP to " : "", d->cfg->otlp.host,
		 d->cfg->otlp.host[0] ? d->cfg->otlp.path : "",
		 d->cfg->loki.host[0] ? " Loki to " : "", d->cfg->loki.host,
		 d->cfg->loki.host[0] ? d->cfg->loki.path : "");
	return 0;
}

void export_tick(struct daemon *d)
{
	struct export_core *x = d->export;
	int r;

	if (x->state_fd < 0 || !child_due(&x->child))
		return;
	if ((r = child_start(&x->child, &x->state_fd, 1)) < 0) {
		log_errno(r, "exporter");
		x->child.restart_at_ns = (int64_t)time_mono_ns() + 10 * (int64_t)NSEC_PER_SEC;
	}
}

void export_stop(struct daemon *d)
{
	struct export_core *x = d->export;

	if (!x)
		return;
	child_stop(&x->child);
	if (x->state_fd >= 0)
		close(x->state_fd);
	x->state_fd = -1;
}

void export_free(struct daemon *d)
{
	export_stop(d);
	if (d->export)
		counters_remove(d->counters, d->export);
	free(d->export);
	d->export = NULL;
}

/*
 * The exporter's counters, read from its state file. The exporter rewrites the record as this
 * reads it: a torn or unparsable read falls back to the last good one, and counters never go
 * back (Prometheus would see a reset).
 */
static void export_snapshot(const void *state, void *buf)
{
	struct export_core *x = (struct export_core *)state;
	struct export_state *l = &x->last, s = { 0 };
	char text[EXPORT_STATE_SIZE];
	ssize_t n = x->state_fd < 0 ? -1 : pread(x->state_fd, text, sizeof(text), 0);

	if (n > 0 && export_state_decode(text, (size_t)n, &s) == 0) {
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
	memcpy(buf, l, sizeof(*l));
}

static json_t *export_status(const void *state)
{
	const struct export_core *x = state;

	if (x->state_fd < 0)
		return json_object();
	return json_pack("{s:{s:b}, s:{s:b}, s:i, s:I}", "otlp", "on", x->cfg->otlp.host[0] != 0,
			 "loki", "on", x->cfg->loki.host[0] != 0, "child_pid", (int)x->child.pid,
			 "restarts", (json_int_t)x->child.restarts);
}

/* The OTLP target's counters, then Loki's: one registration takes those configured. */
static const struct counter_def export_counters[] = {
	{ "otlp.pushes", COUNTER_TOTAL, "OTLP pushes delivered", COUNTER_FAMILY_EXPORT_PUSHES,
	  "otlp", COUNTER_AT(struct export_state, otlp_pushes) },
	{ "otlp.spans", COUNTER_TOTAL, "OTLP spans delivered", COUNTER_FAMILY_EXPORT_ITEMS, "otlp",
	  COUNTER_AT(struct export_state, otlp_spans) },
	{ "otlp.errors", COUNTER_TOTAL, "OTLP pushes not delivered", COUNTER_FAMILY_EXPORT_ERRORS,
	  "otlp", COUNTER_AT(struct export_state, otlp_errors) },
	{ "otlp.after", COUNTER_GAUGE, "the last incident delivered",
	  COUNTER_AT(struct export_state, otlp_after) },
	{ "loki.pushes", COUNTER_TOTAL, "Loki pushes delivered", COUNTER_FAMILY_EXPORT_PUSHES,
	  "loki", COUNTER_AT(struct export_state, loki_pushes) },
	{ "loki.lines", COUNTER_TOTAL, "Loki lines delivered", COUNTER_FAMILY_EXPORT_ITEMS, "loki",
	  COUNTER_AT(struct export_state, loki_lines) },
	{ "loki.errors", COUNTER_TOTAL, "Loki pushes not delivered", COUNTER_FAMILY_EXPORT_ERRORS,
	  "loki", COUNTER_AT(struct export_state, loki_errors) },
	{ "loki.after", COUNTER_GAUGE, "the last event delivered",
	  COUNTER_AT(struct export_state, loki_after) },
};
#define EXPORT_OTLP_COUNTERS 4

/* The status first: the counters of a configured target join its object, read from the state
 * file once for both targets. */
int export_add_counters(struct daemon *d)
{
	struct export_core *x = d->export;
	size_t from = d->cfg->otlp.host[0] ? 0 : EXPORT_OTLP_COUNTERS;
	size_t to = d->cfg->loki.host[0] ? ARRAY_SIZE(export_counters) : EXPORT_OTLP_COUNTERS;
	int r = counters_add_status(d->counters, "exporters", export_status, x);

	if (r == 0 && x->state_fd >= 0 && from < to)
		r = counters_add_snapshot(d->counters, "exporters", export_counters + from,
					  to - from, x, sizeof(struct export_state),
					  export_snapshot);
	return r;
}
