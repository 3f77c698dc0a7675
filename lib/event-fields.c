/*
 * Typed reads of an event's kind-specific fields (event.h): the value of one top-level key of
 * the fields object, found by walking the object's grammar (strings with their escapes, nested
 * objects and arrays skipped whole), so a key's name inside another value is never taken for
 * the key, and a string comes back decoded. Nothing is allocated: these run on the path every
 * event takes to the detectors.
 */
#include "event.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *skip_space(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* Past the string that starts at p (its opening quote), or NULL if it does not end. */
static const char *skip_string(const char *p, const char *end)
{
	for (p++; p < end; p++) {
		if (*p == '\\')
			p++;
		else if (*p == '"')
			return p + 1;
	}
	return NULL;
}

/* Past the value that starts at p (a string, a scalar, or a whole object or array), or NULL. */
static const char *skip_value(const char *p, const char *end)
{
	int depth = 0;

	while (p < end) {
		char c = *p;

		if (c == '"') {
			if (!(p = skip_string(p, end)) || depth == 0)
				return p;
			continue;
		}
		if (c == '{' || c == '[') {
			depth++;
		} else if (c == '}' || c == ']') {
			if (depth == 0)
				return p; /* a scalar, ended by the object around it */
			if (--depth == 0)
				return p + 1;
		} else if (depth == 0 &&
			   (c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r')) {
			return p;
		}
		p++;
	}
	return depth == 0 ? p : NULL;
}

/* Whether the string at p (its opening quote, raw) says exactly key, which has no escapes. */
static int key_is(const char *p, const char *after, const char *key, size_t klen)
{
	return (size_t)(after - p) == klen + 2 && memcmp(p + 1, key, klen) == 0;
}

/* Where key's value starts in ev's fields (a top-level key), or NULL. */
static const char *value_of(const struct event *ev, const char *key, const char **ret_end)
{
	const char *p = ev->fields, *end;
	size_t klen = strlen(key);

	if (!p)
		return NULL;
	end = p + (ev->fields_len ? ev->fields_len : strlen(p));
	p = skip_space(p, end);
	if (p >= end || *p++ != '{')
		return NULL;
	for (;;) {
		const char *k, *after;

		p = skip_space(p, end);
		if (p >= end || *p != '"' || !(after = skip_string(p, end)))
			return NULL;
		k = p;
		p = skip_space(after, end);
		if (p >= end || *p++ != ':')
			return NULL;
		p = skip_space(p, end);
		if (key_is(k, after, key, klen)) {
			*ret_end = end;
			return p;
		}
		if (!(p = skip_value(p, end)))
			return NULL;
		p = skip_space(p, end);
		if (p >= end || *p != ',')
			return NULL;
		p++;
	}
}

static int hex4(const char *p, unsigned *ret)
{
	unsigned v = 0;

	for (int i = 0; i < 4; i++) {
		char c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -EINVAL;
	}
	*ret = v;
	return 0;
}

/* Appends code point u as UTF-8 to buf (room for n more bytes); how many it wrote, 0: no room. */
static size_t put_utf8(char *buf, size_t room, unsigned u)
{
	size_t n = u < 0x80 ? 1 : u < 0x800 ? 2 : u < 0x10000 ? 3 : 4;

	if (n > room)
		return 0;
	if (n == 1) {
		buf[0] = (char)u;
	} else {
		for (size_t i = n - 1; i > 0; i--, u >>= 6)
			buf[i] = (char)(0x80 | (u & 0x3f));
		buf[0] = (char)((n == 2 ? 0xc0 : n == 3 ? 0xe0 : 0xf0) | u);
	}
	return n;
}

int event_field_str(const struct event *ev, const char *key, char *buf, size_t size)
{
	const char *end, *p = value_of(ev, key, &end);
	size_t n = 0;

	if (!p || *p != '"' || size == 0)
		return 0;
	for (p++; p < end && *p != '"'; p++) {
		unsigned u;
		char c = *p;

		if (c == '\\') {
			if (++p >= end)
				return 0;
			switch (*p) {
			case 'n':
				c = '\n';
				break;
			case 't':
				c = '\t';
				break;
			case 'r':
				c = '\r';
				break;
			case 'b':
				c = '\b';
				break;
			case 'f':
				c = '\f';
				break;
			case 'u':
				if (end - p < 5 || hex4(p + 1, &u) < 0)
					return 0;
				p += 4;
				/* A surrogate alone is not a character: the replacement one. */
				if (u >= 0xd800 && u <= 0xdfff)
					u = 0xfffd;
				n += put_utf8(buf + n, size - 1 - n, u);
				continue;
			default:
				c = *p;
				break; /* \" \\ \/ */
			}
		}
		if (n + 1 < size)
			buf[n++] = c;
	}
	buf[n] = '\0';
	return p < end;
}

int event_field_int(const struct event *ev, const char *key, int64_t *ret)
{
	const char *end, *p = value_of(ev, key, &end);
	char num[24], *stop;
	size_t n = 0;
	long long x;

	if (!p || (*p != '-' && (*p < '0' || *p > '9')))
		return 0;
	while (p + n < end && n < sizeof(num) - 1 && (p[n] == '-' || (p[n] >= '0' && p[n] <= '9')))
		n++;
	/* A fraction or an exponent is not an integer. */
	if (p + n < end && (p[n] == '.' || p[n] == 'e' || p[n] == 'E'))
		return 0;
	memcpy(num, p, n);
	num[n] = '\0';
	errno = 0;
	x = strtoll(num, &stop, 10);
	if (errno || *stop || stop == num)
		return 0;
	*ret = x;
	return 1;
}

int event_field_true(const struct event *ev, const char *key)
{
	const char *end, *p = value_of(ev, key, &end);

	return p && end - p >= 4 && memcmp(p, "true", 4) == 0;
}

int event_field_holds(const struct event *ev, const char *key, const char *needle)
{
	const char *end, *p = value_of(ev, key, &end);
	size_t n = strlen(needle);

	for (size_t i = 0; i < n; i++)
		if (needle[i] < 0x20 || needle[i] > 0x7e || needle[i] == '"' || needle[i] == '\\')
			return 0;
	return p && n > 0 && memmem(p, (size_t)(end - p), needle, n) != NULL;
}
