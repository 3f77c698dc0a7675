/*
 * The control socket (docs/control.md): control.c dispatches each request and formats every
 * reply; control-ops.c parses the ops whose work a domain module does. Domain modules return
 * results and -errno and never answer a client themselves.
 */
#ifndef FB_CONTROL_H
#define FB_CONTROL_H

#include <jansson.h>
#include <stdint.h>

struct daemon;
struct lineserver;
struct store_sandbox;

typedef void (*control_fn)(struct daemon *d, struct lineserver *ls, uint64_t token, uint64_t lineno,
			   json_t *req);

/* The control protocol's state and counter, made before any request is read; 0 or -errno. */
int control_init(struct daemon *d);
void control_free(struct daemon *d);

/* Queues a reply that needs no store write (kept in order with those that do); takes obj. */
void control_reply_json(struct lineserver *ls, uint64_t token, json_t *obj);

/* Refuses request lineno with msg: counted, logged (rate-limited), answered. */
void control_refuse(struct daemon *d, struct lineserver *ls, uint64_t token, uint64_t lineno,
		    const char *msg);

/*
 * Whether the client that sent token's line is root: 1; else refuses the request (counted as
 * control_refused_root_only) with "only root may WHAT" and returns 0.
 */
int control_require_root(struct daemon *d, struct lineserver *ls, uint64_t token, uint64_t lineno,
			 const char *what);

/*
 * The kill switch's request, {"op":"freeze"|"thaw"|"kill"|"quarantine","sandbox":NAME
 * [,"reason":TEXT]}, from requested_by ("cli", or "http": the HTTP API's channel): done, and
 * answered with the action's record once it is durable.
 */
void control_action(struct daemon *d, struct lineserver *ls, uint64_t token, uint64_t lineno,
		    json_t *req, const char *requested_by);

/* Stores sb's row and answers {"ok":true,"sandbox":NAME,"id":N} once it is durable. */
void control_submit_sandbox(struct daemon *d, struct lineserver *ls, uint64_t token,
			    uint64_t lineno, const struct store_sandbox *sb);

#endif
