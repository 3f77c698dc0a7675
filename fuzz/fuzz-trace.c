/*
 * Trace lines (lib/trace.c): any bytes as one line from the harness's trace socket or POST
 * /api/v1/trace, parsed as monitor/trace-ingest.c does; a line that parses becomes its event and
 * that event's JSON line, as the store would record it, which must read back as the same event.
 */
#include "fuzz.h"
#include "event-describe.h"
#include "trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct trace_record rec = { 0 };
	struct event ev;
	char err[256], line[512];

	if (trace_parse_line((const char *)data, size, &rec, err, sizeof(err)) != TRACE_OK) {
		trace_record_clear(&rec);
		return 0;
	}
	event_init(&ev);
	if (trace_record_to_event(&rec, 1, &ev) == 0) {
		fuzz_event_round_trip(&ev);
		(void)event_describe(&ev, line, sizeof(line));
	}
	event_clear(&ev);
	trace_record_clear(&rec);
	return 0;
}
