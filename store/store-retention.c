/*
 * Retention: raw events past the age cap, then the oldest until the live data fits the size cap,
 * are deleted in bounded chunks. An event inside an incident's window, or linked to an incident,
 * is never deleted: an incident must stay replayable however old it is.
 */
#include "store-internal.h"

#include "log.h"
#include "macro.h"

/* The oldest `chunk` deletable events older than ?1: row ids follow arrival, so the scan runs
 * in row id order from the oldest and needs no sort. */
#define DELETE_SQL                                                                                 \
	"DELETE FROM events WHERE id IN (SELECT e.id FROM events e WHERE e.ts < ?1 "               \
	"AND NOT EXISTS (SELECT 1 FROM incidents i WHERE i.sandbox_id = e.sandbox_id "             \
	"AND e.ts >= i.start_ts AND (i.end_ts IS NULL OR e.ts <= i.end_ts)) "                      \
	"AND NOT EXISTS (SELECT 1 FROM incident_events ie WHERE ie.event_id = e.id) "              \
	"ORDER BY e.id LIMIT ?2)"

static int64_t delete_chunk(struct store *s, sqlite3_stmt *st, int64_t before, int64_t chunk)
{
	int rc, r;

	if ((r = store_begin(s)) < 0)
		return r;
	sqlite3_bind_int64(st, 1, before);
	sqlite3_bind_int64(st, 2, chunk);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		r = store_error(s, rc, "retention delete");
		store_rollback(s);
		return r;
	}
	r = sqlite3_changes(s->db);
	if (store_commit(s) < 0)
		return -EIO;
	return r;
}

int64_t store_retention_run(struct store *s, const struct store_retention *q)
{
	int64_t chunk = q->chunk > 0 ? q->chunk : 10000;
	int64_t deleted = 0, n;
	sqlite3_stmt *st;
	uint64_t size;
	int rc, r;

	rc = sqlite3_prepare_v2(s->db, DELETE_SQL, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return store_error(s, rc, "prepare retention");
	if (q->max_age_ns > 0) {
		do {
			n = delete_chunk(s, st, q->now_ns - q->max_age_ns, chunk);
			if (n < 0)
				goto out;
			deleted += n;
		} while (n == chunk);
	}
	if (q->max_bytes > 0) {
		for (;;) {
			if ((r = store_size(s, &size)) < 0) {
				n = r;
				goto out;
			}
			if (size <= q->max_bytes)
				break;
			n = delete_chunk(s, st, INT64_MAX, chunk);
			if (n < 0)
				goto out;
			deleted += n;
			if (n == 0) {
				log_warn("store %s: %llu bytes over the size cap, all of it kept "
					 "for "
					 "incidents or sandboxes' metadata",
					 s->path, (unsigned long long)(size - q->max_bytes));
				break;
			}
		}
	}
	/* Gives freed pages back to the file system so the file shrinks too. */
	if (deleted > 0 && store_exec(s, "PRAGMA incremental_vacuum") < 0)
		log_warn("store %s: incremental vacuum failed", s->path);
	n = 0;
out:
	sqlite3_finalize(st);
	return n < 0 ? n : deleted;
}
