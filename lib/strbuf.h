/* A growing text buffer for output built piece by piece (HTTP bodies, metrics pages). */
#ifndef FB_STRBUF_H
#define FB_STRBUF_H

#include <stddef.h>

struct strbuf {
	char *p; /* NUL-terminated once anything was added; the caller frees it */
	size_t len, cap;
	int oom; /* an addition failed: the text is incomplete, p is still to be freed */
};

void strbuf_add(struct strbuf *b, const char *s, size_t n);
void strbuf_str(struct strbuf *b, const char *s);
void strbuf_printf(struct strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
