/*
 * The one event model. Every source (tool-call trace, enforcer, eBPF, cgroup stats, audit, NFLOG,
 * detectors, the monitor itself) produces a struct event; the store, the HTTP API and replay
 * consume it. Common fields are typed; kind-specific fields travel as one compact JSON object
 * (`fields`) so that a new kind needs no schema change and the store binds it as text without
 * re-encoding.
 */
#ifndef FB_EVENT_H
#define FB_EVENT_H

#include <jansson.h>
#include <stdint.h>

#include "bounds.h"

enum event_source {
	EVENT_SOURCE_TRACE,    /* the agent harness's tool-call trace */
	EVENT_SOURCE_ENFORCER, /* firebreak create/exec/destroy */
	EVENT_SOURCE_EBPF,     /* process and socket tracer */
	EVENT_SOURCE_CGROUP,   /* resource stats */
	EVENT_SOURCE_AUDIT,    /* seccomp denials */
	EVENT_SOURCE_NFLOG,    /* denied packets at the gate */
	EVENT_SOURCE_DETECTOR, /* verdicts */
	EVENT_SOURCE_MONITOR,  /* the monitor about itself: loss, gaps, actions */
	EVENT_SOURCE_FANOTIFY, /* file activity and the lures (fanotify) */
	EVENT_SOURCE_PROXY,    /* the gate's L7 proxy: HTTP requests, allowed or refused */
	_EVENT_SOURCE_MAX,
};

#define EVENT_STEP_NONE (-1LL)
#define EVENT_UID_NONE (-1LL)

struct event {
	int64_t id;	    /* the store's row id; 0 until stored */
	int64_t ts;	    /* ns since the epoch */
	int64_t sandbox_id; /* the store's id for `sandbox`; 0 if not resolved */
	char sandbox[FB_NAME_MAX + 1];
	int64_t step; /* tool-call step, EVENT_STEP_NONE if none */
	char tool[FB_TOOL_MAX + 1];
	enum event_source source;
	char kind[FB_KIND_MAX + 1];
	int32_t pid;  /* 0 if none */
	int32_t ppid; /* 0 if none */
	int64_t uid;  /* EVENT_UID_NONE if none */
	char comm[FB_COMM_MAX + 1];
	char *fields; /* compact JSON object, owned; NULL means {} */
	size_t fields_len;
};

/* Resets *ev to an empty event (no step, no uid, no fields). */
void event_init(struct event *ev);

/* Frees what ev owns (its fields) and resets it; ev itself is the caller's. */
void event_clear(struct event *ev);

/* Moves src into *dst (dst is overwritten, not cleared); src is left empty. */
void event_move(struct event *dst, struct event *src);

/* Copies src into *dst, duplicating the fields; returns 0 or -ENOMEM. */
int event_copy(struct event *dst, const struct event *src);

/* Replaces ev's fields with obj encoded compactly; obj is borrowed. Returns 0, -EINVAL, -ENOMEM. */
int event_set_fields(struct event *ev, const json_t *obj);

/* Replaces ev's fields with a copy of text, which must be a JSON object; 0, -EINVAL or -ENOMEM. */
int event_set_fields_text(struct event *ev, const char *text, size_t len);

/*
 * Sets ev's fields to a copy of text, a compact JSON object the caller built itself from numbers
 * and strings that need no escaping: not parsed (the collectors' hot path). 0 or -ENOMEM.
 */
int event_take_fields(struct event *ev, const char *text, size_t len);

/* Returns ev's fields as a new JSON object (the caller decrefs), or NULL if they do not parse. */
json_t *event_get_fields(const struct event *ev);

/*
 * Typed reads of one top-level key of ev's fields (event-fields.c), for the parts that judge
 * events (the detectors, the metrics) without handling their text. The string's value, decoded
 * and cut to size - 1 bytes: 1 if key is there and a string, else 0.
 */
int event_field_str(const struct event *ev, const char *key, char *buf, size_t size);

/* The integer value of key: 1 and *ret if key is there and an integer, else 0. */
int event_field_int(const struct event *ev, const char *key, int64_t *ret);

/* Whether key is there and true. */
int event_field_true(const struct event *ev, const char *key);

/*
 * Whether the value of key, of any type (a string, an array of strings...), holds needle: printable
 * ASCII without '"' or '\\' (else 0), which an encoder writes as itself, so a match in the text is
 * a match in a value. A producer that escapes such characters needlessly (\u0061) hides them.
 */
int event_field_holds(const struct event *ev, const char *key, const char *needle);

/* Returns the encoding of ev as a new JSON object (the caller decrefs), or NULL on -ENOMEM. */
json_t *event_to_json(const struct event *ev);

/* Encodes ev as one compact JSON line without the newline into *ret (caller frees). 0 or -errno. */
int event_to_text(const struct event *ev, char **ret);

/*
 * Decodes obj into *ret (initialised here; the caller clears it). Returns 0, or -EINVAL with a
 * message naming the bad field in err.
 */
int event_from_json(const json_t *obj, struct event *ret, char *err, size_t errlen);

const char *event_source_to_string(enum event_source s);
/* Returns the source for its name, or -EINVAL. */
int event_source_from_string(const char *s);

/* Whether s is a valid sandbox name: 1..FB_NAME_MAX of [A-Za-z0-9_.-], not starting with . or -. */
int event_sandbox_name_valid(const char *s);
/* Whether s is a valid tool name: 1..FB_TOOL_MAX of [A-Za-z0-9_.:-]. */
int event_tool_name_valid(const char *s);
/* Whether s is a valid kind: 1..FB_KIND_MAX of [a-z0-9_.]. */
int event_kind_valid(const char *s);

#endif
