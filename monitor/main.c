/*
 * firebreakd: the out-of-band monitor. One epoll loop on this thread; the store's writer on a
 * thread of its own. See docs/firebreakd.md.
 */
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <libgen.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "adopt.h"
#include "control.h"
#include "exec-scope.h"
#include "hashmap.h"
#include "policies.h"
#include "collectors/cgroup/cgroup-events.h"
#include "collectors/collector.h"
#include "collectors/dns/dns-events.h"
#include "collectors/http/http-events.h"
#include "counters.h"
#include "daemon.h"
#include "collectors/file/file-events.h"
#include "collectors/proc/proc-events.h"
#include "collectors/lure/lure-events.h"
#include "collectors/nflog/nflog-events.h"
#include "collectors/seccomp/seccomp-events.h"
#include "collectors/syscall/syscall-events.h"
#include "macro.h"
#include "store/store.h"
#include "timeutil.h"
#include "unixsock.h"
#include "killer.h"
#include "verdicts.h"
#include "watchdog.h"
#include "export.h"
#include "http.h"
#include "metrics.h"

#ifndef FB_VERSION
#define FB_VERSION "0.1"
#endif

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: firebreakd [OPTIONS]\n"
		"The Firebreak monitor: records the agent's tool-call trace and the sandboxes'\n"
		"events in a SQLite store and acts on what it sees.\n\n"
		"  -c, --config FILE       config file (default " FB_DEFAULT_CONFIG ")\n"
		"      --db PATH           the store (default " FB_DEFAULT_DB ")\n"
		"      --runtime-dir DIR   sockets and pid file (default " FB_DEFAULT_RUNTIME_DIR
		")\n"
		"      --listen ADDR:PORT  the HTTP API's address (default " FB_DEFAULT_LISTEN ")\n"
		"  -f, --foreground        stay in the foreground and log to stderr\n"
		"      --log-level LEVEL   error, warn, info or debug\n"
		"  -h, --help              this text\n"
		"      --version           the version\n");
}

/* Creates dir (and its parents) with mode, owned by root and group gid where gid is set. */
static int make_dir(const char *dir, mode_t mode, gid_t gid)
{
	char tmp[PATH_MAX];

	if (strscpy(tmp, sizeof(tmp), dir) < 0)
		return -ENAMETOOLONG;
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, mode) < 0 && errno != EEXIST)
		return -errno;
	if (chmod(tmp, mode) < 0)
		return -errno;
	if (gid != (gid_t)-1 && chown(tmp, 0, gid) < 0)
		return -errno;
	return 0;
}

/* Holds an exclusive lock on path for the life of the process: one daemon per store / dir. */
static int lock_file(const char *path, const char *what)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);

	if (fd < 0)
		return log_errno(-errno, "open %s", path);
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int r = -errno;
		close(fd);
		if (r == -EWOULDBLOCK)
			return log_error("another firebreakd already uses %s %s", what, path),
			       -EBUSY;
		return log_errno(r, "lock %s", path);
	}
	return fd;
}

static int write_pid_file(int fd)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());

	if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, (size_t)n, 0) != n)
		return -errno;
	return 0;
}

/*
 * Detaches from the terminal. The parent stays until the child says it is ready (its sockets
 * listen) or failed, so `firebreakd && firebreak ...` works. Returns the fd the child writes its
 * readiness to, or -errno; the parent never returns.
 */
static int daemonize(void)
{
	int p[2];
	pid_t pid;
	char status = 1;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		close(p[1]);
		if (read(p[0], &status, 1) != 1)
			status = 1;
		_exit(status);
	}
	close(p[0]);
	if (setsid() < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0)
		_exit(0);
	if (chdir("/") < 0)
		return -errno;
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (null > 2)
			close(null);
	}
	return p[1];
}

static void on_writer(struct loop *l, int fd, uint32_t events, void *data);

static void complete_one(const struct writer_completion *c, void *data)
{
	struct daemon *d = data;

	switch (lineserver_token_server(c->token)) {
	case LINESERVER_TRACE:
		lineserver_complete(d->trace, c);
		break;
	case LINESERVER_CONTROL:
		lineserver_complete(d->control, c);
		break;
	case LINESERVER_HTTP:
		if (d->http) {
			lineserver_complete(d->http, c);
			break;
		}
		/* The API was stopped: like a completion for no known server. */
		__attribute__((fallthrough));
	default:
		free(c->msg);
		log_error("a store completion for no known server (token %llx)",
			  (unsigned long long)c->token);
	}
}

static void on_writer(struct loop *l, int fd, uint32_t events, void *data)
{
	struct daemon *d = data;
	int full;

	writer_dispatch(d->writer, complete_one, d);
	lineserver_flush(d->trace);
	lineserver_flush(d->control);
	lineserver_flush(d->http);
	/* Backpressure: reading from clients pauses while the writer's queue is full. */
	full = sink_full(d->sink);
	lineserver_pause(d->trace, full);
	lineserver_pause(d->control, full);
	lineserver_pause(d->http, full);
	proc_events_backpressure(d->proc);
}

static void on_tick(struct loop *l, uint64_t n, void *data)
{
	struct daemon *d = data;

	lineserver_tick(d->trace);
	lineserver_tick(d->control);
	lineserver_tick(d->http);
	adopt_reap(d); /* an adopted container that ended */
	if (sink_full(d->sink)) {
		lineserver_pause(d->trace, 1);
		lineserver_pause(d->control, 1);
		lineserver_pause(d->http, 1);
	}
}

/* The process tracer's ring buffer wakes us only past its watermark: drain it often besides. */
static void on_proc_tick(struct loop *l, uint64_t n, void *data)
{
	struct daemon *d = data;

	proc_events_drain(d->proc);
	syscall_events_drain(d->syscalls);
}

static void on_watchdog_tick(struct loop *l, uint64_t n, void *data)
{
	watchdog_tick(data);
	http_tick(data); /* a dead HTTP child or exporter, due to start again */
	export_tick(data);
}

static void on_signal(struct loop *l, int signo, void *data)
{
	struct daemon *d = data;
	json_t *stats;
	char *text;

	if (signo == SIGHUP)
		return; /* reserved for reloading the config; ignored until there is one */
	log_info("signal %d: flushing every accepted event, then exiting", signo);
	watchdog_stop(d); /* a clean stop: nothing is to be frozen */
	http_stop(d);	  /* the API first: no new requests while the rest drains */
	export_stop(d);
	lineserver_stop_input(d->trace);
	lineserver_stop_input(d->control);
	killer_stop(d); /* what it still confirms is recorded, before the sink stops */
	/* writer_stop applies everything queued; then the last acks go out. */
	sink_stop(d->sink);
	writer_dispatch(d->writer, complete_one, d);
	lineserver_flush_and_close(d->trace, NSEC_PER_SEC);
	lineserver_flush_and_close(d->control, NSEC_PER_SEC);
	stats = daemon_stats_json(d);
	text = stats ? json_dumps(stats, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	log_info("stopped: %s", text ? text : "(no stats)");
	free(text);
	json_decref(stats);
	loop_quit(l, 0);
}

static int listen_socket(struct daemon *d, const char *name)
{
	char path[PATH_MAX];
	int r = config_socket_path(d->cfg, name, path, sizeof(path));

	if (r < 0)
		return log_errno(r, "socket path in %s", d->cfg->runtime_dir);
	/* Root, and the firebreak group where one exists; nobody else. */
	r = unixsock_listen(path, d->self->group != (gid_t)-1 ? 0660 : 0600, d->self->group);
	if (r < 0)
		return log_errno(r, "listen on %s", path);
	return r;
}

static int start_servers(struct daemon *d)
{
	struct lineserver_config tc = {
		.name = "trace",
		.id = LINESERVER_TRACE,
		.line_max = FB_TRACE_LINE_MAX,
		.clients_max = d->cfg->trace_clients_max,
		.idle_timeout_ns = (uint64_t)d->cfg->trace_idle_timeout_ns,
		.stall_timeout_ns = (uint64_t)d->cfg->trace_stall_timeout_ns,
		.reply_buffer_max = d->cfg->trace_reply_buffer_max,
		.request_timeout_ns = (uint64_t)d->cfg->trace_request_timeout_ns,
		.clients_per_uid_max = d->cfg->socket_clients_per_uid_max,
		.group = d->self->group,
	};
	struct lineserver_config cc = tc;
	int fd, r;

	cc.name = "control";
	cc.id = LINESERVER_CONTROL;
	cc.line_max = FB_CONTROL_MSG_MAX;
	cc.clients_max = d->cfg->control_clients_max;
	if ((fd = listen_socket(d, FB_TRACE_SOCKET)) < 0)
		return fd;
	if ((r = lineserver_new(d->loop, d->writer, fd, &tc, &trace_ingest_ops, d, &d->trace)) <
	    0) {
		close(fd);
		return log_errno(r, "trace socket");
	}
	if ((fd = listen_socket(d, FB_CONTROL_SOCKET)) < 0)
		return fd;
	if ((r = lineserver_new(d->loop, d->writer, fd, &cc, &control_ops, d, &d->control)) < 0) {
		close(fd);
		return log_errno(r, "control socket");
	}
	return 0;
}

/* The proxy logs' follower, and every live sandbox's log (the others read their registry). */
static int start_http_log(struct daemon *d, const struct collector_env *env)
{
	struct store_sandbox *sb;
	size_t pos = 0;
	int r;

	if ((r = http_events_new(env, &d->http_log)) < 0)
		return r;
	while ((sb = registry_next(d->registry, &pos)))
		if (registry_live(sb))
			adopt_http_watch(d, sb);
	adopt_http_steps(d);
	return 0;
}

/*
 * The collectors, each given the loop, the sink, the registry and the counters. The process
 * tracer and the audit stream may be missing on a host (logged: their events are not recorded);
 * the others are needed.
 */
static int start_collectors(struct daemon *d)
{
	const struct collector_env env = { .loop = d->loop,
					   .sink = d->sink,
					   .registry = d->registry,
					   .cfg = d->cfg,
					   .counters = d->counters };
	int r;

	/* First: the steps found running (forgotten once the tracer confines them) are its too. */
	if ((r = start_http_log(d, &env)) < 0)
		return log_errno(r, "L7 proxy log collector");
	if ((r = proc_events_new(&env, &d->proc)) < 0)
		log_errno(r,
			  "the process tracer did not start: no process events will be recorded");
	else if ((r = loop_add_timer(d->loop, 20 * NSEC_PER_MSEC, on_proc_tick, d)) < 0)
		return log_errno(r, "process tracer timer");
	else
		adopt_resume_steps(d); /* the steps still running are confined again */
	if ((r = syscall_events_new(&env, &d->syscalls)) < 0)
		return log_errno(r, "syscall recorder");
	if ((r = nflog_events_new(&env, &d->nflog)) < 0)
		return log_errno(r, "NFLOG reader");
	if ((r = dns_events_new(&env, &d->dns)) < 0)
		log_errno(r, "the DNS tracer did not start: no DNS events will be recorded");
	if ((r = seccomp_events_new(&env, d->proc ? proc_events_task_cgroup : NULL, d->proc,
				    &d->seccomp)) < 0)
		log_errno(
			r,
			"the audit stream could not be read: no seccomp refusals will be recorded");
	if ((r = file_events_new(&env, &d->files)) < 0)
		log_errno(r, "fanotify did not start: no file events will be recorded");
	if ((r = cgroup_collector_new(&env, &d->cgroup_stats)) < 0)
		return log_errno(r, "cgroup stats collector");
	if ((r = lure_events_new(&env, &d->lures)) < 0)
		return log_errno(r, "lure collector (fanotify)");
	return 0;
}

/* What the command line said: flags win over the config file, so they are applied after it. */
struct daemon_flags {
	const char *config_path;
	int required; /* the file was named: it must exist */
	const char *key[8], *val[8];
	int n;
};

/* Reads the options into f (exits on --help, --version and bad usage). */
static void read_flags(int argc, char **argv, struct daemon_flags *f, int *foreground)
{
	enum { OPT_DB = 256, OPT_RUNTIME, OPT_LISTEN, OPT_LOG_LEVEL, OPT_VERSION };
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "db", required_argument, NULL, OPT_DB },
		{ "runtime-dir", required_argument, NULL, OPT_RUNTIME },
		{ "listen", required_argument, NULL, OPT_LISTEN },
		{ "foreground", no_argument, NULL, 'f' },
		{ "log-level", required_argument, NULL, OPT_LOG_LEVEL },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "c:fh", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			f->config_path = optarg;
			f->required = 1;
			break;
		case 'f':
			*foreground = 1;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case OPT_VERSION:
			printf("firebreakd %s\n", FB_VERSION);
			exit(0);
		case OPT_DB:
		case OPT_RUNTIME:
		case OPT_LISTEN:
		case OPT_LOG_LEVEL:
			if (f->n == (int)ARRAY_SIZE(f->key)) {
				fprintf(stderr, "firebreakd: too many options\n");
				exit(2);
			}
			f->key[f->n] = c == OPT_DB	  ? "db"
				       : c == OPT_RUNTIME ? "runtime_dir"
				       : c == OPT_LISTEN  ? "listen"
							  : "log_level";
			f->val[f->n++] = optarg;
			break;
		default:
			usage(stderr);
			exit(2);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "firebreakd: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		exit(2);
	}
}

static int parse_args(int argc, char **argv, struct config *cfg, int *foreground)
{
	struct daemon_flags f = { .config_path = FB_DEFAULT_CONFIG };
	char err[160];

	read_flags(argc, argv, &f, foreground);
	if (config_load(cfg, f.config_path, f.required) < 0)
		return -EINVAL;
	for (int i = 0; i < f.n; i++) {
		if (config_set(cfg, f.key[i], f.val[i], err, sizeof(err)) < 0) {
			fprintf(stderr, "firebreakd: --%s: %s\n", f.key[i], err);
			exit(2);
		}
	}
	return 0;
}

/*
 * This binary run again as one of the daemon's helpers (watchdog, HTTP child, exporter): returns
 * its exit code, or -1 if argv is the daemon's own.
 */
static int run_helper(int argc, char **argv, struct config *cfg)
{
	int foreground = 0;
	int (*helper_main)(const struct config *cfg, int foreground);

	/* The watchdog: started by a daemon (monitor/watchdog.h). */
	if (argc == 3 && strcmp(argv[1], "--watchdog") == 0)
		return watchdog_main(argv[2]);
	/* The HTTP child and the exporter get the daemon's own arguments after their flag. */
	if (argc >= 2 && strcmp(argv[1], "--http-child") == 0)
		helper_main = http_child_main;
	else if (argc >= 2 && strcmp(argv[1], "--exporter") == 0)
		helper_main = export_main;
	else
		return -1;
	argv[1] = argv[0];
	if (parse_args(argc - 1, argv + 1, cfg, &foreground) < 0)
		return 1;
	log_max_level = cfg->log_level;
	return helper_main(cfg, foreground);
}

static const int signals[] = { SIGTERM, SIGINT, SIGHUP };

/*
 * Descriptors up to the hard limit: each sandbox holds a dozen here (its launcher's connection,
 * its mounts' marks, its cgroup files, its hooks' links), and a soft limit of 1024, the default
 * for select()'s sake, would end the watching near the 80th; firebreakd uses epoll only.
 */
static void raise_fd_limit(void)
{
	struct rlimit rl;
	rlim_t was;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max)
		return;
	was = rl.rlim_cur;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
		log_warn("open files limit stays %llu: %s", (unsigned long long)was,
			 strerror(errno));
}

/*
 * glibc raises its mmap threshold to the size of any mmapped block freed, up to 32 MiB, and its
 * trim threshold to twice that: after one burst freed the store queue's arrays, free memory at
 * the top of a thread's heap was kept resident for good (malloc_trim does not trim a thread
 * arena's top), 6 MiB of the writer's after a storm, measured (bench/bench_memory.sh). Fixed
 * thresholds: big blocks are their own mappings, gone when freed; a heap gives back what is free
 * at its top past 1 MiB.
 */
static void fixed_malloc_thresholds(void)
{
	mallopt(M_MMAP_THRESHOLD, 256 << 10);
	mallopt(M_TRIM_THRESHOLD, 1 << 20);
}

/*
 * The process itself: signals blocked before any thread starts (only the loop's signalfd ever
 * receives them), detached unless in the foreground, logging set up, its group found. 0 and
 * *ret_ready_fd, the fd to report readiness on (-1: none), or -errno (logged).
 */
static int begin_process(struct daemon_self *self, int foreground, int *ret_ready_fd)
{
	struct group *gr;
	sigset_t mask;
	int ready_fd = -1;

	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	for (size_t i = 0; i < ARRAY_SIZE(signals); i++)
		sigaddset(&mask, signals[i]);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	if (!foreground) {
		if ((ready_fd = daemonize()) < 0)
			return log_errno(ready_fd, "daemonize");
		log_use_syslog("firebreakd");
	} else {
		log_set_stamp("firebreakd");
	}
	self->started_ns = time_now_ns();
	self->group = (gr = getgrnam(FB_GROUP)) ? gr->gr_gid : (gid_t)-1;
	raise_fd_limit();
	*ret_ready_fd = ready_fd;
	return 0;
}

/*
 * The runtime dir and the store's dir (root's, readable by the firebreak group only), and the
 * locks that make this the one daemon of both. 0 or -errno (logged).
 */
static int take_dirs(const struct config *cfg, const struct daemon_self *self, int *ret_pid_fd,
		     int *ret_db_lock_fd)
{
	mode_t mode = self->group != (gid_t)-1 ? 0750 : 0700;
	char path[PATH_MAX + 64], dbdir[PATH_MAX];
	int r;

	if ((r = make_dir(cfg->runtime_dir, mode, self->group)) < 0)
		return log_errno(r, "runtime dir %s", cfg->runtime_dir);
	strscpy(dbdir, sizeof(dbdir), cfg->db);
	if ((r = make_dir(dirname(dbdir), mode, self->group)) < 0)
		return log_errno(r, "store dir for %s", cfg->db);
	snprintf(path, sizeof(path), "%s/%s", cfg->runtime_dir, FB_PID_FILE);
	if ((*ret_pid_fd = lock_file(path, "runtime dir")) < 0)
		return *ret_pid_fd;
	snprintf(path, sizeof(path), "%s.lock", cfg->db);
	if ((*ret_db_lock_fd = lock_file(path, "store")) < 0)
		return *ret_db_lock_fd;
	write_pid_file(*ret_pid_fd);
	return 0;
}

/*
 * What the store says, read before the writer owns it: the sandboxes, the detectors' ids and
 * open incidents, the policies, the steps still running. Then the writer takes the store.
 */
static int load_store(struct daemon *d, struct store *store)
{
	const struct config *cfg = d->cfg;
	struct writer_config wc = {
		.batch_max = cfg->batch_max,
		.queue_max = cfg->queue_max,
		.queue_max_bytes = cfg->queue_max_bytes,
		.retention = { .max_age_ns = cfg->retention_max_age_ns,
			       .max_bytes = cfg->retention_max_bytes },
		.retention_interval_ns = (uint64_t)cfg->retention_interval_ns,
	};
	int r;

	if (!cfg->sync_full)
		store_set_synchronous_full(store, 0);
	if ((r = counters_new(&d->counters)) < 0)
		return log_errno(r, "counters");
	if ((r = registry_new(&d->registry)) < 0 || (r = registry_load(d->registry, store)) < 0)
		return log_errno(r, "load sandboxes");
	if ((r = verdicts_init(d, store)) < 0 || (r = policies_init(d, store)) < 0)
		return log_errno(r, "detectors");
	if ((r = adopt_load_steps(d, store)) < 0)
		return log_errno(r, "running steps");
	if ((r = writer_new(store, &wc, &d->writer)) < 0)
		return log_errno(r, "start the store writer");
	if ((r = sink_new(d->writer, &d->sink)) < 0)
		return log_errno(r, "the sink");
	return 0;
}

/* The loop, the detectors on the writer's queue, the sockets, the API and the exporter. */
static int start_core(struct daemon *d)
{
	int r;

	if ((r = loop_new(&d->loop)) < 0 ||
	    (r = loop_add_signals(d->loop, signals, ARRAY_SIZE(signals), on_signal, d)) < 0 ||
	    (r = loop_add(d->loop, writer_fd(d->writer), EPOLLIN, on_writer, d)) < 0 ||
	    (r = loop_add_timer(d->loop, NSEC_PER_SEC, on_tick, d)) < 0)
		return log_errno(r, "event loop");
	/* Verdicts act through the kill path's thread; then every event goes through them. */
	if ((r = killer_start(d)) < 0)
		return log_errno(r, "the kill path's thread");
	verdicts_start(d);
	/* Before the tracer starts: what runs under firebreak/ is watched whatever the store says.
	 */
	adopt_scan(d);
	if ((r = trace_ingest_init(d)) < 0 || (r = control_init(d)) < 0)
		return log_errno(r, "protocols");
	if ((r = start_servers(d)) < 0 || (r = daemon_add_counters(d)) < 0)
		return r;
	if ((r = metrics_new(&d->metrics)) < 0)
		return log_errno(r, "metrics");
	if ((r = http_init(d)) < 0 || (r = http_start(d)) < 0 || (r = export_start(d)) < 0 ||
	    (r = http_add_counters(d)) < 0 || (r = export_add_counters(d)) < 0)
		return r;
	if ((r = exec_scope_init(d)) < 0)
		return log_errno(r, "exec scopes");
	return 0;
}

/* Everything main made, in the order that lets each part flush into the next. */
static void stop_all(struct daemon *d)
{
	char path[PATH_MAX + 64];

	syscall_events_free(d->syscalls);
	exec_scope_stop(d);
	proc_events_free(d->proc);
	file_events_free(d->files);
	seccomp_events_free(d->seccomp);
	lure_events_free(d->lures);
	nflog_events_free(d->nflog);
	dns_events_free(d->dns);
	http_events_free(d->http_log);
	http_stop(d);
	http_free(d);
	export_free(d);
	lineserver_free(d->trace);
	lineserver_free(d->control);
	trace_ingest_free(d);
	control_free(d);
	metrics_free(d->metrics);
	killer_stop(d);
	verdicts_stop(d);
	adopt_forget_steps(d); /* if the tracer never started */
	writer_free(d->writer);
	sink_free(d->sink);
	policies_stop(d);
	registry_free(d->registry);
	cgroup_collector_free(d->cgroup_stats);
	counters_free(d->counters);
	loop_free(d->loop);
	snprintf(path, sizeof(path), "%s/%s", d->cfg->runtime_dir, FB_TRACE_SOCKET);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%s", d->cfg->runtime_dir, FB_CONTROL_SOCKET);
	unlink(path);
	snprintf(path, sizeof(path), "%s/%s", d->cfg->runtime_dir, FB_PID_FILE);
	unlink(path);
}

int main(int argc, char **argv)
{
	static struct config cfg;
	static struct daemon_self self;
	struct daemon d = { .cfg = &cfg, .self = &self };
	struct store *store = NULL;
	int foreground = 0, ready_fd = -1, pid_fd = -1, db_lock_fd = -1, r;

	config_defaults(&cfg);
	if ((r = run_helper(argc, argv, &cfg)) >= 0)
		return r;
	fixed_malloc_thresholds();
	self.argv = argv;
	if (parse_args(argc, argv, &cfg, &foreground) < 0)
		return 1;
	log_max_level = cfg.log_level;
	if (begin_process(&self, foreground, &ready_fd) < 0 ||
	    take_dirs(&cfg, &self, &pid_fd, &db_lock_fd) < 0)
		return 1;
	if ((r = store_open(cfg.db, STORE_READ_WRITE, &store)) < 0)
		return log_errno(r, "store %s", cfg.db), 1;
	if (load_store(&d, store) < 0 || start_core(&d) < 0 || start_collectors(&d) < 0)
		return 1;
	/* Fail closed from here on: a watchdog freezes what we watch if we die or hang. */
	if ((r = watchdog_start(&d)) < 0 ||
	    (r = loop_add_timer(d.loop, 250 * NSEC_PER_MSEC, on_watchdog_tick, &d)) < 0)
		return log_errno(r, "watchdog"), 1;
	log_info("firebreakd %s ready: store %s (schema %d), sockets in %s, %zu sandboxes",
		 FB_VERSION, cfg.db, store_version(store), cfg.runtime_dir,
		 registry_count(d.registry));
	if (ready_fd >= 0) {
		char ok = 0;
		(void)!write(ready_fd, &ok, 1);
		close(ready_fd);
	}
	r = loop_run(d.loop);
	stop_all(&d);
	close(pid_fd);
	close(db_lock_fd);
	return r < 0 ? 1 : 0;
}
