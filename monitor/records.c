/* What the monitor records of its own doing (records.h). */
#include "records.h"

#include <errno.h>
#include <stdlib.h>

#include "daemon.h"
#include "timeutil.h"

int record_sandbox_answered(struct daemon *d, const struct store_sandbox *sb, uint64_t token,
			    char *msg)
{
	struct writer_op wop = { .type = WRITER_OP_SANDBOX, .token = token, .msg = msg };

	event_init(&wop.ev);
	if (!(wop.sandbox = malloc(sizeof(*wop.sandbox)))) {
		writer_op_clear(&wop);
		return -ENOMEM;
	}
	*wop.sandbox = *sb;
	return sink_submit(d->sink, &wop);
}

void record_sandbox(struct daemon *d, const struct store_sandbox *sb)
{
	if (record_sandbox_answered(d, sb, 0, NULL) == -ENOMEM)
		log_error("sandbox %s: out of memory storing its state %s", sb->name, sb->state);
}

void record_event(struct daemon *d, const struct store_sandbox *sb, const char *kind, json_t *f)
{
	struct writer_op op;

	writer_event_init(&op, sb, time_now_ns(), EVENT_STEP_NONE, NULL, EVENT_SOURCE_MONITOR,
			  kind);
	sink_submit_event(d->sink, &op, f);
}
