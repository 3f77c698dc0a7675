/*
 * The HTTP child's life: open what it needs while still root (the tokens, the store read-only,
 * the channel and the listening socket it was given), enter the jail, serve until the core closes
 * the channel or asks it to stop. It shares nothing with the core but those two fds.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "http-child.h"
#include "jail.h"
#include "http-main.h"
#include "child.h"
#include "log.h"
#include "macro.h"
#include "store/store.h"
#include "timeutil.h"

#define CHANNEL_FD 3
#define LISTEN_FD 4
/* Header and request-line bytes a connection may use: more is 431 (libmicrohttpd). */
#define HTTP_CONN_MEMORY (32 << 10)

struct store *store_pool_get(struct store_pool *p)
{
	struct store *s = NULL;

	pthread_mutex_lock(&p->lock);
	while (!s) {
		for (int i = 0; i < HTTP_STORES && !s; i++) {
			if (!p->busy[i]) {
				p->busy[i] = 1;
				s = p->s[i];
			}
		}
		if (!s)
			pthread_cond_wait(&p->freed, &p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	return s;
}

void store_pool_put(struct store_pool *p, struct store *s)
{
	pthread_mutex_lock(&p->lock);
	for (int i = 0; i < HTTP_STORES; i++)
		if (p->s[i] == s)
			p->busy[i] = 0;
	pthread_cond_signal(&p->freed);
	pthread_mutex_unlock(&p->lock);
}

/*
 * A read-only connection, used once now so that SQLite opens the database, its WAL and its
 * shared-memory index while the files can still be opened; later reads go through those fds.
 */
static int open_store(const char *path, struct store **ret)
{
	int64_t id;
	int r = store_open(path, STORE_READ_ONLY, ret);

	if (r < 0)
		return r;
	if ((r = store_max_id(*ret, "events", &id)) < 0) {
		store_close(*ret);
		return r;
	}
	return 0;
}

static void close_stores(struct http_child *hc, struct store *own)
{
	for (int i = 0; i < HTTP_STORES; i++)
		store_close(hc->pool.s[i]);
	store_close(own);
}

int http_child_main(const struct config *cfg, int foreground)
{
	static struct http_child hc; /* large (counters, tokens): not on the stack */
	struct store *own = NULL;
	struct MHD_Daemon *mhd;
	sigset_t stop;
	int r;

	/* Nothing of the core's but the channel and the socket. */
	child_begin("firebreakd-http", "firebreakd-http", LISTEN_FD, foreground, &stop);

	hc.cfg = cfg;
	pthread_mutex_init(&hc.pool.lock, NULL);
	pthread_cond_init(&hc.pool.freed, NULL);
	if (http_token_load(cfg->http_read_token, hc.read_token) < 0 ||
	    http_token_load(cfg->http_action_token, hc.action_token) < 0)
		return 1;
	if (strcmp(hc.read_token, hc.action_token) == 0)
		return log_error("HTTP: the read and action tokens must differ"), 1;
	for (int i = 0; i < HTTP_STORES; i++)
		if ((r = open_store(cfg->db, &hc.pool.s[i])) < 0)
			return log_errno(r, "HTTP: store %s", cfg->db), 1;
	if ((r = open_store(cfg->db, &own)) < 0)
		return log_errno(r, "HTTP: store %s", cfg->db), 1;
	http_web_load(&hc);
	if ((r = jail_enter(cfg, 0)) < 0)
		return 1;
	if ((r = channel_new(CHANNEL_FD, &hc.chan)) < 0 ||
	    (r = sse_hub_new(&hc.pool, own, &hc.hub)) < 0)
		return log_errno(r, "HTTP: start"), 1;
	mhd = MHD_start_daemon(
		MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, 0,
		NULL, NULL, http_api_handle, &hc, MHD_OPTION_LISTEN_SOCKET, LISTEN_FD,
		MHD_OPTION_NOTIFY_COMPLETED, http_api_completed, &hc, MHD_OPTION_NOTIFY_CONNECTION,
		http_api_connection, &hc, MHD_OPTION_CONNECTION_LIMIT, cfg->http_clients_max,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, cfg->http_clients_per_ip_max,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)(cfg->http_idle_timeout_ns / NSEC_PER_SEC),
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_CONN_MEMORY, MHD_OPTION_END);
	if (!mhd)
		return log_error("HTTP: libmicrohttpd did not start"), 1;
	log_info("HTTP API ready: uid %u, no capabilities, store read-only", (unsigned)getuid());

	/* Until the core asks us to stop or goes away (then a new child serves, if it lives). */
	for (;;) {
		struct timespec tick = { 0, 200 * 1000 * 1000 };
		int sig = sigtimedwait(&stop, NULL, &tick);

		if (sig == SIGTERM || sig == SIGINT || channel_dead(hc.chan))
			break;
	}
	sse_hub_stop(hc.hub);
	MHD_stop_daemon(mhd);
	sse_hub_free(hc.hub);
	channel_free(hc.chan);
	close_stores(&hc, own);
	return 0;
}
