/*
 * What the control socket's request handlers share (monitor/control.c dispatches; other files
 * implement some ops): replying, refusing, and storing a sandbox's row before answering.
 */
#ifndef FB_CONTROL_H
#define FB_CONTROL_H

#include <jansson.h>
#include <stdint.h>

struct daemon;
struct lineserver;
struct store_sandbox;

typedef void (*control_fn)(struct daemon *d, struct lineserver *ls, uint64_t token,
			   uint64_t lineno, json_t *req);

/* The control protocol's state and counter, made before any request is read; 0 or -errno. */
int control_init(struct daemon *d);
void control_free(struct daemon *d);

/* Queues a reply that needs no store write (kept in order with those that do); takes obj. */
void control_reply_json(struct lineserver *ls, uint64_t token, json_t *obj);

/* Refuses request lineno with msg: counted, logged (rate-limited), answered. */
void control_refuse(struct daemon *d, struct lineserver *ls, uint64_t token, uint64_t lineno,
		    const char *msg);

/* Stores sb's row with no one to answer (a change the monitor made on its own). */
void control_store_sandbox(struct daemon *d, const struct store_sandbox *sb);

/* Stores sb's row and answers {"ok":true,"sandbox":NAME,"id":N} once it is durable. */
void control_submit_sandbox(struct daemon *d, struct lineserver *ls, uint64_t token,
			    uint64_t lineno, const struct store_sandbox *sb);

#endif
