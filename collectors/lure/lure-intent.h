/*
 * What an open held at a tripwire asks for. A fanotify permission event says only "open": the
 * file it hands over is the monitor's own open of it. The opener is blocked inside its open
 * call, so its syscall and arguments are in /proc/TID/syscall (openat2's flags in its memory).
 */
#ifndef FB_LURE_INTENT_H
#define FB_LURE_INTENT_H

#include <stdint.h>
#include <sys/types.h>

/*
 * The open flags of thread tid's open call in progress into *ret; 0, or -errno (not in an open
 * call of a kind known here, or gone: the caller refuses).
 */
int lure_open_flags(pid_t tid, uint64_t *ret);

/* Whether flags ask to change the file (write access, truncation, creation). */
int lure_flags_write(uint64_t flags);

#endif
