/*
 * The live event stream (Server-Sent Events). One poller thread reads events newer than the last
 * it saw from the store, in id order (the writer gives ids in the order it commits), into a ring
 * shared by every client; each client's connection thread copies what matches its filter from
 * there. A client that resumes with Last-Event-ID from before the ring, or falls behind it, reads
 * the gap from the store first: the stream loses nothing the store kept.
 */
#include <errno.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http-api.h"
#include "http-child.h"
#include "log.h"
#include "macro.h"
#include "store/store.h"
#include "timeutil.h"

#define HUB_RING 65536 /* events kept for the clients, newest last */
#define HUB_POLL_NS (20 * NSEC_PER_MSEC)
#define HUB_BATCH 4096
#define SSE_KEEPALIVE_NS (15 * NSEC_PER_SEC) /* at most; a third of the idle timeout if less */
#define SSE_CHUNK (64 << 10)

struct hub_entry {
	int64_t id;
	char sandbox[FB_NAME_MAX + 1];
	char kind[FB_KIND_MAX + 1];
	char *text; /* the event's JSON line */
	size_t len;
};

struct sse_hub {
	struct store *own; /* the poller's connection */
	struct store_pool *pool;
	pthread_mutex_t lock;
	pthread_cond_t more;
	struct hub_entry *ring;
	uint64_t head, count;
	int64_t base_id; /* every event up to here is before the ring (or was never there) */
	int64_t last_id; /* the newest in the ring */
	int stop;
	pthread_t poller;
};

struct batch {
	struct hub_entry *e;
	size_t n;
};

static int collect(const struct event *ev, void *data)
{
	struct batch *b = data;
	struct hub_entry *e = &b->e[b->n];

	if (event_to_text(ev, &e->text) < 0)
		return -ENOMEM;
	e->len = strlen(e->text);
	e->id = ev->id;
	strscpy(e->sandbox, sizeof(e->sandbox), ev->sandbox);
	strscpy(e->kind, sizeof(e->kind), ev->kind);
	b->n++;
	return 0;
}

static void *poller_main(void *arg)
{
	struct sse_hub *h = arg;
	struct batch b = { .e = calloc(HUB_BATCH, sizeof(*b.e)) };

	while (b.e) {
		int64_t after;
		struct timespec until;

		pthread_mutex_lock(&h->lock);
		after = h->last_id;
		pthread_mutex_unlock(&h->lock);
		b.n = 0;
		if (store_events_after(h->own, after, HUB_BATCH, collect, &b) < 0)
			log_warn("HTTP stream: the store could not be read; trying again");
		pthread_mutex_lock(&h->lock);
		for (size_t i = 0; i < b.n; i++) {
			struct hub_entry *slot = &h->ring[h->head % HUB_RING];

			if (h->count == HUB_RING) {
				h->base_id = slot->id; /* evicted */
				free(slot->text);
			} else {
				h->count++;
			}
			*slot = b.e[i];
			h->head++;
			h->last_id = slot->id;
		}
		if (b.n)
			pthread_cond_broadcast(&h->more);
		if (h->stop) {
			pthread_mutex_unlock(&h->lock);
			break;
		}
		/* A full batch: more is waiting, read on at once. */
		if (b.n < HUB_BATCH) {
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_nsec += HUB_POLL_NS;
			if (until.tv_nsec >= (long)NSEC_PER_SEC) {
				until.tv_sec++;
				until.tv_nsec -= NSEC_PER_SEC;
			}
			pthread_cond_timedwait(&h->more, &h->lock, &until);
		}
		pthread_mutex_unlock(&h->lock);
	}
	free(b.e);
	return NULL;
}

int sse_hub_new(struct store_pool *pool, struct store *own, struct sse_hub **ret)
{
	struct sse_hub *h = calloc(1, sizeof(*h));
	int r;

	if (!h || !(h->ring = calloc(HUB_RING, sizeof(*h->ring)))) {
		free(h);
		return -ENOMEM;
	}
	h->own = own;
	h->pool = pool;
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->more, NULL);
	/* Live from now: what came before is read from the store by whoever asks for it. */
	if ((r = store_max_id(own, "events", &h->last_id)) < 0) {
		free(h->ring);
		free(h);
		return r;
	}
	h->base_id = h->last_id;
	if (pthread_create(&h->poller, NULL, poller_main, h) != 0) {
		free(h->ring);
		free(h);
		return -EAGAIN;
	}
	*ret = h;
	return 0;
}

void sse_hub_stop(struct sse_hub *h)
{
	pthread_mutex_lock(&h->lock);
	h->stop = 1;
	pthread_cond_broadcast(&h->more);
	pthread_mutex_unlock(&h->lock);
}

void sse_hub_free(struct sse_hub *h)
{
	if (!h)
		return;
	sse_hub_stop(h);
	pthread_join(h->poller, NULL);
	for (size_t i = 0; i < HUB_RING; i++)
		free(h->ring[i].text);
	free(h->ring);
	free(h);
}

/* One client of the stream. */
struct sse_client {
	struct sse_hub *hub;
	int64_t cursor; /* the last event id sent (or skipped by the filter) */
	char sandbox[FB_NAME_MAX + 1];
	char kinds[SSE_KINDS_MAX][FB_KIND_MAX + 1];
	int nkinds;
	uint64_t keepalive_ns;
	char *out;
	size_t out_len, out_off, out_cap;
	atomic_uint_fast64_t *clients;
};

static int wanted(const struct sse_client *c, const char *sandbox, const char *kind)
{
	if (c->sandbox[0] && strcmp(c->sandbox, sandbox) != 0)
		return 0;
	if (c->nkinds == 0)
		return 1;
	for (int i = 0; i < c->nkinds; i++) {
		size_t n = strlen(c->kinds[i]);

		/* "net.*": every kind under net. */
		if (n >= 2 && c->kinds[i][n - 1] == '*' && strncmp(kind, c->kinds[i], n - 1) == 0)
			return 1;
		if (strcmp(kind, c->kinds[i]) == 0)
			return 1;
	}
	return 0;
}

static int append(struct sse_client *c, int64_t id, const char *text, size_t len)
{
	size_t need = c->out_len + len + 48;

	if (need > SSE_CHUNK * 2 && c->out_len) /* enough for one round */
		return 1;
	/* One event larger than a round (a long argv, say) still goes, alone. */
	if (need > c->out_cap) {
		char *n = realloc(c->out, need);

		if (!n)
			return -1;
		c->out = n;
		c->out_cap = need;
	}
	c->out_len += (size_t)snprintf(c->out + c->out_len, 32, "id: %lld\ndata: ", (long long)id);
	memcpy(c->out + c->out_len, text, len);
	c->out_len += len;
	memcpy(c->out + c->out_len, "\n\n", 2);
	c->out_len += 2;
	return 0;
}

struct catch_up {
	struct sse_client *c;
	int64_t until;
	size_t n;
};

static int catch_up_one(const struct event *ev, void *data)
{
	struct catch_up *cu = data;
	char *text;

	if (ev->id > cu->until)
		return 1;
	cu->n++;
	if (wanted(cu->c, ev->sandbox, ev->kind)) {
		if (event_to_text(ev, &text) < 0)
			return -ENOMEM;
		int full = append(cu->c, ev->id, text, strlen(text));

		free(text);
		if (full)
			return 1;
	}
	cu->c->cursor = ev->id;
	return 0;
}

/* Fills c->out with the next events for the client; 0, or 1 at the end of the stream. */
static int fill(struct sse_client *c)
{
	struct sse_hub *h = c->hub;
	struct timespec until;

	c->out_len = c->out_off = 0;
	for (;;) {
		pthread_mutex_lock(&h->lock);
		if (h->stop) {
			pthread_mutex_unlock(&h->lock);
			return 1;
		}
		if (c->cursor < h->base_id) {
			/* Before the ring: from the store, up to where the ring begins. */
			struct catch_up cu = { .c = c, .until = h->base_id };
			struct store *s;

			pthread_mutex_unlock(&h->lock);
			s = store_pool_get(h->pool);
			store_events_after(s, c->cursor, 1000, catch_up_one, &cu);
			store_pool_put(h->pool, s);
			if (cu.n == 0) /* nothing left before the ring (retention took it) */
				c->cursor = cu.until;
			if (c->out_len)
				return 0;
			continue;
		}
		/* The first ring entry after the cursor, by binary search (ids only grow). */
		uint64_t lo = h->head - h->count, hi = h->head;

		while (lo < hi) {
			uint64_t mid = lo + (hi - lo) / 2;

			if (h->ring[mid % HUB_RING].id <= c->cursor)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < h->head; lo++) {
			struct hub_entry *e = &h->ring[lo % HUB_RING];

			if (wanted(c, e->sandbox, e->kind) && append(c, e->id, e->text, e->len))
				break;
			c->cursor = e->id;
		}
		if (c->out_len) {
			pthread_mutex_unlock(&h->lock);
			return 0;
		}
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += (time_t)(c->keepalive_ns / NSEC_PER_SEC);
		until.tv_nsec += (long)(c->keepalive_ns % NSEC_PER_SEC);
		if (until.tv_nsec >= (long)NSEC_PER_SEC) {
			until.tv_sec++;
			until.tv_nsec -= (long)NSEC_PER_SEC;
		}
		if (pthread_cond_timedwait(&h->more, &h->lock, &until) == ETIMEDOUT) {
			pthread_mutex_unlock(&h->lock);
			/* A comment, so proxies and the client see the stream is alive. */
			c->out_len = (size_t)snprintf(c->out, SSE_CHUNK, ": keepalive\n\n");
			return 0;
		}
		pthread_mutex_unlock(&h->lock);
	}
}

static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct sse_client *c = cls;
	size_t n;

	if (c->out_off == c->out_len && fill(c))
		return MHD_CONTENT_READER_END_OF_STREAM;
	n = c->out_len - c->out_off < max ? c->out_len - c->out_off : max;
	memcpy(buf, c->out + c->out_off, n);
	c->out_off += n;
	return (ssize_t)n;
}

static void sse_free(void *cls)
{
	struct sse_client *c = cls;

	atomic_fetch_sub(c->clients, 1);
	free(c->out);
	free(c);
}

/* A client of hc's stream, live from now on (its cursor at the newest event); NULL if no memory. */
static struct sse_client *client_new(struct http_child *hc)
{
	struct sse_client *c = calloc(1, sizeof(*c));

	if (!c || !(c->out = malloc(c->out_cap = SSE_CHUNK * 2 + 64))) {
		free(c);
		return NULL;
	}
	c->hub = hc->hub;
	pthread_mutex_lock(&hc->hub->lock);
	c->cursor = hc->hub->last_id;
	pthread_mutex_unlock(&hc->hub->lock);
	return c;
}

/* Where conn's stream starts and what it shows; NULL, or what is wrong with the request. */
static const char *set_filter(struct sse_client *c, struct MHD_Connection *conn)
{
	struct http_args args = http_conn_args(conn);
	struct http_stream_filter f;
	const char *error = http_stream_args(&args, &f);

	if (error)
		return error;
	if (f.has_cursor)
		c->cursor = f.cursor;
	memcpy(c->sandbox, f.sandbox, sizeof(c->sandbox));
	memcpy(c->kinds, f.kinds, sizeof(c->kinds));
	c->nkinds = f.nkinds;
	return NULL;
}

/* ?sandbox=NAME&kind=K1,K2,prefix.* ; Last-Event-ID (header, or ?last_event_id=) resumes. */
struct MHD_Response *sse_response(struct http_child *hc, struct MHD_Connection *conn,
				  const char **ret_error)
{
	struct sse_client *c = client_new(hc);
	struct MHD_Response *resp;

	*ret_error = NULL;
	if (!c)
		return NULL;
	if ((*ret_error = set_filter(c, conn))) {
		free(c->out);
		free(c);
		return NULL;
	}
	c->clients = &hc->sse_clients;
	c->keepalive_ns = (uint64_t)hc->cfg->http_idle_timeout_ns / 3;
	if (c->keepalive_ns > SSE_KEEPALIVE_NS)
		c->keepalive_ns = SSE_KEEPALIVE_NS;
	atomic_fetch_add(c->clients, 1);
	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, SSE_CHUNK, sse_read, c,
						 sse_free);
	if (!resp) {
		sse_free(c);
		return NULL;
	}
	MHD_add_response_header(resp, "Content-Type", "text/event-stream");
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	/* A stream lives as long as its client reads: the keepalive is the activity that keeps a
	 * quiet stream open, and a client that stops reading is closed after http_idle_timeout like
	 * any other, so it cannot hold its thread and slot for ever. */
	return resp;
}
