/*
 * GET /metrics: the core's counters (its snapshot over the channel, monitor/metrics.c) and the
 * child's own, in Prometheus' text format, named by its conventions (docs/api.md lists them).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http-child.h"
#include "strbuf.h"
#include "macro.h"
#include "store/store.h"

static void family(struct strbuf *t, const char *name, const char *type, const char *help)
{
	strbuf_printf(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value as the format wants it: backslash, quote and newline escaped. */
static const char *label(const char *v, char *buf, size_t size)
{
	size_t n = 0;

	for (; v && *v && n + 3 < size; v++) {
		if (*v == '\\' || *v == '"') {
			buf[n++] = '\\';
			buf[n++] = *v;
		} else if (*v == '\n') {
			buf[n++] = '\\';
			buf[n++] = 'n';
		} else {
			buf[n++] = *v;
		}
	}
	buf[n] = '\0';
	return buf;
}

/* One sample per element of arr: {"a": ..., "b": ..., "n": N}. */
static void pairs(struct strbuf *t, const char *name, json_t *arr, const char *a, const char *b)
{
	char va[256], vb[256];
	size_t i;
	json_t *e;

	json_array_foreach (arr, i, e) {
		strbuf_printf(t, "%s{%s=\"%s\",%s=\"%s\"} %lld\n", name, a,
			      label(json_string_value(json_object_get(e, a)), va, sizeof(va)), b,
			      label(json_string_value(json_object_get(e, b)), vb, sizeof(vb)),
			      (long long)json_integer_value(json_object_get(e, "n")));
	}
}

/*
 * The counter registry's families (lib/counters.h): [{name, type, help, label_key, scale,
 * series: [{label, value}]}], each series one sample.
 */
static void registry_families(struct strbuf *t, json_t *families)
{
	char buf[256];
	size_t i, j;
	json_t *f, *e;

	json_array_foreach (families, i, f) {
		const char *name = json_string_value(json_object_get(f, "name"));
		const char *key = json_string_value(json_object_get(f, "label_key"));
		double scale = json_number_value(json_object_get(f, "scale"));

		if (!name)
			continue;
		family(t, name, json_string_value(json_object_get(f, "type")),
		       json_string_value(json_object_get(f, "help")));
		json_array_foreach (json_object_get(f, "series"), j, e) {
			long long v = (long long)json_integer_value(json_object_get(e, "value"));

			strbuf_printf(t, "%s", name);
			if (key)
				strbuf_printf(t, "{%s=\"%s\"}", key,
					      label(json_string_value(json_object_get(e, "label")),
						    buf, sizeof(buf)));
			if (scale == 1)
				strbuf_printf(t, " %lld\n", v);
			else
				strbuf_printf(t, " %.3f\n", (double)v * scale);
		}
	}
}

/* The verdict-to-action latency as a Prometheus histogram (cumulative buckets). */
static void latency_histogram(struct strbuf *t, json_t *lat)
{
	long long cumulative = 0;
	size_t i;
	json_t *e;

	family(t, "firebreak_verdict_action_latency_seconds", "histogram",
	       "From the event that triggered a verdict to its action done.");
	json_array_foreach (json_object_get(lat, "buckets"), i, e) {
		long long le = (long long)json_integer_value(json_array_get(e, 0));

		cumulative += (long long)json_integer_value(json_array_get(e, 1));
		if (le < 0)
			strbuf_printf(t,
				      "firebreak_verdict_action_latency_seconds_bucket{le=\"+Inf\"}"
				      " %lld\n",
				      cumulative);
		else
			strbuf_printf(
				t,
				"firebreak_verdict_action_latency_seconds_bucket{le=\"%g\"} %lld\n",
				(double)le / 1e9, cumulative);
	}
	strbuf_printf(t, "firebreak_verdict_action_latency_seconds_sum %.9f\n",
		      (double)json_integer_value(json_object_get(lat, "sum_ns")) / 1e9);
	strbuf_printf(t, "firebreak_verdict_action_latency_seconds_count %lld\n",
		      (long long)json_integer_value(json_object_get(lat, "count")));
}

/* Each live sandbox's resource use, from its latest stats. */
static void sandbox_gauges(struct strbuf *t, json_t *sandboxes)
{
	char buf[256];
	size_t i;
	json_t *e;

	struct {
		const char *name, *type, *help, *key;
		double scale;
	} per[] = {
		{ "firebreak_sandbox_cpu_seconds_total", "counter",
		  "CPU time a live sandbox's cgroup used.", "cpu_us", 1e-6 },
		{ "firebreak_sandbox_memory_bytes", "gauge", "Memory a live sandbox's cgroup uses.",
		  "memory", 1 },
		{ "firebreak_sandbox_pids", "gauge", "Tasks in a live sandbox's cgroup.", "pids",
		  1 },
	};
	for (size_t k = 0; k < ARRAY_SIZE(per); k++) {
		family(t, per[k].name, per[k].type, per[k].help);
		json_array_foreach (sandboxes, i, e) {
			json_int_t x = json_integer_value(json_object_get(e, per[k].key));

			if (x >= 0)
				strbuf_printf(
					t, "%s{sandbox=\"%s\"} %.6g\n", per[k].name,
					label(json_string_value(json_object_get(e, "sandbox")), buf,
					      sizeof(buf)),
					(double)x * per[k].scale);
		}
	}
}

static void core_metrics(struct strbuf *t, json_t *m)
{
	json_t *lat = json_object_get(m, "latency"), *v;
	const char *key;
	char buf[256];

	family(t, "firebreak_events_total", "counter",
	       "Events on their way to the store, by source and kind.");
	pairs(t, "firebreak_events_total", json_object_get(m, "events"), "source", "kind");
	family(t, "firebreak_verdicts_total", "counter",
	       "Detector verdicts, by rule and severity.");
	pairs(t, "firebreak_verdicts_total", json_object_get(m, "verdicts"), "rule", "severity");
	family(t, "firebreak_actions_total", "counter",
	       "Freezes, thaws, kills and quarantines, by action and result.");
	pairs(t, "firebreak_actions_total", json_object_get(m, "actions"), "action", "result");
	latency_histogram(t, lat);
	family(t, "firebreak_sandboxes", "gauge", "Sandboxes the monitor knows, by state.");
	json_object_foreach (json_object_get(m, "sandboxes_by_state"), key, v)
		strbuf_printf(t, "firebreak_sandboxes{state=\"%s\"} %lld\n",
			      label(key, buf, sizeof(buf)), (long long)json_integer_value(v));

	sandbox_gauges(t, json_object_get(m, "sandboxes"));
	registry_families(t, json_object_get(m, "counters"));
}

char *http_metrics_text(struct http_child *hc, unsigned *ret_status)
{
	const char *none = "";
	size_t zero = 0;
	char *reply = NULL;
	struct strbuf t = { 0 };
	json_t *r, *m;
	uint64_t size = 0;
	struct store *s;
	int rc = channel_call(hc->chan, "metrics", &none, &zero, 1, &reply);

	*ret_status = rc == -ETIMEDOUT ? 504 : 503;
	if (rc < 0 || !reply) {
		free(reply);
		return NULL;
	}
	r = json_loads(reply, 0, NULL);
	free(reply);
	m = json_object_get(r, "metrics");
	if (!json_is_object(m)) {
		json_decref(r);
		*ret_status = 502;
		return NULL;
	}
	core_metrics(&t, m);
	json_decref(r);

	s = store_pool_get(&hc->pool);
	rc = store_size(s, &size);
	store_pool_put(&hc->pool, s);
	family(&t, "firebreak_store_size_bytes", "gauge", "Bytes the store's live data occupies.");
	if (rc == 0)
		strbuf_printf(&t, "firebreak_store_size_bytes %llu\n", (unsigned long long)size);
	family(&t, "firebreak_http_responses_total", "counter",
	       "HTTP responses of the API, by status class.");
	for (int c = 1; c <= 5; c++)
		strbuf_printf(&t, "firebreak_http_responses_total{code=\"%dxx\"} %llu\n", c,
			      (unsigned long long)atomic_load(&hc->by_code[c]));
	family(&t, "firebreak_http_stream_clients", "gauge",
	       "Clients of the live event stream now.");
	strbuf_printf(&t, "firebreak_http_stream_clients %llu\n",
		      (unsigned long long)atomic_load(&hc->sse_clients));
	family(&t, "firebreak_http_connections", "gauge", "HTTP connections open now.");
	strbuf_printf(&t, "firebreak_http_connections %llu\n",
		      (unsigned long long)atomic_load(&hc->connections));
	family(&t, "firebreak_http_closed_timeout_total", "counter",
	       "HTTP requests cut off by http_idle_timeout (nothing sent or read for that long).");
	strbuf_printf(&t, "firebreak_http_closed_timeout_total %llu\n",
		      (unsigned long long)atomic_load(&hc->closed_timeout));
	if (t.oom) {
		free(t.p);
		*ret_status = 500;
		return NULL;
	}
	return t.p;
}
