/* What the daemon's handlers share: error replies and the counters' JSON. */
#include "daemon.h"

#include "hashmap.h"

#include <stdio.h>

#include "macro.h"
#include "collectors/nflog/nflog-events.h"
#include "collectors/proc/proc-tracer.h"
#include "export.h"
#include "http.h"

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

static json_t *lineserver_json(struct lineserver *ls)
{
	struct lineserver_stats s;

	lineserver_get_stats(ls, &s);
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "clients",
			 (json_int_t)s.clients, "accepted", (json_int_t)s.accepted, "refused_peer",
			 (json_int_t)s.refused_peer, "refused_full", (json_int_t)s.refused_full,
			 "closed_idle", (json_int_t)s.closed_idle, "closed_stalled",
			 (json_int_t)s.closed_stalled, "lines", (json_int_t)s.lines, "oversize",
			 (json_int_t)s.oversize, "replies_dropped", (json_int_t)s.replies_dropped);
}

static json_t *writer_json(struct writer *w)
{
	struct writer_stats ws;

	writer_get_stats(w, &ws);
	return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "ops", (json_int_t)ws.ops,
			 "events", (json_int_t)ws.events, "batches", (json_int_t)ws.batches,
			 "max_batch", (json_int_t)ws.max_batch, "pending", (json_int_t)ws.pending,
			 "failed_ops", (json_int_t)ws.failed_ops, "lost_events",
			 (json_int_t)ws.lost_events, "retention_deleted",
			 (json_int_t)ws.retention_deleted, "busy_ns", (json_int_t)ws.busy_ns);
}

/* The process tracer's stages: read from the ring, stored, waiting, dropped, lost in the kernel. */
static json_t *proc_trace_json(struct daemon *d)
{
	json_t *o = json_pack("{s:I, s:I, s:I, s:I, s:I}", "read", (json_int_t)d->proc_read,
			      "read_ns", (json_int_t)d->proc_read_ns, "stored",
			      (json_int_t)d->proc_events, "pending", (json_int_t)d->n_proc_pending,
			      "unattributed", (json_int_t)d->proc_unattributed);

	for (unsigned k = 0; o && k < PROC_TRACE_KINDS; k++) {
		char name[32];

		snprintf(name, sizeof(name), "lost_%s", proc_tracer_kind_name(k));
		json_object_set_new(o, name, json_integer((json_int_t)d->proc_lost[k]));
	}
	return o;
}

json_t *daemon_stats_json(struct daemon *d)
{
	json_t *refused = json_object();

	for (int e = TRACE_ERR_TOO_LONG; e < _TRACE_ERR_MAX; e++)
		json_object_set_new(refused, trace_error_to_string(e),
				    json_integer((json_int_t)d->trace_counters.refused[e]));
	json_t *o = json_pack(
		"{s:I, s:I, s:{s:I, s:I, s:I, s:o}, s:o, "
		"s:o, s:o, s:I, s:I, s:o, s:{s:I, s:I, s:I}, s:{s:I, s:I, s:I, s:I}, s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}, s:{s:I, s:I, s:I, s:I}}",
		"started_ts", (json_int_t)d->started_ns, "sandboxes",
		(json_int_t)registry_count(d->registry), "trace", "accepted",
		(json_int_t)d->trace_counters.accepted, "duplicates",
		(json_int_t)d->trace_counters.duplicates, "store_failed",
		(json_int_t)d->trace_counters.store_failed, "refused", refused, "writer",
		writer_json(d->writer),
		"trace_socket", lineserver_json(d->trace), "control_socket",
		lineserver_json(d->control), "control_refused", (json_int_t)d->control_refused,
		"stats_rounds_skipped", (json_int_t)d->stats_rounds_skipped, "proc_trace",
		proc_trace_json(d), "detectors", "sandboxes",
		(json_int_t)(d->detect ? hashmap_size(d->detect) : 0), "verdicts",
		(json_int_t)d->verdicts, "dropped", (json_int_t)d->verdicts_dropped,
		"seccomp", "stored",
		(json_int_t)d->seccomp_events, "unattributed", (json_int_t)d->seccomp_unattributed,
		"unparsed", (json_int_t)d->seccomp_unparsed, "overruns",
		(json_int_t)d->seccomp_overruns, "nflog", "packets", (json_int_t)d->nflog_packets,
		"packets_stored", (json_int_t)d->nflog_packets_stored, "pending",
		(json_int_t)nflog_events_pending(d), "events", (json_int_t)d->nflog_events,
		"unattributed", (json_int_t)d->nflog_unattributed, "unparsed",
		(json_int_t)d->nflog_unparsed, "lost", (json_int_t)d->nflog_lost, "kernel_drops",
		(json_int_t)d->nflog_kernel_drops, "syscall_recorder", "sandboxes",
		(json_int_t)d->n_recorders, "stored", (json_int_t)d->syscall_events, "unattributed",
		(json_int_t)d->syscall_unattributed, "lost", (json_int_t)d->syscall_lost);

	if (o)
		json_object_set_new(o, "http", http_stats_json(d));
	if (o)
		json_object_set_new(o, "exporters", export_stats_json(d));
	return o;
}
