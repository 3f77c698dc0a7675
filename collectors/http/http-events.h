/*
 * The gate's L7 proxy, seen through its access log: one file per sandbox,
 * <runtime_dir>/sandboxes/NAME/proxy-access.log (lib/proxy-logformat.h), followed with inotify and
 * a timer. Each line is an http.request or an http.refused event (source "proxy") of the tool
 * whose source address made it and of that tool's step running then; a line that does not parse
 * is a monitor.loss. Each event carries the log's cursor, stored in the same transaction (schema
 * 004), so a restarted daemon goes on after the last stored line. docs/collectors.md.
 */
#ifndef FB_HTTP_EVENTS_H
#define FB_HTTP_EVENTS_H

#include <stddef.h>
#include <stdint.h>

struct collector_env;
struct policy;
struct store_sandbox;
struct http_events;

/* The file name in the sandbox's state dir, and the cursor's source name. */
#define HTTP_EVENTS_LOG "proxy-access.log"
/* The proxy's pid file there (the enforcer's EGRESS_PROXY_PID). */
#define HTTP_EVENTS_PROXY_PID "proxy.pid"

/*
 * Starts the collector: its inotify fd and timer on env->loop, its counters; reads the cursors
 * from the store at env->cfg->db (read-only: the writer owns it). 0 and *ret, or -errno.
 */
int http_events_new(const struct collector_env *env, struct http_events **ret);

/* Stops following every log (reading what is there first) and frees it; accepts NULL. */
void http_events_free(struct http_events *he);

/*
 * Follows sandbox sb's log (an enforcer's sandbox with a link to the gate; anything else is
 * ignored): its link from the enforcer's state.json, its tools' names from p, the policy it
 * runs under (borrowed for the call; NULL: no tool can be named). 0 or -errno.
 */
int http_events_watch(struct http_events *he, const struct store_sandbox *sb,
		      const struct policy *p);

/* Reads what the log holds, then stops following it (the sandbox is destroyed). */
void http_events_unwatch(struct http_events *he, const struct store_sandbox *sb);

/* The enforcer's step.start and step.end (ts: the event's): the steps a line can belong to. */
void http_events_step_start(struct http_events *he, const char *sandbox, int64_t step,
			    const char *tool, int64_t ts);
void http_events_step_end(struct http_events *he, const char *sandbox, int64_t step, int64_t ts);

#endif
