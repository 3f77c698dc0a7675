/*
 * One line of the gate's L7 proxy's access log (lib/proxy-logformat.h), parsed strictly: exactly
 * FIREBREAK_PROXY_LOGFORMAT_FIELDS TAB-separated fields, squid's own fields in their own syntax,
 * the sandbox-chosen ones (14-18) decoded from squid's "[" encoding. Pure functions: no I/O, no
 * state, so the fuzzer and the unit tests call exactly what the collector calls.
 */
#ifndef FB_HTTP_PARSE_H
#define FB_HTTP_PARSE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Caps on what the proxy may write. A longer line is no line of ours (squid's own fields are
 * short; the sandbox's are what it sent, and squid refuses a request line over 64 KiB): it is
 * counted and reported as loss, never cut into a shorter one.
 */
#define HTTP_LOG_LINE_MAX 32768
#define HTTP_LOG_HOST_MAX 255 /* a DNS name, or an address literal */
#define HTTP_LOG_METHOD_MAX 31
#define HTTP_LOG_SCHEME_MAX 15
#define HTTP_LOG_PATH_MAX 8191 /* decoded bytes kept; a longer path is cut, and says so */
#define HTTP_LOG_RULE_MAX 63
#define HTTP_LOG_ERR_MAX 63
#define HTTP_LOG_NOTES_MAX 8 /* comma-separated values in the notes field */
#define HTTP_LOG_ADDR_MAX 46 /* INET6_ADDRSTRLEN */

/* Why the proxy refused a request (its notes), or none. */
enum http_refusal {
	HTTP_REFUSED_NONE,
	HTTP_REFUSED_RULE, /* refused:ID: the rule's http limits (method, path, size) */
	HTTP_REFUSED_HOST, /* nohost: no rule for the host, or Host and destination differ */
	HTTP_REFUSED_SNI,  /* nosni: TLS SNI unknown, or domain fronting */
};

/* A decoded sandbox-chosen string: any bytes (a %00 is a NUL), len of them, NUL-terminated. */
struct http_log_str {
	char *s; /* points into the line's own storage; NULL: the field was "-" */
	size_t len;
	int cut; /* longer than its cap: s holds the first cap bytes */
};

/* One line. Numbers are -1 where squid wrote "-". */
struct http_log_line {
	int64_t ts_ns;			/* when squid logged it (field 1, ms resolution) */
	char client[HTTP_LOG_ADDR_MAX]; /* the tool's source address, normalised (no ::ffff:) */
	int family;			/* AF_INET or AF_INET6 */
	uint8_t client_addr[16];
	int client_port, port; /* port: the one asked for; -1 absent */
	int status, status_upstream;
	int64_t bytes_in, bytes_out, body_upstream, duration_ms;
	char err[HTTP_LOG_ERR_MAX + 1];		  /* squid's error name, "" if none */
	char upstream[HTTP_LOG_ADDR_MAX];	  /* "" if none */
	char rule[HTTP_LOG_RULE_MAX + 1];	  /* rule:ID, "" if none */
	char refused_rule[HTTP_LOG_RULE_MAX + 1]; /* refused:ID */
	char credential[HTTP_LOG_RULE_MAX + 1];	  /* credential:NAME: a real value swapped in */
	enum http_refusal refused;
	int decoy; /* decoy:marker: the request carried the sandbox's decoy marker */
	struct http_log_str scheme, method, host, sni, path;
	/* Storage for the decoded strings (the struct owns it: no allocation). */
	char buf[HTTP_LOG_SCHEME_MAX + HTTP_LOG_METHOD_MAX + 2 * HTTP_LOG_HOST_MAX +
		 HTTP_LOG_PATH_MAX + 5];
};

/*
 * Parses line[0..len) (no newline) into *ret. 0, or -EINVAL with *ret_why a static text naming
 * what is wrong (*ret is then partly filled: do not use it).
 */
int http_log_parse(const char *line, size_t len, struct http_log_line *ret, const char **ret_why);

/*
 * Decodes squid's "[" encoding of in[0..len) into out (size bytes, NUL-terminated; cut at
 * size - 1 with *ret_cut set): %XX is byte XX, \\ \r \n are themselves; anything else outside
 * printable ASCII, a raw % [ ] or an unknown escape is refused. Returns the decoded length, or
 * -EINVAL.
 */
int http_log_unquote(const char *in, size_t len, char *out, size_t size, int *ret_cut);

const char *http_refusal_name(enum http_refusal r);

#endif
