/*
 * The exec launcher's protocol, on a unix SOCK_SEQPACKET socket in the sandbox's state dir (root's
 * alone): one JSON object per message.
 *
 *   caller → launcher  {"tool": T, "argv": [..], "env": ["NAME=value", ..], "call_id": C?,
 *                       "step": N?}, with the caller's stdin, stdout and stderr (SCM_RIGHTS),
 *                       which the tool gets as its own: its output streams straight through
 *   caller → launcher  {"signal": N}  the caller was interrupted: the call is killed
 *   launcher → caller  {"step": N}    the tool runs, as step N
 *   launcher → caller  {"exit": CODE, "stderr": TEXT}  the call is over (126 refused, 125 frozen
 *                       under it, 128+N killed by signal N); TEXT is what the caller shows
 *   launcher → caller  {"error": TEXT, "errno": E}  it never ran (TEXT says why)
 *
 * A caller that goes away takes its call down with it (recorded as interrupted by SIGPIPE).
 */
#ifndef FB_LAUNCHER_WIRE_H
#define FB_LAUNCHER_WIRE_H

#include <jansson.h>

/* The largest request: argv and environment up to the kernel's ARG_MAX default, escaped. */
#define LAUNCHER_REQUEST_MAX (4 << 20)

/* Sends obj (taken) as one message, with nfds fds (0: none). 0 or -errno. */
int launcher_wire_send(int fd, json_t *obj, const int *fds, int nfds);

/*
 * Receives one message into *ret (an object) and up to maxfds fds into fds (close-on-exec;
 * *ret_nfds says how many). 0, -ECONNRESET (the peer closed), -EMSGSIZE, -EBADMSG, or -errno; on
 * failure no fd is left open.
 */
int launcher_wire_recv(int fd, json_t **ret, int *fds, int maxfds, int *ret_nfds);

#endif
