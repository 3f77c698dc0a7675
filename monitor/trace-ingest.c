/*
 * The trace socket: the agent harness's tool-call trace, one JSON line per phase, each answered
 * with {"ok":true,"line":N} once durable or {"ok":false,"line":N,"error":...} (docs/trace.md).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "counters.h"
#include "daemon.h"
#include "macro.h"
#include "timeutil.h"

/* What became of the trace lines, and the limit on logging bad ones. */
struct trace_ingest {
	uint64_t accepted;   /* stored as new */
	uint64_t duplicates; /* already stored: acknowledged, not stored again */
	uint64_t refused[_TRACE_ERR_MAX];
	uint64_t store_failed;
	struct log_ratelimit rl;
	/* The refusal counters, one per class, named by the parser's own table (lib/trace.c). */
	struct counter_def refused_defs[_TRACE_ERR_MAX];
	char refused_names[_TRACE_ERR_MAX][48];
};

static const struct counter_def counters[] = {
	{ "accepted", COUNTER_TOTAL, "trace lines stored as new",
	  COUNTER_AT(struct trace_ingest, accepted) },
	{ "duplicates", COUNTER_TOTAL, "trace lines already stored: acknowledged only",
	  COUNTER_AT(struct trace_ingest, duplicates) },
	{ "store_failed", COUNTER_TOTAL, "trace lines the store could not take",
	  COUNTER_AT(struct trace_ingest, store_failed) },
};

int trace_ingest_init(struct daemon *d)
{
	struct trace_ingest *t = calloc(1, sizeof(*t));
	size_t n = 0;
	int r;

	if (!t)
		return -ENOMEM;
	t->rl.interval_ns = 10ULL * NSEC_PER_SEC;
	t->rl.burst = 20;
	for (int e = TRACE_ERR_TOO_LONG; e < _TRACE_ERR_MAX; e++, n++) {
		snprintf(t->refused_names[n], sizeof(t->refused_names[n]), "refused.%s",
			 trace_error_to_string(e));
		t->refused_defs[n] =
			(struct counter_def){ t->refused_names[n], COUNTER_TOTAL,
					      "trace lines refused, by class",
					      .offset = offsetof(struct trace_ingest, refused[e]) };
	}
	d->trace_ingest = t;
	if ((r = counters_add(d->counters, "trace", counters, ARRAY_SIZE(counters), t)) < 0 ||
	    (r = counters_add(d->counters, "trace", t->refused_defs, n, t)) < 0)
		return r;
	return 0;
}

void trace_ingest_free(struct daemon *d)
{
	if (d->trace_ingest)
		counters_remove(d->counters, d->trace_ingest);
	free(d->trace_ingest);
	d->trace_ingest = NULL;
}

static void refuse(struct daemon *d, struct lineserver *ls, uint64_t token, uint64_t lineno,
		   enum trace_error e, const char *msg)
{
	_cleanup_free_ char *reply = daemon_error_reply(lineno, trace_error_to_string(e), msg);

	d->trace_ingest->refused[e]++;
	if (log_ratelimit_ok(&d->trace_ingest->rl))
		log_warn("trace: line %llu refused (%s): %s", (unsigned long long)lineno,
			 trace_error_to_string(e), msg);
	if (!reply || lineserver_reply(ls, token, reply) < 0)
		log_error("trace: could not queue a refusal");
}

static void trace_line(struct lineserver *ls, uint64_t token, uint64_t lineno, const char *line,
		       size_t len, void *data)
{
	struct daemon *d = data;
	struct writer_op op = { .type = WRITER_OP_TRACE, .token = token };
	struct store_sandbox *sb;
	char err[256];
	enum trace_error e;
	int r;

	if (!line) {
		snprintf(err, sizeof(err), "line is over %zu bytes", len);
		refuse(d, ls, token, lineno, TRACE_ERR_TOO_LONG, err);
		return;
	}
	op.trace = calloc(1, sizeof(*op.trace));
	if (!op.trace) {
		refuse(d, ls, token, lineno, TRACE_ERR_JSON, "out of memory");
		return;
	}
	e = trace_parse_line(line, len, op.trace, err, sizeof(err));
	if (e != TRACE_OK) {
		writer_op_clear(&op);
		refuse(d, ls, token, lineno, e, err);
		return;
	}
	sb = registry_find(d->registry, op.trace->sandbox);
	if (!sb) {
		snprintf(err, sizeof(err), "unknown sandbox \"%s\"", op.trace->sandbox);
		writer_op_clear(&op);
		refuse(d, ls, token, lineno, TRACE_ERR_UNKNOWN_SANDBOX, err);
		return;
	}
	r = trace_record_to_event(op.trace, time_now_ns(), &op.ev);
	if (r < 0) {
		writer_op_clear(&op);
		refuse(d, ls, token, lineno, TRACE_ERR_JSON, "out of memory");
		return;
	}
	op.ev.sandbox_id = sb->id;
	r = sink_submit(d->sink, &op);
	if (r < 0)
		log_warn_errno(r, "trace: line %llu not queued", (unsigned long long)lineno);
}

static char *trace_reply(const struct writer_completion *c, uint64_t lineno, void *data)
{
	struct daemon *d = data;
	char buf[96];

	/* A refusal was formatted when the line was read, with the line number. */
	if (c->msg && c->result >= 0)
		return strdup(c->msg);
	switch (c->result) {
	case STORE_TRACE_NEW:
		d->trace_ingest->accepted++;
		snprintf(buf, sizeof(buf), "{\"ok\":true,\"line\":%llu}",
			 (unsigned long long)lineno);
		return strdup(buf);
	case STORE_TRACE_DUPLICATE:
		d->trace_ingest->duplicates++;
		snprintf(buf, sizeof(buf), "{\"ok\":true,\"line\":%llu,\"duplicate\":true}",
			 (unsigned long long)lineno);
		return strdup(buf);
	case STORE_TRACE_CONFLICT:
		d->trace_ingest->refused[TRACE_ERR_CONFLICT]++;
		return daemon_error_reply(lineno, trace_error_to_string(TRACE_ERR_CONFLICT),
					  "this call id is already recorded with another step or "
					  "tool");
	default:
		d->trace_ingest->store_failed++;
		return daemon_error_reply(lineno, "store", c->msg ? c->msg : "store error");
	}
}

const struct lineserver_ops trace_ingest_ops = {
	.line = trace_line,
	.reply = trace_reply,
};
