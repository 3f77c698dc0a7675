#include "event-describe.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "macro.h"

/* Appends to buf at *pos without overflowing; output past size is cut. */
_printf_(4, 5) static void append(char *buf, size_t size, size_t *pos, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*pos >= size)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *pos, size - *pos, fmt, ap);
	va_end(ap);
	if (n > 0)
		*pos += (size_t)n < size - *pos ? (size_t)n : size - *pos - 1;
}

static void describe_tool_call(const struct event *ev, json_t *f, char *buf, size_t size,
			       size_t *pos)
{
	int start = strcmp(ev->kind, "tool_call.start") == 0;
	json_t *ann = json_object_get(f, "annotations");
	const char *call = json_string_value(json_object_get(f, "call_id"));

	append(buf, size, pos, "tool call %s", start ? "started" : "ended");
	if (!start) {
		json_t *code = json_object_get(f, "exit_code");
		const char *etype = json_string_value(json_object_get(f, "error_type"));

		if (json_is_integer(code))
			append(buf, size, pos, ", exit %lld", (long long)json_integer_value(code));
		if (etype)
			append(buf, size, pos, ", error %s", etype);
	}
	if (call)
		append(buf, size, pos, " (call %s)", call);
	if (json_is_true(json_object_get(ann, "coerced"))) {
		const char *reason = json_string_value(json_object_get(ann, "reason"));

		append(buf, size, pos, " COERCED%s%s", reason ? ": " : "", reason ? reason : "");
	}
	if (ann) {
		/* The other annotations, as the harness wrote them. */
		json_t *rest = json_deep_copy(ann);
		char *text;

		json_object_del(rest, "coerced");
		json_object_del(rest, "reason");
		if (json_object_size(rest) > 0) {
			text = json_dumps(rest, JSON_COMPACT | JSON_SORT_KEYS);
			if (text)
				append(buf, size, pos, " %s", text);
			free(text);
		}
		json_decref(rest);
	}
}

/* A string field, or dflt. */
static const char *str_of(json_t *f, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(f, key));

	return s ? s : dflt;
}

/* "VERDICT net.metadata (critical): reason -> kill" and "KILL by net.metadata: ok in 157 us". */
static int describe_detection(const struct event *ev, json_t *f, char *buf, size_t size,
			      size_t *pos)
{
	char word[16];
	size_t i;

	if (strcmp(ev->kind, "verdict") == 0) {
		append(buf, size, pos, "VERDICT %s (%s): %s -> %s", str_of(f, "rule", "?"),
		       str_of(f, "severity", "?"), str_of(f, "reason", ""),
		       str_of(f, "action", "?"));
		return 1;
	}
	if (strncmp(ev->kind, "action.", 7) != 0)
		return 0;
	for (i = 0; ev->kind[7 + i] && i < sizeof(word) - 1; i++)
		word[i] = (char)toupper((unsigned char)ev->kind[7 + i]);
	word[i] = '\0';
	append(buf, size, pos, "%s by %s: %s in %lld us, %.1f ms after its trigger", word,
	       str_of(f, "requested_by", "?"), str_of(f, "result", "?"),
	       (long long)json_integer_value(json_object_get(f, "act_ns")) / 1000,
	       (double)json_integer_value(json_object_get(f, "latency_ns")) / 1e6);
	if (json_is_string(json_object_get(f, "reason")))
		append(buf, size, pos, ": %s", str_of(f, "reason", ""));
	return 1;
}

/* "DECOY ~/.aws/credentials opened by python3 (pid 12)", "TRIPWIRE write of /dev/sda refused ...".
 */
static int describe_lure(const struct event *ev, json_t *f, char *buf, size_t size, size_t *pos)
{
	if (strcmp(ev->kind, "lure.decoy") == 0)
		append(buf, size, pos, "DECOY %s opened", str_of(f, "path", "?"));
	else if (strcmp(ev->kind, "lure.tripwire") == 0)
		append(buf, size, pos, "TRIPWIRE %s of the %s %s %s", str_of(f, "op", "?"),
		       str_of(f, "lure", "?"), str_of(f, "path", "?"),
		       json_is_true(json_object_get(f, "refused")) ? "refused" : "let through");
	else
		return 0;
	append(buf, size, pos, " by %s (pid %d)", ev->comm[0] ? ev->comm : "?", ev->pid);
	return 1;
}

/*
 * "DNS A? registry.test (udp 31 bytes to 10.199.0.65) pid 7 (python3)", "DNS A registry.test:
 * NOERROR 198.51.100.7 (udp 47 bytes)", "... NXDOMAIN, refused by the gate", "DNS malformed query
 * (udp 7 bytes to 10.199.0.65): shorter than a DNS header".
 */
static int describe_dns(const struct event *ev, json_t *f, char *buf, size_t size, size_t *pos)
{
	json_t *addrs = json_object_get(f, "addrs"), *a;
	int64_t bytes = json_integer_value(json_object_get(f, "size"));
	const char *tr = str_of(f, "transport", "?"), *server = str_of(f, "server", "?");
	size_t i;

	if (strcmp(ev->kind, "dns.query") == 0) {
		append(buf, size, pos, "DNS %s? %s (%s %lld bytes to %s)", str_of(f, "type", "?"),
		       str_of(f, "name", "?"), tr, (long long)bytes, server);
	} else if (strcmp(ev->kind, "dns.answer") == 0) {
		append(buf, size, pos, "DNS %s %s: %s", str_of(f, "type", "?"),
		       str_of(f, "name", "?"), str_of(f, "rcode", "?"));
		json_array_foreach (addrs, i, a)
			append(buf, size, pos, "%s%s", i ? ", " : " ", json_string_value(a) ?: "?");
		if (json_is_true(json_object_get(f, "refused")))
			append(buf, size, pos, ", refused by the gate");
		append(buf, size, pos, " (%s %lld bytes)", tr, (long long)bytes);
	} else if (strcmp(ev->kind, "dns.malformed") == 0) {
		append(buf, size, pos, "DNS malformed %s (%s %lld bytes, %s): %s",
		       str_of(f, "direction", "?"), tr, (long long)bytes, server,
		       str_of(f, "error", "?"));
	} else {
		return 0;
	}
	if (ev->pid)
		append(buf, size, pos, " pid %d", ev->pid);
	if (ev->comm[0])
		append(buf, size, pos, " (%s)", ev->comm);
	return 1;
}

/*
 * The L7 proxy's lines in words: "HTTP GET registry.test/simple/ 200 (120 up, 5120 down, 12 ms,
 * rule registry)", "HTTP POST registry.test/upload REFUSED (rule: registry) 403".
 */
static int describe_http(const struct event *ev, json_t *f, char *buf, size_t size, size_t *pos)
{
	int refused = strcmp(ev->kind, "http.refused") == 0;
	json_t *status = json_object_get(f, "status");

	if (!refused && strcmp(ev->kind, "http.request") != 0)
		return 0;
	append(buf, size, pos, "HTTP %s %s%s", str_of(f, "method", "?"), str_of(f, "host", "?"),
	       str_of(f, "path", ""));
	if (refused) {
		append(buf, size, pos, " REFUSED (%s", str_of(f, "reason", "?"));
		if (json_is_string(json_object_get(f, "refused_rule")))
			append(buf, size, pos, ": %s", str_of(f, "refused_rule", ""));
		append(buf, size, pos, ")");
	}
	if (json_is_integer(status))
		append(buf, size, pos, " %lld", (long long)json_integer_value(status));
	append(buf, size, pos, " (%lld up, %lld down, %lld ms",
	       (long long)json_integer_value(json_object_get(f, "bytes_up")),
	       (long long)json_integer_value(json_object_get(f, "bytes_down")),
	       (long long)json_integer_value(json_object_get(f, "duration_ms")));
	if (json_is_string(json_object_get(f, "rule")))
		append(buf, size, pos, ", rule %s", str_of(f, "rule", ""));
	append(buf, size, pos, ")");
	return 1;
}

/* An integer field as a number (0 when missing). */
static long long int_of(json_t *f, const char *key)
{
	return (long long)json_integer_value(json_object_get(f, key));
}

/*
 * The process tracer's senses in words: "signal SIGTERM to sleep (pid 9), other-step:
 * delivered", "renamed python3.11 -> sshd", "accept on 127.0.0.1:8765 from 10.0.0.2:4000",
 * "OOM kill of python3 (pid 12): the allocation of python3 (pid 12)".
 * The fields follow, as for any event.
 */
static int describe_senses(const struct event *ev, json_t *f, char *buf, size_t size, size_t *pos)
{
	if (strcmp(ev->kind, "proc.oom-kill") == 0) { /* the pid is the victim's, not the actor's */
		append(buf, size, pos, "OOM kill of %s (pid %d): the allocation of %s (pid %lld)",
		       ev->comm[0] ? ev->comm : "?", ev->pid, str_of(f, "trigger_comm", "?"),
		       int_of(f, "trigger_pid"));
		return 1;
	}
	if (strcmp(ev->kind, "signal.sent") == 0)
		append(buf, size, pos, "signal %s to %s (pid %lld), %s: %s",
		       str_of(f, "signal_name", "?"), str_of(f, "target_comm", "?"),
		       int_of(f, "target_pid"), str_of(f, "where", "?"), str_of(f, "result", "?"));
	else if (strcmp(ev->kind, "proc.rename") == 0)
		append(buf, size, pos, "renamed %s -> %s (program %s)", str_of(f, "old_comm", "?"),
		       str_of(f, "new_comm", "?"), str_of(f, "exe", "?"));
	else if (strcmp(ev->kind, "net.accept") == 0)
		append(buf, size, pos, "accept on %s:%lld from %s:%lld", str_of(f, "address", "?"),
		       int_of(f, "port"), str_of(f, "peer_address", "?"), int_of(f, "peer_port"));
	else if (strcmp(ev->kind, "net.listen") == 0 || strcmp(ev->kind, "net.bind") == 0)
		append(buf, size, pos, "%s on %s:%lld", ev->kind + 4, str_of(f, "address", "?"),
		       int_of(f, "port"));
	else
		return 0;
	if (ev->pid)
		append(buf, size, pos, " by pid %d", ev->pid);
	if (ev->comm[0])
		append(buf, size, pos, " (%s)", ev->comm);
	return 1;
}

/* "file.rename /tmp/a -> /workspace/b (mv pid 12)", "file.summary: 19992 file.open in /w/d". */
static int describe_file(const struct event *ev, json_t *f, char *buf, size_t size, size_t *pos)
{
	const char *path = str_of(f, "path", NULL);

	if (strncmp(ev->kind, "file.", 5) != 0)
		return 0;
	if (strcmp(ev->kind, "file.summary") == 0) {
		append(buf, size, pos, "file.summary: %lld %s in %s",
		       (long long)json_integer_value(json_object_get(f, "count")),
		       str_of(f, "of", "?"), str_of(f, "dir", "?"));
		return 1;
	}
	if (strcmp(ev->kind, "file.rename") == 0)
		append(buf, size, pos, "file.rename %s -> %s", str_of(f, "from", "?"),
		       str_of(f, "to", "?"));
	else
		append(buf, size, pos, "%s %s", ev->kind, path ? path : "?");
	if (json_is_string(json_object_get(f, "mode")))
		append(buf, size, pos, " mode %s%s%s", str_of(f, "mode", ""),
		       json_is_true(json_object_get(f, "setuid")) ? " SETUID" : "",
		       json_is_true(json_object_get(f, "setgid")) ? " SETGID" : "");
	if (json_is_integer(json_object_get(f, "target_pid")))
		append(buf, size, pos, " (another process's)");
	if (ev->comm[0] || ev->pid)
		append(buf, size, pos, " (%s pid %d)", ev->comm[0] ? ev->comm : "?", ev->pid);
	return 1;
}

char *event_describe(const struct event *ev, char *buf, size_t size)
{
	json_t *f = event_get_fields(ev);
	size_t pos = 0;

	buf[0] = '\0';
	if (f && strncmp(ev->kind, "tool_call.", 10) == 0) {
		describe_tool_call(ev, f, buf, size, &pos);
	} else if (f &&
		   (describe_detection(ev, f, buf, size, &pos) ||
		    describe_lure(ev, f, buf, size, &pos) || describe_dns(ev, f, buf, size, &pos) ||
		    describe_http(ev, f, buf, size, &pos) ||
		    describe_senses(ev, f, buf, size, &pos) ||
		    describe_file(ev, f, buf, size, &pos))) {
		/* described */
	} else {
		append(buf, size, &pos, "%s %s", event_source_to_string(ev->source), ev->kind);
		if (ev->pid)
			append(buf, size, &pos, " pid %d", ev->pid);
		if (ev->comm[0])
			append(buf, size, &pos, " (%s)", ev->comm);
		if (f && json_object_size(f) > 0) {
			char *text = json_dumps(f, JSON_COMPACT | JSON_SORT_KEYS);

			if (text)
				append(buf, size, &pos, " %s", text);
			free(text);
		}
	}
	json_decref(f);
	return buf;
}
