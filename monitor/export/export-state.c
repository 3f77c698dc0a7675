/* The exporter's state record: fixed-size text, so the core can read it whole at any time. */
#include "export-main.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

void export_state_encode(const struct export_state *s, char buf[EXPORT_STATE_SIZE])
{
	int n = snprintf(buf, EXPORT_STATE_SIZE,
			 "{\"loki_after\":%lld,\"otlp_after\":%lld,\"loki_pushes\":%llu,"
			 "\"loki_lines\":%llu,\"loki_errors\":%llu,\"otlp_pushes\":%llu,"
			 "\"otlp_spans\":%llu,\"otlp_errors\":%llu}",
			 (long long)s->loki_after, (long long)s->otlp_after,
			 (unsigned long long)s->loki_pushes, (unsigned long long)s->loki_lines,
			 (unsigned long long)s->loki_errors, (unsigned long long)s->otlp_pushes,
			 (unsigned long long)s->otlp_spans, (unsigned long long)s->otlp_errors);

	/* One record of fixed size, rewritten in place with one pwrite. */
	memset(buf + n, ' ', EXPORT_STATE_SIZE - (size_t)n - 1);
	buf[EXPORT_STATE_SIZE - 1] = '\n';
}

int export_state_decode(const char *buf, size_t len, struct export_state *ret)
{
	json_t *o = json_loadb(buf, len, JSON_DISABLE_EOF_CHECK, NULL);
	json_int_t v[8];

	memset(ret, 0, sizeof(*ret));
	if (!o)
		return -EINVAL;
	if (json_unpack(o, "{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "loki_after", &v[0],
			"otlp_after", &v[1], "loki_pushes", &v[2], "loki_lines", &v[3],
			"loki_errors", &v[4], "otlp_pushes", &v[5], "otlp_spans", &v[6],
			"otlp_errors", &v[7]) < 0) {
		json_decref(o);
		return -EINVAL;
	}
	json_decref(o);
	*ret = (struct export_state){ v[0],	      v[1],	      (uint64_t)v[2],
				      (uint64_t)v[3], (uint64_t)v[4], (uint64_t)v[5],
				      (uint64_t)v[6], (uint64_t)v[7] };
	return 0;
}
