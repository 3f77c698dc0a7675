/*
 * What an exec's command line says, for the detectors: a reverse shell's signature in a shell's,
 * an interpreter's or a network tool's arguments; whether a program writes decoded or downloaded
 * bytes to its stdout; whether a shell or interpreter takes its code from stdin. String work on
 * the arguments the process tracer read (its first PROC_TRACE_ARGV_MAX bytes), no state. Quoting
 * inside a shell's -c string is not parsed: its words are split on blanks and operators.
 */
#ifndef FB_CMDLINE_H
#define FB_CMDLINE_H

#include <jansson.h>
#include <stddef.h>

#define CMDLINE_ARGS_MAX 64   /* arguments looked at (512 bytes of argv hold fewer in practice) */
#define CMDLINE_CODE_MAX 1024 /* bytes of inline code (-c, -e...) looked at */

/* Up to max strings of the JSON array argv into out, borrowed from it; how many. */
size_t cmdline_from_json(const json_t *argv, const char **out, size_t max);

/*
 * Whether cmdline_reverse_shell could find anything in an exec of path (a shell, an interpreter,
 * a network tool, busybox): the cheap test before its arguments are decoded.
 */
int cmdline_may_reverse_shell(const char *path);

/*
 * Whether the exec of path with argv (argv[0] included) carries a reverse shell's signature: nc
 * or ncat told to run a program (-e, -c), socat joining exec:/system: to a network address, a
 * shell's -c string reaching a non-loopback host through /dev/tcp or piping a shell to or from
 * nc/telnet/socat/openssl (or a FIFO made for it), an interpreter's inline code (python -c,
 * perl -e, ruby -e, php -r, node -e, lua -e) that connects a socket and hands it to a shell or
 * spawns a pty. 1 and what it found in why, else 0.
 */
int cmdline_reverse_shell(const char *path, const char *const *argv, size_t argc, char *why,
			  size_t size);

/* What a program writes to its stdout. */
enum cmdline_feed {
	CMDLINE_FEED_NONE,
	CMDLINE_FEED_DECODED,	 /* base64/base32/basenc -d, xxd -r, openssl ... -d */
	CMDLINE_FEED_DOWNLOADED, /* curl, wget, fetch, nc, ncat, telnet, socat, openssl s_client */
};
enum cmdline_feed cmdline_feeder(const char *path, const char *const *argv, size_t argc);

/*
 * Whether path with argv is a shell or interpreter that reads its program from stdin: no script
 * operand and no inline code (`sh`, `bash -s`, `python3`, `python3 -`, `perl`, `node -`...).
 * `python3 script.py`, `sh -c CODE`, `python3 -m json.tool` read data there, not code.
 */
int cmdline_code_from_stdin(const char *path, const char *const *argv, size_t argc);

#endif
