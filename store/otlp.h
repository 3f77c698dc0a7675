/*
 * A sandbox's window of time as one OpenTelemetry trace, in OTLP/HTTP JSON: a span per tool call
 * (`execute_tool {tool}`, the GenAI names), the kernel's events as its span events, each verdict
 * as a child span (`apply_guardrail`, the gen_ai.security.* names), and the rest under a root
 * span for the sandbox. Tool calls the harness sent a W3C traceparent for join that trace.
 * Built from the store alone, so the API and the exporter give the same trace. docs/export.md.
 */
#ifndef FB_OTLP_H
#define FB_OTLP_H

#include <jansson.h>
#include <stdint.h>

#include "store.h"

/* Span events kept per span; the rest are counted in droppedEventsCount. */
#define OTLP_EVENTS_PER_SPAN 2000

struct otlp_window {
	const struct store_sandbox *sb;
	int64_t since, until; /* ns since the epoch; until 0: no end */
	int64_t incident_id;  /* 0: the sandbox's history, not an incident */
};

/* Builds the trace in *ret ({"resourceSpans":[...]}); 0 or -errno. */
int otlp_trace(struct store *s, const struct otlp_window *w, json_t **ret);

#endif
