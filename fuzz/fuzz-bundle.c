/*
 * Bundle import (store/store-bundle.c, detectors/replay.c): any bytes as a bundle file, opened
 * and checked by store_bundle_open() as `firebreak replay BUNDLE` does, then, if it is taken,
 * its sandbox's events read back, described and replayed under their recorded policies through
 * the detectors. The seeds are real bundles (fuzz/seed-bundle.c made them).
 */
#include <jansson.h>

#include "fuzz.h"
#include "detectors/replay.h"
#include "event-describe.h"
#include "store/store-bundle.h"
#include "store/store.h"

static int first_sandbox(const struct store_sandbox *sb, void *data)
{
	*(struct store_sandbox *)data = *sb;
	return 1;
}

static int describe(const struct event *ev, void *data)
{
	char line[512];

	(void)event_describe(ev, line, sizeof(line));
	return 0;
}

static void read_bundle(struct store *s)
{
	struct store_sandbox sb = { .id = 0 };
	struct store_timeline_query q = { .step_lo = EVENT_STEP_NONE, .step_hi = EVENT_STEP_NONE };
	struct replay_opts o = { .policy = NULL };
	struct replay_result res;
	json_t *j;

	if (store_sandbox_list(s, first_sandbox, &sb) <= 0)
		return;
	q.sandbox_id = sb.id;
	(void)store_timeline(s, &q, describe, NULL);
	if (replay_sandbox(s, &sb, &o, &res) < 0)
		return;
	j = replay_json(&res, 0);
	if (j) {
		char *text = json_dumps(j, JSON_COMPACT);

		free(text);
		json_decref(j);
	}
	replay_result_free(&res);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file("bundle", data, size);
	char err[256], side[300];
	struct store *s;

	if (store_bundle_open(path, &s, err, sizeof(err)) == 0) {
		read_bundle(s);
		store_close(s);
	}
	/* A header that says WAL makes SQLite look for these beside the file. */
	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", path);
	unlink(side);
	return 0;
}
