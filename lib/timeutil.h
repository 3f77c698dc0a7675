/* Clocks and the one text form of a time the project prints and parses. */
#ifndef FB_TIMEUTIL_H
#define FB_TIMEUTIL_H

#include <stddef.h>
#include <stdint.h>

#define NSEC_PER_SEC 1000000000LL
#define NSEC_PER_MSEC 1000000LL

/* Wall clock, ns since the epoch: the time every event carries. */
int64_t time_now_ns(void);

/* Monotonic clock in ns, for timeouts and intervals. */
uint64_t time_mono_ns(void);

/* A CLOCK_BOOTTIME time in ns (the kernel's BPF timestamps) as wall-clock ns. */
int64_t time_boot_to_wall_ns(uint64_t boot_ns);

/* Formats ns since the epoch as 2026-11-29T21:17:56.123456789Z; returns buf. */
char *time_format_rfc3339(int64_t ns, char *buf, size_t size);

/*
 * Parses a point in time: ns since the epoch ("1764451076000000000"), RFC 3339 in UTC
 * ("2026-11-29T21:17:56Z", fraction optional), or an age before now ("90s", "15m", "2h", "7d").
 * Returns 0 and sets *ret_ns, or -EINVAL.
 */
int time_parse(const char *s, int64_t now_ns, int64_t *ret_ns);

/* Parses a duration ("250ms", "30s", "15m", "2h", "7d", bare number = seconds); -EINVAL if bad. */
int duration_parse(const char *s, int64_t *ret_ns);

/* Parses a size ("512M", "2G", "1048576", suffixes K M G T, powers of 1024); -EINVAL if bad. */
int size_parse(const char *s, uint64_t *ret_bytes);

#endif
