/* firebreakd's state, shared by its handlers (all on the loop's thread). */
#ifndef FB_DAEMON_H
#define FB_DAEMON_H

#include <jansson.h>
#include <sys/types.h>

#include "config.h"
#include "lineserver.h"
#include "log.h"
#include "loop.h"
#include "store/registry.h"
#include "trace.h"
#include "store/sink.h"
#include "store/writer.h"

enum { LINESERVER_TRACE = 1, LINESERVER_CONTROL = 2, LINESERVER_HTTP = 3 };

struct cgroup_collector;
struct control_state;
struct counters;
struct dns_events;
struct export_core;
struct hashmap;
struct http_core;
struct lure_events;
struct metrics;
struct nflog_events;
struct proc_events;
struct file_events;
struct resumed_steps;
struct seccomp_events;
struct syscall_events;
struct trace_ingest;
struct verdicts;
struct watchdog_link;

/* What firebreakd knows of itself: set once in main, read by everyone. */
struct daemon_self {
	char **argv;	    /* its own arguments: its children get them too */
	gid_t group;	    /* the firebreak group, or (gid_t)-1 */
	int64_t started_ns; /* wall clock */
};

/*
 * The wiring: a pointer to each module's own state, nothing else. Each module defines its struct
 * in its own .c and is reached through its header's functions (docs/architecture.md).
 */
struct daemon {
	const struct config *cfg;
	const struct daemon_self *self;
	struct counters *counters; /* every module's counters (lib/counters.h) */
	/* The collectors, each owning its state (collectors/NAME/NAME-events.h); NULL: not running.
	 */
	struct cgroup_collector *cgroup_stats;
	struct proc_events *proc;
	struct file_events *files;
	struct seccomp_events *seccomp;
	struct syscall_events *syscalls;
	struct nflog_events *nflog;
	struct lure_events *lures;
	struct dns_events *dns;
	struct http_events *http_log; /* the L7 proxy's access logs (collectors/http/) */
	/* The detectors (monitor/verdicts.c). */
	struct verdicts *verdicts;	/* the detector stage (monitor/verdicts.c) */
	struct killer *killer;		/* the kill path's real-time thread (monitor/killer.h) */
	struct hashmap *exec_scopes;	/* "sandbox/step" -> its in-kernel exec confinement */
	struct hashmap *policies;	/* policy hash -> its text (monitor/policies.c) */
	struct resumed_steps *resumed;	/* found running at start-up (monitor/adopt.c) */
	struct watchdog_link *watchdog; /* the link to the watchdog (monitor/watchdog.h) */
	struct loop *loop;
	struct writer *writer; /* the store's writer thread (store/writer.h) */
	struct sink *sink;     /* where every event goes: ids, the stage, the writer */
	struct registry *registry;
	struct lineserver *trace;
	struct lineserver *control;
	/* The HTTP API (monitor/http-core.c): its unprivileged child and the channel to it. */
	struct metrics *metrics;
	struct lineserver *http;	     /* the channel's requests, as one client */
	struct http_core *http_core;	     /* its socket, its child (monitor/http-core.c) */
	struct export_core *export;	     /* the exporter child (monitor/export-core.c) */
	struct trace_ingest *trace_ingest;   /* the trace protocol's counters (trace-ingest.c) */
	struct control_state *control_state; /* the control protocol's (control.c) */
};

/* The trace socket's protocol (trace-ingest.c) and the control socket's (control.c). */
extern const struct lineserver_ops trace_ingest_ops;
extern const struct lineserver_ops control_ops;

/* The trace protocol's state and counters, made before any trace line is read; 0 or -errno. */
int trace_ingest_init(struct daemon *d);
void trace_ingest_free(struct daemon *d);

/* Registers the daemon's own counters (and its store writer's and sockets'); 0 or -ENOMEM. */
int daemon_add_counters(struct daemon *d);

/* Every counter of the daemon as a new JSON object (control "stats", the shutdown log line). */
json_t *daemon_stats_json(struct daemon *d);

/* A JSON error reply {"ok":false,"line":N,"error":...,"class":...} as a malloc'd string. */
char *daemon_error_reply(uint64_t lineno, const char *cls, const char *msg);

#endif
