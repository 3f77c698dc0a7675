/*
 * A Unix-socket server of JSON lines with one reply per line, in order: the shape of both the trace
 * socket and the control socket. It owns the outside-facing hazards: the line length cap, clients
 * that never write, never read their replies or send garbage, the client count cap and peer
 * credentials. A protocol plugs in a line handler, which hands exactly one writer op per line
 * (replies travel through the writer so they stay in order with the store's completions), and a
 * reply formatter.
 */
#ifndef FB_LINESERVER_H
#define FB_LINESERVER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "loop.h"
#include "store/writer.h"

struct lineserver;

struct lineserver_ops {
	/*
	 * One complete line (without its newline), numbered from 1 on its connection, or line ==
	 * NULL for a line over the cap (len is then the cap). The handler must submit exactly one
	 * writer op carrying token, usually via lineserver_reply() for a refusal.
	 */
	void (*line)(struct lineserver *ls, uint64_t token, uint64_t lineno, const char *line,
		     size_t len, void *data);
	/* The reply line (malloc'd, no newline) for a completion of line lineno; NULL if -ENOMEM.
	 */
	char *(*reply)(const struct writer_completion *c, uint64_t lineno, void *data);
};

struct lineserver_config {
	const char *name; /* "trace", "control": for logs and counters */
	unsigned id;	  /* 1..255, unique per daemon: routes completions */
	size_t line_max;
	unsigned clients_max;
	uint64_t
		idle_timeout_ns; /* no line and nothing pending for this long: closed (0 = never) */
	uint64_t stall_timeout_ns; /* replies pending and not a byte of them read this long: closed
				    */
	uint64_t request_timeout_ns;  /* a line begun and not finished this long: closed (0 = never)
				       */
	unsigned clients_per_uid_max; /* one non-root uid's clients at once (0 = no limit) */
	size_t reply_buffer_max;
	gid_t group; /* peers with this group are trusted besides root; -1 = root only */
};

struct lineserver_stats {
	uint64_t accepted;
	uint64_t refused_peer;	 /* neither root nor the firebreak group */
	uint64_t refused_full;	 /* clients_max reached */
	uint64_t refused_uid;	 /* clients_per_uid_max reached for the peer's uid */
	uint64_t closed_idle;	 /* sent nothing for idle_timeout */
	uint64_t closed_stalled; /* did not read its replies */
	uint64_t closed_partial; /* began a line and did not finish it in time */
	uint64_t lines;
	uint64_t oversize;
	uint64_t replies_dropped; /* completions whose client had gone */
	uint64_t clients;	  /* connected now */
};

/*
 * Listens on fd (already bound) in loop l, submitting to w; fd -1: no listener, clients come only
 * through lineserver_add_client. Returns 0 and *ret, or -errno.
 */
int lineserver_new(struct loop *l, struct writer *w, int fd, const struct lineserver_config *cfg,
		   const struct lineserver_ops *ops, void *data, struct lineserver **ret);

/*
 * Serves fd (connected, non-blocking) as a client, trusted as root (root 1) or not (0), or as its
 * peer credentials say (-1). Takes fd on success; -EBUSY (full or stopping) or -errno.
 */
int lineserver_add_client(struct lineserver *ls, int fd, int root);

/* Closes every client and the listening fd; accepts NULL. */
void lineserver_free(struct lineserver *ls);

/* Which server a completion's token belongs to (the config's id). */
unsigned lineserver_token_server(uint64_t token);

/* Queues one completion's reply for its client (dropped and counted if the client is gone). */
void lineserver_complete(struct lineserver *ls, const struct writer_completion *c);

/* (These five accept NULL: a server that was never started.) */

/* Sends what replies are queued and updates each client's state; after a round of completions. */
void lineserver_flush(struct lineserver *ls);

/* Whether the client that sent token's line is root (not only in the firebreak group). */
int lineserver_peer_root(struct lineserver *ls, uint64_t token);

/* Queues a ready-made reply line (copied) for token, in order with the client's other replies. */
int lineserver_reply(struct lineserver *ls, uint64_t token, const char *reply);

/* Once a second: closes idle and stalled clients. */
void lineserver_tick(struct lineserver *ls);

/* Pauses (1) or resumes (0) reading from every client, e.g. while the writer is full. */
void lineserver_pause(struct lineserver *ls, int pause);

/* Stops accepting and reading (shutdown begins); pending replies still go out. */
void lineserver_stop_input(struct lineserver *ls);

/* Tries for up to timeout_ns to send every pending reply, then closes all clients. */
void lineserver_flush_and_close(struct lineserver *ls, uint64_t timeout_ns);

void lineserver_get_stats(struct lineserver *ls, struct lineserver_stats *ret);

#endif
