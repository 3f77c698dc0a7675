/*
 * The file collector: what each tool call did to files, from fanotify marks on the watched
 * sandbox's own mounts (file-notify.h): file.open, file.write, file.exec, file.create,
 * file.link, file.symlink, file.unlink, file.rename, file.attrib, file.utimes, and file.summary
 * for what the per-step aggregation counted (file-agg.h). Each event is tied to its sandbox,
 * step and tool by the process's cgroup, or, once the process is gone, to its sandbox by the
 * group it came through. Losses are counted and stored as monitor.loss of their sandbox.
 */
#ifndef FB_FILE_EVENTS_H
#define FB_FILE_EVENTS_H

struct collector_env;
struct file_events;
struct store_sandbox;

/* Starts the collector and watches every running sandbox of the enforcer's; 0 and *ret, or -errno.
 */
int file_events_new(const struct collector_env *env, struct file_events **ret);

/* Reads what is left, flushes the summaries and frees; accepts NULL. */
void file_events_free(struct file_events *fe);

/*
 * Marks sandbox sb's mounts through its init's root; 0 (also for an adopted cgroup, which has no
 * mounts of its own, and with no collector) or -errno.
 */
int file_events_watch(struct file_events *fe, const struct store_sandbox *sb);

/* Reads what is left of sandbox sb, flushes its summaries and drops its marks; accepts NULL. */
void file_events_unwatch(struct file_events *fe, const struct store_sandbox *sb);

/*
 * A step of sandbox ended: reads what its groups hold while the step is still known, and flushes
 * the summaries' counts. Accepts NULL.
 */
void file_events_step_end(struct file_events *fe, const char *sandbox);

#endif
