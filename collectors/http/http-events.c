#include "http-events.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "collectors/collector.h"
#include "config.h"
#include "counters.h"
#include "http-follow.h"
#include "http-parse.h"
#include "http-steps.h"
#include "log.h"
#include "loop.h"
#include "macro.h"
#include "names.h"
#include "policy/policy.h"
#include "procstat.h"
#include "store/registry.h"
#include "store/sink.h"
#include "store/store.h"
#include "strbuf.h"
#include "term-safe.h"
#include "timeutil.h"

/* Lines read per log per turn of the loop: one busy sandbox's log does not hold the others. */
#define HTTP_LINES_PER_POLL 512
/* How often every log is looked at besides inotify (a missed or coalesced notification). */
#define HTTP_POLL_NS (250 * NSEC_PER_MSEC)
#define HTTP_TOOLS_MAX 61 /* a link's /26 holds this many tools' addresses */

struct http_watch {
	char name[FB_NAME_MAX + 1];
	int64_t sandbox_id;
	unsigned link;
	char tools[HTTP_TOOLS_MAX][FB_TOOL_MAX + 1];
	size_t n_tools;
	struct http_follow *follow;
	struct http_steps *steps;
	int wd; /* inotify watch of the state dir; -1: none */
	int live;
	struct http_events *he;
	int64_t lines; /* lines of the current inode stored (the cursor's count) */
	/* The proxy and the sandbox's init, each by pid and start time (pids get reused): the
	 * proxy ending while the init lives is proxy.down, said once. */
	pid_t proxy_pid, init_pid;
	uint64_t proxy_start, init_start;
	int proxy_down;
};

struct http_events {
	struct collector_env env;
	struct http_watch **w;
	size_t n, cap;
	int ifd, timer_fd;
	uint64_t lines, requests, refused, unparsed, overlong, truncated, rotated, restarted;
	uint64_t no_tool, no_step, store_full, lost, read_errors, proxy_down;
};

static struct http_watch *find(struct http_events *he, const char *name)
{
	for (size_t i = 0; i < he->n; i++)
		if (strcmp(he->w[i]->name, name) == 0)
			return he->w[i];
	return NULL;
}

/*
 * A string the sandbox chose, as a JSON string: its bytes when they are UTF-8 without NUL
 * (jansson escapes the rest), otherwise as term-safe text (\xNN), so nothing is dropped or
 * changed silently and the store's JSON is always valid.
 */
static json_t *sandbox_string(const struct http_log_str *s)
{
	struct strbuf b = { 0 };
	json_t *j;

	if (!s->s)
		return json_null();
	if (!memchr(s->s, '\0', s->len) && (j = json_stringn(s->s, s->len)))
		return j;
	term_safe_add(&b, s->s, s->len);
	j = b.oom ? NULL : json_stringn(b.p ? b.p : "", b.len);
	free(b.p);
	return j ? j : json_null();
}

static json_t *num_or_null(int64_t v)
{
	return v < 0 ? json_null() : json_integer(v);
}

/* The cursor after a line: the op stores it with the line's event. */
static struct store_cursor *cursor_after(const struct http_watch *w, uint64_t inode, int64_t next)
{
	struct store_cursor *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->sandbox_id = w->sandbox_id;
	strscpy(c->source, sizeof(c->source), HTTP_EVENTS_LOG);
	c->inode = inode;
	c->offset = next;
	c->lines = w->lines + 1;
	c->updated_ts = time_now_ns();
	return c;
}

/* Submits op with its cursor; 0, or -errno (op is cleared: the line comes again on restart). */
static int submit(struct http_watch *w, struct writer_op *op, json_t *f, uint64_t inode,
		  int64_t next)
{
	struct http_events *he = w->he;
	int r;

	op->cursor = cursor_after(w, inode, next);
	if (!op->cursor) {
		json_decref(f);
		writer_op_clear(op);
		return -ENOMEM;
	}
	if ((r = sink_submit_event(he->env.sink, op, f)) < 0) {
		he->lost++;
		return r;
	}
	w->lines++;
	return 0;
}

/* A line that does not parse: the monitor cannot see what the proxy did, so it is a loss. */
static int line_lost(struct http_watch *w, const char *why, uint64_t inode, int64_t next,
		     int64_t len)
{
	struct store_sandbox *sb = registry_find(w->he->env.registry, w->name);
	struct writer_op op;

	w->he->unparsed++;
	if (!sb)
		return -ENOENT;
	writer_event_init(&op, sb, time_now_ns(), EVENT_STEP_NONE, NULL, EVENT_SOURCE_MONITOR,
			  "monitor.loss");
	return submit(w, &op,
		      json_pack("{s:s, s:I, s:s, s:I, s:I}", "stage", "proxy log", "unparsed", 1,
				"error", why, "offset", (json_int_t)(next - len - 1), "length",
				(json_int_t)len),
		      inode, next);
}

static json_t *line_fields(const struct http_log_line *l, const char *reason, int step_ambiguous)
{
	json_t *f = json_pack(
		"{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:s, s:i, s:b}", "method",
		sandbox_string(&l->method), "scheme", sandbox_string(&l->scheme), "host",
		sandbox_string(&l->host), "sni", sandbox_string(&l->sni), "path",
		sandbox_string(&l->path), "status", num_or_null(l->status), "status_upstream",
		num_or_null(l->status_upstream), "bytes_up", num_or_null(l->bytes_in), "bytes_down",
		num_or_null(l->bytes_out), "body_upstream", num_or_null(l->body_upstream),
		"duration_ms", num_or_null(l->duration_ms), "client", l->client, "client_port",
		l->client_port, "decoy", l->decoy);

	if (!f)
		return NULL;
	if (l->port >= 0)
		json_object_set_new(f, "port", json_integer(l->port));
	if (l->rule[0])
		json_object_set_new(f, "rule", json_string(l->rule));
	if (reason)
		json_object_set_new(f, "reason", json_string(reason));
	if (l->refused_rule[0])
		json_object_set_new(f, "refused_rule", json_string(l->refused_rule));
	if (l->credential[0])
		json_object_set_new(f, "credential", json_string(l->credential));
	if (l->err[0])
		json_object_set_new(f, "error", json_string(l->err));
	if (l->upstream[0])
		json_object_set_new(f, "upstream", json_string(l->upstream));
	if (l->path.cut)
		json_object_set_new(f, "path_cut", json_true());
	if (step_ambiguous)
		json_object_set_new(f, "step_ambiguous", json_true());
	return f;
}

/* Why the proxy refused it, or NULL: it was let through. A decoy is refused whatever else. */
static const char *refusal(const struct http_log_line *l)
{
	if (l->decoy)
		return "decoy";
	return http_refusal_name(l->refused);
}

static int on_line(const char *text, size_t len, uint64_t inode, int64_t next, void *data)
{
	struct http_watch *w = data;
	struct http_events *he = w->he;
	static struct http_log_line l; /* 9 KiB of storage: the loop's thread only */
	struct store_sandbox *sb = registry_find(he->env.registry, w->name);
	const char *why, *tool = NULL, *reason;
	int64_t step = EVENT_STEP_NONE, start;
	struct writer_op op;
	int t, ambiguous = 0;

	if (sink_full(he->env.sink))
		return 1; /* back off: the line is read again next turn */
	he->lines++;
	if (http_log_parse(text, len, &l, &why) < 0)
		return line_lost(w, why, inode, next, (int64_t)len) == -ENOMEM;
	if (!sb)
		return 0;
	/* The source address names the tool: the enforcer gave each tool its own (names.h). */
	t = egress_tool_of_address(w->link, w->n_tools, l.family, l.client_addr);
	if (t >= 0)
		tool = w->tools[t];
	else
		he->no_tool++;
	start = l.ts_ns - (l.duration_ms > 0 ? l.duration_ms * (int64_t)NSEC_PER_MSEC : 0);
	if (tool && http_steps_at(w->steps, tool, start, &step, &ambiguous) == 0)
		he->no_step++;
	reason = refusal(&l);
	writer_event_init(&op, sb, l.ts_ns, step, tool, EVENT_SOURCE_PROXY,
			  reason ? "http.refused" : "http.request");
	if (submit(w, &op, line_fields(&l, reason, ambiguous), inode, next) < 0)
		return 0; /* counted in lost; the cursor did not move with it */
	if (reason)
		he->refused++;
	else
		he->requests++;
	return 0;
}

/* What the follower saw besides lines: a line it could not read whole, a truncation, a loss. */
static void on_note(enum http_follow_note what, uint64_t inode, int64_t offset, void *data)
{
	struct http_watch *w = data;
	struct http_events *he = w->he;
	struct store_sandbox *sb = registry_find(he->env.registry, w->name);
	struct writer_op op;
	const char *stage = NULL;

	switch (what) {
	case HTTP_FOLLOW_OVERLONG:
		he->overlong++;
		stage = "proxy log line too long or cut";
		break;
	case HTTP_FOLLOW_TRUNCATED:
		he->truncated++;
		stage = "proxy log truncated";
		break;
	case HTTP_FOLLOW_ROTATED:
		he->rotated++;
		w->lines = 0;
		return;
	case HTTP_FOLLOW_RESTARTED:
		he->restarted++;
		w->lines = 0;
		return;
	}
	if (!sb)
		return;
	/* Past the lost part: a restart must not find it again. A truncation starts at 0. */
	writer_event_init(&op, sb, time_now_ns(), EVENT_STEP_NONE, NULL, EVENT_SOURCE_MONITOR,
			  "monitor.loss");
	if (what == HTTP_FOLLOW_TRUNCATED)
		w->lines = 0; /* the cursor counts the new content's entries */
	submit(w, &op,
	       json_pack("{s:s, s:I, s:I}", "stage", stage, "unparsed", 1, "offset",
			 (json_int_t)offset),
	       inode, what == HTTP_FOLLOW_TRUNCATED ? 0 : offset);
}

static const struct http_follow_ops follow_ops = { .line = on_line, .note = on_note };

static void poll_one(struct http_watch *w)
{
	int r = http_follow_poll(w->follow, HTTP_LINES_PER_POLL);

	if (r < 0) {
		w->he->read_errors++;
		log_debug("sandbox %s: %s: %s", w->name, HTTP_EVENTS_LOG, strerror(-r));
	}
}

/* The proxy's pid from its pid file (written at create, before the sandbox registers). */
static void proxy_learn(struct http_watch *w)
{
	char path[PATH_MAX + 32], buf[32] = "";
	FILE *f;
	int pid;

	if (config_sandbox_path(w->he->env.cfg, w->name, HTTP_EVENTS_PROXY_PID, path,
				sizeof(path)) < 0 ||
	    !(f = fopen(path, "re")))
		return;
	if (fgets(buf, sizeof(buf), f) && sscanf(buf, "%d", &pid) == 1 && pid > 1) {
		w->proxy_pid = pid;
		w->proxy_start = proc_start_time(pid);
	}
	fclose(f);
}

/*
 * Whether the sandbox's proxy ended while the sandbox lives: its egress on the proxied ports is
 * refused from then on (fail closed: the gate still redirects there), which no honest tool
 * causes; a crash may be an attack on squid. A destroy ends the sandbox's init first (its cgroup
 * is killed before its proxy is stopped), so a destroy is never taken for it.
 */
static void proxy_check(struct http_watch *w)
{
	struct store_sandbox *sb;
	struct writer_op op;

	if (w->proxy_down || !w->init_pid)
		return;
	if (!w->proxy_pid) {
		proxy_learn(w);
		return;
	}
	/* A start time of 0: gone already when learnt (the daemon was down meanwhile). */
	if ((w->proxy_start && proc_start_time(w->proxy_pid) == w->proxy_start) ||
	    proc_start_time(w->init_pid) != w->init_start)
		return;
	if (!(sb = registry_find(w->he->env.registry, w->name)))
		return;
	poll_one(w); /* its last lines first */
	w->proxy_down = 1;
	w->he->proxy_down++;
	writer_event_init(&op, sb, time_now_ns(), EVENT_STEP_NONE, NULL, EVENT_SOURCE_PROXY,
			  "proxy.down");
	if (sink_submit_event(
		    w->he->env.sink, &op,
		    json_pack("{s:i, s:s}", "pid", (int)w->proxy_pid, "reason",
			      "the sandbox's L7 proxy ended: its HTTP and HTTPS egress is "
			      "refused (fail closed) until the sandbox is made again")) < 0)
		w->he->lost++;
}

static void poll_all(struct http_events *he)
{
	for (size_t i = 0; i < he->n; i++)
		if (he->w[i]->live)
			poll_one(he->w[i]);
}

static void on_inotify(struct loop *l, int fd, uint32_t events, void *data)
{
	struct http_events *he = data;
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));

	/* Which watch fired does not matter much: each poll is cheap (a stat and a pread). */
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	poll_all(he);
}

static void on_timer(struct loop *l, uint64_t n, void *data)
{
	struct http_events *he = data;

	poll_all(he);
	for (size_t i = 0; i < he->n; i++)
		if (he->w[i]->live)
			proxy_check(he->w[i]);
}

/* The sandbox's link to the gate, from the enforcer's state.json (0: none), and its init. */
static unsigned sandbox_link(const struct config *cfg, const char *name, pid_t *init_pid,
			     uint64_t *init_start)
{
	char path[PATH_MAX + 128];
	json_t *doc;
	json_int_t k, pid, start;

	*init_pid = 0;
	*init_start = 0;
	if (config_sandbox_path(cfg, name, "state.json", path, sizeof(path)) < 0)
		return 0;
	doc = json_load_file(path, 0, NULL);
	k = json_integer_value(json_object_get(doc, "link"));
	pid = json_integer_value(json_object_get(doc, "init_pid"));
	start = json_integer_value(json_object_get(doc, "init_start"));
	json_decref(doc);
	if (pid > 1 && start > 0) {
		*init_pid = (pid_t)pid;
		*init_start = (uint64_t)start;
	}
	return k > 0 && k < 65536 ? (unsigned)k : 0;
}

/* The cursor this log was left at, from the store (read-only: the writer thread owns it). */
static void load_cursor(const struct config *cfg, int64_t sandbox_id, struct store_cursor *ret)
{
	struct store *s;

	memset(ret, 0, sizeof(*ret));
	if (store_open(cfg->db, STORE_READ_ONLY, &s) < 0)
		return;
	if (store_cursor_get(s, sandbox_id, HTTP_EVENTS_LOG, ret) < 0)
		memset(ret, 0, sizeof(*ret));
	store_close(s);
}

static int add_watch(struct http_events *he, struct http_watch *w)
{
	if (he->n == he->cap) {
		size_t cap = he->cap ? 2 * he->cap : 16;
		struct http_watch **v = realloc(he->w, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		he->w = v;
		he->cap = cap;
	}
	he->w[he->n++] = w;
	return 0;
}

static void watch_free(struct http_watch *w)
{
	if (!w)
		return;
	if (w->wd >= 0)
		inotify_rm_watch(w->he->ifd, w->wd);
	http_follow_free(w->follow);
	http_steps_free(w->steps);
	free(w);
}

static int watch_new(struct http_events *he, const struct store_sandbox *sb, unsigned link,
		     const struct policy *p, struct http_watch **ret)
{
	struct http_watch *w = calloc(1, sizeof(*w));
	char dir[PATH_MAX], path[PATH_MAX + 32];
	struct store_cursor c;
	int r;

	if (!w)
		return -ENOMEM;
	w->he = he;
	w->wd = -1;
	w->sandbox_id = sb->id;
	w->link = link;
	strscpy(w->name, sizeof(w->name), sb->name);
	for (size_t t = 0; p && t < policy_tool_count(p) && t < HTTP_TOOLS_MAX; t++)
		strscpy(w->tools[w->n_tools++], FB_TOOL_MAX + 1, policy_tool_name(p, t));
	load_cursor(he->env.cfg, sb->id, &c);
	w->lines = c.inode ? c.lines : 0;
	if ((r = config_sandbox_path(he->env.cfg, sb->name, "", dir, sizeof(dir))) < 0 ||
	    (r = config_sandbox_path(he->env.cfg, sb->name, HTTP_EVENTS_LOG, path, sizeof(path))) <
		    0 ||
	    (r = http_follow_new(path, c.inode, c.offset, &follow_ops, w, &w->follow)) < 0 ||
	    (r = http_steps_new(&w->steps)) < 0) {
		watch_free(w);
		return r;
	}
	/* The log appears after the watch: watch the directory, where it will be made. */
	w->wd = inotify_add_watch(
		he->ifd, dir, IN_CREATE | IN_MODIFY | IN_MOVED_TO | IN_CLOSE_WRITE | IN_ONLYDIR);
	w->live = 1;
	*ret = w;
	return 0;
}

int http_events_watch(struct http_events *he, const struct store_sandbox *sb,
		      const struct policy *p)
{
	struct http_watch *w;
	uint64_t init_start;
	pid_t init_pid;
	unsigned link;
	int r;

	if (!he || registry_adopted(sb))
		return 0; /* an adopted cgroup has no gate link, so no proxy */
	if ((w = find(he, sb->name))) {
		w->live = 1;
		return 0;
	}
	if (!(link = sandbox_link(he->env.cfg, sb->name, &init_pid, &init_start)))
		return 0; /* no egress: no proxy */
	if ((r = watch_new(he, sb, link, p, &w)) < 0)
		return log_errno(r, "sandbox %s: follow its proxy log", sb->name);
	w->init_pid = init_pid;
	w->init_start = init_start;
	proxy_learn(w);
	/* Read from the next poll on, once the steps running now are known (a restart). */
	if ((r = add_watch(he, w)) < 0) {
		watch_free(w);
		return r;
	}
	return 0;
}

void http_events_unwatch(struct http_events *he, const struct store_sandbox *sb)
{
	struct http_watch *w = he ? find(he, sb->name) : NULL;

	if (!w || !w->live)
		return;
	poll_one(w); /* the proxy is stopped before the sandbox is marked destroyed */
	w->live = 0;
	if (w->wd >= 0)
		inotify_rm_watch(he->ifd, w->wd);
	w->wd = -1;
}

void http_events_step_start(struct http_events *he, const char *sandbox, int64_t step,
			    const char *tool, int64_t ts)
{
	struct http_watch *w = he ? find(he, sandbox) : NULL;

	if (w)
		http_steps_start(w->steps, step, tool, ts);
}

void http_events_step_end(struct http_events *he, const char *sandbox, int64_t step, int64_t ts)
{
	struct http_watch *w = he ? find(he, sandbox) : NULL;

	if (!w)
		return;
	poll_one(w); /* its last lines while the step is still known to run */
	http_steps_end(w->steps, step, ts);
}

static const struct counter_def counters[] = {
	{ "lines", COUNTER_TOTAL, "proxy log lines read", COUNTER_AT(struct http_events, lines) },
	{ "requests", COUNTER_TOTAL, "http.request events stored",
	  COUNTER_AT(struct http_events, requests) },
	{ "refused", COUNTER_TOTAL, "http.refused events stored",
	  COUNTER_AT(struct http_events, refused) },
	{ "unparsed", COUNTER_TOTAL, "proxy log lines that did not parse (each a monitor.loss)",
	  COUNTER_FAMILY_LOST, "proxy_log_unparsed", COUNTER_AT(struct http_events, unparsed) },
	{ "overlong", COUNTER_TOTAL, "proxy log lines too long or cut off (each a monitor.loss)",
	  COUNTER_FAMILY_LOST, "proxy_log_overlong", COUNTER_AT(struct http_events, overlong) },
	{ "truncated", COUNTER_TOTAL,
	  "proxy logs that shrank under the reader (each a monitor.loss)", COUNTER_FAMILY_LOST,
	  "proxy_log_truncated", COUNTER_AT(struct http_events, truncated) },
	{ "rotated", COUNTER_TOTAL, "proxy logs replaced at their path (the old read to its end)",
	  COUNTER_AT(struct http_events, rotated) },
	{ "restarted", COUNTER_TOTAL, "cursors naming a file gone: the new one read from its start",
	  COUNTER_AT(struct http_events, restarted) },
	{ "no_tool", COUNTER_TOTAL, "lines whose client address is none of the sandbox's tools'",
	  COUNTER_AT(struct http_events, no_tool) },
	{ "no_step", COUNTER_TOTAL, "lines of a tool with no one step running then",
	  COUNTER_AT(struct http_events, no_step) },
	{ "lost", COUNTER_TOTAL,
	  "events the writer refused (their lines are read again on restart)", COUNTER_FAMILY_LOST,
	  "proxy_store", COUNTER_AT(struct http_events, lost) },
	{ "read_errors", COUNTER_TOTAL, "failed reads of a proxy log (tried again)",
	  COUNTER_AT(struct http_events, read_errors) },
	{ "proxy_down", COUNTER_TOTAL, "sandboxes' proxies that ended while the sandbox lived",
	  COUNTER_AT(struct http_events, proxy_down) },
};

int http_events_new(const struct collector_env *env, struct http_events **ret)
{
	struct http_events *he = calloc(1, sizeof(*he));
	int r;

	if (!he)
		return -ENOMEM;
	he->env = *env;
	he->timer_fd = -1;
	if ((he->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0) {
		free(he);
		return -errno;
	}
	if ((r = loop_add(env->loop, he->ifd, EPOLLIN, on_inotify, he)) < 0 ||
	    (r = he->timer_fd = loop_add_timer(env->loop, HTTP_POLL_NS, on_timer, he)) < 0 ||
	    (r = counters_add(env->counters, "proxy", counters, ARRAY_SIZE(counters), he)) < 0) {
		http_events_free(he);
		return r;
	}
	*ret = he;
	return 0;
}

void http_events_free(struct http_events *he)
{
	if (!he)
		return;
	poll_all(he);
	if (he->timer_fd >= 0)
		loop_remove(he->env.loop, he->timer_fd);
	loop_remove(he->env.loop, he->ifd);
	for (size_t i = 0; i < he->n; i++)
		watch_free(he->w[i]);
	free(he->w);
	close(he->ifd);
	counters_remove(he->env.counters, he);
	free(he);
}
