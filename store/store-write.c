/* Appending events, applying trace phases, registering sandboxes: the writer thread's calls. */
#include "store-internal.h"

#include "log.h"
#include "macro.h"

/* Binds ev to the 12 parameters from base + 1 on (the last, its id: NULL lets SQLite choose). */
static void bind_event(sqlite3_stmt *st, int base, const struct event *ev)
{
	if (ev->sandbox_id > 0)
		sqlite3_bind_int64(st, base + 2, ev->sandbox_id);
	else
		sqlite3_bind_null(st, base + 2);
	sqlite3_bind_int64(st, base + 1, ev->ts);
	if (ev->step != EVENT_STEP_NONE)
		sqlite3_bind_int64(st, base + 3, ev->step);
	else
		sqlite3_bind_null(st, base + 3);
	sqlite3_bind_text(st, base + 4, ev->tool, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, base + 5, event_source_to_string(ev->source), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, base + 6, ev->kind, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, base + 7, ev->pid);
	sqlite3_bind_int(st, base + 8, ev->ppid);
	if (ev->uid != EVENT_UID_NONE)
		sqlite3_bind_int64(st, base + 9, ev->uid);
	else
		sqlite3_bind_null(st, base + 9);
	sqlite3_bind_text(st, base + 10, ev->comm, -1, SQLITE_STATIC);
	if (ev->fields)
		sqlite3_bind_text(st, base + 11, ev->fields, (int)ev->fields_len, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, base + 11);
	if (ev->id > 0)
		sqlite3_bind_int64(st, base + 12, ev->id);
	else
		sqlite3_bind_null(st, base + 12);
}

/*
 * The step spans need each row's id: the one the caller gave (firebreakd assigns them, so that
 * what it derives from an event can name it before it is stored), or else, rows inserted by one
 * statement get consecutive ids ending at the last insert rowid (the store has one writer).
 */
static int after_insert(struct store *s, struct event *const *evs, size_t n)
{
	int64_t last = sqlite3_last_insert_rowid(s->db);
	int r;

	for (size_t i = 0; i < n; i++) {
		if (evs[i]->id <= 0)
			evs[i]->id = last - (int64_t)(n - 1 - i);
		if (evs[i]->step != EVENT_STEP_NONE && evs[i]->sandbox_id > 0 &&
		    (r = store_span_note(s, evs[i]->sandbox_id, evs[i]->step, evs[i]->id)) < 0)
			return r;
	}
	return 0;
}

int store_event_insert(struct store *s, struct event *ev)
{
	sqlite3_stmt *st = store_stmt(s, STMT_EVENT_INSERT);
	int rc;

	if (!st)
		return -EIO;
	/* Every parameter is bound, so no sqlite3_clear_bindings (it showed in profiles). */
	bind_event(st, 0, ev);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return store_error(s, rc, "insert event");
	return after_insert(s, &ev, 1);
}

int store_events_insert(struct store *s, struct event *const *evs, size_t n)
{
	size_t i = 0;
	int rc, r;

	/* STORE_INSERT_ROWS at a time: one statement step per group instead of per event. */
	for (; i + STORE_INSERT_ROWS <= n; i += STORE_INSERT_ROWS) {
		sqlite3_stmt *st = store_stmt(s, STMT_EVENT_INSERT_MANY);

		if (!st)
			return -EIO;
		for (int j = 0; j < STORE_INSERT_ROWS; j++)
			bind_event(st, 12 * j, evs[i + (size_t)j]);
		rc = sqlite3_step(st);
		sqlite3_reset(st);
		if (rc != SQLITE_DONE)
			return store_error(s, rc, "insert events");
		if ((r = after_insert(s, evs + i, STORE_INSERT_ROWS)) < 0)
			return r;
	}
	for (; i < n; i++)
		if ((r = store_event_insert(s, evs[i])) < 0)
			return r;
	return 0;
}

int store_span_note(struct store *s, int64_t sandbox_id, int64_t step, int64_t id)
{
	struct store_span *sp;

	/* Consecutive events mostly share a step: look from the newest span backwards. */
	for (size_t i = s->n_spans; i-- > 0;) {
		sp = &s->spans[i];
		if (sp->sandbox_id == sandbox_id && sp->step == step) {
			if (id < sp->first_id)
				sp->first_id = id;
			if (id > sp->last_id)
				sp->last_id = id;
			return 0;
		}
		if (s->n_spans - i > 64)
			break; /* a long batch of many steps: a second span row merges at flush */
	}
	if (s->n_spans == s->cap_spans) {
		size_t cap = s->cap_spans ? s->cap_spans * 2 : 64;
		struct store_span *p = realloc(s->spans, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->spans = p;
		s->cap_spans = cap;
	}
	s->spans[s->n_spans++] = (struct store_span){ sandbox_id, step, id, id };
	return 0;
}

int store_span_flush(struct store *s)
{
	sqlite3_stmt *st;
	int rc;

	if (s->n_spans == 0)
		return 0;
	st = store_stmt(s, STMT_SPAN_PUT);
	if (!st)
		return -EIO;
	for (size_t i = 0; i < s->n_spans; i++) {
		sqlite3_bind_int64(st, 1, s->spans[i].sandbox_id);
		sqlite3_bind_int64(st, 2, s->spans[i].step);
		sqlite3_bind_int64(st, 3, s->spans[i].first_id);
		sqlite3_bind_int64(st, 4, s->spans[i].last_id);
		rc = sqlite3_step(st);
		sqlite3_reset(st);
		if (rc != SQLITE_DONE)
			return store_error(s, rc, "record step span");
	}
	s->n_spans = 0;
	return 0;
}

static int annotations_coerced(const json_t *annotations)
{
	return annotations && json_is_true(json_object_get(annotations, "coerced"));
}

/* After an upsert changed nothing: the same phase again (duplicate), or another step or tool. */
static int classify_unchanged(struct store *s, const struct trace_record *rec, int64_t sandbox_id)
{
	sqlite3_stmt *st = store_stmt(s, STMT_STEP_GET);
	int rc, result;

	if (!st)
		return -EIO;
	sqlite3_bind_int64(st, 1, sandbox_id);
	sqlite3_bind_text(st, 2, rec->call_id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		sqlite3_reset(st);
		return store_error(s, rc, "look up step");
	}
	result = sqlite3_column_int64(st, 0) == rec->step &&
				 strcmp((const char *)sqlite3_column_text(st, 1), rec->tool) == 0
			 ? STORE_TRACE_DUPLICATE
			 : STORE_TRACE_CONFLICT;
	sqlite3_reset(st);
	return result;
}

int store_trace_apply(struct store *s, const struct trace_record *rec, struct event *ev)
{
	int end = rec->phase == TRACE_PHASE_END;
	sqlite3_stmt *st = store_stmt(s, end ? STMT_STEP_END : STMT_STEP_START);
	_cleanup_free_ char *annotations = NULL;
	int rc, i = 5;

	if (!st)
		return -EIO;
	if (rec->annotations) {
		annotations = json_dumps(rec->annotations, JSON_COMPACT | JSON_ENSURE_ASCII);
		if (!annotations)
			return -ENOMEM;
	}
	sqlite3_bind_int64(st, 1, ev->sandbox_id);
	sqlite3_bind_text(st, 2, rec->call_id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, rec->step);
	sqlite3_bind_text(st, 4, rec->tool, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, i++, ev->ts);
	if (end) {
		if (rec->has_exit_code)
			sqlite3_bind_int64(st, i++, rec->exit_code);
		else
			sqlite3_bind_null(st, i++);
		store_bind_text_or_null(st, i++, rec->error_type);
	}
	sqlite3_bind_int(st, i++, annotations_coerced(rec->annotations));
	store_bind_text_or_null(st, i++, annotations);
	store_bind_text_or_null(st, i++, rec->traceparent);
	rc = sqlite3_step(st);
	sqlite3_clear_bindings(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return store_error(s, rc, "apply trace");
	if (sqlite3_changes(s->db) == 0)
		return classify_unchanged(s, rec, ev->sandbox_id);
	rc = store_event_insert(s, ev);
	return rc < 0 ? rc : STORE_TRACE_NEW;
}

int store_sandbox_put(struct store *s, const struct store_sandbox *sb)
{
	sqlite3_stmt *st = store_stmt(s, STMT_SANDBOX_PUT);
	int rc;

	if (!st)
		return -EIO;
	sqlite3_bind_int64(st, 1, sb->id);
	sqlite3_bind_text(st, 2, sb->name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, sb->state, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, sb->created_ts);
	sqlite3_bind_int64(st, 5, sb->updated_ts);
	store_bind_text_or_null(st, 6, sb->policy_hash);
	store_bind_text_or_null(st, 7, sb->cgroup);
	rc = sqlite3_step(st);
	sqlite3_clear_bindings(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : store_error(s, rc, "put sandbox");
}

int store_action_insert(struct store *s, const struct store_action *a, int64_t *ret_id)
{
	static const char sql[] = "INSERT INTO actions (ts, sandbox_id, kind, requested_by, "
				  "detection_id, incident_id, latency_ns, result, reason) "
				  "VALUES (?1, ?2, ?3, ?4, NULLIF(?5, 0), NULLIF(?6, 0), "
				  "NULLIF(?7, -1), ?8, ?9)";
	sqlite3_stmt *st;
	int r;

	if ((r = store_prepare(s, sql, "prepare action insert", &st)) < 0)
		return r;
	sqlite3_bind_int64(st, 1, a->ts);
	sqlite3_bind_int64(st, 2, a->sandbox_id);
	sqlite3_bind_text(st, 3, a->kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 4, a->requested_by, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 5, a->detection_id);
	sqlite3_bind_int64(st, 6, a->incident_id);
	sqlite3_bind_int64(st, 7, a->latency_ns);
	sqlite3_bind_text(st, 8, a->result, -1, SQLITE_STATIC);
	store_bind_text_or_null(st, 9, a->reason[0] ? a->reason : NULL);
	if ((r = store_step_done(s, st, "insert action")) < 0)
		return r;
	if (ret_id)
		*ret_id = sqlite3_last_insert_rowid(s->db);
	return 0;
}

int store_incident_insert(struct store *s, int64_t sandbox_id, int64_t start_ts, int64_t end_ts,
			  const char *severity, const char *summary, int64_t *ret_id)
{
	static const char sql[] = "INSERT INTO incidents (sandbox_id, opened_ts, start_ts, end_ts, "
				  "severity, state, summary) VALUES (?1, ?2, ?2, ?3, ?4, "
				  "CASE WHEN ?3 IS NULL THEN 'open' ELSE 'closed' END, ?5)";
	sqlite3_stmt *st;
	int r;

	if ((r = store_prepare(s, sql, "prepare incident insert", &st)) < 0)
		return r;
	sqlite3_bind_int64(st, 1, sandbox_id);
	sqlite3_bind_int64(st, 2, start_ts);
	if (end_ts > 0)
		sqlite3_bind_int64(st, 3, end_ts);
	else
		sqlite3_bind_null(st, 3);
	sqlite3_bind_text(st, 4, severity, -1, SQLITE_STATIC);
	store_bind_text_or_null(st, 5, summary);
	if ((r = store_step_done(s, st, "insert incident")) < 0)
		return r;
	*ret_id = sqlite3_last_insert_rowid(s->db);
	return 0;
}

/*
 * Runs sql, a write of two ids (?1 a, ?2 b); 0 or -errno (logged with prepare_what if it could not
 * be prepared, else with what).
 */
static int write_ids(struct store *s, const char *sql, int64_t a, int64_t b,
		     const char *prepare_what, const char *what)
{
	sqlite3_stmt *st;
	int r;

	if ((r = store_prepare(s, sql, prepare_what, &st)) < 0)
		return r;
	sqlite3_bind_int64(st, 1, a);
	sqlite3_bind_int64(st, 2, b);
	return store_step_done(s, st, what);
}

int store_incident_link_event(struct store *s, int64_t incident_id, int64_t event_id)
{
	return write_ids(s,
			 "INSERT OR IGNORE INTO incident_events (incident_id, event_id) "
			 "VALUES (?1, ?2)",
			 incident_id, event_id, "prepare incident link", "link incident event");
}

/* Opens incident det->incident_id, or raises its severity to det's if that is higher. */
static int incident_upsert(struct store *s, const struct store_detection *det, int create)
{
	static const char *const sql[] = {
		"UPDATE incidents SET severity = ?3 WHERE id = ?1 AND "
		"(CASE ?3 WHEN 'critical' THEN 3 WHEN 'high' THEN 2 WHEN 'medium' THEN 1 ELSE 0 "
		"END) > "
		"(CASE severity WHEN 'critical' THEN 3 WHEN 'high' THEN 2 WHEN 'medium' THEN 1 "
		"ELSE 0 END)",
		"INSERT INTO incidents (id, sandbox_id, opened_ts, start_ts, severity, state, "
		"summary) "
		"VALUES (?1, ?2, ?4, ?4, ?3, 'open', ?5)",
	};
	sqlite3_stmt *st;
	int r;

	if ((r = store_prepare(s, sql[create ? 1 : 0], "prepare incident", &st)) < 0)
		return r;
	sqlite3_bind_int64(st, 1, det->incident_id);
	sqlite3_bind_int64(st, 2, det->sandbox_id);
	sqlite3_bind_text(st, 3, det->severity, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, det->ts);
	sqlite3_bind_text(st, 5, det->reason, -1, SQLITE_STATIC);
	return store_step_done(s, st, "incident");
}

int store_detection_insert(struct store *s, const struct store_detection *det, int create_incident)
{
	static const char sql[] =
		"INSERT INTO detections (id, ts, sandbox_id, step, rule, severity, policy_hash, "
		"incident_id, event_ids, reason) "
		"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, NULLIF(?8, 0), ?9, ?10)";
	sqlite3_stmt *st;
	int r;

	if (det->incident_id > 0 && (r = incident_upsert(s, det, create_incident)) < 0)
		return r;
	if ((r = store_prepare(s, sql, "prepare detection insert", &st)) < 0)
		return r;
	sqlite3_bind_int64(st, 1, det->id);
	sqlite3_bind_int64(st, 2, det->ts);
	sqlite3_bind_int64(st, 3, det->sandbox_id);
	if (det->step != EVENT_STEP_NONE)
		sqlite3_bind_int64(st, 4, det->step);
	else
		sqlite3_bind_null(st, 4);
	sqlite3_bind_text(st, 5, det->rule, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, det->severity, -1, SQLITE_STATIC);
	store_bind_text_or_null(st, 7, det->policy_hash[0] ? det->policy_hash : NULL);
	sqlite3_bind_int64(st, 8, det->incident_id);
	sqlite3_bind_text(st, 9, det->event_ids, -1, SQLITE_STATIC);
	store_bind_text_or_null(st, 10, det->reason[0] ? det->reason : NULL);
	if ((r = store_step_done(s, st, "insert detection")) < 0)
		return r;
	if (det->incident_id <= 0)
		return 0;
	/* The triggering events stay with the incident (retention keeps them). */
	for (const char *p = det->event_ids; *p;) {
		char *end;
		long long id = strtoll(p, &end, 10);

		if (end == p) {
			p++;
			continue;
		}
		if ((r = store_incident_link_event(s, det->incident_id, id)) < 0)
			return r;
		p = end;
	}
	return 0;
}

int store_incident_close(struct store *s, int64_t id, int64_t end_ts)
{
	return write_ids(s,
			 "UPDATE incidents SET end_ts = ?2, state = 'closed' "
			 "WHERE id = ?1 AND state = 'open'",
			 id, end_ts, "prepare incident close", "close incident");
}

int store_policy_put(struct store *s, const char *hash, const char *name, const char *text,
		     int64_t ts)
{
	static const char sql[] = "INSERT OR IGNORE INTO policies (hash, name, text, first_ts) "
				  "VALUES (?1, ?2, ?3, ?4)";
	sqlite3_stmt *st;
	int r;

	if ((r = store_prepare(s, sql, "prepare policy insert", &st)) < 0)
		return r;
	sqlite3_bind_text(st, 1, hash, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, text, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, ts);
	return store_step_done(s, st, "insert policy");
}
