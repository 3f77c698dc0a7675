/*
 * What the libFuzzer harnesses (fuzz/fuzz-*.c, docs/fuzzing.md) share. Each harness feeds its
 * input to the production functions, linked from the same sources the daemon and the CLI are
 * built from; nothing here parses anything itself.
 */
#ifndef FB_FUZZ_H
#define FB_FUZZ_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "event.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Stops the run: the harness cannot do its work (a broken set-up is not a finding). */
#define fuzz_die(...)                                                                              \
	do {                                                                                       \
		fprintf(stderr, "fuzz: " __VA_ARGS__);                                             \
		fputc('\n', stderr);                                                               \
		abort();                                                                           \
	} while (0)

/* A copy of data with a NUL after it, for the functions that take a C string; caller frees. */
static inline char *fuzz_strndup(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		fuzz_die("out of memory");
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/*
 * A file of this process's own in a tmpfs (or TMPDIR) for the parsers that read a path: made once,
 * rewritten with each input. Returns its path.
 */
static char fuzz_path[256];

static inline void fuzz_file_cleanup(void)
{
	if (fuzz_path[0])
		unlink(fuzz_path);
}

static inline const char *fuzz_file(const char *name, const uint8_t *data, size_t size)
{
	char *path = fuzz_path;
	FILE *f;

	if (!path[0]) {
		const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");

		snprintf(path, sizeof(fuzz_path), "%s/firebreak-fuzz-%s.%d", dir ? dir : "/tmp",
			 name, (int)getpid());
		atexit(fuzz_file_cleanup);
	}
	f = fopen(path, "we");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
		fuzz_die("%s: %s", path, strerror(errno));
	return path;
}

/*
 * What event_to_text() writes, event_from_json() reads back as the same event: the enforcer's
 * events cross the control socket this way, the store's cross the API. (No fields and "{}" are
 * the same, event.h.)
 */
static inline void fuzz_event_round_trip(const struct event *ev)
{
	json_t *obj;
	struct event back;
	char *text, err[256];

	if (event_to_text(ev, &text) < 0)
		return;
	obj = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
	if (!obj || event_from_json(obj, &back, err, sizeof(err)) < 0)
		fuzz_die("event_to_text wrote what event_from_json refuses (%s): %s",
			 obj ? err : "not JSON", text);
	if (back.id != ev->id || back.ts != ev->ts || back.step != ev->step ||
	    back.source != ev->source || back.pid != ev->pid || back.ppid != ev->ppid ||
	    back.uid != ev->uid || strcmp(back.sandbox, ev->sandbox) != 0 ||
	    strcmp(back.tool, ev->tool) != 0 || strcmp(back.kind, ev->kind) != 0 ||
	    strcmp(back.comm, ev->comm) != 0 ||
	    strcmp(back.fields ? back.fields : "{}", ev->fields ? ev->fields : "{}") != 0)
		fuzz_die("an event changed on its way through its JSON: %s", text);
	event_clear(&back);
	json_decref(obj);
	free(text);
}

#endif
