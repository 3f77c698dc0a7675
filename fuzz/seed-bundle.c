/*
 * Makes the bundle harness's seed (fuzz/corpus/bundle/): a real bundle, written by the production
 * store_bundle_make(), of one sandbox that ran the repository's example trace under its example
 * policy, with a detector epoch and kernel events the detectors judge.
 *   seed-bundle OUT POLICY TRACE
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "event.h"
#include "policy/policy.h"
#include "store/store-bundle.h"
#include "store/store.h"
#include "trace.h"

#define T0 1700000000000000000LL

static char *slurp(const char *path, size_t *ret_len)
{
	FILE *f = fopen(path, "re");
	char *text = NULL;
	size_t len = 0;

	if (!f || getdelim(&text, &len, '\0', f) < 0) {
		perror(path);
		exit(1);
	}
	fclose(f);
	*ret_len = strlen(text);
	return text;
}

static void must(int r, const char *what)
{
	if (r < 0) {
		fprintf(stderr, "seed-bundle: %s: %s\n", what, strerror(-r));
		exit(1);
	}
}

static void add(struct store *s, int64_t ts, int64_t step, const char *kind, enum event_source src,
		const char *fields)
{
	struct event ev;

	event_init(&ev);
	ev.ts = ts;
	ev.sandbox_id = 1;
	strcpy(ev.sandbox, "demo-agent");
	ev.step = step;
	ev.source = src;
	strcpy(ev.kind, kind);
	ev.pid = 4242;
	ev.uid = 420000;
	strcpy(ev.comm, "python3");
	must(event_set_fields_text(&ev, fields, strlen(fields)), kind);
	must(store_event_insert(s, &ev), "insert");
	event_clear(&ev);
}

int main(int argc, char **argv)
{
	struct store_sandbox sb = { .id = 1, .name = "demo-agent", .state = "destroyed" };
	struct store_bundle_spec spec = { .sandbox_id = 1, .made_ts = T0 + 1000000000LL };
	char db[] = "/tmp/firebreak-seed-XXXXXX", err[512], marker[256], *text, *line = NULL;
	struct policy *p;
	struct store *s;
	unsigned char *bytes;
	size_t len, cap = 0;
	int64_t ts = T0;
	ssize_t n;
	FILE *f;
	int fd;

	if (argc != 4)
		return fprintf(stderr, "usage: seed-bundle OUT POLICY TRACE\n"), 2;
	text = slurp(argv[2], &len);
	if (policy_load_text(argv[2], text, len, &p, err, sizeof(err)) < 0)
		return fprintf(stderr, "%s\n", err), 1;
	if ((fd = mkstemp(db)) < 0)
		return perror(db), 1;
	close(fd);
	must(store_open(db, STORE_READ_WRITE, &s), db);
	strcpy(sb.policy_hash, policy_hash(p));
	strcpy(sb.cgroup, "/sys/fs/cgroup/firebreak/demo-agent");
	sb.created_ts = sb.updated_ts = T0;
	must(store_sandbox_put(s, &sb), "sandbox");
	must(store_policy_put(s, policy_hash(p), policy_name(p), text, T0), "policy");
	snprintf(marker, sizeof(marker), "{\"first_event_id\":2,\"policy_hash\":\"%s\"}",
		 policy_hash(p));
	add(s, ts++, EVENT_STEP_NONE, "detectors.start", EVENT_SOURCE_MONITOR, marker);
	if (!(f = fopen(argv[3], "re")))
		return perror(argv[3]), 1;
	while ((n = getline(&line, &cap, f)) > 0) {
		struct trace_record rec = { 0 };
		struct event ev;

		if (trace_parse_line(line, (size_t)n - (line[n - 1] == '\n'), &rec, err,
				     sizeof(err)) != TRACE_OK)
			return fprintf(stderr, "%s: %s\n", argv[3], err), 1;
		event_init(&ev);
		must(trace_record_to_event(&rec, ts += 1000000, &ev), "trace event");
		ev.sandbox_id = 1;
		must(store_trace_apply(s, &rec, &ev), "trace");
		event_clear(&ev);
		trace_record_clear(&rec);
		add(s, ts++, rec.step, "proc.exec", EVENT_SOURCE_EBPF,
		    "{\"exe\":\"/usr/bin/python3\",\"argv\":[\"python3\",\"-m\",\"pytest\"]}");
	}
	free(line);
	fclose(f);
	add(s, ts++, 7, "net.connect", EVENT_SOURCE_EBPF,
	    "{\"dst\":\"169.254.169.254\",\"port\":80,\"protocol\":\"tcp\"}");
	add(s, ts++, 7, "file.open", EVENT_SOURCE_FANOTIFY,
	    "{\"path\":\"/home/agent/.aws/credentials\",\"mode\":\"r\"}");
	add(s, ts++, EVENT_STEP_NONE, "detectors.stop", EVENT_SOURCE_MONITOR,
	    "{\"last_event_id\":1000}");
	must(store_bundle_make(s, &spec, &bytes, &len), "bundle");
	if (!(f = fopen(argv[1], "we")) || fwrite(bytes, 1, len, f) != len || fclose(f) != 0)
		return perror(argv[1]), 1;
	printf("seed-bundle: %s, %zu bytes\n", argv[1], len);
	store_close(s);
	unlink(db);
	policy_free(p);
	free(text);
	return 0;
}
