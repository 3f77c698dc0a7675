/*
 * The exporter's process (monitor/export.h): one thread, a round every 250 ms. Each target has
 * its own cursor and backoff; the cursor moves only past what the target acknowledged (2xx).
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "detectors/detect.h"
#include "export-main.h"
#include "hashmap.h"
#include "jail.h"
#include "http-post.h"
#include "store/incident.h"
#include "child.h"
#include "log.h"
#include "macro.h"
#include "store/otlp.h"
#include "store/store.h"
#include "timeutil.h"

#define STATE_FD 3
#define LOKI_BATCH 1000
#define PUSH_TIMEOUT_MS 5000
#define BACKOFF_MIN_NS (500 * NSEC_PER_MSEC)
#define BACKOFF_MAX_NS (30 * NSEC_PER_SEC)
/* An incident is sent once nothing was added to it for this long (or it closed). */
#define INCIDENT_SETTLED_NS (2 * NSEC_PER_SEC)

struct target {
	const char *name;
	const struct endpoint *ep;
	uint64_t next_ns, backoff_ns;
};

/* After a push: on to the next at once if it was full, else a round later; backoff if it failed. */
static void schedule(struct target *t, int ok, int more)
{
	uint64_t now = time_mono_ns();

	if (ok) {
		t->backoff_ns = 0;
		t->next_ns = more ? now : now + 250 * NSEC_PER_MSEC;
		return;
	}
	t->backoff_ns = t->backoff_ns ? t->backoff_ns * 2 : BACKOFF_MIN_NS;
	if (t->backoff_ns > BACKOFF_MAX_NS)
		t->backoff_ns = BACKOFF_MAX_NS;
	t->next_ns = now + t->backoff_ns;
}

/*
 * 0 delivered; -EAGAIN to be tried again (no answer, 5xx, 408, 429); -EBADMSG refused for good
 * (another 4xx: the same batch would be refused again, so it is counted and passed over rather
 * than holding up everything after it).
 */
static int push(struct target *t, const char *body, size_t len)
{
	int status = 0,
	    r = http_post(t->ep, "application/json", body, len, PUSH_TIMEOUT_MS, &status);

	if (r == 0 && status / 100 == 2)
		return 0;
	log_warn("%s push to %s:%s%s failed: %s%d%s", t->name, t->ep->host, t->ep->port,
		 t->ep->path, r < 0 ? strerror(-r) : "HTTP ", r < 0 ? 0 : status,
		 r == 0 && status / 100 == 4 && status != 408 && status != 429
			 ? " (refused for good: passed over)"
			 : "");
	return r == 0 && status / 100 == 4 && status != 408 && status != 429 ? -EBADMSG : -EAGAIN;
}

/* Loki: streams keyed by their labels, each line the event's JSON. */
struct stream {
	char key[FB_NAME_MAX + FB_TOOL_MAX + FB_KIND_MAX + 32];
	json_t *labels, *values;
};

struct loki_batch {
	struct hashmap *streams;
	struct stream *list[LOKI_BATCH];
	size_t n_streams, lines;
	int64_t last_id;
};

static int loki_add(const struct event *ev, void *data)
{
	struct loki_batch *b = data;
	char severity[16] = "info", ts[24], *text;
	struct stream *st;
	char key[sizeof(st->key)];

	if (strcmp(ev->kind, "verdict") == 0)
		event_field_str(ev, "severity", severity, sizeof(severity));
	snprintf(key, sizeof(key), "%s\t%s\t%s\t%s", ev->sandbox, ev->tool, ev->kind, severity);
	if (!(st = hashmap_get(b->streams, key))) {
		if (!(st = calloc(1, sizeof(*st))))
			return -ENOMEM;
		memcpy(st->key, key, sizeof(key));
		st->labels = json_pack("{s:s, s:s, s:s, s:s}", "sandbox",
				       ev->sandbox[0] ? ev->sandbox : "-", "tool",
				       ev->tool[0] ? ev->tool : "-", "kind", ev->kind, "severity",
				       severity);
		st->values = json_array();
		b->list[b->n_streams++] = st;
		if (hashmap_put(b->streams, st->key, st) < 0)
			return -ENOMEM;
	}
	if (event_to_text(ev, &text) < 0)
		return -ENOMEM;
	snprintf(ts, sizeof(ts), "%" PRId64, ev->ts);
	json_array_append_new(st->values, json_pack("[s, s]", ts, text));
	free(text);
	b->lines++;
	b->last_id = ev->id;
	return 0;
}

static int loki_round(struct store *s, struct target *t, struct export_state *st)
{
	struct loki_batch b = { 0 };
	json_t *streams = json_array(), *body;
	char *text = NULL;
	int r;

	if (hashmap_new(&b.streams) < 0)
		return -ENOMEM;
	r = store_events_after(s, st->loki_after, LOKI_BATCH, loki_add, &b);
	for (size_t i = 0; i < b.n_streams; i++) {
		json_array_append_new(streams, json_pack("{s:o, s:o}", "stream", b.list[i]->labels,
							 "values", b.list[i]->values));
		free(b.list[i]);
	}
	hashmap_free(b.streams);
	body = json_pack("{s:o}", "streams", streams);
	if (r == 0 && b.lines && body && (text = json_dumps(body, JSON_COMPACT))) {
		r = push(t, text, strlen(text));
		if (r == 0) {
			st->loki_pushes++;
			st->loki_lines += b.lines;
		} else {
			st->loki_errors++;
		}
		if (r == 0 || r == -EBADMSG)
			st->loki_after = b.last_id;
	}
	free(text);
	json_decref(body);
	schedule(t, r == 0 || r == -EBADMSG, b.lines == LOKI_BATCH);
	return r;
}

/* The oldest incident not yet sent, if it has settled. */
struct next_incident {
	int64_t after;
	struct store_incident inc;
};

static int oldest_after(const struct store_incident *inc, void *data)
{
	struct next_incident *n = data;

	if (inc->id > n->after && (!n->inc.id || inc->id < n->inc.id))
		n->inc = *inc;
	return 0;
}

static int latest_detection(const struct store_detection_row *det, void *data)
{
	int64_t *ts = data;

	if (det->ts > *ts)
		*ts = det->ts;
	return 0;
}

static int otlp_round(struct store *s, struct target *t, struct export_state *st)
{
	struct next_incident n = { .after = st->otlp_after };
	struct incident_story story;
	struct otlp_window w = { 0 };
	struct store_sandbox sb;
	int64_t last = 0;
	json_t *trace = NULL;
	char *text;
	int r;

	if ((r = store_incident_list(s, 0, oldest_after, &n)) < 0 || !n.inc.id) {
		schedule(t, r == 0, 0);
		return r;
	}
	store_incident_detections(s, n.inc.id, latest_detection, &last);
	if (!n.inc.end_ts && time_now_ns() - last < INCIDENT_SETTLED_NS) {
		schedule(t, 1, 0); /* still growing: later */
		return 0;
	}
	if ((r = incident_story(s, &n.inc, &story)) < 0 ||
	    (r = store_sandbox_find(s, n.inc.sandbox, &sb)) < 0) {
		schedule(t, 0, 0);
		return r;
	}
	w = (struct otlp_window){ .sb = &sb,
				  .since = story.since,
				  .until = n.inc.end_ts ? n.inc.end_ts + 1 : 0,
				  .incident_id = n.inc.id };
	if ((r = otlp_trace(s, &w, &trace)) < 0 || !(text = json_dumps(trace, JSON_COMPACT))) {
		json_decref(trace);
		schedule(t, 0, 0);
		return r < 0 ? r : -ENOMEM;
	}
	r = push(t, text, strlen(text));
	if (r == 0 || r == -EBADMSG)
		st->otlp_after = n.inc.id;
	if (r == 0) {
		st->otlp_pushes++;
		st->otlp_spans += json_array_size(json_object_get(
			json_array_get(
				json_object_get(
					json_array_get(json_object_get(trace, "resourceSpans"), 0),
					"scopeSpans"),
				0),
			"spans"));
	} else {
		st->otlp_errors++;
	}
	free(text);
	json_decref(trace);
	schedule(t, r == 0 || r == -EBADMSG, r == 0 || r == -EBADMSG);
	return r;
}

static void save(const struct export_state *st)
{
	char buf[EXPORT_STATE_SIZE];

	export_state_encode(st, buf);
	if (pwrite(STATE_FD, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
		log_warn("exporter: could not save where it is; it will send some again");
}

int export_main(const struct config *cfg, int foreground)
{
	struct target loki = { .name = "Loki", .ep = &cfg->loki };
	struct target otlp = { .name = "OTLP", .ep = &cfg->otlp };
	struct export_state st = { 0 };
	struct store *s = NULL;
	char buf[EXPORT_STATE_SIZE];
	sigset_t stop;
	ssize_t n;
	int64_t id;
	int r;

	child_begin("firebreakd-exp", "firebreakd-export", STATE_FD, foreground, &stop);
	n = pread(STATE_FD, buf, sizeof(buf), 0);
	if (n > 0 && export_state_decode(buf, (size_t)n, &st) < 0)
		log_warn("exporter: its state file did not parse; starting from the beginning");
	if ((r = store_open(cfg->db, STORE_READ_ONLY, &s)) < 0 ||
	    (r = store_max_id(s, "events", &id)) < 0)
		return log_errno(r, "exporter: store %s", cfg->db), 1;
	if (jail_enter(cfg, 1) < 0)
		return 1;
	log_info("exporter ready: from event %lld (Loki) and incident %lld (OTLP)",
		 (long long)st.loki_after, (long long)st.otlp_after);
	for (;;) {
		struct timespec tick = { 0, 50 * 1000 * 1000 };
		struct export_state before = st;
		uint64_t now = time_mono_ns();
		int sig;

		if (loki.ep->host[0] && now >= loki.next_ns)
			loki_round(s, &loki, &st);
		if (otlp.ep->host[0] && now >= otlp.next_ns)
			otlp_round(s, &otlp, &st);
		if (memcmp(&before, &st, sizeof(st)) != 0)
			save(&st);
		sig = sigtimedwait(&stop, NULL, &tick);
		if (sig == SIGTERM || sig == SIGINT || getppid() == 1)
			break;
	}
	store_close(s);
	return 0;
}
