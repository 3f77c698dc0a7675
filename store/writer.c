#include "writer.h"

#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/eventfd.h>

#include "log.h"
#include "macro.h"
#include "timeutil.h"

/* A growable array of ops or completions: the queue is swapped whole between threads. */
struct op_vec {
	struct writer_op *v;
	size_t n, cap;
};

struct completion_vec {
	struct writer_completion *v;
	size_t n, cap;
};

struct writer {
	struct store *store;
	struct writer_config cfg;
	pthread_t thread;
	int started;
	int efd;

	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct op_vec queue;	    /* under lock */
	struct completion_vec done; /* under lock */
	int stopping;		    /* under lock */
	size_t in_batch;	    /* under lock: taken by the thread, not yet completed */
	size_t held_bytes;	   /* under lock: writer_op_bytes of the queued and in-flight ops */
	size_t peak_bytes;	   /* under lock: the most held since the heap was last trimmed */
	int was_full;		   /* under lock: writer_full said so last time (counted once) */
	struct writer_stats stats; /* under lock */
	int64_t max_event_id;	   /* the store's largest event id when the writer took it */
};

void writer_op_clear(struct writer_op *op)
{
	event_clear(&op->ev);
	if (op->trace) {
		trace_record_clear(op->trace);
		free(op->trace);
	}
	free(op->sandbox);
	free(op->action);
	free(op->detection);
	if (op->policy)
		free(op->policy->text);
	free(op->policy);
	free(op->cursor);
	free(op->msg);
	memset(op, 0, sizeof(*op));
}

size_t writer_op_bytes(const struct writer_op *op)
{
	size_t n = sizeof(*op) + op->ev.fields_len;

	if (op->msg)
		n += strlen(op->msg) + 1;
	if (op->trace)
		n += sizeof(*op->trace);
	if (op->sandbox)
		n += sizeof(*op->sandbox);
	if (op->action)
		n += sizeof(*op->action);
	if (op->detection)
		n += sizeof(*op->detection);
	if (op->policy)
		n += sizeof(*op->policy) + (op->policy->text ? strlen(op->policy->text) + 1 : 0);
	if (op->cursor)
		n += sizeof(*op->cursor);
	return n;
}

static int grow(void **v, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 256;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	p = realloc(*v, n * elem);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = n;
	return 0;
}

/* Applies one op inside the open transaction; returns its result. */
static int apply_one(struct writer *w, struct writer_op *op)
{
	switch (op->type) {
	case WRITER_OP_CURSOR:
		return 0; /* the cursor itself is put by apply() */
	case WRITER_OP_EVENT:
		return store_event_insert(w->store, &op->ev);
	case WRITER_OP_TRACE:
		return store_trace_apply(w->store, op->trace, &op->ev);
	case WRITER_OP_SANDBOX:
		return store_sandbox_put(w->store, op->sandbox);
	case WRITER_OP_REPLY:
		return 0;
	case WRITER_OP_ACTION: {
		int r = store_action_insert(w->store, op->action, NULL);

		return r < 0 ? r : store_event_insert(w->store, &op->ev);
	}
	case WRITER_OP_VERDICT: {
		int r = store_detection_insert(w->store, op->detection, op->create_incident);

		return r < 0 ? r : store_event_insert(w->store, &op->ev);
	}
	case WRITER_OP_POLICY:
		return store_policy_put(w->store, op->policy->hash, op->policy->name,
					op->policy->text, op->policy->ts);
	case WRITER_OP_INCIDENT_CLOSE: {
		int r = store_incident_close(w->store, op->incident_id, op->ev.ts);

		return r < 0 ? r : store_event_insert(w->store, &op->ev);
	}
	}
	abort(); /* an op type this writer does not know is a bug in the caller */
}

/* The op, then its cursor if it carries one and the op worked (same transaction). */
static int apply(struct writer *w, struct writer_op *op)
{
	int r = apply_one(w, op);

	if (r >= 0 && op->cursor) {
		int rc = store_cursor_put(w->store, op->cursor);

		/* The op is in the transaction without its cursor: only a rollback keeps them
		 * together (a restart then reads those lines again). */
		if (rc < 0)
			return rc == -ENOSPC ? rc : -EIO;
	}
	return r;
}

static const char *result_text(int result)
{
	switch (result) {
	case -EIO:
		return "the store could not commit; not stored, retry later";
	case -ENOSPC:
		return "the store's disk is full; not stored";
	default:
		return "the store refused this operation";
	}
}

/* A run of plain events goes in several rows per statement, at most this many. */
#define BATCH_EVENT_RUN 256

/* What one batch did, for the counters: events appended, ops failed, events among them. */
struct batch_tally {
	uint64_t events, failed, lost;
};

/* Whether op, applied with result, appended an event. */
static int appended_event(const struct writer_op *op, int result)
{
	if (op->type == WRITER_OP_TRACE)
		return result == STORE_TRACE_NEW;
	return (op->type == WRITER_OP_EVENT || op->type == WRITER_OP_ACTION ||
		op->type == WRITER_OP_VERDICT || op->type == WRITER_OP_INCIDENT_CLOSE) &&
	       result == 0;
}

/*
 * A run of two or more plain events at the start of ops[0..n) goes in several rows per statement:
 * returns how many ops it took (0: no such run), each one's result in results, and sets *ret_r to
 * the insert's.
 */
static size_t apply_event_run(struct writer *w, struct writer_op *ops, size_t n, int *results,
			      struct batch_tally *t, int *ret_r)
{
	struct event *evs[BATCH_EVENT_RUN];
	size_t run = 0;
	int r;

	while (run < n && ops[run].type == WRITER_OP_EVENT && run < BATCH_EVENT_RUN) {
		evs[run] = &ops[run].ev;
		run++;
	}
	if (run < 2)
		return 0;
	r = store_events_insert(w->store, evs, run);
	/* The cursors of the run's ops, in order, after the events they cover. */
	for (size_t j = 0; j < run && r == 0; j++)
		if (ops[j].cursor)
			r = store_cursor_put(w->store, ops[j].cursor);
	for (size_t j = 0; j < run; j++)
		results[j] = r;
	if (r == 0)
		t->events += run;
	*ret_r = r;
	return run;
}

/*
 * Applies ops[0..n) inside the open transaction, each op's result in results; 0, or the error
 * that makes the transaction no longer trustworthy (the rest are then not applied).
 */
static int apply_ops(struct writer *w, struct writer_op *ops, size_t n, int *results,
		     struct batch_tally *t)
{
	int r = 0;

	for (size_t i = 0; i < n && r == 0; i++) {
		size_t run = apply_event_run(w, ops + i, n - i, results + i, t, &r);

		if (run > 0) {
			i += run - 1;
			continue;
		}
		results[i] = apply(w, &ops[i]);
		if (results[i] == -EIO || results[i] == -ENOSPC || results[i] == -ENOMEM)
			r = results[i]; /* the transaction is no longer trustworthy */
		else if (appended_event(&ops[i], results[i]))
			t->events++;
	}
	return r;
}

/* After a failed commit: every op but a reply failed with r, and no event was appended. */
static void fail_ops(const struct writer_op *ops, size_t n, int r, int *results,
		     struct batch_tally *t)
{
	for (size_t i = 0; i < n; i++) {
		if (ops[i].type != WRITER_OP_REPLY) {
			results[i] = r;
			t->failed++;
			t->lost +=
				ops[i].type != WRITER_OP_SANDBOX && ops[i].type != WRITER_OP_CURSOR;
		}
	}
	t->events = 0;
}

/* Adds one batch of n ops, committed (r 0) or not, to the counters; under w->lock. */
static void count_batch(struct writer *w, size_t n, int r, const struct batch_tally *t, uint64_t t0)
{
	w->in_batch -= n;
	w->stats.ops += n - t->failed;
	w->stats.events += t->events;
	w->stats.failed_ops += t->failed;
	w->stats.lost_events += t->lost;
	w->stats.batches += r == 0;
	w->stats.busy_ns += time_mono_ns() - t0;
	if (n > w->stats.max_batch)
		w->stats.max_batch = n;
}

/* Queues a completion for each op of ops[0..n) that asked for one, in order; under w->lock. */
static void queue_completions(struct writer *w, struct writer_op *ops, size_t n, const int *results)
{
	if (grow((void **)&w->done.v, &w->done.cap, w->done.n + n, sizeof(*w->done.v)) < 0)
		abort();
	for (size_t i = 0; i < n; i++) {
		struct writer_completion *c;

		if (ops[i].token == 0)
			continue;
		c = &w->done.v[w->done.n++];
		c->token = ops[i].token;
		c->result = results[i];
		if (ops[i].type == WRITER_OP_REPLY || results[i] >= 0) {
			c->msg = TAKE_PTR(ops[i].msg);
		} else {
			c->msg = strdup(results[i] == -EEXIST ? "conflict"
							      : result_text(results[i]));
		}
	}
}

/*
 * Applies ops[0..n) in one transaction and queues their completions once it is committed or
 * rolled back: a success is only ever completed after the commit, so it means the op is durable.
 */
static void apply_batch(struct writer *w, struct writer_op *ops, size_t n)
{
	_cleanup_free_ int *results = calloc(n, sizeof(int));
	struct batch_tally t = { 0 };
	uint64_t t0 = time_mono_ns();
	size_t bytes = 0;
	int r;

	for (size_t i = 0; i < n; i++)
		bytes += writer_op_bytes(&ops[i]);
	if (!results)
		abort(); /* cannot even say what happened; a later restart re-adopts */
	r = store_begin(w->store);
	if (r == 0)
		r = apply_ops(w, ops, n, results, &t);
	if (r == 0)
		r = store_commit(w->store);
	if (r < 0) {
		store_rollback(w->store);
		log_errno(r, "store batch of %zu operations not committed", n);
		fail_ops(ops, n, r, results, &t);
	}

	pthread_mutex_lock(&w->lock);
	count_batch(w, n, r, &t, t0);
	w->held_bytes -= bytes < w->held_bytes ? bytes : w->held_bytes;
	queue_completions(w, ops, n, results);
	pthread_mutex_unlock(&w->lock);
	for (size_t i = 0; i < n; i++)
		writer_op_clear(&ops[i]);
	eventfd_write(w->efd, 1);
}

static void run_retention(struct writer *w)
{
	struct store_retention q = w->cfg.retention;
	int64_t n;

	q.now_ns = time_now_ns();
	n = store_retention_run(w->store, &q);
	if (n < 0) {
		log_errno((int)n, "retention");
		return;
	}
	if (n > 0)
		log_info("retention deleted %lld raw events", (long long)n);
	pthread_mutex_lock(&w->lock);
	w->stats.retention_deleted += (uint64_t)n;
	pthread_mutex_unlock(&w->lock);
}

/* Slots an idle queue keeps; a backlog's bigger arrays go once the writer has been idle. */
#define IDLE_SLOTS 4096
/* A backlog that held this much has its freed memory given back to the kernel afterwards. */
#define TRIM_AFTER_BYTES (1u << 20)
/* How long the queue stays empty before a backlog's memory goes. */
#define BACKLOG_IDLE_S 1

/* Whether a backlog left memory to give back; under w->lock. */
static int backlog_left(const struct writer *w, const struct op_vec *batch)
{
	return batch->cap > IDLE_SLOTS || w->queue.cap > IDLE_SLOTS ||
	       w->peak_bytes >= TRIM_AFTER_BYTES;
}

/*
 * Once the queue has been empty for BACKLOG_IDLE_S: the arrays a backlog grew go, and the heap's
 * free memory is given back (malloc_trim walks every arena, this thread's and the loop's), so
 * that a storm leaves no resident memory behind. Not sooner: under a steady flood the queue
 * empties between batches, and arrays freed (munmap, past M_MMAP_THRESHOLD) and grown again
 * each time were a page fault per 4 KiB of queue, 14 % of firebreakd's time in bench_pipeline.
 * Called unlocked with nothing queued.
 */
static void after_backlog(struct writer *w, struct op_vec *batch)
{
	int trim = 0;

	if (batch->cap > IDLE_SLOTS) {
		free(batch->v);
		*batch = (struct op_vec){ 0 };
	}
	pthread_mutex_lock(&w->lock);
	if (w->queue.n == 0 && w->queue.cap > IDLE_SLOTS) {
		free(w->queue.v);
		w->queue = (struct op_vec){ 0 };
	}
	if (w->queue.n == 0 && w->peak_bytes >= TRIM_AFTER_BYTES) {
		w->peak_bytes = w->held_bytes;
		w->stats.trims++;
		trim = 1;
	}
	pthread_mutex_unlock(&w->lock);
	if (trim) {
		store_release_memory(w->store); /* the writer thread's: the store is its own */
		malloc_trim(0);
	}
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	struct op_vec batch = { 0 };
	uint64_t next_retention = time_mono_ns() + w->cfg.retention_interval_ns;

	for (;;) {
		struct op_vec tmp;

		pthread_mutex_lock(&w->lock);
		while (w->queue.n == 0 && !w->stopping) {
			int left = backlog_left(w, &batch);

			if (w->cfg.retention_interval_ns > 0 || left) {
				struct timespec ts;
				clock_gettime(CLOCK_REALTIME, &ts);
				ts.tv_sec += BACKLOG_IDLE_S;
				if (pthread_cond_timedwait(&w->cond, &w->lock, &ts) == ETIMEDOUT &&
				    w->queue.n == 0 && left) {
					pthread_mutex_unlock(&w->lock);
					after_backlog(w, &batch);
					pthread_mutex_lock(&w->lock);
				}
				if (w->cfg.retention_interval_ns > 0 &&
				    time_mono_ns() >= next_retention)
					break;
			} else {
				pthread_cond_wait(&w->cond, &w->lock);
			}
		}
		if (w->queue.n == 0 && w->stopping) {
			pthread_mutex_unlock(&w->lock);
			break;
		}
		/* Swap the whole queue out (both arrays keep their capacity): the loop goes on
		 * queueing into the other while this one is written. */
		tmp = w->queue;
		w->queue = batch;
		w->queue.n = 0;
		batch = tmp;
		w->in_batch = batch.n;
		pthread_mutex_unlock(&w->lock);

		/* One transaction per batch_max ops, so completions flow while a backlog drains. */
		for (size_t i = 0; i < batch.n; i += w->cfg.batch_max) {
			size_t n = batch.n - i < w->cfg.batch_max ? batch.n - i : w->cfg.batch_max;

			apply_batch(w, batch.v + i, n);
		}
		batch.n = 0;
		if (w->cfg.retention_interval_ns > 0 && time_mono_ns() >= next_retention) {
			run_retention(w);
			next_retention = time_mono_ns() + w->cfg.retention_interval_ns;
		}
	}
	free(batch.v);
	return NULL;
}

int writer_new(struct store *s, const struct writer_config *cfg, struct writer **ret)
{
	struct writer *w = calloc(1, sizeof(*w));
	int r;

	if (!w)
		return -ENOMEM;
	w->store = s;
	w->cfg = *cfg;
	/* Event ids are given by the sink as events are submitted (store/sink.h), after the
	 * largest the store has; the store takes them as given. */
	if ((r = store_max_id(s, "events", &w->max_event_id)) < 0) {
		free(w);
		return r;
	}
	if (w->cfg.batch_max == 0)
		w->cfg.batch_max = 4096;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	w->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (w->efd < 0) {
		r = -errno;
		w->store = NULL;
		writer_free(w);
		return r;
	}
	r = -pthread_create(&w->thread, NULL, writer_main, w);
	if (r < 0) {
		w->store = NULL;
		writer_free(w);
		return r;
	}
	w->started = 1;
	*ret = w;
	return 0;
}

int writer_fd(struct writer *w)
{
	return w->efd;
}

int writer_op_has_event(const struct writer_op *op)
{
	return op->type == WRITER_OP_EVENT || op->type == WRITER_OP_TRACE ||
	       op->type == WRITER_OP_ACTION || op->type == WRITER_OP_VERDICT ||
	       op->type == WRITER_OP_INCIDENT_CLOSE;
}

int writer_submit(struct writer *w, struct writer_op *op)
{
	int wake;

	/* An event comes with its id (the sink gives them): a store row without one is a bug. */
	if (writer_op_has_event(op) && op->ev.id <= 0)
		abort();
	pthread_mutex_lock(&w->lock);
	if (w->stopping) {
		pthread_mutex_unlock(&w->lock);
		writer_op_clear(op);
		return -ESHUTDOWN;
	}
	if (grow((void **)&w->queue.v, &w->queue.cap, w->queue.n + 1, sizeof(*w->queue.v)) < 0)
		abort(); /* the queue is bounded by writer_full(); running out here is fatal */
	w->held_bytes += writer_op_bytes(op);
	if (w->held_bytes > w->peak_bytes)
		w->peak_bytes = w->held_bytes;
	w->queue.v[w->queue.n++] = *op;
	wake = w->queue.n == 1;
	pthread_mutex_unlock(&w->lock);
	memset(op, 0, sizeof(*op));
	if (wake)
		pthread_cond_signal(&w->cond);
	return 0;
}

int64_t writer_max_event_id(const struct writer *w)
{
	return w->max_event_id;
}

void writer_event_init(struct writer_op *op, const struct store_sandbox *sb, int64_t ts,
		       int64_t step, const char *tool, enum event_source source, const char *kind)
{
	memset(op, 0, sizeof(*op));
	op->type = WRITER_OP_EVENT;
	event_init(&op->ev);
	op->ev.ts = ts;
	op->ev.sandbox_id = sb->id;
	strscpy(op->ev.sandbox, sizeof(op->ev.sandbox), sb->name);
	op->ev.step = step;
	if (tool)
		strscpy(op->ev.tool, sizeof(op->ev.tool), tool);
	op->ev.source = source;
	strscpy(op->ev.kind, sizeof(op->ev.kind), kind);
}

int writer_op_set_fields(struct writer_op *op, json_t *f)
{
	int r = f ? event_set_fields(&op->ev, f) : 0;

	json_decref(f);
	if (r < 0) {
		writer_op_clear(op);
		return -ENOMEM;
	}
	return 0;
}

int writer_full(struct writer *w)
{
	int full;

	pthread_mutex_lock(&w->lock);
	full = (w->cfg.queue_max > 0 && w->queue.n >= w->cfg.queue_max) ||
	       (w->cfg.queue_max_bytes > 0 && w->held_bytes >= w->cfg.queue_max_bytes);
	if (full && !w->was_full)
		w->stats.full++;
	w->was_full = full;
	pthread_mutex_unlock(&w->lock);
	return full;
}

void writer_dispatch(struct writer *w, void (*fn)(const struct writer_completion *c, void *data),
		     void *data)
{
	struct completion_vec done;
	eventfd_t dummy;

	eventfd_read(w->efd, &dummy);
	pthread_mutex_lock(&w->lock);
	done = w->done;
	memset(&w->done, 0, sizeof(w->done));
	pthread_mutex_unlock(&w->lock);
	for (size_t i = 0; i < done.n; i++)
		fn(&done.v[i], data);
	free(done.v);
}

void writer_get_stats(struct writer *w, struct writer_stats *ret)
{
	pthread_mutex_lock(&w->lock);
	*ret = w->stats;
	ret->pending = w->queue.n + w->in_batch;
	ret->pending_bytes = w->held_bytes;
	pthread_mutex_unlock(&w->lock);
}

void writer_stop(struct writer *w)
{
	pthread_mutex_lock(&w->lock);
	w->stopping = 1;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	if (w->started) {
		pthread_join(w->thread, NULL);
		w->started = 0;
	}
}

void writer_free(struct writer *w)
{
	if (!w)
		return;
	writer_stop(w);
	for (size_t i = 0; i < w->queue.n; i++)
		writer_op_clear(&w->queue.v[i]);
	free(w->queue.v);
	for (size_t i = 0; i < w->done.n; i++)
		free(w->done.v[i].msg);
	free(w->done.v);
	if (w->efd >= 0)
		close(w->efd);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	store_close(w->store);
	free(w);
}
