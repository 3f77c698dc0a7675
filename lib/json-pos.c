#include "json-pos.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "macro.h"

struct entry {
	struct entry *next; /* every entry, for json_pos_free() */
	struct json_pos_loc loc;
	char path[]; /* the map's key */
};

struct json_pos {
	struct hashmap *map;
	struct entry *all;
	struct entry *dup; /* the first repeated key; also on `all` */
};

struct frame {
	int is_object;
	size_t path_len; /* the container's own path length: members append to it */
	size_t index;
};

struct scanner {
	const char *s;
	size_t len, i;
	unsigned line, col;
	char path[JSON_POS_PATH_MAX + 1];
	size_t path_len;
	struct json_pos *pos;
	struct frame stack[JSON_POS_DEPTH_MAX];
	size_t depth;
	struct json_pos_loc key; /* the key of the member whose value comes next */
	int have_key;
};

void json_pos_free(struct json_pos *p)
{
	if (!p)
		return;
	hashmap_free(p->map);
	while (p->all) {
		struct entry *e = p->all;

		p->all = e->next;
		free(e);
	}
	free(p);
}

static int at_end(const struct scanner *sc)
{
	return sc->i >= sc->len;
}

static char peek(const struct scanner *sc)
{
	return at_end(sc) ? '\0' : sc->s[sc->i];
}

/* Moves past one byte; a column counts code points, so continuation bytes do not move it. */
static void advance(struct scanner *sc)
{
	unsigned char c = (unsigned char)sc->s[sc->i++];

	if (c == '\n') {
		sc->line++;
		sc->col = 1;
	} else if ((c & 0xc0) != 0x80) {
		sc->col++;
	}
}

static void skip_ws(struct scanner *sc)
{
	while (!at_end(sc) && strchr(" \t\r\n", sc->s[sc->i]))
		advance(sc);
}

static void here(const struct scanner *sc, struct json_pos_loc *loc)
{
	loc->line = loc->key_line = sc->line;
	loc->col = loc->key_col = sc->col;
	loc->offset = sc->i;
}

static int record(struct scanner *sc, const struct json_pos_loc *loc)
{
	struct entry *e = malloc(sizeof(*e) + sc->path_len + 1);

	if (!e)
		return -ENOMEM;
	e->loc = *loc;
	memcpy(e->path, sc->path, sc->path_len + 1);
	e->next = sc->pos->all;
	sc->pos->all = e;
	if (hashmap_get(sc->pos->map, e->path)) {
		/* A repeated key keeps its first position; the repeat is remembered once. */
		if (!sc->pos->dup)
			sc->pos->dup = e;
		return 0;
	}
	return hashmap_put(sc->pos->map, e->path, e);
}

static int read_hex4(struct scanner *sc, unsigned *ret)
{
	unsigned v = 0;

	for (int n = 0; n < 4; n++) {
		int h = at_end(sc) ? -1 : hex_value(peek(sc));

		if (h < 0)
			return -EINVAL;
		v = v << 4 | (unsigned)h;
		advance(sc);
	}
	*ret = v;
	return 0;
}

static size_t put_utf8(char *out, unsigned cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	out[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* After "\\u": the code point, a surrogate pair joined into one; never NUL. */
static int read_u_escape(struct scanner *sc, unsigned *ret)
{
	unsigned cp, lo;

	if (read_hex4(sc, &cp) < 0)
		return -EINVAL;
	if (cp >= 0xd800 && cp < 0xdc00) {
		if (peek(sc) != '\\')
			return -EINVAL;
		advance(sc);
		if (peek(sc) != 'u')
			return -EINVAL;
		advance(sc);
		if (read_hex4(sc, &lo) < 0 || lo < 0xdc00 || lo > 0xdfff)
			return -EINVAL;
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
	}
	/* A path is a C string: a key holding NUL cannot be named in one. */
	if (cp == 0)
		return -EINVAL;
	*ret = cp;
	return 0;
}

/* After a backslash: writes the character it stands for to out (4 bytes at most); returns how
 * many bytes, or -EINVAL. */
static int read_escape(struct scanner *sc, char *out)
{
	unsigned cp;
	char c;

	if (at_end(sc))
		return -EINVAL;
	c = peek(sc);
	advance(sc);
	switch (c) {
	case 'b':
		out[0] = '\b';
		return 1;
	case 'f':
		out[0] = '\f';
		return 1;
	case 'n':
		out[0] = '\n';
		return 1;
	case 'r':
		out[0] = '\r';
		return 1;
	case 't':
		out[0] = '\t';
		return 1;
	case '"':
	case '\\':
	case '/':
		out[0] = c;
		return 1;
	case 'u':
		if (read_u_escape(sc, &cp) < 0)
			return -EINVAL;
		return (int)put_utf8(out, cp);
	default:
		return -EINVAL;
	}
}

/*
 * Reads the string at the cursor (on its opening quote). With out, decodes it there (at most
 * outsize - 1 bytes, NUL-terminated); without, only skips it.
 */
static int read_string(struct scanner *sc, char *out, size_t outsize)
{
	size_t n = 0;

	advance(sc);
	for (;;) {
		char tmp[4];
		int k = 1;

		if (at_end(sc))
			return -EINVAL;
		if (peek(sc) == '"') {
			advance(sc);
			break;
		}
		if (peek(sc) != '\\') {
			tmp[0] = peek(sc);
			advance(sc);
		} else {
			advance(sc);
			if ((k = read_escape(sc, tmp)) < 0)
				return k;
		}
		if (out) {
			if (n + (size_t)k >= outsize)
				return -ENAMETOOLONG;
			memcpy(out + n, tmp, (size_t)k);
		}
		n += (size_t)k;
	}
	if (out)
		out[n] = '\0';
	return 0;
}

int json_pos_path_push_key(char *buf, size_t size, const char *key)
{
	size_t n = strlen(buf);

	if (n + 1 >= size)
		return -ENAMETOOLONG;
	buf[n++] = '/';
	for (; *key; key++) {
		const char *esc = *key == '~' ? "~0" : *key == '/' ? "~1" : NULL;
		size_t k = esc ? 2 : 1;

		if (n + k >= size)
			return -ENAMETOOLONG;
		if (esc)
			memcpy(buf + n, esc, 2);
		else
			buf[n] = *key;
		n += k;
	}
	buf[n] = '\0';
	return 0;
}

int json_pos_path_push_index(char *buf, size_t size, size_t index)
{
	size_t n = strlen(buf);
	int w = snprintf(buf + n, size > n ? size - n : 0, "/%zu", index);

	if (w < 0 || (size_t)w >= size - n) {
		buf[n] = '\0';
		return -ENAMETOOLONG;
	}
	return 0;
}

/* Cuts the path back to len and appends the member key at the cursor. */
static int push_member_key(struct scanner *sc, size_t len)
{
	char key[JSON_POS_PATH_MAX + 1];
	int r;

	if (peek(sc) != '"')
		return -EINVAL;
	r = read_string(sc, key, sizeof(key));
	if (r < 0)
		return r;
	sc->path[len] = '\0';
	r = json_pos_path_push_key(sc->path, sizeof(sc->path), key);
	sc->path_len = strlen(sc->path);
	return r;
}

static int push_element(struct scanner *sc, struct frame *f)
{
	int r;

	sc->path[f->path_len] = '\0';
	r = json_pos_path_push_index(sc->path, sizeof(sc->path), f->index);
	sc->path_len = strlen(sc->path);
	return r;
}

/* At a member's key: cuts the path back to len, appends the key, and moves past its ':'. */
static int member_key(struct scanner *sc, size_t len)
{
	int r;

	here(sc, &sc->key);
	if ((r = push_member_key(sc, len)) < 0)
		return r;
	skip_ws(sc);
	if (peek(sc) != ':')
		return -EINVAL;
	advance(sc);
	skip_ws(sc);
	sc->have_key = 1;
	return 0;
}

/* Records the value at the cursor, at its member's key if it has one. */
static int record_value(struct scanner *sc)
{
	struct json_pos_loc loc;

	here(sc, &loc);
	if (sc->have_key) {
		loc.key_line = sc->key.line;
		loc.key_col = sc->key.col;
		sc->have_key = 0;
	}
	return record(sc, &loc);
}

/*
 * At '{' or '[': pushes the container. Returns 1 at its first member's value or first element,
 * 0 if it was empty (and is closed again), or -EINVAL.
 */
static int open_container(struct scanner *sc)
{
	int is_object = peek(sc) == '{', r;

	if (sc->depth >= JSON_POS_DEPTH_MAX)
		return -EINVAL;
	sc->stack[sc->depth++] = (struct frame){ is_object, sc->path_len, 0 };
	advance(sc);
	skip_ws(sc);
	if (peek(sc) == (is_object ? '}' : ']')) {
		advance(sc);
		sc->depth--;
		return 0;
	}
	if (is_object)
		r = member_key(sc, sc->stack[sc->depth - 1].path_len);
	else
		r = push_element(sc, &sc->stack[sc->depth - 1]);
	return r < 0 ? r : 1;
}

/* Moves past a string, number or literal (the parser has judged which). */
static int skip_scalar(struct scanner *sc)
{
	if (peek(sc) == '"')
		return read_string(sc, NULL, 0);
	if (peek(sc) == '\0' || strchr(",:]}", peek(sc)))
		return -EINVAL;
	while (!at_end(sc) && !strchr(",:]} \t\r\n", peek(sc)))
		advance(sc);
	return 0;
}

/* After a value: closes containers up to the next value (returns 1) or the end (returns 0). */
static int next_value(struct scanner *sc)
{
	for (;;) {
		struct frame *f;
		int r;

		skip_ws(sc);
		if (sc->depth == 0)
			return at_end(sc) ? 0 : -EINVAL;
		f = &sc->stack[sc->depth - 1];
		if (peek(sc) == (f->is_object ? '}' : ']')) {
			advance(sc);
			sc->depth--;
			sc->path_len = f->path_len;
			sc->path[sc->path_len] = '\0';
			continue;
		}
		if (peek(sc) != ',')
			return -EINVAL;
		advance(sc);
		skip_ws(sc);
		if (f->is_object) {
			r = member_key(sc, f->path_len);
		} else {
			f->index++;
			r = push_element(sc, f);
		}
		return r < 0 ? r : 1;
	}
}

/* The scan proper: an explicit stack, so that nesting depth cannot exhaust the C stack. */
static int scan(struct scanner *sc)
{
	int r;

	skip_ws(sc);
	for (;;) {
		if ((r = record_value(sc)) < 0)
			return r;
		if (peek(sc) == '{' || peek(sc) == '[') {
			r = open_container(sc);
			if (r < 0)
				return r;
			if (r > 0)
				continue;
		} else if ((r = skip_scalar(sc)) < 0) {
			return r;
		}
		r = next_value(sc);
		if (r <= 0)
			return r;
	}
}

int json_pos_scan(const char *text, size_t len, struct json_pos **ret, struct json_pos_loc *ret_err)
{
	struct scanner *sc;
	struct json_pos *p;
	int r;

	p = calloc(1, sizeof(*p));
	sc = calloc(1, sizeof(*sc));
	if (!p || !sc || hashmap_new(&p->map) < 0) {
		free(sc);
		json_pos_free(p);
		return -ENOMEM;
	}
	sc->s = text;
	sc->len = len;
	sc->line = sc->col = 1;
	sc->pos = p;
	r = scan(sc);
	if (r < 0) {
		if (ret_err)
			here(sc, ret_err);
		free(sc);
		json_pos_free(p);
		return r == -ENOMEM ? r : -EINVAL;
	}
	free(sc);
	*ret = p;
	return 0;
}

int json_pos_lookup(const struct json_pos *p, const char *path, struct json_pos_loc *ret)
{
	const struct entry *e = hashmap_get(p->map, path);

	if (!e)
		return -ENOENT;
	*ret = e->loc;
	return 0;
}

int json_pos_lookup_nearest(const struct json_pos *p, const char *path, struct json_pos_loc *ret)
{
	char buf[JSON_POS_PATH_MAX + 1];
	char *slash;

	if (strscpy(buf, sizeof(buf), path) < 0)
		buf[0] = '\0';
	for (;;) {
		if (json_pos_lookup(p, buf, ret) == 0)
			return 0;
		slash = strrchr(buf, '/');
		if (!slash)
			return -ENOENT;
		*slash = '\0';
	}
}

int json_pos_duplicate(const struct json_pos *p, const char **ret_path, struct json_pos_loc *ret)
{
	if (!p->dup)
		return -ENOENT;
	*ret_path = p->dup->path;
	*ret = p->dup->loc;
	return 0;
}
