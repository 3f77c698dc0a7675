#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for n more bytes and the NUL; 0, or -1 (oom set). */
static int reserve(struct strbuf *b, size_t n)
{
	size_t cap;
	char *p;

	if (b->oom)
		return -1;
	if (b->len + n + 1 <= b->cap)
		return 0;
	for (cap = b->cap ? b->cap * 2 : 16384; cap < b->len + n + 1; cap *= 2)
		;
	if (!(p = realloc(b->p, cap))) {
		b->oom = 1;
		return -1;
	}
	b->p = p;
	b->cap = cap;
	return 0;
}

void strbuf_add(struct strbuf *b, const char *s, size_t n)
{
	if (reserve(b, n) < 0)
		return;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

void strbuf_str(struct strbuf *b, const char *s)
{
	strbuf_add(b, s, strlen(s));
}

void strbuf_printf(struct strbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = 1;
		return;
	}
	if (reserve(b, (size_t)n) < 0)
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}
