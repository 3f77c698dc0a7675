/* What the daemon's handlers share: error replies, and the counters of the daemon's own parts. */
#include "daemon.h"

#include <stddef.h>
#include <stdio.h>

#include "counters.h"
#include "macro.h"

char *daemon_error_reply(uint64_t lineno, const char *cls, const char *msg)
{
	char clean[512];
	json_t *obj;
	char *text;
	size_t i;

	/* Error texts may quote the peer's bytes: keep them printable ASCII, so valid JSON. */
	for (i = 0; msg[i] && i + 1 < sizeof(clean); i++)
		clean[i] = (msg[i] >= 0x20 && msg[i] < 0x7f) ? msg[i] : '?';
	clean[i] = '\0';
	obj = json_pack("{s:b, s:I, s:s, s:s}", "ok", 0, "line", (json_int_t)lineno, "error", clean,
			"class", cls);
	if (!obj)
		return NULL;
	text = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(obj);
	return text;
}

static uint64_t sandboxes_known(const void *state)
{
	return registry_count(((const struct daemon *)state)->registry);
}

static const struct counter_def daemon_counters[] = {
	{ "sandboxes", COUNTER_GAUGE, "sandboxes the monitor knows", .read = sandboxes_known },
};

static const struct counter_def self_counters[] = {
	{ "started_ts", COUNTER_GAUGE, "when firebreakd started (ns since the epoch)",
	  COUNTER_FAMILY_START_TIME, COUNTER_AT(struct daemon_self, started_ns) },
};

static const struct counter_def writer_counters[] = {
	{ "ops", COUNTER_TOTAL, "operations applied and committed",
	  COUNTER_AT(struct writer_stats, ops) },
	{ "events", COUNTER_TOTAL, "events appended", COUNTER_AT(struct writer_stats, events) },
	{ "batches", COUNTER_TOTAL, "transactions committed",
	  COUNTER_AT(struct writer_stats, batches) },
	{ "max_batch", COUNTER_GAUGE, "the largest batch so far",
	  COUNTER_AT(struct writer_stats, max_batch) },
	{ "pending", COUNTER_GAUGE, "operations queued now",
	  COUNTER_AT(struct writer_stats, pending) },
	{ "pending_bytes", COUNTER_GAUGE,
	  "memory the queued and in-flight operations hold (bounded by queue_max_bytes)",
	  COUNTER_AT(struct writer_stats, pending_bytes) },
	{ "full", COUNTER_TOTAL,
	  "times the queue reached queue_max or queue_max_bytes and ingest paused (backpressure)",
	  COUNTER_AT(struct writer_stats, full) },
	{ "trims", COUNTER_TOTAL, "times freed memory was given back to the kernel after a backlog",
	  COUNTER_AT(struct writer_stats, trims) },
	{ "failed_ops", COUNTER_TOTAL, "operations of a batch whose commit failed",
	  COUNTER_AT(struct writer_stats, failed_ops) },
	{ "lost_events", COUNTER_TOTAL, "events among the failed operations", COUNTER_FAMILY_LOST,
	  "store", COUNTER_AT(struct writer_stats, lost_events) },
	{ "retention_deleted", COUNTER_TOTAL, "events retention removed",
	  COUNTER_AT(struct writer_stats, retention_deleted) },
	{ "busy_ns", COUNTER_TOTAL, "time spent applying and committing batches",
	  COUNTER_AT(struct writer_stats, busy_ns) },
};

static const struct counter_def socket_counters[] = {
	{ "clients", COUNTER_GAUGE, "clients connected now",
	  COUNTER_AT(struct lineserver_stats, clients) },
	{ "accepted", COUNTER_TOTAL, "connections accepted",
	  COUNTER_AT(struct lineserver_stats, accepted) },
	{ "refused_peer", COUNTER_TOTAL, "connections of neither root nor the firebreak group",
	  COUNTER_AT(struct lineserver_stats, refused_peer) },
	{ "refused_full", COUNTER_TOTAL, "connections refused at the client cap",
	  COUNTER_AT(struct lineserver_stats, refused_full) },
	{ "refused_uid", COUNTER_TOTAL, "connections refused at one uid's client cap",
	  COUNTER_AT(struct lineserver_stats, refused_uid) },
	{ "closed_partial", COUNTER_TOTAL, "clients closed for a line begun and never finished",
	  COUNTER_AT(struct lineserver_stats, closed_partial) },
	{ "closed_idle", COUNTER_TOTAL, "clients closed for silence",
	  COUNTER_AT(struct lineserver_stats, closed_idle) },
	{ "closed_stalled", COUNTER_TOTAL, "clients closed for not reading their replies",
	  COUNTER_AT(struct lineserver_stats, closed_stalled) },
	{ "lines", COUNTER_TOTAL, "lines read", COUNTER_AT(struct lineserver_stats, lines) },
	{ "oversize", COUNTER_TOTAL, "lines over the cap",
	  COUNTER_AT(struct lineserver_stats, oversize) },
	{ "replies_dropped", COUNTER_TOTAL, "replies whose client had gone",
	  COUNTER_AT(struct lineserver_stats, replies_dropped) },
};

static void writer_snapshot(const void *state, void *buf)
{
	writer_get_stats((struct writer *)state, buf);
}

static void socket_snapshot(const void *state, void *buf)
{
	lineserver_get_stats((struct lineserver *)state, buf);
}

int daemon_add_counters(struct daemon *d)
{
	int r;

	if ((r = counters_add(d->counters, "", self_counters, ARRAY_SIZE(self_counters), d->self)) <
		    0 ||
	    (r = counters_add(d->counters, "", daemon_counters, ARRAY_SIZE(daemon_counters), d)) <
		    0 ||
	    (r = counters_add_snapshot(d->counters, "writer", writer_counters,
				       ARRAY_SIZE(writer_counters), d->writer,
				       sizeof(struct writer_stats), writer_snapshot)) < 0 ||
	    (r = counters_add_snapshot(d->counters, "trace_socket", socket_counters,
				       ARRAY_SIZE(socket_counters), d->trace,
				       sizeof(struct lineserver_stats), socket_snapshot)) < 0)
		return r;
	return counters_add_snapshot(d->counters, "control_socket", socket_counters,
				     ARRAY_SIZE(socket_counters), d->control,
				     sizeof(struct lineserver_stats), socket_snapshot);
}

json_t *daemon_stats_json(struct daemon *d)
{
	return counters_stats_json(d->counters);
}
