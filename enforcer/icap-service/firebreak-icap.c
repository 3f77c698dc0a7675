/*
 * The gate's ICAP service, a c-icap module (build/firebreak-icap.so) loaded by the sandbox's
 * jailed c-icap; squid sends it what its headers ACLs cannot judge (docs/egress.md, "Bodies").
 *
 * REQMOD: a request body with the sandbox's decoy marker in it (any case: the URL check's rule)
 * is refused. The body is held until its last byte has been scanned, so nothing of a refused
 * request leaves: a clean one goes on as it came (a 204 where squid still has its copy: a body
 * that fits the preview, or below squid's 64 KiB backup limit; echoed otherwise), a dirty one
 * becomes a 403 page whose EGRESS_ICAP_VERDICT_HEADER squid's http_reply_access turns into the
 * transaction's "decoy:marker" note. The scan is a KMP automaton over the bytes as they come, so
 * a marker split across chunks (or across the preview's end) is found like any other.
 *
 * RESPMOD (squid sends only responses from a credential's hosts): every real value in the
 * response's headers or body becomes its decoy, streaming: the body goes back as it arrives but
 * for its last (longest real value - 1) bytes, which might begin a value the next chunk ends. The
 * length changes, so Content-Length is dropped and c-icap chunks what it sends. An encoded body
 * (gzip...) cannot be read, so it is refused (squid asks credential hosts for identity only).
 *
 * Only c-icap's API and the wire header: no project code runs in the jail.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "c-icap.h"
#include "debug.h"
#include "request.h"
#include "service.h"
#include "simple_api.h"

#include "../egress-icap-wire.h"

#define MARKER_MAX 64

struct swap {
	char *decoy, *real;
	size_t decoy_len, real_len;
};

/* Read once from the secrets file before c-icap forks its children; read-only after. */
static struct {
	char marker[MARKER_MAX];
	size_t marker_len;
	size_t fail[MARKER_MAX]; /* KMP: the longest proper border of marker[0..j] */
	char verdict[EGRESS_ICAP_VERDICT_LEN + 8];
	struct swap swaps[EGRESS_ICAP_SWAPS_MAX];
	size_t n_swaps, real_max;
} fb;

static char *secrets_path;

/* A byte buffer read from off; its content may hold a real value: wiped when freed. */
struct buf {
	char *p;
	size_t len, off, cap;
};

struct xact {
	int respmod;
	int refused;	  /* what came is not passed on: page says why */
	int decoy;	  /* REQMOD: the marker was seen */
	int eof;	  /* the last byte is in */
	int sending;	  /* what is in out may go back to squid */
	int changed;	  /* RESPMOD: something was replaced */
	size_t matched;	  /* REQMOD: the KMP state */
	struct buf out;	  /* the held request body, the page, or the rewritten response */
	struct buf hold;  /* RESPMOD: the tail that may begin a real value */
	const char *page; /* the refusal's body, in out once decided */
};

static void buf_free(struct buf *b)
{
	if (b->p) {
		explicit_bzero(b->p, b->cap);
		free(b->p);
	}
	*b = (struct buf){ 0 };
}

static int buf_put(struct buf *b, const char *d, size_t n)
{
	if (n == 0)
		return 0;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *p;

		while (cap < b->len + n)
			cap *= 2;
		/* Not realloc: the old block may hold a real value, and is wiped first. */
		if (!(p = malloc(cap)))
			return -ENOMEM;
		if (b->p) {
			memcpy(p, b->p, b->len);
			explicit_bzero(b->p, b->cap);
			free(b->p);
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
	return 0;
}

static size_t buf_take(struct buf *b, char *to, size_t n)
{
	if (n > b->len - b->off)
		n = b->len - b->off;
	memcpy(to, b->p + b->off, n);
	b->off += n;
	return n;
}

/* ---- The secrets file. */

static char *dup_field(const char *s, size_t n)
{
	char *p = malloc(n + 1);

	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

static int parse_line(char *line)
{
	char *f[3], *save = NULL;
	size_t n = 0;

	for (char *t = strtok_r(line, " \n", &save); t; t = strtok_r(NULL, " \n", &save)) {
		if (n == 3)
			return -EINVAL;
		f[n++] = t;
	}
	if (n == 2 && strcmp(f[0], "marker") == 0 && strlen(f[1]) < MARKER_MAX) {
		fb.marker_len = strlen(f[1]);
		for (size_t i = 0; i < fb.marker_len; i++)
			fb.marker[i] = (char)tolower((unsigned char)f[1][i]);
		return 0;
	}
	if (n == 2 && strcmp(f[0], "verdict") == 0 && strlen(f[1]) == EGRESS_ICAP_VERDICT_LEN) {
		strcpy(fb.verdict, f[1]);
		return 0;
	}
	if (n == 3 && strcmp(f[0], "swap") == 0 && fb.n_swaps < EGRESS_ICAP_SWAPS_MAX) {
		struct swap *s = &fb.swaps[fb.n_swaps];

		s->decoy_len = strlen(f[1]);
		s->real_len = strlen(f[2]);
		if (s->real_len == 0 || s->real_len > EGRESS_ICAP_VALUE_MAX)
			return -EINVAL;
		if (!(s->decoy = dup_field(f[1], s->decoy_len)) ||
		    !(s->real = dup_field(f[2], s->real_len)))
			return -ENOMEM;
		if (s->real_len > fb.real_max)
			fb.real_max = s->real_len;
		fb.n_swaps++;
		return 0;
	}
	return -EINVAL;
}

static void kmp_borders(void)
{
	size_t k = 0;

	fb.fail[0] = 0;
	for (size_t j = 1; j < fb.marker_len; j++) {
		while (k > 0 && fb.marker[j] != fb.marker[k])
			k = fb.fail[k - 1];
		if (fb.marker[j] == fb.marker[k])
			k++;
		fb.fail[j] = k;
	}
}

static int load_secrets(void)
{
	char line[2 * EGRESS_ICAP_VALUE_MAX + 64];
	FILE *f;
	int r = 0;

	if (!secrets_path || !(f = fopen(secrets_path, "re"))) {
		ci_debug_printf(1, "firebreak: cannot open the secrets file %s\n",
				secrets_path ? secrets_path : "(none set)");
		return -ENOENT;
	}
	while (r == 0 && fgets(line, sizeof(line), f))
		r = parse_line(line);
	explicit_bzero(line, sizeof(line));
	fclose(f);
	if (r == 0 && (fb.marker_len == 0 || !fb.verdict[0]))
		r = -EINVAL;
	if (r < 0) {
		ci_debug_printf(1, "firebreak: %s is not a secrets file\n", secrets_path);
		return r;
	}
	kmp_borders();
	return 0;
}

/* ---- REQMOD: the marker in the body. */

/* Feeds n bytes to the automaton; 1 once the whole marker has been seen. */
static int marker_scan(struct xact *x, const char *d, size_t n)
{
	size_t k = x->matched;

	for (size_t i = 0; i < n; i++) {
		char c = (char)tolower((unsigned char)d[i]);

		while (k > 0 && fb.marker[k] != c)
			k = fb.fail[k - 1];
		if (fb.marker[k] == c && ++k == fb.marker_len) {
			x->matched = 0;
			return 1;
		}
	}
	x->matched = k;
	return 0;
}

/* Takes n bytes of request body: scanned, then held (or dropped once refused). */
static int reqmod_take(struct xact *x, const char *d, size_t n)
{
	if (x->refused)
		return 0;
	if (marker_scan(x, d, n)) {
		x->refused = x->decoy = 1;
		x->page = "firebreak: refused: this request's body carries one of the sandbox's "
			  "decoy credentials, which never leave it. The sandbox is killed.\n";
		buf_free(&x->out);
		return 0;
	}
	if (x->out.len + n > EGRESS_ICAP_BODY_MAX) {
		x->refused = 1;
		x->page = "firebreak: refused: this request's body is larger than the gate "
			  "checks (32 MiB).\n";
		buf_free(&x->out);
		return 0;
	}
	return buf_put(&x->out, d, n);
}

/* The refusal, in place of the request: a 403 with the page, marked for squid's log. */
static int refuse(ci_request_t *req, struct xact *x, const char *status, int decoy)
{
	char h[128];

	if (ci_http_response_create(req, 1, 1) < 0)
		return -ENOMEM;
	ci_http_response_add_header(req, status);
	ci_http_response_add_header(req, "Content-Type: text/plain");
	ci_http_response_add_header(req, "Cache-Control: no-store");
	ci_http_response_add_header(req, "Connection: close");
	snprintf(h, sizeof(h), "Content-Length: %zu", strlen(x->page));
	ci_http_response_add_header(req, h);
	if (decoy) {
		snprintf(h, sizeof(h), EGRESS_ICAP_VERDICT_HEADER ": decoy-%s", fb.verdict);
		ci_http_response_add_header(req, h);
	}
	buf_free(&x->out);
	return buf_put(&x->out, x->page, strlen(x->page));
}

/* ---- RESPMOD: real values become decoys. */

static const struct swap *swap_at(const char *p, size_t n)
{
	for (size_t s = 0; s < fb.n_swaps; s++) {
		const struct swap *w = &fb.swaps[s];

		if (w->real_len <= n && p[0] == w->real[0] && memcmp(p, w->real, w->real_len) == 0)
			return w;
	}
	return NULL;
}

/* Rewrites n bytes of d into out; without eof, keeps what might begin a value in hold. */
static int respmod_take(struct xact *x, const char *d, size_t n, int eof)
{
	const char *h;
	size_t i = 0, from = 0, len;
	int r;

	if ((r = buf_put(&x->hold, d, n)) < 0)
		return r;
	h = x->hold.p;
	len = x->hold.len;
	while (i < len && (eof || len - i >= fb.real_max)) {
		const struct swap *w = swap_at(h + i, len - i);

		if (!w) {
			i++;
			continue;
		}
		if ((r = buf_put(&x->out, h + from, i - from)) < 0 ||
		    (r = buf_put(&x->out, w->decoy, w->decoy_len)) < 0)
			return r;
		i += w->real_len;
		from = i;
		x->changed = 1;
	}
	if ((r = buf_put(&x->out, h + from, i - from)) < 0)
		return r;
	memmove(x->hold.p, h + i, len - i);
	explicit_bzero(x->hold.p + (len - i), i);
	x->hold.len = len - i;
	return 0;
}

/* Each response header holding a real value, rewritten in place (order kept); 1 if any was. */
static int respmod_headers(ci_request_t *req)
{
	ci_headers_list_t *hs = ci_http_response_headers(req);
	char **lines;
	int n, changed = 0;

	if (!hs || (n = hs->used) <= 0)
		return 0;
	if (!(lines = calloc((size_t)n, sizeof(*lines))))
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		struct xact tmp = { 0 };
		size_t len = strlen(hs->headers[i]);

		if (respmod_take(&tmp, hs->headers[i], len, 1) < 0 || buf_put(&tmp.out, "", 1) < 0)
			changed = -ENOMEM;
		changed |= changed >= 0 && tmp.changed;
		lines[i] = tmp.out.p ? strdup(tmp.out.p) : strdup("");
		buf_free(&tmp.out);
		buf_free(&tmp.hold);
	}
	if (changed > 0) {
		ci_http_response_reset_headers(req);
		for (int i = 0; i < n; i++)
			if (lines[i])
				ci_http_response_add_header(req, lines[i]);
	}
	for (int i = 0; i < n; i++)
		if (lines[i]) {
			explicit_bzero(lines[i], strlen(lines[i]));
			free(lines[i]);
		}
	free(lines);
	return changed;
}

/* ---- The module. */

static int fb_init(ci_service_xdata_t *srv, struct ci_server_conf *conf)
{
	(void)conf;
	ci_service_set_preview(srv, EGRESS_ICAP_PREVIEW);
	ci_service_enable_204(srv);
	ci_service_set_transfer_preview(srv, "*");
	return CI_OK;
}

static int fb_post_init(ci_service_xdata_t *srv, struct ci_server_conf *conf)
{
	(void)srv;
	(void)conf;
	return load_secrets() < 0 ? CI_ERROR : CI_OK;
}

static void fb_close(void)
{
	for (size_t s = 0; s < fb.n_swaps; s++) {
		explicit_bzero(fb.swaps[s].real, fb.swaps[s].real_len);
		free(fb.swaps[s].real);
		free(fb.swaps[s].decoy);
	}
	explicit_bzero(&fb, sizeof(fb));
}

static void *fb_request(ci_request_t *req)
{
	struct xact *x = calloc(1, sizeof(*x));

	if (x)
		x->respmod = ci_req_type(req) == ICAP_RESPMOD;
	return x;
}

static void fb_release(void *data)
{
	struct xact *x = data;

	if (!x)
		return;
	buf_free(&x->out);
	buf_free(&x->hold);
	free(x);
}

/* A response from a credential's host: its headers now; its body streams (fb_io). */
static int respmod_preview(char *data, int len, ci_request_t *req, struct xact *x)
{
	int headers = respmod_headers(req);

	if (headers < 0)
		return CI_ERROR;
	if (!ci_req_hasbody(req)) {
		x->eof = x->sending = 1;
		return headers ? CI_MOD_CONTINUE : CI_MOD_ALLOW204;
	}
	if (ci_http_response_content_encoding(req) != CI_ENCODE_NONE) {
		/* Unreadable: refused rather than passed unchecked (the page says so). */
		x->page = "firebreak: refused: the response of a host a credential is bound to "
			  "came encoded, so it cannot be checked for the credential.\n";
		x->refused = 1;
		return CI_MOD_CONTINUE;
	}
	if (respmod_take(x, data, (size_t)len, ci_req_hasalldata(req)) < 0)
		return CI_ERROR;
	if (ci_req_hasalldata(req) && !x->changed && !headers)
		return CI_MOD_ALLOW204;
	ci_http_response_remove_header(req, "Content-Length");
	x->sending = 1;
	ci_req_unlock_data(req);
	return CI_MOD_CONTINUE;
}

static int fb_preview(char *data, int len, ci_request_t *req)
{
	struct xact *x = ci_service_data(req);

	if (!x)
		return CI_ERROR;
	if (x->respmod)
		return respmod_preview(data, len, req, x);
	if (!ci_req_hasbody(req))
		return CI_MOD_ALLOW204;
	if (reqmod_take(x, data, (size_t)len) < 0)
		return CI_ERROR;
	/* The whole body was in the preview and is clean: squid sends its own copy. */
	if (!x->refused && ci_req_hasalldata(req))
		return CI_MOD_ALLOW204;
	return CI_MOD_CONTINUE; /* the data stays locked: nothing goes back before the verdict */
}

static int fb_end(ci_request_t *req)
{
	struct xact *x = ci_service_data(req);

	if (!x)
		return CI_ERROR;
	x->eof = 1;
	if (x->refused) {
		if (refuse(req, x,
			   x->respmod ? "HTTP/1.1 502 Bad Gateway" : "HTTP/1.1 403 Forbidden",
			   x->decoy) < 0)
			return CI_ERROR;
	} else if (x->respmod) {
		if (respmod_take(x, NULL, 0, 1) < 0)
			return CI_ERROR;
	} else if (ci_req_allow204(req)) {
		return CI_MOD_ALLOW204; /* squid kept its copy of the clean body */
	}
	x->sending = 1;
	ci_req_unlock_data(req);
	return CI_MOD_DONE;
}

static int fb_io(char *wbuf, int *wlen, char *rbuf, int *rlen, int iseof, ci_request_t *req)
{
	struct xact *x = ci_service_data(req);
	int r = 0;

	if (!x)
		return CI_ERROR;
	if (rbuf && rlen && *rlen > 0) {
		if (x->refused)
			; /* the rest of a refused message goes nowhere */
		else if (x->respmod)
			r = respmod_take(x, rbuf, (size_t)*rlen, 0);
		else
			r = reqmod_take(x, rbuf, (size_t)*rlen);
	}
	(void)iseof; /* the end is fb_end's: the hold is flushed there */
	if (wbuf && wlen) {
		if (!x->sending)
			*wlen = 0;
		else if (x->out.off == x->out.len && x->eof)
			*wlen = CI_EOF;
		else
			*wlen = (int)buf_take(&x->out, wbuf, (size_t)*wlen);
	}
	return r < 0 ? CI_ERROR : CI_OK;
}

static struct ci_conf_entry conf_table[] = {
	{ "Secrets", &secrets_path, ci_cfg_set_str, "the file of the marker and the swaps" },
	{ NULL, NULL, NULL, NULL },
};

CI_DECLARE_MOD_DATA ci_service_module_t service = {
	.mod_name = EGRESS_ICAP_SERVICE,
	.mod_short_descr = "firebreak: decoys in request bodies, real credentials in responses",
	.mod_type = ICAP_REQMOD | ICAP_RESPMOD,
	.mod_init_service = fb_init,
	.mod_post_init_service = fb_post_init,
	.mod_close_service = fb_close,
	.mod_init_request_data = fb_request,
	.mod_release_request_data = fb_release,
	.mod_check_preview_handler = fb_preview,
	.mod_end_of_data_handler = fb_end,
	.mod_service_io = fb_io,
	.mod_conf_table = conf_table,
	.mod_data = NULL,
};
