/* firebreakd's state, shared by its handlers (all on the loop's thread). */
#ifndef FB_DAEMON_H
#define FB_DAEMON_H

#include <jansson.h>
#include <sys/types.h>

#include "config.h"
#include "child.h"
#include "export.h"
#include "lineserver.h"
#include "log.h"
#include "loop.h"
#include "detectors/detect.h"
#include "store/registry.h"
#include "trace.h"
#include "store/writer.h"

enum { LINESERVER_TRACE = 1, LINESERVER_CONTROL = 2, LINESERVER_HTTP = 3 };

struct trace_counters {
	uint64_t accepted;   /* stored as new */
	uint64_t duplicates; /* already stored: acknowledged, not stored again */
	uint64_t refused[_TRACE_ERR_MAX];
	uint64_t store_failed;
};

struct cgroup_collector;
struct counters;
struct hashmap;
struct metrics;
struct nflog_events;
struct proc_events;
struct resumed_step;
struct seccomp_events;
struct syscall_events;

struct daemon {
	struct config cfg;
	struct counters *counters; /* every module's counters (lib/counters.h) */
	/* The collectors, each owning its state (collectors/NAME/NAME-events.h); NULL: not running. */
	struct cgroup_collector *cgroup_stats;
	struct proc_events *proc;
	struct seccomp_events *seccomp;
	struct syscall_events *syscalls;
	struct nflog_events *nflog;
	/* The detectors (monitor/verdicts.c). */
	struct hashmap *detect;	     /* sandbox name -> its detectors */
	struct hashmap *open_incidents; /* sandbox name -> its incident left open in the store */
	struct hashmap *exec_scopes;	/* "sandbox/step" -> its in-kernel exec confinement */
	struct hashmap *policies;	/* policy hash -> its text (monitor/policies.c) */
	struct resumed_step *resumed_steps; /* found running at start-up (monitor/adopt.c) */
	size_t n_resumed_steps;
	struct detect_config detect_cfg;
	void *detect_fresh;	     /* a sandbox's detectors that just fed their first event */
	void *pending_verdicts;	     /* verdicts waiting for the op that triggered them to queue */
	size_t n_pending_verdicts;
	int64_t next_detection_id, next_incident_id;
	uint64_t verdicts, verdicts_dropped;
	int watchdog_fd;	     /* the pipe to the watchdog (monitor/watchdog.h), or -1 */
	pid_t watchdog_pid;
	char *watchdog_sent;	     /* the watched list as last sent */
	uint64_t watchdog_restarts;
	struct loop *loop;
	struct writer *writer;
	struct registry *registry;
	struct lineserver *trace;
	struct lineserver *control;
	/* The HTTP API (monitor/http-core.c): its unprivileged child and the channel to it. */
	struct metrics *metrics;
	struct lineserver *http;     /* the channel's requests, as one client */
	int http_listen_fd;	     /* the TCP socket the child serves, or -1 (listen = off) */
	int http_port;		     /* its port (the configured one, or the one given for 0) */
	struct child http_child;
	struct child export_child;   /* the exporter (monitor/export.h) */
	int export_state_fd;	     /* its state file, or -1 (no endpoint) */
	struct export_state export_last; /* as last read whole: counters only grow */
	uint64_t http_refused;	     /* channel requests refused by the dispatch table */
	char **argv;		     /* the daemon's own arguments: the child gets them too */
	gid_t group; /* the firebreak group, or (gid_t)-1 */
	int64_t started_ns;
	struct trace_counters trace_counters;
	uint64_t control_refused;
	struct log_ratelimit bad_input_rl;
};

/* The trace socket's protocol (trace-ingest.c) and the control socket's (control.c). */
extern const struct lineserver_ops trace_ingest_ops;
extern const struct lineserver_ops control_ops;

/* Registers the daemon's own counters (and its store writer's and sockets'); 0 or -ENOMEM. */
int daemon_add_counters(struct daemon *d);

/* Every counter of the daemon as a new JSON object (control "stats", the shutdown log line). */
json_t *daemon_stats_json(struct daemon *d);

/* A JSON error reply {"ok":false,"line":N,"error":...,"class":...} as a malloc'd string. */
char *daemon_error_reply(uint64_t lineno, const char *cls, const char *msg);

#endif
