/*
 * The agent harness's tool-call trace: one JSON object per line per tool-call phase, using
 * OpenTelemetry GenAI attribute names. Parsed here once for every ingest path (the trace socket,
 * later HTTP POST /api/v1/trace). docs/trace.md is the contract.
 */
#ifndef FB_TRACE_H
#define FB_TRACE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "bounds.h"
#include "event.h"

enum trace_phase { TRACE_PHASE_START, TRACE_PHASE_END };

/* Why a line was refused; each class has its own counter in the daemon. */
enum trace_error {
	TRACE_OK,
	TRACE_ERR_TOO_LONG,	   /* over FB_TRACE_LINE_MAX */
	TRACE_ERR_JSON,		   /* not JSON, not UTF-8, duplicate keys, trailing bytes */
	TRACE_ERR_NOT_OBJECT,	   /* valid JSON but not an object */
	TRACE_ERR_MISSING,	   /* a required attribute is absent */
	TRACE_ERR_TYPE,		   /* an attribute has the wrong JSON type */
	TRACE_ERR_VALUE,	   /* right type, bad value (name syntax, range, phase) */
	TRACE_ERR_UNKNOWN_KEY,	   /* an attribute this version does not know */
	TRACE_ERR_UNKNOWN_SANDBOX, /* the sandbox is not registered (decided by the daemon) */
	TRACE_ERR_CONFLICT,	   /* the call id is already recorded with another step or tool */
	_TRACE_ERR_MAX,
};

struct trace_record {
	char sandbox[FB_NAME_MAX + 1];
	int64_t step;
	char tool[FB_TOOL_MAX + 1];
	char call_id[FB_CALL_ID_MAX + 1];
	enum trace_phase phase;
	int64_t ts; /* ns since the epoch, 0 if the line had none */
	int has_exit_code;
	int64_t exit_code;
	char error_type[FB_ERROR_TYPE_MAX + 1];
	char traceparent[56]; /* W3C traceparent, "" if none */
	json_t *annotations;  /* owned; NULL if none */
};

/* Short stable name of an error class, for counters and metrics ("json", "too_long", ...). */
const char *trace_error_to_string(enum trace_error e);

/*
 * Parses one line (no newline; a trailing '\r' is ignored). Returns TRACE_OK and fills *ret (the
 * caller clears it with trace_record_clear), or an error class with a one-line reason in err.
 */
enum trace_error trace_parse_line(const char *line, size_t len, struct trace_record *ret, char *err,
				  size_t errlen);

/* Frees what rec owns; accepts a record that was never filled. */
void trace_record_clear(struct trace_record *rec);

/*
 * Builds the event for rec (source "trace", kind "tool_call.start" or "tool_call.end"), stamped
 * with rec->ts or, if the line had none, recv_ns. Returns 0 or -ENOMEM; the caller clears *ret.
 */
int trace_record_to_event(const struct trace_record *rec, int64_t recv_ns, struct event *ret);

#endif
