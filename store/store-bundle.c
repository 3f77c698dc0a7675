/*
 * Incident bundles: one sandbox's history (to an incident's end, or all of it) copied into a new
 * database of the same schema, in memory, then handed over as the bytes of a SQLite file. It is
 * made through the source's own read-only connection (no other file is opened: the HTTP child
 * makes bundles in its jail), and read back only after checking it is exactly what this code
 * makes: the schema objects, the bundle's description, the size of its rows.
 */
#include "store-internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "macro.h"
#include "store-bundle.h"

/* Rows are copied table by table with the same columns (same schema version on both sides). */
struct copy {
	const char *table;
	const char *where; /* ?1 the sandbox id, ?2 the incident id (0: all), ?3 until (ts) */
};

static const struct copy copies[] = {
	{ "sandboxes", "id = ?1" },
	{ "steps", "sandbox_id = ?1" },
	{ "step_spans", "sandbox_id = ?1" },
	/* Up to the last event of the window in the order the monitor saw them (ids), not in
	 * time: replay feeds by id. */
	{ "events", "sandbox_id = ?1 AND id <= (SELECT coalesce(max(id), 0) FROM events "
		    "WHERE sandbox_id = ?1 AND ts <= ?3)" },
	{ "incidents", "sandbox_id = ?1 AND (?2 = 0 OR id = ?2)" },
	{ "incident_events", "incident_id IN (SELECT id FROM incidents WHERE sandbox_id = ?1 AND "
			     "(?2 = 0 OR id = ?2))" },
	{ "detections", "sandbox_id = ?1 AND ts <= ?3" },
	{ "actions", "sandbox_id = ?1 AND ts <= ?3" },
	/* The exact policies: the sandbox's, its verdicts', and those its detectors started under.
	 */
	{ "policies", "hash IN (SELECT policy_hash FROM sandboxes WHERE id = ?1 UNION "
		      "SELECT policy_hash FROM detections WHERE sandbox_id = ?1 UNION "
		      "SELECT json_extract(fields, '$.policy_hash') FROM events "
		      "WHERE sandbox_id = ?1 AND kind = 'detectors.start')" },
};

static const char bundle_table[] =
	"CREATE TABLE bundle (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID";

static int copy_table(struct store *src, struct store *dst, const struct copy *c,
		      const struct store_bundle_spec *spec, int64_t *ret_rows)
{
	char sql[1024], ins[512];
	sqlite3_stmt *sel = NULL, *put = NULL;
	int rc, n, r = 0;
	size_t len;

	snprintf(sql, sizeof(sql), "SELECT * FROM main.%s WHERE %s", c->table, c->where);
	if ((rc = sqlite3_prepare_v2(src->db, sql, -1, &sel, NULL)) != SQLITE_OK)
		return store_error(src, rc, "prepare bundle copy");
	sqlite3_bind_int64(sel, 1, spec->sandbox_id);
	sqlite3_bind_int64(sel, 2, spec->incident_id);
	sqlite3_bind_int64(sel, 3, spec->until > 0 ? spec->until : INT64_MAX);
	n = sqlite3_column_count(sel);
	len = (size_t)snprintf(ins, sizeof(ins), "INSERT INTO %s VALUES (", c->table);
	for (int i = 0; i < n; i++)
		len += (size_t)snprintf(ins + len, sizeof(ins) - len, "%s?", i ? "," : "");
	snprintf(ins + len, sizeof(ins) - len, ")");
	if ((rc = sqlite3_prepare_v2(dst->db, ins, -1, &put, NULL)) != SQLITE_OK) {
		sqlite3_finalize(sel);
		return store_error(dst, rc, "prepare bundle insert");
	}
	while ((rc = sqlite3_step(sel)) == SQLITE_ROW) {
		for (int i = 0; i < n; i++)
			sqlite3_bind_value(put, i + 1, sqlite3_column_value(sel, i));
		if ((rc = sqlite3_step(put)) != SQLITE_DONE) {
			r = store_error(dst, rc, "bundle insert");
			break;
		}
		sqlite3_reset(put);
		(*ret_rows)++;
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = store_error(src, rc, "bundle copy");
	sqlite3_finalize(sel);
	sqlite3_finalize(put);
	return r;
}

static int put_info(struct store *dst, const char *key, const char *value)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(dst->db, "INSERT INTO bundle VALUES (?1, ?2)", -1, &st, NULL);

	if (rc != SQLITE_OK)
		return store_error(dst, rc, "prepare bundle info");
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, value, -1, SQLITE_TRANSIENT);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : store_error(dst, rc, "bundle info");
}

int store_bundle_make(struct store *src, const struct store_bundle_spec *spec, unsigned char **ret,
		      size_t *ret_len)
{
	struct store *dst = NULL;
	sqlite3_int64 size = 0;
	unsigned char *bytes;
	int64_t rows = 0;
	char v[64];
	int r;

	if ((r = store_open(":memory:", STORE_READ_WRITE, &dst)) < 0)
		return r;
	if ((r = store_exec(dst, bundle_table)) < 0 || (r = store_exec(dst, "BEGIN")) < 0)
		goto out;
	for (size_t i = 0; i < ARRAY_SIZE(copies) && r == 0; i++)
		r = copy_table(src, dst, &copies[i], spec, &rows);
	snprintf(v, sizeof(v), "%d", store_latest_version());
	if (r == 0)
		r = put_info(dst, "format", STORE_BUNDLE_FORMAT);
	if (r == 0)
		r = put_info(dst, "schema", v);
	if (r == 0)
		r = put_info(dst, "kind", spec->incident_id ? "incident" : "sandbox");
	snprintf(v, sizeof(v), "%lld", (long long)spec->incident_id);
	if (r == 0)
		r = put_info(dst, "incident", v);
	snprintf(v, sizeof(v), "%lld", (long long)spec->made_ts);
	if (r == 0)
		r = put_info(dst, "made_ts", v);
	if (r == 0)
		r = store_exec(dst, "COMMIT");
	if (r < 0)
		goto out;
	bytes = sqlite3_serialize(dst->db, "main", &size, 0);
	if (!bytes) {
		r = -ENOMEM;
		goto out;
	}
	*ret = bytes; /* sqlite3_free() it */
	*ret_len = (size_t)size;
out:
	store_close(dst);
	return r;
}

/* What a bundle must hold, and no more: the schema's objects, as a fresh database has them. */
static int same_schema(struct store *b, char *err, size_t errlen)
{
	static const char q[] = "SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_schema "
				"ORDER BY type, name";
	struct store *ref = NULL;
	sqlite3_stmt *a = NULL, *c = NULL;
	int r = -EBADMSG, ra, rc;

	if (store_open(":memory:", STORE_READ_WRITE, &ref) < 0 ||
	    store_exec(ref, bundle_table) < 0 ||
	    sqlite3_prepare_v2(ref->db, q, -1, &a, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(b->db, q, -1, &c, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "its schema could not be read");
		goto out;
	}
	for (;;) {
		ra = sqlite3_step(a);
		rc = sqlite3_step(c);
		if (ra != rc) {
			snprintf(err, errlen, "its schema has %s objects than a bundle has",
				 rc == SQLITE_ROW ? "more" : "fewer");
			goto out;
		}
		if (ra != SQLITE_ROW)
			break;
		for (int i = 0; i < 4; i++) {
			const char *x = (const char *)sqlite3_column_text(a, i);
			const char *y = (const char *)sqlite3_column_text(c, i);

			if (!x || !y || strcmp(x, y) != 0) {
				snprintf(err, errlen, "its schema object %.64s is not a bundle's",
					 (const char *)sqlite3_column_text(c, 1));
				goto out;
			}
		}
	}
	r = ra == SQLITE_DONE ? 0 : -EBADMSG;
	if (r < 0)
		snprintf(err, errlen, "its schema could not be read");
out:
	sqlite3_finalize(a);
	sqlite3_finalize(c);
	store_close(ref);
	return r;
}

/* One text answer (or NULL) of a query; copied into buf. */
static int query_text(struct store *s, const char *sql, char *buf, size_t size)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);

	buf[0] = '\0';
	if (rc != SQLITE_OK)
		return -EBADMSG;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_text(st, 0))
		snprintf(buf, size, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -EBADMSG;
}

/* Why b is no bundle, in err: -EBADMSG (or same_schema's error), or 0 if it is one. */
static int bundle_refusal(struct store *b, char *err, size_t errlen)
{
	char v[64];
	int64_t n;
	int r;

	if (query_text(b, "PRAGMA quick_check", v, sizeof(v)) < 0 || strcmp(v, "ok") != 0)
		return snprintf(err, errlen, "it is damaged (SQLite's check: %.40s)",
				v[0] ? v : "failed"),
		       -EBADMSG;
	if ((r = same_schema(b, err, errlen)) < 0)
		return r;
	if (query_text(b, "SELECT value FROM bundle WHERE key = 'format'", v, sizeof(v)) < 0 ||
	    strcmp(v, STORE_BUNDLE_FORMAT) != 0)
		return snprintf(err, errlen, "it does not say it is a bundle"), -EBADMSG;
	if (store_query_int(b, "SELECT count(*) FROM sandboxes", &n) < 0 || n != 1)
		return snprintf(err, errlen, "a bundle holds one sandbox; this one holds %lld",
				(long long)n),
		       -EBADMSG;
	/* Rows no honest bundle has: a sandbox name the monitor would never take, fields beyond
	 * what any source writes. */
	if (query_text(b, "SELECT name FROM sandboxes", v, sizeof(v)) < 0 ||
	    !event_sandbox_name_valid(v))
		return snprintf(err, errlen, "its sandbox's name is not a valid sandbox name"),
		       -EBADMSG;
	if (store_query_int(b,
			    "SELECT coalesce(max(length(fields)), 0) + "
			    "coalesce(max(length(kind)), 0) FROM events",
			    &n) < 0 ||
	    n > STORE_BUNDLE_FIELD_MAX)
		return snprintf(err, errlen, "an event of it is over %d bytes",
				STORE_BUNDLE_FIELD_MAX),
		       -EBADMSG;
	if (store_query_int(b,
			    "SELECT count(*) FROM events WHERE sandbox_id IS NOT "
			    "(SELECT id FROM sandboxes)",
			    &n) < 0 ||
	    n != 0)
		return snprintf(err, errlen, "it has events of no sandbox of its own"), -EBADMSG;
	return 0;
}

int store_bundle_open(const char *path, struct store **ret, char *err, size_t errlen)
{
	struct store *b = NULL;
	int r;

	snprintf(err, errlen, "not a Firebreak bundle (or a damaged or truncated one)");
	if ((r = store_open(path, STORE_READ_ONLY, &b)) < 0) {
		if (r == -EPROTO)
			snprintf(err, errlen,
				 "made by a Firebreak of another schema version (this one "
				 "reads version %d)",
				 store_latest_version());
		else if (r == -ENOENT)
			snprintf(err, errlen, "no such file");
		return r == -ENOENT || r == -EPROTO ? r : -EBADMSG;
	}
	/* Nothing in it runs: no triggers or views can exist (the schema check), and functions
	 * reached from its schema are off. */
	sqlite3_db_config(b->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	sqlite3_db_config(b->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	if ((r = bundle_refusal(b, err, errlen)) < 0) {
		store_close(b);
		return r;
	}
	*ret = b;
	return 0;
}
