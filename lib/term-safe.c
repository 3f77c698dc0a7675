#include "term-safe.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

/*
 * The length of the valid UTF-8 sequence of two bytes or more at s[0..n), or 0 when it is not one
 * (overlong, a surrogate, past U+10FFFF, cut short) or is a C1 control (U+0080-U+009F), which
 * terminals obey as they do ESC.
 */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;
	if (s[0] == 0xc2)
		lo = 0xa0; /* C2 80-9F: the C1 controls */
	else if (s[0] == 0xe0)
		lo = 0xa0; /* overlong below */
	else if (s[0] == 0xed)
		hi = 0x9f; /* surrogates above */
	else if (s[0] == 0xf0)
		lo = 0x90; /* overlong */
	else if (s[0] == 0xf4)
		hi = 0x8f; /* past U+10FFFF */
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

/*
 * Writes the escaped form of the character at s[0..n) into out (TERM_SAFE_MAX_EXPANSION bytes at
 * least, or the sequence's own length) and sets *used to the input bytes it took; returns its
 * length.
 */
static size_t escape_one(const unsigned char *s, size_t n, char *out, size_t *used)
{
	size_t u;

	*used = 1;
	if (s[0] == '\\') {
		out[0] = out[1] = '\\';
		return 2;
	}
	if (s[0] >= 0x20 && s[0] < 0x7f) {
		out[0] = (char)s[0];
		return 1;
	}
	if (s[0] >= 0x80 && (u = utf8_len(s, n)) > 0) {
		memcpy(out, s, u);
		*used = u;
		return u;
	}
	snprintf(out, TERM_SAFE_MAX_EXPANSION + 1, "\\x%02x", s[0]);
	return TERM_SAFE_MAX_EXPANSION;
}

void term_safe_add(struct strbuf *b, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, used, len;
	char out[TERM_SAFE_MAX_EXPANSION + 1];

	while (i < n) {
		size_t run = i;

		/* Plain printable ASCII goes in one piece. */
		while (run < n && p[run] >= 0x20 && p[run] < 0x7f && p[run] != '\\')
			run++;
		if (run > i) {
			strbuf_add(b, s + i, run - i);
			i = run;
			continue;
		}
		len = escape_one(p + i, n - i, out, &used);
		strbuf_add(b, out, len);
		i += used;
	}
	if (!b->p)
		strbuf_add(b, "", 0);
}

char *term_safe(const char *s, char *buf, size_t size)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)p), i = 0, pos = 0, used, len;
	char out[TERM_SAFE_MAX_EXPANSION + 1];

	if (size == 0)
		return buf;
	while (i < n) {
		len = escape_one(p + i, n - i, out, &used);
		if (pos + len >= size)
			break;
		memcpy(buf + pos, out, len);
		pos += len;
		i += used;
	}
	buf[pos] = '\0';
	return buf;
}

char *term_safe_dup(const char *s)
{
	struct strbuf b = { 0 };

	term_safe_add(&b, s ? s : "", s ? strlen(s) : 0);
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	return b.p;
}
