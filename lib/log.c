#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <syslog.h>
#include <time.h>

#include "strbuf.h"
#include "term-safe.h"
#include "timeutil.h"

enum log_level log_max_level = LOG_LEVEL_INFO;

static int use_syslog;
static const char *stamp_progname;
static struct strbuf *capture;

static const char *const level_names[] = {
	[LOG_LEVEL_ERROR] = "error",
	[LOG_LEVEL_WARN] = "warn",
	[LOG_LEVEL_INFO] = "info",
	[LOG_LEVEL_DEBUG] = "debug",
};

int log_level_from_string(const char *s)
{
	for (size_t i = 0; i < ARRAY_SIZE(level_names); i++)
		if (strcmp(s, level_names[i]) == 0)
			return (int)i;
	return -EINVAL;
}

const char *log_level_to_string(enum log_level level)
{
	return (unsigned)level < ARRAY_SIZE(level_names) ? level_names[level] : "?";
}

void log_use_syslog(const char *ident)
{
	openlog(ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
	use_syslog = 1;
}

void log_capture(struct strbuf *b)
{
	capture = b;
}

void log_set_stamp(const char *progname)
{
	stamp_progname = progname;
}

int log_internal(enum log_level level, int err, const char *file, int line, const char *fmt, ...)
{
	static const int syslog_prio[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };
	char msg[2048], safe[sizeof(msg) * TERM_SAFE_MAX_EXPANSION];
	va_list ap;
	int saved = errno;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		msg[0] = '\0';
	if (err != 0) {
		size_t len = strlen(msg);
		snprintf(msg + len, sizeof(msg) - len, ": %s", strerror(abs(err)));
	}
	/* Messages quote sandbox strings (names, paths, reasons): one line each, nothing a terminal
	 * or a log viewer would obey. */
	term_safe(msg, safe, sizeof(safe));
	if (capture && level <= LOG_LEVEL_WARN) {
		strbuf_str(capture, safe);
		strbuf_str(capture, "\n");
	}
	if (use_syslog) {
		syslog(syslog_prio[level], "%s", safe);
	} else if (stamp_progname) {
		char ts[40];

		time_format_rfc3339(time_now_ns(), ts, sizeof(ts));
		if (log_max_level >= LOG_LEVEL_DEBUG)
			fprintf(stderr, "%s %s[%s] %s (%s:%d)\n", ts, stamp_progname,
				level_names[level], safe, file, line);
		else
			fprintf(stderr, "%s %s[%s] %s\n", ts, stamp_progname, level_names[level],
				safe);
	} else {
		fprintf(stderr, "%s\n", safe);
	}
	errno = saved;
	return -abs(err);
}

int log_ratelimit_ok(struct log_ratelimit *rl)
{
	unsigned long long now = time_mono_ns();

	if (now - rl->window_start >= rl->interval_ns) {
		if (rl->suppressed > 0)
			log_warn("%llu similar log lines suppressed", rl->suppressed);
		rl->window_start = now;
		rl->in_window = 0;
		rl->suppressed = 0;
	}
	if (rl->in_window < rl->burst) {
		rl->in_window++;
		return 1;
	}
	rl->suppressed++;
	return 0;
}
