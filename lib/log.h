/*
 * The one log module. The level is checked before the arguments are evaluated, so a debug line in a
 * hot path costs one comparison when debug is off (Redis serverLog). log_errno() returns its
 * (negative) error so a handler can log and return in one statement.
 */
#ifndef FB_LOG_H
#define FB_LOG_H

#include "macro.h"

enum log_level { LOG_LEVEL_ERROR, LOG_LEVEL_WARN, LOG_LEVEL_INFO, LOG_LEVEL_DEBUG };

extern enum log_level log_max_level;

/* Parses "error", "warn", "info" or "debug"; returns the level or -EINVAL. */
int log_level_from_string(const char *s);
const char *log_level_to_string(enum log_level level);

/* Sends lines to syslog (daemon mode) instead of stderr; ident must outlive the program. */
void log_use_syslog(const char *ident);

/* Prefixes each stderr line with a timestamp and the program name (daemons in the foreground). */
void log_set_stamp(const char *progname);

struct strbuf;

/*
 * While set (non-NULL), error and warning lines are also appended to *b, one per line, as the
 * caller of a service would be shown them (the exec launcher relays a tool call's errors to the
 * `firebreak exec` that asked for it). NULL stops it.
 */
void log_capture(struct strbuf *b);

/* Writes one line; returns -abs(err) when err is non-zero, else 0. Use the macros below. */
int log_internal(enum log_level level, int err, const char *file, int line, const char *fmt, ...)
	_printf_(5, 6);

#define log_full_errno(level, err, ...)                                                            \
	({                                                                                         \
		int _err = (err);                                                                  \
		(log_max_level >= (level))                                                         \
			? log_internal(level, _err, __FILE__, __LINE__, __VA_ARGS__)               \
			: -abs(_err);                                                              \
	})

#define log_error(...) log_full_errno(LOG_LEVEL_ERROR, 0, __VA_ARGS__)
#define log_warn(...) log_full_errno(LOG_LEVEL_WARN, 0, __VA_ARGS__)
#define log_info(...) log_full_errno(LOG_LEVEL_INFO, 0, __VA_ARGS__)
#define log_debug(...) log_full_errno(LOG_LEVEL_DEBUG, 0, __VA_ARGS__)
#define log_errno(err, ...) log_full_errno(LOG_LEVEL_ERROR, err, __VA_ARGS__)
#define log_warn_errno(err, ...) log_full_errno(LOG_LEVEL_WARN, err, __VA_ARGS__)
#define log_debug_errno(err, ...) log_full_errno(LOG_LEVEL_DEBUG, err, __VA_ARGS__)

/*
 * A rate limit for log lines driven by outside input (bad trace lines), so a hostile client cannot
 * flood the log: at most `burst` lines per `interval_ns`; the rest are counted and reported once.
 */
struct log_ratelimit {
	unsigned long long interval_ns;
	unsigned burst;
	unsigned long long window_start;
	unsigned in_window;
	unsigned long long suppressed;
};

/* Returns 1 if a line may be written now; on the first line after suppression, says how many. */
int log_ratelimit_ok(struct log_ratelimit *rl);

#endif
