/* One human line about an event: what the timeline, the web page and replay print. */
#ifndef FB_EVENT_DESCRIBE_H
#define FB_EVENT_DESCRIBE_H

#include <stddef.h>

#include "event.h"

/* Writes what happened in ev ("tool call started (call c-14) COERCED: ...") into buf; returns buf.
 */
char *event_describe(const struct event *ev, char *buf, size_t size);

#endif
