/*
 * An incident's story in the lesson's form, read back from its sandbox's events:
 * "coerced @ step 14, ran cmd @ 15, egress denied @ 16, flagged @ 17, killed @ 17".
 */
#ifndef FB_INCIDENT_H
#define FB_INCIDENT_H

#include <stdint.h>

#include "store.h"

struct incident_story {
	int64_t coerced_step; /* the harness marked the call coerced; EVENT_STEP_NONE: none */
	int64_t cmd_step;     /* where the first triggering event ran */
	int64_t denied_step;  /* the first refused or dropped egress from then on */
	int64_t flagged_step; /* the first verdict of the incident */
	int64_t action_step;  /* the first freeze or kill a verdict asked for */
	char action[16];      /* "killed", "frozen", or "" */
	int64_t since;	      /* where its timeline starts: the coerced call, else the trigger */
	char text[256];	      /* the one line */
};

/* Reads inc's sandbox's events and tells the story; 0 or -errno. */
int incident_story(struct store *s, const struct store_incident *inc, struct incident_story *ret);

#endif
