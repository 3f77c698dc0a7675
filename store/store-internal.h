/* What the store-*.c files share; nothing outside store/store-*.c includes this. */
#ifndef FB_STORE_INTERNAL_H
#define FB_STORE_INTERNAL_H

#include <sqlite3.h>

#include "store.h"

enum store_stmt {
	STMT_BEGIN,
	STMT_COMMIT,
	STMT_ROLLBACK,
	STMT_EVENT_INSERT,
	STMT_EVENT_INSERT_MANY, /* STORE_INSERT_ROWS rows in one statement */
	STMT_STEP_START,
	STMT_STEP_END,
	STMT_STEP_GET,
	STMT_SANDBOX_PUT,
	STMT_SPAN_PUT,
	_STMT_MAX,
};

/* The row ids one step's events took in the open transaction (flushed to step_spans at commit). */
struct store_span {
	int64_t sandbox_id;
	int64_t step;
	int64_t first_id;
	int64_t last_id;
};

struct store {
	sqlite3 *db;
	char *path;
	enum store_mode mode;
	int version;
	sqlite3_stmt *stmts[_STMT_MAX]; /* prepared on first use */
	struct store_span *spans;	/* this transaction's, unordered */
	size_t n_spans, cap_spans;
};

/* Notes that event id of (sandbox_id, step) was inserted; 0 or -ENOMEM. */
int store_span_note(struct store *s, int64_t sandbox_id, int64_t step, int64_t id);

/* Writes the noted spans into step_spans and forgets them; 0 or -errno. */
int store_span_flush(struct store *s);

/* Rows per multi-row event insert: one statement step per this many events, not per event. */
#define STORE_INSERT_ROWS 16

/* Translates an SQLite result code into -errno and logs SQLite's message once, with what. */
int store_error(struct store *s, int rc, const char *what);

/* Returns the prepared statement id, preparing it on first use; NULL on error (logged). */
sqlite3_stmt *store_stmt(struct store *s, enum store_stmt id);

/* Runs sql (no rows expected); returns 0 or -errno. */
int store_exec(struct store *s, const char *sql);

/*
 * Prepares sql for one call (the caller finalizes it); 0 and *ret, or -errno (SQLite's message
 * logged with what).
 */
int store_prepare(struct store *s, const char *sql, const char *what, sqlite3_stmt **ret);

/* Steps st, a statement that returns no rows, and finalizes it; 0 or -errno (logged with what). */
int store_step_done(struct store *s, sqlite3_stmt *st, const char *what);

/* Runs a one-integer query such as "PRAGMA page_count"; returns 0 and *ret, or -errno. */
int store_query_int(struct store *s, const char *sql, int64_t *ret);

/* Binds text, or NULL when text is NULL or empty. */
int store_bind_text_or_null(sqlite3_stmt *st, int idx, const char *text);

#endif
