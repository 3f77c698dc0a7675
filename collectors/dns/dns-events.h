/*
 * The DNS collector: every DNS message a watched sandbox's sockets send to port 53 (a query,
 * "dns.query") or receive from it (an answer, "dns.answer"), parsed and tied to its sandbox, step
 * and tool by the socket's cgroup. A message that does not parse is a "dns.malformed" event.
 * Its losses (ring full or past the sandbox's share, each its sandbox's monitor.loss; unreadable
 * packets, unowned, unattributed) are counted ("dns").
 */
#ifndef FB_DNS_EVENTS_H
#define FB_DNS_EVENTS_H

struct collector_env;
struct dns_events;
struct store_sandbox;

/*
 * Loads the tracer, watches every live sandbox, drains into the loop and registers its counters;
 * 0 and *ret, or -errno (logged by the tracer).
 */
int dns_events_new(const struct collector_env *env, struct dns_events **ret);

/* Drains what is left, detaches and frees; accepts NULL. */
void dns_events_free(struct dns_events *de);

/* Watches sandbox sb's sockets from now on (its cgroup must exist); 0 (also with none) or -errno.
 */
int dns_events_watch(struct dns_events *de, const struct store_sandbox *sb);

/* Stops watching sandbox sb: drains first, so nothing of it is left unreported. Accepts NULL. */
void dns_events_unwatch(struct dns_events *de, const struct store_sandbox *sb);

/* Drains what is waiting (its timer and the ring buffer's fd call it); accepts NULL. */
void dns_events_drain(struct dns_events *de);

#endif
