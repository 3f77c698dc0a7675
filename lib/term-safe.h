/*
 * Text that came from a sandbox (comm, paths, argv, DNS names, reasons, tool names, call ids,
 * bundle contents), made safe to print on a terminal: a control byte (0x00-0x1f, 0x7f), a C1
 * control (U+0080-U+009F, and a lone 0x80-0x9f byte) and every byte of invalid UTF-8 is shown as
 * \xNN, a backslash as \\; valid UTF-8 passes. A newline is escaped too, so one line stays one
 * line: escape each field, then add the tool's own newlines. JSON output is jansson's, not this.
 */
#ifndef FB_TERM_SAFE_H
#define FB_TERM_SAFE_H

#include <stddef.h>

struct strbuf;

/* The longest escape one input byte becomes ("\xNN"). */
#define TERM_SAFE_MAX_EXPANSION 4

/* Appends s[0..n) escaped to b. */
void term_safe_add(struct strbuf *b, const char *s, size_t n);

/* s (NULL reads as "") escaped into buf, cut at a whole character to fit size; returns buf. */
char *term_safe(const char *s, char *buf, size_t size);

/* s escaped, malloc'd (the caller frees); NULL if out of memory. */
char *term_safe_dup(const char *s);

#endif
