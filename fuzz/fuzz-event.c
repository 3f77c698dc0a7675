/*
 * Event JSON (lib/event.c, lib/event-fields.c): any bytes as the event of a control "event" op
 * (monitor/control.c decodes it the same way), and as an event's fields, which the detectors read
 * with the typed readers of event-fields.c and the timeline describes (event-describe.c).
 */
#include <jansson.h>

#include "fuzz.h"
#include "event-describe.h"
#include "event.h"

/* Keys the detectors and the describer read. */
static const char *const keys[] = { "path", "argv",	 "name",	"reason",
				    "rule", "exit_code", "address",	"to",
				    "from", "cgroup_id", "annotations", "" };

static void read_fields(const struct event *ev)
{
	char buf[256], line[1024];
	int64_t v;

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		(void)event_field_str(ev, keys[i], buf, sizeof(buf));
		(void)event_field_int(ev, keys[i], &v);
		(void)event_field_true(ev, keys[i]);
		(void)event_field_holds(ev, keys[i], "/etc");
	}
	(void)event_describe(ev, line, sizeof(line));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *obj = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
	struct event ev, copy;
	char err[256];

	if (obj && event_from_json(obj, &ev, err, sizeof(err)) == 0) {
		read_fields(&ev);
		fuzz_event_round_trip(&ev);
		if (event_copy(&copy, &ev) == 0)
			event_clear(&copy);
		event_clear(&ev);
	}
	json_decref(obj);

	/* The same bytes as one event's fields, of whichever kind the first key suggests. */
	event_init(&ev);
	if (event_set_fields_text(&ev, (const char *)data, size) == 0) {
		static const char *const kinds[] = {
			"tool_call.start", "tool_call.end", "verdict",	   "action.freeze",
			"lure.decoy",	   "lure.tripwire", "dns.query",   "dns.answer",
			"dns.malformed",   "proc.oom-kill", "signal.sent", "proc.rename",
			"net.accept",	   "net.listen",    "net.connect", "file.summary",
			"file.rename",	   "file.open",	    "proc.exec",
		};

		for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
			strcpy(ev.kind, kinds[i]);
			read_fields(&ev);
		}
	}
	event_clear(&ev);
	return 0;
}
