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
struct proc_tracer;
struct resumed_step;

/* The process records' last attribution (collectors/proc/proc-events.c), valid while gen is current. */
struct proc_attr_cache {
	uint64_t cgid, gen;
	int64_t step;
	const char *tool;
	struct store_sandbox *sb; /* NULL: empty */
};
struct proc_pending;
struct nflog_state;
struct syscall_recorder;
struct hashmap;
struct metrics;

struct daemon {
	struct config cfg;
	struct cgroup_collector *cgroup_stats;
	struct proc_tracer *proc_tracer;
	struct proc_attr_cache proc_cache;
	uint64_t proc_read;	     /* records taken from the ring buffer */
	int proc_paused;	     /* the ring is not polled: the writer's queue is full */
	uint64_t proc_read_ns;	     /* time spent taking them (and handing them to the writer) */
	uint64_t proc_events;	     /* process records stored */
	uint64_t proc_unattributed;  /* records of a cgroup no sandbox owns (dropped, counted) */
	uint64_t proc_lost[16];	     /* the kernel's reservation failures, by kind, as last seen */
	int64_t proc_lost_since;     /* when the tracer started */
	struct hashmap *proc_loss_seen; /* sandbox → its loss as last reported */
	int audit_fd;		     /* the audit read-log socket (seccomp refusals), or -1 */
	uint64_t seccomp_events;     /* refusals stored */
	uint64_t seccomp_unattributed; /* refusals of no sandbox's process (a host filter's, or gone) */
	uint64_t seccomp_unparsed;   /* audit messages that did not parse */
	uint64_t seccomp_overruns;   /* audit socket overflows: the kernel dropped records */
	struct syscall_recorder *recorders; /* the flight recorders switched on */
	size_t n_recorders;
	uint64_t syscall_events, syscall_unattributed, syscall_lost;
	struct nflog_state *nflog;   /* the gate's denied packets */
	uint64_t nflog_packets;	     /* packets read */
	uint64_t nflog_packets_stored; /* packets counted in stored net.denied events */
	uint64_t nflog_events;	     /* net.denied events stored */
	uint64_t nflog_unattributed; /* packets with no sandbox's prefix */
	uint64_t nflog_unparsed;
	uint64_t nflog_lost;	     /* packets of aggregates the store refused */
	uint64_t nflog_kernel_drops, nflog_kernel_drops_closed;
	struct proc_pending *proc_pending; /* records whose step was not reported yet */
	size_t n_proc_pending;
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
	uint64_t stats_rounds_skipped; /* cgroup samples not taken: the store's queue was full */
	struct log_ratelimit bad_input_rl;
};

/* The trace socket's protocol (trace-ingest.c) and the control socket's (control.c). */
extern const struct lineserver_ops trace_ingest_ops;
extern const struct lineserver_ops control_ops;

/* Every counter of the daemon as a new JSON object (control "stats", the shutdown log line). */
json_t *daemon_stats_json(struct daemon *d);

/* A JSON error reply {"ok":false,"line":N,"error":...,"class":...} as a malloc'd string. */
char *daemon_error_reply(uint64_t lineno, const char *cls, const char *msg);

#endif
