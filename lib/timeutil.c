#include "timeutil.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int64_t time_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

uint64_t time_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

char *time_format_rfc3339(int64_t ns, char *buf, size_t size)
{
	time_t sec = (time_t)(ns / NSEC_PER_SEC);
	long frac = (long)(ns % NSEC_PER_SEC);
	struct tm tm;

	if (frac < 0) {
		frac += NSEC_PER_SEC;
		sec--;
	}
	if (!gmtime_r(&sec, &tm)) {
		snprintf(buf, size, "%lld", (long long)ns);
		return buf;
	}
	snprintf(buf, size, "%04d-%02d-%02dT%02d:%02d:%02d.%09ldZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
	return buf;
}

/* Parses "<number><unit>" where units maps suffix → multiplier; an empty suffix uses def_mult. */
struct unit {
	const char *suffix;
	long long mult;
};

static int parse_with_units(const char *s, const struct unit *units, long long def_mult,
			    long long *ret)
{
	char *end;
	unsigned long long v;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || v > LLONG_MAX)
		return -EINVAL;
	if (*end == '\0') {
		if (def_mult != 0 && v > (unsigned long long)(LLONG_MAX / def_mult))
			return -EINVAL;
		*ret = (long long)v * def_mult;
		return 0;
	}
	for (const struct unit *u = units; u->suffix; u++) {
		if (strcmp(end, u->suffix) != 0)
			continue;
		if (v > (unsigned long long)(LLONG_MAX / u->mult))
			return -EINVAL;
		*ret = (long long)v * u->mult;
		return 0;
	}
	return -EINVAL;
}

static const struct unit duration_units[] = {
	{ "ns", 1 },
	{ "us", 1000 },
	{ "ms", NSEC_PER_MSEC },
	{ "s", NSEC_PER_SEC },
	{ "m", 60 * NSEC_PER_SEC },
	{ "h", 3600 * NSEC_PER_SEC },
	{ "d", 86400 * NSEC_PER_SEC },
	{ NULL, 0 },
};

int duration_parse(const char *s, int64_t *ret_ns)
{
	long long v;
	int r = parse_with_units(s, duration_units, NSEC_PER_SEC, &v);

	if (r < 0)
		return r;
	*ret_ns = v;
	return 0;
}

int size_parse(const char *s, uint64_t *ret_bytes)
{
	static const struct unit units[] = {
		{ "K", 1LL << 10 }, { "M", 1LL << 20 }, { "G", 1LL << 30 },
		{ "T", 1LL << 40 }, { NULL, 0 },
	};
	long long v;
	int r = parse_with_units(s, units, 1, &v);

	if (r < 0)
		return r;
	*ret_bytes = (uint64_t)v;
	return 0;
}

static int parse_rfc3339(const char *s, int64_t *ret_ns)
{
	struct tm tm = { 0 };
	const char *p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	long long frac = 0;
	time_t sec;

	if (!p)
		return -EINVAL;
	if (*p == '.') {
		int digits = 0;

		for (p++; isdigit((unsigned char)*p); p++, digits++)
			if (digits < 9)
				frac = frac * 10 + (*p - '0');
		if (digits == 0)
			return -EINVAL;
		for (; digits < 9; digits++)
			frac *= 10;
	}
	if (strcmp(p, "Z") != 0)
		return -EINVAL;
	sec = timegm(&tm);
	if (sec == (time_t)-1)
		return -EINVAL;
	/* Past 2262-04-11T23:47:16.854775807Z the nanoseconds no longer fit an int64_t. */
	if (sec > (INT64_MAX - frac) / NSEC_PER_SEC || sec < INT64_MIN / NSEC_PER_SEC)
		return -EINVAL;
	*ret_ns = (int64_t)sec * NSEC_PER_SEC + frac;
	return 0;
}

int time_parse(const char *s, int64_t now_ns, int64_t *ret_ns)
{
	long long v;
	char *end;

	if (!s || !*s)
		return -EINVAL;
	if (strchr(s, 'T'))
		return parse_rfc3339(s, ret_ns);
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno == 0 && *end == '\0' && end != s && v >= 0) {
		*ret_ns = v;
		return 0;
	}
	{
		int64_t age;
		static const struct unit age_units[] = {
			{ "s", NSEC_PER_SEC },
			{ "m", 60 * NSEC_PER_SEC },
			{ "h", 3600 * NSEC_PER_SEC },
			{ "d", 86400 * NSEC_PER_SEC },
			{ NULL, 0 },
		};
		long long a;

		if (parse_with_units(s, age_units, 0, &a) < 0 || a == 0)
			return -EINVAL;
		age = a;
		*ret_ns = now_ns - age;
	}
	return 0;
}

int64_t time_boot_to_wall_ns(uint64_t boot_ns)
{
	struct timespec rt, bt;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_BOOTTIME, &bt);
	return (int64_t)boot_ns + ((int64_t)rt.tv_sec - (int64_t)bt.tv_sec) * NSEC_PER_SEC +
	       (rt.tv_nsec - bt.tv_nsec);
}
