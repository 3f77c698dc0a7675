/* The followers' cursors (schema 004): one row per (sandbox, file). */
#include <errno.h>
#include <string.h>

#include "macro.h"
#include "store-internal.h"

int store_cursor_put(struct store *s, const struct store_cursor *c)
{
	static const char sql[] =
		"INSERT OR REPLACE INTO cursors (sandbox_id, source, inode, offset, lines, "
		"updated_ts) VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
	sqlite3_stmt *st;
	int r;

	if ((r = store_prepare(s, sql, "prepare cursor put", &st)) < 0)
		return r;
	sqlite3_bind_int64(st, 1, c->sandbox_id);
	sqlite3_bind_text(st, 2, c->source, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)c->inode);
	sqlite3_bind_int64(st, 4, c->offset);
	sqlite3_bind_int64(st, 5, c->lines);
	sqlite3_bind_int64(st, 6, c->updated_ts);
	return store_step_done(s, st, "put cursor");
}

int store_cursor_get(struct store *s, int64_t sandbox_id, const char *source,
		     struct store_cursor *ret)
{
	static const char sql[] = "SELECT inode, offset, lines, updated_ts FROM cursors "
				  "WHERE sandbox_id = ?1 AND source = ?2";
	struct store_cursor c = { .sandbox_id = sandbox_id };
	sqlite3_stmt *st;
	int rc, r;

	if (strscpy(c.source, sizeof(c.source), source) < 0)
		return -EINVAL;
	if ((r = store_prepare(s, sql, "prepare cursor get", &st)) < 0)
		return r;
	sqlite3_bind_int64(st, 1, sandbox_id);
	sqlite3_bind_text(st, 2, source, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	r = -ENOENT;
	if (rc == SQLITE_ROW) {
		c.inode = (uint64_t)sqlite3_column_int64(st, 0);
		c.offset = sqlite3_column_int64(st, 1);
		c.lines = sqlite3_column_int64(st, 2);
		c.updated_ts = sqlite3_column_int64(st, 3);
		*ret = c;
		r = 0;
	} else if (rc != SQLITE_DONE) {
		r = store_error(s, rc, "read cursor");
	}
	sqlite3_finalize(st);
	return r;
}
