/*
 * The file rules, on the file collector's events (collectors/file): credential hunting,
 * persistence, anti-forensics, sensitive reads and setuid bits. What a path is comes from
 * lib/filepath.h, the one list the collector also uses to keep such paths individual.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "detect-internal.h"
#include "event.h"
#include "filepath.h"
#include "macro.h"

/* Credential-location files opened in one step: this many, or in this many directories. */
#define CRED_HUNT_FILES 5
#define CRED_HUNT_DIRS 3

/* The file state of ev's step (made on its first event: that event's time is the step's start). */
static struct detect_file_step *file_step(struct detect_state *st, const struct event *ev)
{
	struct detect_file_step *s;

	if (ev->step == EVENT_STEP_NONE)
		return NULL;
	for (size_t i = 0; i < DETECT_FILE_STEPS; i++)
		if (st->file_steps[i].first_ts && st->file_steps[i].step == ev->step)
			return &st->file_steps[i];
	s = &st->file_steps[st->file_steps_next];
	st->file_steps_next = (st->file_steps_next + 1) % DETECT_FILE_STEPS;
	memset(s, 0, sizeof(*s));
	s->step = ev->step;
	s->first_ts = ev->ts;
	return s;
}

static int is_kind(const struct event *ev, const char *kind)
{
	return strcmp(ev->kind, kind) == 0;
}

/* The path an event wrote to: a write's, a rename's or link's new name. */
static int written_path(const struct event *ev, char *buf, size_t size)
{
	if (is_kind(ev, "file.write") || is_kind(ev, "file.link") || is_kind(ev, "file.symlink"))
		return event_field_str(ev, "path", buf, size);
	if (is_kind(ev, "file.rename"))
		return event_field_str(ev, "to", buf, size);
	return 0;
}

static size_t credential_hunt(struct detect_state *st, const struct event *ev,
			      struct detect_verdict *out)
{
	struct detect_file_step *s = file_step(st, ev);
	char path[PATH_MAX], *slash;
	unsigned i;

	if (!s || !is_kind(ev, "file.open") || !event_field_str(ev, "path", path, sizeof(path)) ||
	    !(filepath_class(path) & FILEPATH_CREDENTIAL))
		return 0;
	s->creds++;
	if ((slash = strrchr(path, '/')))
		*slash = '\0';
	for (i = 0; i < s->n_dirs && strncmp(s->dirs[i], path, sizeof(s->dirs[i]) - 1); i++)
		;
	if (i == s->n_dirs && s->n_dirs < DETECT_CRED_DIRS)
		strscpy(s->dirs[s->n_dirs++], sizeof(s->dirs[0]), path);
	if (s->hunt_reported || (s->creds < CRED_HUNT_FILES && s->n_dirs < CRED_HUNT_DIRS))
		return 0;
	s->hunt_reported = 1;
	detect_verdict_init(out, ev, RULE_FILE_CREDENTIAL_HUNT, DETECT_HIGH);
	snprintf(out->reason, sizeof(out->reason),
		 "credential files opened in one step: %u, in %u directories", s->creds, s->n_dirs);
	return 1;
}

/* A .pth straight in a site-packages directory is what pip and venv write; elsewhere it is not. */
static size_t persistence(struct detect_state *st, const struct event *ev,
			  struct detect_verdict *out)
{
	char path[PATH_MAX];
	unsigned c;
	size_t n;

	if (!written_path(ev, path, sizeof(path)))
		return 0;
	c = filepath_class(path);
	n = strlen(path);
	if ((c & FILEPATH_PYTHON_HOOK) && (c & FILEPATH_SITE_DIR) && n > 4 &&
	    strcmp(path + n - 4, ".pth") == 0)
		c &= ~(unsigned)FILEPATH_PYTHON_HOOK;
	if (!(c & (FILEPATH_SHELL_RC | FILEPATH_PYTHON_HOOK | FILEPATH_GIT_HOOK | FILEPATH_CRON |
		   FILEPATH_LOGIN_KEY)))
		return 0;
	if (strncmp(st->persist_last, path, sizeof(st->persist_last) - 1) == 0)
		return 0; /* the same file again (a create, then its write): one verdict */
	strscpy(st->persist_last, sizeof(st->persist_last), path);
	detect_verdict_init(out, ev, RULE_FILE_PERSISTENCE, DETECT_HIGH);
	snprintf(out->reason, sizeof(out->reason), "a %s written: %.160s",
		 c & FILEPATH_SHELL_RC	    ? "shell start-up file"
		 : c & FILEPATH_PYTHON_HOOK ? "Python start-up hook"
		 : c & FILEPATH_GIT_HOOK    ? "git hook"
		 : c & FILEPATH_LOGIN_KEY   ? "login key list"
					    : "crontab",
		 path);
	return 1;
}

/* History removed or emptied; a timestamp set back on a file older than the step. */
static size_t anti_forensics(struct detect_state *st, const struct event *ev,
			     struct detect_verdict *out)
{
	struct detect_file_step *s = file_step(st, ev);
	char path[PATH_MAX];
	int64_t size, born;

	if ((is_kind(ev, "file.unlink") && event_field_str(ev, "path", path, sizeof(path))) ||
	    (is_kind(ev, "file.rename") && event_field_str(ev, "from", path, sizeof(path))) ||
	    (is_kind(ev, "file.write") && event_field_str(ev, "path", path, sizeof(path)) &&
	     event_field_int(ev, "size", &size) && size == 0)) {
		if (!(filepath_class(path) & FILEPATH_HISTORY))
			return 0;
		detect_verdict_init(out, ev, RULE_FILE_ANTI_FORENSICS, DETECT_HIGH);
		snprintf(out->reason, sizeof(out->reason), "shell history %s: %.160s",
			 is_kind(ev, "file.write") ? "emptied" : "removed", path);
		return 1;
	}
	/* tar x sets old mtimes on the files it makes: only a file born before the step counts. */
	if (!s || !is_kind(ev, "file.utimes") || !event_field_int(ev, "born", &born) ||
	    born >= s->first_ts || !event_field_str(ev, "path", path, sizeof(path)))
		return 0;
	detect_verdict_init(out, ev, RULE_FILE_ANTI_FORENSICS, DETECT_MEDIUM);
	snprintf(out->reason, sizeof(out->reason),
		 "the modification time of a file older than this step set back: %.160s", path);
	return 1;
}

static size_t sensitive_read(const struct event *ev, struct detect_verdict *out)
{
	char path[PATH_MAX];
	int64_t target;

	if ((!is_kind(ev, "file.open") && !is_kind(ev, "file.write")) ||
	    !event_field_str(ev, "path", path, sizeof(path)))
		return 0;
	if (event_field_int(ev, "target_pid", &target) && target > 0) {
		/* mem is the other process itself, read and written: its keys, its code (a write
		 * there is code injection). environ, maps and the rest only describe it. */
		const char *slash = strrchr(path, '/');
		int mem = slash && strcmp(slash, "/mem") == 0;

		detect_verdict_init(out, ev, RULE_FILE_SENSITIVE_READ,
				    mem ? DETECT_CRITICAL : DETECT_HIGH);
		snprintf(out->reason, sizeof(out->reason), "another process's %.160s opened%s",
			 path, mem ? ": its memory" : "");
		return 1;
	}
	if (!(filepath_class(path) & FILEPATH_KERNEL))
		return 0;
	detect_verdict_init(out, ev, RULE_FILE_SENSITIVE_READ, DETECT_HIGH);
	snprintf(out->reason, sizeof(out->reason), "a kernel file opened: %.160s", path);
	return 1;
}

/* A setuid bit anywhere, a setgid bit on a file (a setgid directory is ordinary group sharing). */
static size_t setuid_bit(const struct event *ev, struct detect_verdict *out)
{
	char path[PATH_MAX];
	int suid;

	if (!is_kind(ev, "file.attrib") && !is_kind(ev, "file.create") &&
	    !is_kind(ev, "file.utimes"))
		return 0;
	suid = event_field_true(ev, "setuid");
	if (!suid && !(event_field_true(ev, "setgid") && !event_field_true(ev, "dir")))
		return 0;
	if (!event_field_str(ev, "path", path, sizeof(path)))
		strscpy(path, sizeof(path), "?");
	detect_verdict_init(out, ev, RULE_FILE_SETUID, DETECT_HIGH);
	snprintf(out->reason, sizeof(out->reason), "a %s bit set inside: %.160s",
		 suid ? "setuid" : "setgid", path);
	return 1;
}

size_t detect_rules_file(struct detect_state *st, const struct event *ev,
			 struct detect_verdict *out, size_t max)
{
	size_t k = 0;

	if (max == 0)
		return 0;
	file_step(st, ev); /* every event of a step: the first one dates its start */
	if (strncmp(ev->kind, "file.", 5) != 0)
		return 0;
	k += credential_hunt(st, ev, out + k);
	if (k < max)
		k += persistence(st, ev, out + k);
	if (k < max)
		k += anti_forensics(st, ev, out + k);
	if (k < max)
		k += sensitive_read(ev, out + k);
	if (k < max)
		k += setuid_bit(ev, out + k);
	return k;
}
