/*
 * The recent steps of one sandbox, with the tool each ran and when: a proxy log line is read
 * after its request ended, often after its step ended too, so the registry (which forgets a step
 * at its end) cannot place it. The enforcer's step.start and step.end feed this.
 */
#ifndef FB_HTTP_STEPS_H
#define FB_HTTP_STEPS_H

#include <stdint.h>

struct http_steps;

/* Steps remembered per sandbox; the oldest ended one goes first. */
#define HTTP_STEPS_MAX 64

int http_steps_new(struct http_steps **ret);
void http_steps_free(struct http_steps *s);

void http_steps_start(struct http_steps *s, int64_t step, const char *tool, int64_t ts);
void http_steps_end(struct http_steps *s, int64_t step, int64_t ts);

/*
 * The step of tool that ran at ts (when a request started: a step's process made it): 1 and
 * *ret_step if exactly one did; 0 if none did, or several did (*ret_ambiguous set: two steps of
 * one tool share its source address, so the line cannot say which).
 */
int http_steps_at(const struct http_steps *s, const char *tool, int64_t ts, int64_t *ret_step,
		  int *ret_ambiguous);

#endif
