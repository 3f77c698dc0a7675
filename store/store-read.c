/* Queries for readers: sandboxes, timelines, counts. Statements are prepared per call. */
#include "store-internal.h"

#include <stdio.h>

#include "log.h"
#include "macro.h"

static void copy_column(sqlite3_stmt *st, int col, char *dst, size_t size)
{
	const char *v = (const char *)sqlite3_column_text(st, col);

	dst[0] = '\0';
	if (v)
		snprintf(dst, size, "%s", v);
}

/*
 * Ends a loop over st's rows, which stopped at rc, or at a callback's non-zero r: finalizes st
 * and returns r, or -errno (logged with what) if SQLite failed.
 */
static int rows_end(struct store *s, sqlite3_stmt *st, int rc, int r, const char *what)
{
	if (r == 0 && rc != SQLITE_DONE && rc != SQLITE_ROW)
		r = store_error(s, rc, what);
	sqlite3_finalize(st);
	return r;
}

/* Prepares sql for one call with ?1 bound to id; 0 and *ret, or -errno (logged with what). */
static int prepare_for(struct store *s, const char *sql, int64_t id, const char *what,
		       sqlite3_stmt **ret)
{
	int r = store_prepare(s, sql, what, ret);

	if (r == 0)
		sqlite3_bind_int64(*ret, 1, id);
	return r;
}

static void read_sandbox(sqlite3_stmt *st, struct store_sandbox *sb)
{
	memset(sb, 0, sizeof(*sb));
	sb->id = sqlite3_column_int64(st, 0);
	copy_column(st, 1, sb->name, sizeof(sb->name));
	copy_column(st, 2, sb->state, sizeof(sb->state));
	sb->created_ts = sqlite3_column_int64(st, 3);
	sb->updated_ts = sqlite3_column_int64(st, 4);
	copy_column(st, 5, sb->policy_hash, sizeof(sb->policy_hash));
	copy_column(st, 6, sb->cgroup, sizeof(sb->cgroup));
}

#define SANDBOX_COLUMNS "id, name, state, created_ts, updated_ts, policy_hash, cgroup"

int store_sandbox_list(struct store *s, int (*cb)(const struct store_sandbox *sb, void *data),
		       void *data)
{
	static const char sql[] =
		"SELECT " SANDBOX_COLUMNS ", "
		"(SELECT count(*) FROM steps WHERE steps.sandbox_id = sandboxes.id), "
		"(SELECT max(ts) FROM events WHERE events.sandbox_id = sandboxes.id) "
		"FROM sandboxes ORDER BY id";
	sqlite3_stmt *st;
	int rc, r;

	if ((r = store_prepare(s, sql, "prepare sandbox list", &st)) < 0)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_sandbox sb;

		read_sandbox(st, &sb);
		sb.steps = sqlite3_column_int64(st, 7);
		sb.last_ts = sqlite3_column_int64(st, 8);
		r = cb(&sb, data);
		if (r != 0)
			break;
	}
	return rows_end(s, st, rc, r, "list sandboxes");
}

int store_sandbox_find(struct store *s, const char *name, struct store_sandbox *ret)
{
	static const char sql[] = "SELECT " SANDBOX_COLUMNS " FROM sandboxes WHERE name = ?1";
	sqlite3_stmt *st;
	int rc, r;

	if ((r = store_prepare(s, sql, "prepare sandbox find", &st)) < 0)
		return r;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		read_sandbox(st, ret);
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return 0;
	return rc == SQLITE_DONE ? -ENOENT : store_error(s, rc, "find sandbox");
}

int store_sandbox_max_id(struct store *s, int64_t *ret)
{
	return store_query_int(s, "SELECT coalesce(max(id), 0) FROM sandboxes", ret);
}

static void read_event(sqlite3_stmt *st, struct event *ev)
{
	const char *source;

	event_init(ev);
	ev->id = sqlite3_column_int64(st, 0);
	ev->ts = sqlite3_column_int64(st, 1);
	ev->sandbox_id = sqlite3_column_int64(st, 2);
	copy_column(st, 3, ev->sandbox, sizeof(ev->sandbox));
	if (sqlite3_column_type(st, 4) != SQLITE_NULL)
		ev->step = sqlite3_column_int64(st, 4);
	copy_column(st, 5, ev->tool, sizeof(ev->tool));
	source = (const char *)sqlite3_column_text(st, 6);
	ev->source = source ? event_source_from_string(source) : EVENT_SOURCE_MONITOR;
	if ((int)ev->source < 0)
		ev->source = EVENT_SOURCE_MONITOR;
	copy_column(st, 7, ev->kind, sizeof(ev->kind));
	ev->pid = sqlite3_column_int(st, 8);
	ev->ppid = sqlite3_column_int(st, 9);
	if (sqlite3_column_type(st, 10) != SQLITE_NULL)
		ev->uid = sqlite3_column_int64(st, 10);
	copy_column(st, 11, ev->comm, sizeof(ev->comm));
	/* Borrowed from SQLite for the duration of the callback; event_clear must not free it. */
	ev->fields = (char *)sqlite3_column_text(st, 12);
	ev->fields_len = ev->fields ? (size_t)sqlite3_column_bytes(st, 12) : 0;
}

/* Runs a prepared event query (the timeline's columns), calling cb per row. */
static int each_event(struct store *s, sqlite3_stmt *st, const char *what,
		      int (*cb)(const struct event *ev, void *data), void *data)
{
	int rc, r = 0;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct event ev;

		read_event(st, &ev);
		if ((r = cb(&ev, data)) != 0)
			break;
	}
	return rows_end(s, st, rc, r, what);
}

/* An event query's columns (read_event's order), its table and the join for the sandbox's name;
 * an index hint goes between EVENT_SELECT and EVENT_JOIN. */
#define EVENT_SELECT                                                                               \
	"SELECT e.id, e.ts, e.sandbox_id, s.name, e.step, e.tool, e.source, e.kind, e.pid, "       \
	"e.ppid, e.uid, e.comm, e.fields FROM events e "
#define EVENT_JOIN "LEFT JOIN sandboxes s ON s.id = e.sandbox_id "
#define EVENT_COLUMNS EVENT_SELECT EVENT_JOIN

int store_timeline(struct store *s, const struct store_timeline_query *q,
		   int (*cb)(const struct event *ev, void *data), void *data)
{
	char sql[1024];
	sqlite3_stmt *st;
	int r;
	int by_step = q->step_lo != EVENT_STEP_NONE;

	/* Values are bound, never spliced; only the choice of clauses varies. A step range scans
	 * the row ids its steps' spans cover, then sorts by time. */
	snprintf(sql, sizeof(sql),
		 EVENT_SELECT "%s " EVENT_JOIN
			      "WHERE e.sandbox_id = ?1 AND e.ts >= ?2 AND e.ts < ?3 "
			      "AND e.kind NOT IN ('detectors.start', 'detectors.stop') %s %s "
			      "ORDER BY e.ts, e.id %s",
		 by_step ? "" : "INDEXED BY events_by_sandbox_ts",
		 q->after_id > 0 ? "AND (e.ts > ?7 OR e.id > ?8)" : "",
		 by_step ? "AND e.step BETWEEN ?4 AND ?5 AND e.id BETWEEN "
			   "(SELECT min(first_id) FROM step_spans WHERE sandbox_id = ?1 AND step "
			   "BETWEEN ?4 AND ?5) AND (SELECT max(last_id) FROM step_spans WHERE "
			   "sandbox_id = ?1 AND step BETWEEN ?4 AND ?5)"
			 : "",
		 q->limit > 0 ? "LIMIT ?6" : "");
	if ((r = store_prepare(s, sql, "prepare timeline", &st)) < 0)
		return r;
	sqlite3_bind_int64(st, 1, q->sandbox_id);
	sqlite3_bind_int64(st, 2,
			   q->after_id > 0 && q->after_ts > q->since ? q->after_ts : q->since);
	sqlite3_bind_int64(st, 3, q->until > 0 ? q->until : INT64_MAX);
	if (by_step) {
		sqlite3_bind_int64(st, 4, q->step_lo);
		sqlite3_bind_int64(st, 5, q->step_hi);
	}
	if (q->limit > 0)
		sqlite3_bind_int64(st, 6, q->limit);
	if (q->after_id > 0) {
		sqlite3_bind_int64(st, 7, q->after_ts);
		sqlite3_bind_int64(st, 8, q->after_id);
	}
	return each_event(s, st, "read timeline", cb, data);
}

int store_events_after(struct store *s, int64_t after_id, int64_t limit,
		       int (*cb)(const struct event *ev, void *data), void *data)
{
	static const char sql[] = EVENT_COLUMNS "WHERE e.id > ?1 ORDER BY e.id LIMIT ?2";
	sqlite3_stmt *st;
	int r;

	if ((r = prepare_for(s, sql, after_id, "prepare events after", &st)) < 0)
		return r;
	sqlite3_bind_int64(st, 2, limit > 0 ? limit : INT64_MAX);
	return each_event(s, st, "read events after", cb, data);
}

int store_sandbox_events(struct store *s, int64_t sandbox_id, const char *kind_prefix,
			 int (*cb)(const struct event *ev, void *data), void *data)
{
	/* In row id order: the table itself, filtered, is cheaper than the time index sorted. */
	static const char all[] =
		EVENT_SELECT "NOT INDEXED " EVENT_JOIN "WHERE e.sandbox_id = ?1 ORDER BY e.id";
	static const char some[] = EVENT_COLUMNS "WHERE e.sandbox_id = ?1 AND "
						 "substr(e.kind, 1, length(?2)) = ?2 ORDER BY e.id";
	sqlite3_stmt *st;
	int r;

	if ((r = prepare_for(s, kind_prefix ? some : all, sandbox_id, "prepare sandbox events",
			     &st)) < 0)
		return r;
	if (kind_prefix)
		sqlite3_bind_text(st, 2, kind_prefix, -1, SQLITE_TRANSIENT);
	return each_event(s, st, "read sandbox events", cb, data);
}

int store_event_latest(struct store *s, int64_t sandbox_id, const char *kind,
		       int (*cb)(const struct event *ev, void *data), void *data)
{
	/* Backwards along the sandbox's time index: the latest sample is near the end. */
	static const char sql[] =
		EVENT_SELECT "INDEXED BY events_by_sandbox_ts " EVENT_JOIN
			     "WHERE e.sandbox_id = ?1 AND e.kind = ?2 AND e.step IS NULL "
			     "ORDER BY e.ts DESC LIMIT 1";
	sqlite3_stmt *st;
	int r;

	if ((r = prepare_for(s, sql, sandbox_id, "prepare latest event", &st)) < 0)
		return r;
	sqlite3_bind_text(st, 2, kind, -1, SQLITE_TRANSIENT);
	return each_event(s, st, "read latest event", cb, data);
}

int store_incident_detections(struct store *s, int64_t incident_id,
			      int (*cb)(const struct store_detection_row *det, void *data),
			      void *data)
{
	static const char sql[] = "SELECT id, ts, step, rule, severity, policy_hash, event_ids, "
				  "reason FROM detections INDEXED BY detections_by_incident "
				  "WHERE incident_id = ?1 ORDER BY ts, id";
	sqlite3_stmt *st;
	int rc, r;

	if ((r = prepare_for(s, sql, incident_id, "prepare detections", &st)) < 0)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_detection_row det = { 0 };

		det.id = sqlite3_column_int64(st, 0);
		det.ts = sqlite3_column_int64(st, 1);
		det.step = sqlite3_column_type(st, 2) == SQLITE_NULL ? EVENT_STEP_NONE
								     : sqlite3_column_int64(st, 2);
		copy_column(st, 3, det.rule, sizeof(det.rule));
		copy_column(st, 4, det.severity, sizeof(det.severity));
		copy_column(st, 5, det.policy_hash, sizeof(det.policy_hash));
		det.event_ids = (const char *)sqlite3_column_text(st, 6);
		det.reason = (const char *)sqlite3_column_text(st, 7);
		if ((r = cb(&det, data)) != 0)
			break;
	}
	return rows_end(s, st, rc, r, "read detections");
}

int store_steps(struct store *s, int64_t sandbox_id, int64_t since, int64_t until,
		int (*cb)(const struct store_step *st, void *data), void *data)
{
	static const char sql[] =
		"SELECT step, call_id, tool, coalesce(start_ts, 0), coalesce(end_ts, 0), "
		"exit_code, "
		"coalesce(error_type, ''), coerced, coalesce(traceparent, '') FROM steps "
		"WHERE sandbox_id = ?1 AND coalesce(end_ts, start_ts, 0) >= ?2 "
		"AND coalesce(start_ts, end_ts, 0) < ?3 ORDER BY step, call_id";
	sqlite3_stmt *st;
	int rc, r;

	if ((r = prepare_for(s, sql, sandbox_id, "prepare steps", &st)) < 0)
		return r;
	sqlite3_bind_int64(st, 2, since);
	sqlite3_bind_int64(st, 3, until > 0 ? until : INT64_MAX);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_step row = { 0 };

		row.step = sqlite3_column_int64(st, 0);
		copy_column(st, 1, row.call_id, sizeof(row.call_id));
		copy_column(st, 2, row.tool, sizeof(row.tool));
		row.start_ts = sqlite3_column_int64(st, 3);
		row.end_ts = sqlite3_column_int64(st, 4);
		row.exit_code = sqlite3_column_type(st, 5) == SQLITE_NULL
					? INT64_MIN
					: sqlite3_column_int64(st, 5);
		copy_column(st, 6, row.error_type, sizeof(row.error_type));
		row.coerced = sqlite3_column_int(st, 7);
		copy_column(st, 8, row.traceparent, sizeof(row.traceparent));
		if ((r = cb(&row, data)) != 0)
			break;
	}
	return rows_end(s, st, rc, r, "read steps");
}

int store_max_id(struct store *s, const char *table, int64_t *ret)
{
	sqlite3_stmt *st;
	int rc, r;

	static const char *const sql[][2] = {
		{ "events", "SELECT coalesce(max(id), 0) FROM events" },
		{ "detections", "SELECT coalesce(max(id), 0) FROM detections" },
		{ "incidents", "SELECT coalesce(max(id), 0) FROM incidents" },
	};
	size_t i;

	/* A table name cannot be bound: only these are ever asked for. */
	for (i = 0; i < ARRAY_SIZE(sql) && strcmp(table, sql[i][0]) != 0; i++)
		;
	if (i == ARRAY_SIZE(sql))
		return -EINVAL;
	if ((r = store_prepare(s, sql[i][1], "prepare max id", &st)) < 0)
		return r;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*ret = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : store_error(s, rc, "max id");
}

int store_event_count(struct store *s, int64_t sandbox_id, int64_t *ret)
{
	const char *sql = sandbox_id > 0 ? "SELECT count(*) FROM events WHERE sandbox_id = ?1"
					 : "SELECT count(*) FROM events";
	sqlite3_stmt *st;
	int rc, r;

	if ((r = store_prepare(s, sql, "prepare count", &st)) < 0)
		return r;
	if (sandbox_id > 0)
		sqlite3_bind_int64(st, 1, sandbox_id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*ret = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : store_error(s, rc, "count events");
}

int store_size(struct store *s, uint64_t *ret_bytes)
{
	int64_t pages, free_pages, page_size;
	int r;

	if ((r = store_query_int(s, "PRAGMA page_count", &pages)) < 0 ||
	    (r = store_query_int(s, "PRAGMA freelist_count", &free_pages)) < 0 ||
	    (r = store_query_int(s, "PRAGMA page_size", &page_size)) < 0)
		return r;
	*ret_bytes = (uint64_t)(pages - free_pages) * (uint64_t)page_size;
	return 0;
}

int store_incident_list(struct store *s, int64_t id,
			int (*cb)(const struct store_incident *inc, void *data), void *data)
{
	static const char sql[] = "SELECT i.id, i.sandbox_id, s.name, i.opened_ts, i.start_ts, "
				  "coalesce(i.end_ts, 0), "
				  "i.severity, i.state, coalesce(i.summary, ''), "
				  "(SELECT count(*) FROM detections d WHERE d.incident_id = i.id) "
				  "FROM incidents i JOIN sandboxes s ON s.id = i.sandbox_id "
				  "WHERE ?1 = 0 OR i.id = ?1 ORDER BY i.id DESC";
	sqlite3_stmt *st;
	int rc, r;

	if ((r = prepare_for(s, sql, id, "prepare incident list", &st)) < 0)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_incident inc = { 0 };
		const unsigned char *t;

		inc.id = sqlite3_column_int64(st, 0);
		inc.sandbox_id = sqlite3_column_int64(st, 1);
		if ((t = sqlite3_column_text(st, 2)))
			strscpy(inc.sandbox, sizeof(inc.sandbox), (const char *)t);
		inc.opened_ts = sqlite3_column_int64(st, 3);
		inc.start_ts = sqlite3_column_int64(st, 4);
		inc.end_ts = sqlite3_column_int64(st, 5);
		if ((t = sqlite3_column_text(st, 6)))
			strscpy(inc.severity, sizeof(inc.severity), (const char *)t);
		if ((t = sqlite3_column_text(st, 7)))
			strscpy(inc.state, sizeof(inc.state), (const char *)t);
		if ((t = sqlite3_column_text(st, 8)))
			strscpy(inc.summary, sizeof(inc.summary), (const char *)t);
		inc.detections = sqlite3_column_int64(st, 9);
		if ((r = cb(&inc, data)) != 0)
			break;
	}
	return rows_end(s, st, rc, r, "list incidents");
}

int store_policy_get(struct store *s, const char *hash, char **ret)
{
	sqlite3_stmt *st;
	int rc, r;

	if ((r = store_prepare(s, "SELECT text FROM policies WHERE hash = ?1", "prepare policy get",
			       &st)) < 0)
		return r;
	r = -ENOENT;
	sqlite3_bind_text(st, 1, hash, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const unsigned char *t = sqlite3_column_text(st, 0);

		r = t && (*ret = strdup((const char *)t)) ? 0 : -ENOMEM;
	} else if (rc != SQLITE_DONE) {
		r = store_error(s, rc, "read policy");
	}
	sqlite3_finalize(st);
	return r;
}

/* The steps started and not ended yet, as store_open_steps reads them (unordered). */
struct open_step {
	int64_t step;
	char *tool, *fields;
};

struct open_steps {
	struct open_step *v;
	size_t n, cap;
};

/* Forgets step if it is open: a start seen before, which this row ends or restarts. */
static void open_steps_forget(struct open_steps *o, int64_t step)
{
	size_t i;

	for (i = 0; i < o->n && o->v[i].step != step; i++)
		;
	if (i < o->n) {
		free(o->v[i].tool);
		free(o->v[i].fields);
		o->v[i] = o->v[--o->n];
	}
}

/* Notes step as open, with copies of tool and fields; 0 or -ENOMEM. */
static int open_steps_add(struct open_steps *o, int64_t step, const char *tool, const char *fields)
{
	struct open_step *e;

	if (o->n == o->cap) {
		struct open_step *nv;

		o->cap = o->cap ? o->cap * 2 : 16;
		if (!(nv = realloc(o->v, o->cap * sizeof(*nv))))
			return -ENOMEM;
		o->v = nv;
	}
	e = &o->v[o->n];
	e->step = step;
	e->tool = strdup(tool);
	e->fields = strdup(fields);
	if (!e->tool || !e->fields) {
		free(e->tool);
		free(e->fields);
		return -ENOMEM;
	}
	o->n++;
	return 0;
}

/* Reads the starts and ends of st's rows into o; 0 or -errno. Finalizes st. */
static int open_steps_read(struct store *s, sqlite3_stmt *st, struct open_steps *o)
{
	int rc, r = 0;

	while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t step = sqlite3_column_int64(st, 0);
		const char *kind = (const char *)sqlite3_column_text(st, 3);

		open_steps_forget(o, step);
		if (strcmp(kind, "step.start") == 0)
			r = open_steps_add(o, step, (const char *)sqlite3_column_text(st, 1) ?: "",
					   (const char *)sqlite3_column_text(st, 2) ?: "{}");
	}
	return rows_end(s, st, rc, r, "open steps");
}

int store_open_steps(struct store *s, int64_t sandbox_id,
		     int (*cb)(int64_t step, const char *tool, const char *fields, void *data),
		     void *data)
{
	/* Starts and ends of the enforcer's steps, in one pass over the sandbox's events. */
	static const char sql[] =
		"SELECT step, tool, fields, kind FROM events INDEXED BY events_by_sandbox_ts "
		"WHERE sandbox_id = ?1 AND source = 'enforcer' AND kind IN ('step.start', "
		"'step.end') "
		"AND step IS NOT NULL ORDER BY ts, id";
	struct open_steps o = { 0 };
	sqlite3_stmt *st;
	int r;

	if ((r = prepare_for(s, sql, sandbox_id, "prepare open steps", &st)) < 0)
		return r;
	r = open_steps_read(s, st, &o);
	for (size_t i = 0; i < o.n; i++) {
		if (r == 0)
			r = cb(o.v[i].step, o.v[i].tool, o.v[i].fields, data);
		free(o.v[i].tool);
		free(o.v[i].fields);
	}
	free(o.v);
	return r;
}
