/*
 * The detectors, live: every event the daemon queues (from any source) goes through its sandbox's
 * detectors (detectors/detect.h) on the event loop, before it is stored. A verdict's action runs
 * at once through the kill path (monitor/actions.h), then the verdict is recorded (a detections
 * row, a "verdict" event naming its triggers, and its incident), then the action.
 * docs/detectors.md.
 */
#ifndef FB_VERDICTS_H
#define FB_VERDICTS_H

struct daemon;
struct detect_state;
struct store;
struct store_sandbox;

/* Reads the largest detection and incident ids (before the writer owns the store); 0 or -errno. */
int verdicts_init(struct daemon *d, struct store *s);

/* Hooks the detectors to the writer: from now on every queued event is looked at. */
void verdicts_start(struct daemon *d);

/* The sandbox's detectors (made on first use, with its policy), or NULL. */
struct detect_state *verdicts_detectors(struct daemon *d, const struct store_sandbox *sb);

/* Forgets a sandbox's detectors (destroyed, unwatched). */
void verdicts_forget(struct daemon *d, const char *sandbox);

void verdicts_stop(struct daemon *d);

#endif
