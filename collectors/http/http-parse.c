#include "http-parse.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "macro.h"
#include "proxy-logformat.h"

/* The fields below are read by their place in the format: a format of other fields breaks the
 * build. */
_Static_assert(FIREBREAK_PROXY_LOGFORMAT_FIELDS == 18, "http-parse.c reads 18 fields");

/* One field of the line: a view, not a copy. */
struct field {
	const char *p;
	size_t n;
};

static int is_dash(const struct field *f)
{
	return f->n == 1 && f->p[0] == '-';
}

/* squid's own fields are printable ASCII without spaces; the line's TABs split them. */
static int plain(const struct field *f)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->p[i] <= 0x20 || f->p[i] >= 0x7f)
			return 0;
	return f->n > 0;
}

/* A decimal number of at most 18 digits (no sign, no spaces): 0 and *ret, or -EINVAL. */
static int number(const struct field *f, int64_t max, int64_t *ret)
{
	int64_t v = 0;

	if (f->n == 0 || f->n > 18)
		return -EINVAL;
	for (size_t i = 0; i < f->n; i++) {
		if (f->p[i] < '0' || f->p[i] > '9')
			return -EINVAL;
		v = v * 10 + (f->p[i] - '0');
	}
	if (v > max)
		return -EINVAL;
	*ret = v;
	return 0;
}

/* A number, or -1 for "-". */
static int number_or_dash(const struct field *f, int64_t max, int64_t *ret)
{
	if (is_dash(f)) {
		*ret = -1;
		return 0;
	}
	return number(f, max, ret);
}

static int int_or_dash(const struct field *f, int64_t max, int *ret)
{
	int64_t v;
	int r = number_or_dash(f, max, &v);

	if (r == 0)
		*ret = (int)v;
	return r;
}

/* "SECONDS.MMM" (squid's %ts.%03tu) into ns since the epoch. */
static int timestamp(const struct field *f, int64_t *ret)
{
	const char *dot = memchr(f->p, '.', f->n);
	struct field s, ms;
	int64_t sec, milli;

	if (!dot)
		return -EINVAL;
	s = (struct field){ f->p, (size_t)(dot - f->p) };
	ms = (struct field){ dot + 1, f->n - s.n - 1 };
	/* 2^63 ns is year 2262: seconds past 9e9 cannot be a time squid wrote. */
	if (ms.n != 3 || number(&s, 9000000000LL, &sec) < 0 || number(&ms, 999, &milli) < 0)
		return -EINVAL;
	*ret = sec * 1000000000LL + milli * 1000000LL;
	return 0;
}

/*
 * An address as squid prints it, into its normalised text: an IPv4 client of a dual-stack port
 * may be shown as ::ffff:a.b.c.d, which is the IPv4 address.
 */
static int address(const struct field *f, char *text, uint8_t *bin, int *family)
{
	char tmp[HTTP_LOG_ADDR_MAX];
	struct in6_addr a6;

	if (f->n == 0 || f->n >= sizeof(tmp) || !plain(f))
		return -EINVAL;
	memcpy(tmp, f->p, f->n);
	tmp[f->n] = '\0';
	memset(bin, 0, 16);
	if (inet_pton(AF_INET, tmp, bin) == 1) {
		*family = AF_INET;
	} else if (inet_pton(AF_INET6, tmp, &a6) == 1) {
		if (IN6_IS_ADDR_V4MAPPED(&a6)) {
			*family = AF_INET;
			memcpy(bin, a6.s6_addr + 12, 4);
		} else {
			*family = AF_INET6;
			memcpy(bin, a6.s6_addr, 16);
		}
	} else {
		return -EINVAL;
	}
	inet_ntop(*family, bin, text, HTTP_LOG_ADDR_MAX);
	return 0;
}

int http_log_unquote(const char *in, size_t len, char *out, size_t size, int *ret_cut)
{
	size_t o = 0;
	int cut = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];
		int hi, lo;

		if (c == '%') {
			if (len - i < 3 || (hi = hex_value(in[i + 1])) < 0 ||
			    (lo = hex_value(in[i + 2])) < 0)
				return -EINVAL;
			c = (unsigned char)(hi << 4 | lo);
			i += 2;
		} else if (c == '\\') {
			if (i + 1 >= len)
				return -EINVAL;
			switch (in[++i]) {
			case '\\':
				c = '\\';
				break;
			case 'r':
				c = '\r';
				break;
			case 'n':
				c = '\n';
				break;
			default:
				return -EINVAL;
			}
		} else if (c < 0x20 || c >= 0x7f || c == '[' || c == ']') {
			return -EINVAL; /* squid would have escaped it: not squid's line */
		}
		if (o + 1 < size)
			out[o++] = (char)c;
		else
			cut = 1;
	}
	if (size)
		out[o] = '\0';
	*ret_cut = cut;
	return (int)o;
}

/* A sandbox-chosen field decoded into the line's storage at *pos, at most cap bytes. */
static int quoted(const struct field *f, size_t cap, struct http_log_line *l, size_t *pos,
		  struct http_log_str *ret)
{
	int n;

	if (is_dash(f)) {
		*ret = (struct http_log_str){ 0 };
		return 0;
	}
	if (*pos + cap + 1 > sizeof(l->buf))
		abort(); /* the storage is sized for every field's cap: a bug here */
	n = http_log_unquote(f->p, f->n, l->buf + *pos, cap + 1, &ret->cut);
	if (n < 0)
		return n;
	ret->s = l->buf + *pos;
	ret->len = (size_t)n;
	*pos += (size_t)n + 1;
	return 0;
}

/* A rule id the proxy names: what the policy allows in an id, and not empty. */
static int rule_id(const char *p, size_t n, char *out)
{
	if (n == 0 || n > HTTP_LOG_RULE_MAX)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z') ||
		      (p[i] >= '0' && p[i] <= '9') || strchr("_.:-", p[i])))
			return -EINVAL;
	memcpy(out, p, n);
	out[n] = '\0';
	return 0;
}

#define starts(p, n, lit) ((n) > sizeof(lit) - 1 && !memcmp((p), (lit), sizeof(lit) - 1))

/* One value of the notes field. Unknown values are refused: the contract names them all. */
static int note(const char *p, size_t n, struct http_log_line *l)
{
	if (n == sizeof("decoy:marker") - 1 && !memcmp(p, "decoy:marker", n)) {
		l->decoy = 1;
		return 0;
	}
	if (starts(p, n, "rule:"))
		return l->rule[0] ? -EINVAL : rule_id(p + 5, n - 5, l->rule);
	/* A request may carry two credentials (two headers): the first is named. */
	if (starts(p, n, "credential:"))
		return l->credential[0] ? 0 : rule_id(p + 11, n - 11, l->credential);
	if (l->refused != HTTP_REFUSED_NONE)
		return -EINVAL;
	if (n == 6 && !memcmp(p, "nohost", 6))
		l->refused = HTTP_REFUSED_HOST;
	else if (n == 5 && !memcmp(p, "nosni", 5))
		l->refused = HTTP_REFUSED_SNI;
	else if (starts(p, n, "refused:") && rule_id(p + 8, n - 8, l->refused_rule) == 0)
		l->refused = HTTP_REFUSED_RULE;
	else
		return -EINVAL;
	return 0;
}

/*
 * The notes field: squid joins a note's values with ',' and quotes the whole ("[" encoding, so
 * a value holds no raw comma of the sandbox's: the proxy's values are its own).
 */
static int notes(const struct field *f, struct http_log_line *l)
{
	char buf[HTTP_LOG_NOTES_MAX * (HTTP_LOG_RULE_MAX + 10)];
	const char *p = buf;
	int cut, n, count = 0;

	if (is_dash(f))
		return 0;
	n = http_log_unquote(f->p, f->n, buf, sizeof(buf), &cut);
	if (n <= 0 || cut)
		return -EINVAL;
	while (p < buf + n) {
		const char *end = memchr(p, ',', (size_t)(buf + n - p));
		size_t len = end ? (size_t)(end - p) : (size_t)(buf + n - p);

		if (++count > HTTP_LOG_NOTES_MAX || note(p, len, l) < 0)
			return -EINVAL;
		p += len + 1;
		if (end && p == buf + n)
			return -EINVAL; /* a trailing comma */
	}
	return 0;
}

/* Splits line into exactly the format's fields. */
static int split(const char *line, size_t len, struct field *f)
{
	size_t k = 0, start = 0;

	for (size_t i = 0; i <= len; i++) {
		if (i < len && line[i] != '\t')
			continue;
		if (k == FIREBREAK_PROXY_LOGFORMAT_FIELDS)
			return -EINVAL;
		f[k++] = (struct field){ line + start, i - start };
		start = i + 1;
	}
	return k == FIREBREAK_PROXY_LOGFORMAT_FIELDS ? 0 : -EINVAL;
}

static int squid_fields(const struct field *f, struct http_log_line *l, const char **why)
{
	int64_t v;

	if (timestamp(&f[0], &l->ts_ns) < 0)
		return *why = "bad time", -EINVAL;
	if (address(&f[1], l->client, l->client_addr, &l->family) < 0)
		return *why = "bad client address", -EINVAL;
	if (number(&f[2], 65535, &v) < 0)
		return *why = "bad client port", -EINVAL;
	l->client_port = (int)v;
	if (int_or_dash(&f[3], 65535, &l->port) < 0)
		return *why = "bad port", -EINVAL;
	if (int_or_dash(&f[4], 999, &l->status) < 0 ||
	    int_or_dash(&f[5], 999, &l->status_upstream) < 0)
		return *why = "bad status", -EINVAL;
	/* Byte counts and durations: at most 2^53, so they stay exact in any JSON reader. */
	if (number_or_dash(&f[6], 1LL << 53, &l->bytes_in) < 0 ||
	    number_or_dash(&f[7], 1LL << 53, &l->bytes_out) < 0 ||
	    number_or_dash(&f[8], 1LL << 53, &l->body_upstream) < 0)
		return *why = "bad byte count", -EINVAL;
	if (number_or_dash(&f[9], 1LL << 53, &l->duration_ms) < 0)
		return *why = "bad duration", -EINVAL;
	if (!is_dash(&f[10])) {
		if (f[10].n > HTTP_LOG_ERR_MAX || !plain(&f[10]))
			return *why = "bad error name", -EINVAL;
		memcpy(l->err, f[10].p, f[10].n);
	}
	if (!is_dash(&f[11])) {
		uint8_t bin[16];
		int fam;

		if (address(&f[11], l->upstream, bin, &fam) < 0)
			return *why = "bad upstream address", -EINVAL;
	}
	if (notes(&f[12], l) < 0)
		return *why = "bad notes", -EINVAL;
	return 0;
}

int http_log_parse(const char *line, size_t len, struct http_log_line *ret, const char **ret_why)
{
	struct field f[FIREBREAK_PROXY_LOGFORMAT_FIELDS];
	struct http_log_line *l = ret;
	size_t pos = 0;
	int r;

	memset(l, 0, offsetof(struct http_log_line, buf));
	if (len > HTTP_LOG_LINE_MAX)
		return *ret_why = "line too long", -EINVAL;
	if (memchr(line, '\0', len) || memchr(line, '\n', len))
		return *ret_why = "NUL or newline in the line", -EINVAL;
	if (split(line, len, f) < 0)
		return *ret_why = "not the format's 18 fields", -EINVAL;
	if ((r = squid_fields(f, l, ret_why)) < 0)
		return r;
	if (quoted(&f[13], HTTP_LOG_SCHEME_MAX, l, &pos, &l->scheme) < 0 ||
	    quoted(&f[14], HTTP_LOG_METHOD_MAX, l, &pos, &l->method) < 0 ||
	    quoted(&f[15], HTTP_LOG_HOST_MAX, l, &pos, &l->host) < 0 ||
	    quoted(&f[16], HTTP_LOG_HOST_MAX, l, &pos, &l->sni) < 0 ||
	    quoted(&f[17], HTTP_LOG_PATH_MAX, l, &pos, &l->path) < 0)
		return *ret_why = "bad escape in a request field", -EINVAL;
	return 0;
}

const char *http_refusal_name(enum http_refusal r)
{
	switch (r) {
	case HTTP_REFUSED_RULE:
		return "rule";
	case HTTP_REFUSED_HOST:
		return "host";
	case HTTP_REFUSED_SNI:
		return "sni";
	default:
		return NULL;
	}
}
