/* The sink (sink.h): ids, the stage, then the writer. */
#include "sink.h"

#include <errno.h>
#include <stdlib.h>

struct sink {
	struct writer *w;
	int64_t next_event_id, last_event_id;
	int (*observe)(const struct event *ev, void *data);
	void (*after)(void *data);
	void *data;
	int in_after;
	int stopped; /* sink_stop: nothing more is judged */
};

int sink_new(struct writer *w, struct sink **ret)
{
	struct sink *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->w = w;
	s->next_event_id = writer_max_event_id(w) + 1;
	*ret = s;
	return 0;
}

void sink_free(struct sink *s)
{
	free(s);
}

void sink_set_stage(struct sink *s, int (*observe)(const struct event *ev, void *data),
		    void (*after)(void *data), void *data)
{
	s->observe = observe;
	s->after = after;
	s->data = data;
}

int sink_submit(struct sink *s, struct writer_op *op)
{
	int observed = 0, r;

	if (writer_op_has_event(op)) {
		op->ev.id = s->next_event_id++;
		s->last_event_id = op->ev.id;
		/* Once the writer stops, nothing new is judged: it would not be stored. */
		if (s->observe && !s->stopped)
			observed = s->observe(&op->ev, s->data);
	}
	r = writer_submit(s->w, op);
	if (observed && !s->in_after) {
		s->in_after = 1;
		s->after(s->data);
		s->in_after = 0;
	}
	return r;
}

int sink_submit_event(struct sink *s, struct writer_op *op, json_t *f)
{
	int r = writer_op_set_fields(op, f);

	return r < 0 ? r : sink_submit(s, op);
}

void sink_stop(struct sink *s)
{
	s->stopped = 1;
	writer_stop(s->w);
}

int sink_full(struct sink *s)
{
	return writer_full(s->w);
}

int64_t sink_last_event_id(const struct sink *s)
{
	return s->last_event_id;
}
