/*
 * Follows one log file by path, as tail -F does, in whole lines: the file may not exist yet, may
 * be truncated, or be replaced by another (rotation: the old one is read to its end first). It
 * knows the (inode, offset) of the next line it has not handed out, which is what a cursor
 * stores, and it starts from such a pair. No event loop here: the owner calls it on inotify and
 * on a timer.
 */
#ifndef FB_HTTP_FOLLOW_H
#define FB_HTTP_FOLLOW_H

#include <stddef.h>
#include <stdint.h>

struct http_follow;

/* What happened besides lines, for the owner to count and report. */
enum http_follow_note {
	HTTP_FOLLOW_OVERLONG,  /* a line past HTTP_LOG_LINE_MAX: skipped to its newline */
	HTTP_FOLLOW_TRUNCATED, /* the file shrank below the offset: read again from its start */
	HTTP_FOLLOW_ROTATED,   /* another file took the path: the old one was read to its end */
	HTTP_FOLLOW_RESTARTED, /* the cursor named another inode: the current file from its start */
};

struct http_follow_ops {
	/*
	 * One whole line (no newline), and where the next line starts: returns 0 to go on, or
	 * non-zero to stop reading now (the line is then not taken, and comes again next time).
	 */
	int (*line)(const char *line, size_t len, uint64_t inode, int64_t next_offset, void *data);
	void (*note)(enum http_follow_note what, uint64_t inode, int64_t offset, void *data);
};

/*
 * A follower of path from (inode, offset): the file with that inode is read on from offset; any
 * other file from its start (inode 0: no cursor). 0 and *ret, or -ENOMEM.
 */
int http_follow_new(const char *path, uint64_t inode, int64_t offset,
		    const struct http_follow_ops *ops, void *data, struct http_follow **ret);

/* Closes the file and frees it; accepts NULL. */
void http_follow_free(struct http_follow *f);

/*
 * Reads what is there (at most max_lines lines, so one busy log does not hold the loop): opens
 * the file if it appeared, follows a rotation or a truncation. Returns the lines handed out, or
 * -errno (the file cannot be read; tried again next time).
 */
int http_follow_poll(struct http_follow *f, size_t max_lines);

/* The file being read (0: none yet) and the offset of the next line not handed out. */
uint64_t http_follow_inode(const struct http_follow *f);
int64_t http_follow_offset(const struct http_follow *f);

#endif
