/* What the monitor records of its own doing (records.h). */
#include "records.h"

#include <stdlib.h>

#include "daemon.h"
#include "timeutil.h"

void record_sandbox(struct daemon *d, const struct store_sandbox *sb)
{
	struct writer_op wop = { .type = WRITER_OP_SANDBOX };

	event_init(&wop.ev);
	if (!(wop.sandbox = malloc(sizeof(*wop.sandbox)))) {
		log_error("sandbox %s: out of memory storing its state %s", sb->name, sb->state);
		return;
	}
	*wop.sandbox = *sb;
	sink_submit(d->sink, &wop);
}

void record_event(struct daemon *d, const struct store_sandbox *sb, const char *kind, json_t *f)
{
	struct writer_op op;

	writer_event_init(&op, sb, time_now_ns(), EVENT_STEP_NONE, NULL, EVENT_SOURCE_MONITOR,
			  kind);
	sink_submit_event(d->sink, &op, f);
}
