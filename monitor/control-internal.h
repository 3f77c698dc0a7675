/* The control ops control-ops.c implements, for control.c's dispatch table. */
#ifndef FB_CONTROL_INTERNAL_H
#define FB_CONTROL_INTERNAL_H

#include <jansson.h>
#include <stdint.h>

struct daemon;
struct lineserver;

void control_op_action(struct daemon *d, struct lineserver *ls, uint64_t token, uint64_t lineno,
		       json_t *req);
void control_op_watch(struct daemon *d, struct lineserver *ls, uint64_t token, uint64_t lineno,
		      json_t *req);
void control_op_unwatch(struct daemon *d, struct lineserver *ls, uint64_t token, uint64_t lineno,
			json_t *req);
void control_op_exec_scope(struct daemon *d, struct lineserver *ls, uint64_t token, uint64_t lineno,
			   json_t *req);

#endif
