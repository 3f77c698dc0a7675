/* Opening, migrating and closing the store; statements and error translation for store-*.c. */
#include "store-internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "log.h"
#include "macro.h"
#include "store-schema.h"

/* 'FBRK': marks a database as Firebreak's, so a stray SQLite file is refused, not migrated. */
#define STORE_APPLICATION_ID 0x4642524b

static char insert_many_sql[2048];

static const char *const stmt_sql[_STMT_MAX] = {
	[STMT_BEGIN] = "BEGIN IMMEDIATE",
	[STMT_COMMIT] = "COMMIT",
	[STMT_ROLLBACK] = "ROLLBACK",
	[STMT_EVENT_INSERT] =
		"INSERT INTO events (ts, sandbox_id, step, tool, source, kind, pid, ppid, uid, "
		"comm, fields, id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
	/* A phase is new only if the row lacks it and agrees on step and tool; sqlite3_changes()
	 * then says 1. Annotations of start and end are merged (RFC 7396). */
	[STMT_STEP_START] =
		"INSERT INTO steps (sandbox_id, call_id, step, tool, start_ts, coerced, "
		"annotations, "
		"traceparent) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) "
		"ON CONFLICT (sandbox_id, call_id) DO UPDATE SET start_ts = excluded.start_ts, "
		"coerced = steps.coerced OR excluded.coerced, "
		"annotations = CASE WHEN steps.annotations IS NULL THEN excluded.annotations "
		"WHEN excluded.annotations IS NULL THEN steps.annotations "
		"ELSE json_patch(steps.annotations, excluded.annotations) END, "
		"traceparent = coalesce(steps.traceparent, excluded.traceparent) "
		"WHERE steps.start_ts IS NULL AND steps.step = excluded.step "
		"AND steps.tool = excluded.tool",
	[STMT_STEP_END] =
		"INSERT INTO steps (sandbox_id, call_id, step, tool, end_ts, exit_code, "
		"error_type, "
		"coerced, annotations, traceparent) "
		"VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) "
		"ON CONFLICT (sandbox_id, call_id) DO UPDATE SET end_ts = excluded.end_ts, "
		"exit_code = excluded.exit_code, error_type = excluded.error_type, "
		"coerced = steps.coerced OR excluded.coerced, "
		"annotations = CASE WHEN steps.annotations IS NULL THEN excluded.annotations "
		"WHEN excluded.annotations IS NULL THEN steps.annotations "
		"ELSE json_patch(steps.annotations, excluded.annotations) END, "
		"traceparent = coalesce(steps.traceparent, excluded.traceparent) "
		"WHERE steps.end_ts IS NULL AND steps.step = excluded.step "
		"AND steps.tool = excluded.tool",
	[STMT_STEP_GET] = "SELECT step, tool FROM steps WHERE sandbox_id = ?1 AND call_id = ?2",
	[STMT_SANDBOX_PUT] = "INSERT INTO sandboxes (id, name, state, created_ts, updated_ts, "
			     "policy_hash, cgroup) "
			     "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT (id) DO UPDATE SET "
			     "state = excluded.state, updated_ts = excluded.updated_ts, "
			     "policy_hash = coalesce(excluded.policy_hash, sandboxes.policy_hash), "
			     "cgroup = coalesce(excluded.cgroup, sandboxes.cgroup)",
	[STMT_SPAN_PUT] = "INSERT INTO step_spans (sandbox_id, step, first_id, last_id) VALUES "
			  "(?1, ?2, ?3, ?4) "
			  "ON CONFLICT (sandbox_id, step) DO UPDATE SET "
			  "first_id = min(step_spans.first_id, excluded.first_id), "
			  "last_id = max(step_spans.last_id, excluded.last_id)",
};

int store_error(struct store *s, int rc, const char *what)
{
	int err;

	switch (rc & 0xff) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		err = -EBUSY;
		break;
	case SQLITE_NOMEM:
		err = -ENOMEM;
		break;
	case SQLITE_READONLY:
		err = -EROFS;
		break;
	case SQLITE_FULL:
		err = -ENOSPC;
		break;
	case SQLITE_CANTOPEN:
		err = -ENOENT;
		break;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		err = -EBADMSG;
		break;
	case SQLITE_CONSTRAINT:
		err = -EEXIST;
		break;
	case SQLITE_PERM:
	case SQLITE_AUTH:
		err = -EACCES;
		break;
	default:
		err = -EIO;
	}
	log_error("store %s: %s: %s", s && s->path ? s->path : "?", what,
		  s && s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
	return err;
}

/* "INSERT ... VALUES (?,...), (?,...), ..." for STORE_INSERT_ROWS rows, built once. */
static const char *insert_many(void)
{
	size_t n;

	if (insert_many_sql[0])
		return insert_many_sql;
	n = (size_t)snprintf(
		insert_many_sql, sizeof(insert_many_sql),
		"INSERT INTO events (ts, sandbox_id, step, tool, source, kind, pid, ppid, "
		"uid, comm, fields, id) VALUES ");
	for (int i = 0; i < STORE_INSERT_ROWS; i++)
		n += (size_t)snprintf(insert_many_sql + n, sizeof(insert_many_sql) - n,
				      "%s(?,?,?,?,?,?,?,?,?,?,?,?)", i ? "," : "");
	return insert_many_sql;
}

sqlite3_stmt *store_stmt(struct store *s, enum store_stmt id)
{
	int rc;

	if (s->stmts[id]) {
		sqlite3_reset(s->stmts[id]);
		return s->stmts[id];
	}
	rc = sqlite3_prepare_v3(s->db, id == STMT_EVENT_INSERT_MANY ? insert_many() : stmt_sql[id],
				-1, SQLITE_PREPARE_PERSISTENT, &s->stmts[id], NULL);
	if (rc != SQLITE_OK) {
		store_error(s, rc, "prepare");
		return NULL;
	}
	return s->stmts[id];
}

int store_exec(struct store *s, const char *sql)
{
	int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : store_error(s, rc, sql);
}

int store_prepare(struct store *s, const char *sql, const char *what, sqlite3_stmt **ret)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);

	if (rc != SQLITE_OK)
		return store_error(s, rc, what);
	*ret = st;
	return 0;
}

int store_step_done(struct store *s, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);

	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : store_error(s, rc, what);
}

int store_query_int(struct store *s, const char *sql, int64_t *ret)
{
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);

	if (rc != SQLITE_OK)
		return store_error(s, rc, sql);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*ret = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return rc == SQLITE_DONE ? -ENODATA : store_error(s, rc, sql);
	return 0;
}

int store_bind_text_or_null(sqlite3_stmt *st, int idx, const char *text)
{
	if (!text || !*text)
		return sqlite3_bind_null(st, idx);
	return sqlite3_bind_text(st, idx, text, -1, SQLITE_STATIC);
}

int store_latest_version(void)
{
	return store_migrations_count;
}

int store_version(struct store *s)
{
	return s->version;
}

void store_close(struct store *s)
{
	if (!s)
		return;
	for (int i = 0; i < _STMT_MAX; i++)
		sqlite3_finalize(s->stmts[i]);
	if (s->db) {
		int rc = sqlite3_close(s->db);
		if (rc != SQLITE_OK)
			log_error("store %s: close: %s", s->path, sqlite3_errstr(rc));
	}
	free(s->spans);
	free(s->path);
	free(s);
}

/* Refuses a file that is an SQLite database but not ours (it has tables and no our id). */
static int check_identity(struct store *s, int64_t app_id)
{
	int64_t tables = 0;
	int r;

	if (app_id == STORE_APPLICATION_ID)
		return 0;
	if (app_id != 0)
		return log_error("%s: not a Firebreak database (application_id 0x%llx)", s->path,
				 (long long)app_id),
		       -EBADMSG;
	r = store_query_int(s, "SELECT count(*) FROM sqlite_schema", &tables);
	if (r < 0)
		return r;
	if (tables > 0)
		return log_error("%s: not a Firebreak database (it has other tables)", s->path),
		       -EBADMSG;
	return 0;
}

static int migrate(struct store *s, int target)
{
	char sql[64];
	int r;

	for (int i = s->version; i < target; i++) {
		const struct store_migration *m = &store_migrations[i];

		if ((r = store_exec(s, "BEGIN IMMEDIATE")) < 0)
			return r;
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", m->version);
		if ((r = store_exec(s, m->sql)) < 0 || (r = store_exec(s, sql)) < 0) {
			store_exec(s, "ROLLBACK");
			return log_errno(r, "%s: migration %s failed", s->path, m->name);
		}
		snprintf(sql, sizeof(sql), "PRAGMA application_id = %d", STORE_APPLICATION_ID);
		if ((r = store_exec(s, sql)) < 0 || (r = store_exec(s, "COMMIT")) < 0) {
			store_exec(s, "ROLLBACK");
			return r;
		}
		if (strcmp(s->path, ":memory:") != 0) /* a bundle being made: nothing to tell */
			log_info("%s: schema upgraded to version %d (%s)", s->path, m->version,
				 m->name);
		s->version = m->version;
	}
	return 0;
}

/* A store not yet opened, for path in mode; 0 and *ret, or -ENOMEM. */
static int alloc_store(const char *path, enum store_mode mode, struct store **ret)
{
	struct store *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->mode = mode;
	s->path = strdup(path);
	if (!s->path) {
		free(s);
		return -ENOMEM;
	}
	*ret = s;
	return 0;
}

/* Opens s's database file; 0 or -errno. */
static int open_db(struct store *s)
{
	int flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE, rc;

	if (s->mode == STORE_READ_ONLY) {
		/* SQLite would happily open a missing file read-only and show no tables. */
		if (access(s->path, F_OK) < 0)
			return -errno;
		flags |= SQLITE_OPEN_READONLY;
	} else {
		flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
	}
	rc = sqlite3_open_v2(s->path, &s->db, flags, NULL);
	if (rc != SQLITE_OK)
		return store_error(s, rc, "open");
	sqlite3_busy_timeout(s->db, 5000);
	sqlite3_extended_result_codes(s->db, 1);
	return 0;
}

/* Reads the schema version into s->version, refusing a database not ours or newer; 0 or -errno. */
static int read_version(struct store *s)
{
	int64_t version = 0, app_id = 0;
	int r;

	if ((r = store_query_int(s, "PRAGMA user_version", &version)) < 0 ||
	    (r = store_query_int(s, "PRAGMA application_id", &app_id)) < 0 ||
	    (r = check_identity(s, app_id)) < 0)
		return r;
	s->version = (int)version;
	if (version > store_latest_version())
		return log_error("%s: database schema version %lld is newer than this Firebreak "
				 "knows (%d); use a newer Firebreak or another database",
				 s->path, (long long)version, store_latest_version()),
		       -EPROTO;
	return 0;
}

/* A reader takes the schema as it is: only the latest; 0 or -errno. */
static int setup_reader(struct store *s)
{
	if (s->version != store_latest_version())
		return log_error("%s: database schema version %lld is older than %d; start "
				 "firebreakd on it once to upgrade it",
				 s->path, (long long)s->version, store_latest_version()),
		       -EPROTO;
	/* Sorts and temporary tables in memory: a reader in a jail (the HTTP child) has no
	 * file system to spill to. */
	return store_exec(s, "PRAGMA temp_store = MEMORY");
}

/* The writer's settings, then the schema migrated up to target; 0 or -errno. */
static int setup_writer(struct store *s, int target)
{
	int r;

	/* Both must be chosen before the first table exists. auto_vacuum lets retention hand pages
	 * back to the file system with incremental_vacuum instead of a full VACUUM; 16 KiB pages
	 * made the writer 10-15% faster than 4 KiB (bench/bench_writer). */
	if (s->version == 0 && ((r = store_exec(s, "PRAGMA page_size = 16384")) < 0 ||
				(r = store_exec(s, "PRAGMA auto_vacuum = INCREMENTAL")) < 0))
		return r;
	if ((r = store_exec(s, "PRAGMA journal_mode = WAL")) < 0 ||
	    (r = store_exec(s, "PRAGMA synchronous = FULL")) < 0 ||
	    (r = store_exec(s, "PRAGMA cache_size = -8192")) < 0 ||
	    (r = store_exec(s, "PRAGMA temp_store = MEMORY")) < 0 || (r = migrate(s, target)) < 0)
		return r;
	/* The store holds what sandboxes did: readable by root (and the firebreak group) only. */
	if (strcmp(s->path, ":memory:") != 0 && chmod(s->path, 0640) < 0)
		log_warn_errno(-errno, "chmod %s", s->path);
	return 0;
}

static int open_internal(const char *path, enum store_mode mode, int target, struct store **ret)
{
	struct store *s;
	int r;

	if ((r = alloc_store(path, mode, &s)) < 0)
		return r;
	if ((r = open_db(s)) < 0 || (r = read_version(s)) < 0 ||
	    (r = mode == STORE_READ_ONLY ? setup_reader(s) : setup_writer(s, target)) < 0) {
		store_close(s);
		return r;
	}
	*ret = s;
	return 0;
}

int store_open(const char *path, enum store_mode mode, struct store **ret)
{
	return open_internal(path, mode, store_latest_version(), ret);
}

int store_open_at_version(const char *path, int version, struct store **ret)
{
	if (version < 0 || version > store_latest_version())
		return -EINVAL;
	return open_internal(path, STORE_READ_WRITE, version, ret);
}

int store_set_synchronous_full(struct store *s, int full)
{
	return store_exec(s, full ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL");
}

void store_release_memory(struct store *s)
{
	sqlite3_db_release_memory(s->db);
}

int store_set_cache_kib(struct store *s, int kib)
{
	char sql[64];

	snprintf(sql, sizeof(sql), "PRAGMA cache_size = -%d", kib);
	return store_exec(s, sql);
}

static int step_simple(struct store *s, enum store_stmt id, const char *what)
{
	sqlite3_stmt *st = store_stmt(s, id);
	int rc;

	if (!st)
		return -EIO;
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : store_error(s, rc, what);
}

int store_begin(struct store *s)
{
	return step_simple(s, STMT_BEGIN, "begin");
}

int store_commit(struct store *s)
{
	int r = store_span_flush(s);

	if (r < 0)
		return r;
	return step_simple(s, STMT_COMMIT, "commit");
}

int store_rollback(struct store *s)
{
	s->n_spans = 0;
	return step_simple(s, STMT_ROLLBACK, "rollback");
}
