#include "http-steps.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "macro.h"

/*
 * squid's times are in whole milliseconds (the log time cut, the duration rounded): a request
 * may seem to start up to this much before its step did.
 */
#define HTTP_STEPS_SLACK_NS 2000000LL

struct http_step {
	int64_t step, start, end; /* end 0: still running */
	char tool[FB_TOOL_MAX + 1];
};

struct http_steps {
	struct http_step v[HTTP_STEPS_MAX];
	size_t n;
};

int http_steps_new(struct http_steps **ret)
{
	*ret = calloc(1, sizeof(**ret));
	return *ret ? 0 : -ENOMEM;
}

void http_steps_free(struct http_steps *s)
{
	free(s);
}

/* Makes room: the oldest ended step goes (a running one only if all run, which is absurd). */
static void make_room(struct http_steps *s)
{
	size_t victim = 0;

	for (size_t i = 0; i < s->n; i++) {
		if (s->v[i].end) {
			victim = i;
			break;
		}
	}
	memmove(&s->v[victim], &s->v[victim + 1], (s->n - victim - 1) * sizeof(s->v[0]));
	s->n--;
}

void http_steps_start(struct http_steps *s, int64_t step, const char *tool, int64_t ts)
{
	struct http_step *st;

	st = NULL;
	for (size_t i = 0; i < s->n && !st; i++) {
		if (s->v[i].step != step)
			continue;
		if (!s->v[i].end && strcmp(s->v[i].tool, tool ? tool : "") == 0)
			return; /* reported again (a restarted daemon reloads the running ones) */
		st = &s->v[i];	/* the harness used the number again: the new step is it now */
	}
	if (!st) {
		if (s->n == HTTP_STEPS_MAX)
			make_room(s);
		st = &s->v[s->n++];
	}
	st->step = step;
	st->start = ts;
	st->end = 0;
	strscpy(st->tool, sizeof(st->tool), tool ? tool : "");
}

void http_steps_end(struct http_steps *s, int64_t step, int64_t ts)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].step == step && !s->v[i].end)
			s->v[i].end = ts > s->v[i].start ? ts : s->v[i].start;
}

int http_steps_at(const struct http_steps *s, const char *tool, int64_t ts, int64_t *ret_step,
		  int *ret_ambiguous)
{
	int found = 0;
	int64_t step = 0;

	*ret_ambiguous = 0;
	for (size_t i = 0; i < s->n; i++) {
		const struct http_step *st = &s->v[i];

		if (strcmp(st->tool, tool) != 0 || st->start > ts + HTTP_STEPS_SLACK_NS ||
		    (st->end && st->end + HTTP_STEPS_SLACK_NS < ts))
			continue;
		found++;
		step = st->step;
	}
	if (found > 1)
		*ret_ambiguous = 1;
	if (found != 1)
		return 0;
	*ret_step = step;
	return 1;
}
