/*
 * Where each value of a JSON text sits, by path. jansson reports positions for syntax errors only;
 * a loader that finds a semantic error (an unknown key, a wrong type) after json_loadb() looks the
 * offending member up here to print FILE:LINE:COL. Paths are JSON Pointers (RFC 6901): "" is the
 * root, "/tools/run_tests/commands/0" a member of a member of an array element; '~' and '/' in a
 * key are written "~0" and "~1". Lines and columns start at 1; a column counts characters (UTF-8
 * code points), as jansson's do.
 */
#ifndef FB_JSON_POS_H
#define FB_JSON_POS_H

#include <stddef.h>

/* The longest path recorded; a deeper or longer one makes json_pos_scan() fail. */
#define JSON_POS_PATH_MAX 1024
/* The deepest nesting scanned (jansson's own parser stops at 2048). */
#define JSON_POS_DEPTH_MAX 256

struct json_pos_loc {
	unsigned line, col;	    /* the value's first character */
	unsigned key_line, key_col; /* the member's key (its opening quote); for an array element or
				     * the root, the value's position again */
	size_t offset;		    /* the value's byte offset in the text */
};

/* The positions of one text: owns copies of every path; the text itself is not kept. */
struct json_pos;

/*
 * Scans text (len bytes of JSON that a parser has already accepted, save perhaps for duplicate
 * keys) into *ret; free it with json_pos_free(). Returns 0, -ENOMEM, or -EINVAL when the text is
 * not JSON or exceeds JSON_POS_PATH_MAX / JSON_POS_DEPTH_MAX; then *ret_err (if not NULL) holds
 * where the scan stopped.
 */
int json_pos_scan(const char *text, size_t len, struct json_pos **ret,
		  struct json_pos_loc *ret_err);

/* Frees p; accepts NULL. */
void json_pos_free(struct json_pos *p);

/* Fills *ret with the position of the value at path; returns 0 or -ENOENT. */
int json_pos_lookup(const struct json_pos *p, const char *path, struct json_pos_loc *ret);

/*
 * Like json_pos_lookup(), but when path is absent, walks up to its nearest recorded ancestor, so
 * a message about a member that is missing points at the object that lacks it. Returns 0 and fills
 * *ret, or -ENOENT if not even the root is recorded.
 */
int json_pos_lookup_nearest(const struct json_pos *p, const char *path, struct json_pos_loc *ret);

/*
 * The first member (in text order) whose key repeats an earlier key of the same object: returns 0
 * with its path (valid while p lives) and position, or -ENOENT if every key is unique.
 */
int json_pos_duplicate(const struct json_pos *p, const char **ret_path, struct json_pos_loc *ret);

/* Appends "/" and key, escaped per RFC 6901, to the path in buf; -ENAMETOOLONG if it won't fit. */
int json_pos_path_push_key(char *buf, size_t size, const char *key);

/* Appends "/" and the decimal index to the path in buf; -ENAMETOOLONG if it won't fit. */
int json_pos_path_push_index(char *buf, size_t size, size_t index);

#endif
