/*
 * A plain HTTP/1.1 POST, for the exporter: one request per connection, a deadline on the whole
 * exchange, only the status line of the answer read. Enough for OTLP/HTTP and Loki's push API
 * on a trusted network path; no TLS (put a local collector in front for that).
 */
#ifndef FB_HTTP_POST_H
#define FB_HTTP_POST_H

#include <stddef.h>

#include "config.h"

/* POSTs body to ep; 0 and the answer's status in *ret_status, or -errno (connect, timeout). */
int http_post(const struct endpoint *ep, const char *content_type, const char *body, size_t len,
	      int timeout_ms, int *ret_status);

#endif
