/*
 * The L7 proxy's access log lines (collectors/http/http-parse.c): any bytes as one line, parsed
 * as the collector parses each line of a sandbox's proxy-access.log. A line it takes must hold
 * what the format allows: decoded strings within their caps and inside the line's storage, a
 * known refusal, numbers in range; and the same bytes decoded alone as one "[" field never
 * write past their buffer.
 */
#include "fuzz.h"
#include "collectors/http/http-parse.h"

static void check_str(const struct http_log_line *l, const struct http_log_str *s, size_t cap)
{
	if (!s->s)
		return;
	if (s->len > cap || s->s < l->buf || s->s + s->len >= l->buf + sizeof(l->buf) ||
	    s->s[s->len] != '\0')
		fuzz_die("a decoded field is out of its bounds (len %zu, cap %zu)", s->len, cap);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct http_log_line l;
	const char *why = NULL;
	char out[64];
	int cut;

	(void)http_log_unquote((const char *)data, size, out, sizeof(out), &cut);
	if (http_log_parse((const char *)data, size, &l, &why) < 0) {
		if (!why)
			fuzz_die("a refusal without a reason");
		return 0;
	}
	check_str(&l, &l.scheme, HTTP_LOG_SCHEME_MAX);
	check_str(&l, &l.method, HTTP_LOG_METHOD_MAX);
	check_str(&l, &l.host, HTTP_LOG_HOST_MAX);
	check_str(&l, &l.sni, HTTP_LOG_HOST_MAX);
	check_str(&l, &l.path, HTTP_LOG_PATH_MAX);
	if (l.ts_ns < 0 || l.status > 999 || l.port > 65535 || l.bytes_in > (1LL << 53) ||
	    l.duration_ms > (1LL << 53) || l.refused > HTTP_REFUSED_SNI ||
	    (l.refused == HTTP_REFUSED_RULE) != (l.refused_rule[0] != '\0'))
		fuzz_die("a line was taken with a value out of range");
	return 0;
}
