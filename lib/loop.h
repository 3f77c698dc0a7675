/*
 * The daemon's one event loop: epoll over file descriptors, with timers as timerfds and signals as
 * a signalfd, so every source is just an fd and every handler runs on this one thread.
 */
#ifndef FB_LOOP_H
#define FB_LOOP_H

#include <stdint.h>
#include <sys/epoll.h>

struct loop;

/* Called with the epoll events that fired on fd. */
typedef void (*loop_io_fn)(struct loop *l, int fd, uint32_t events, void *data);
/* Called when a timer expires; expirations counts missed periods too. */
typedef void (*loop_timer_fn)(struct loop *l, uint64_t expirations, void *data);

/* Returns a new loop in *ret; 0 or -errno. */
int loop_new(struct loop **ret);

/* Frees the loop and closes the fds it created (timers, signals), not those added by callers. */
void loop_free(struct loop *l);

/* Watches fd for events (EPOLLIN, EPOLLOUT, ...); 0 or -errno. */
int loop_add(struct loop *l, int fd, uint32_t events, loop_io_fn fn, void *data);

/* Changes the events watched on fd; 0 or -errno. */
int loop_modify(struct loop *l, int fd, uint32_t events);

/* Stops watching fd (safe from inside any handler, including fd's own); does not close it. */
int loop_remove(struct loop *l, int fd);

/* Calls fn every interval_ns (first after interval_ns); returns the timer's fd (>= 0) or -errno. */
int loop_add_timer(struct loop *l, uint64_t interval_ns, loop_timer_fn fn, void *data);

/* Blocks signals in the mask and delivers them to fn as a signo via the loop; 0 or -errno. */
int loop_add_signals(struct loop *l, const int *signals, int n,
		     void (*fn)(struct loop *l, int signo, void *data), void *data);

/* Runs until loop_quit(); returns the code given to loop_quit. */
int loop_run(struct loop *l);

/* Makes loop_run return code once the current handler returns. */
void loop_quit(struct loop *l, int code);

#endif
