/* Reading what a cgroup used, on v2 or v1 alike: one struct whatever the host's shape. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup-backend.h"
#include "cgroup.h"
#include "macro.h"

/* Reads "KEY VALUE" lines of dir/file, calling fn for each; 0 or -errno. */
static int read_keyed(const char *dir, const char *file,
		      void (*fn)(const char *key, const char *value, void *data), void *data)
{
	char path[1100], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *sp = strchr(line, ' ');

		if (!sp)
			continue;
		*sp = '\0';
		fn(line, sp + 1, data);
	}
	fclose(f);
	return 0;
}

static void cpu_v2(const char *key, const char *value, void *data)
{
	struct cgroup_stats *st = data;

	if (strcmp(key, "usage_usec") == 0) {
		st->cpu_usage_us = strtoull(value, NULL, 10);
		st->have |= CGROUP_HAVE_CPU;
	} else if (strcmp(key, "nr_throttled") == 0) {
		st->cpu_nr_throttled = strtoull(value, NULL, 10);
		st->have |= CGROUP_HAVE_THROTTLE;
	} else if (strcmp(key, "throttled_usec") == 0) {
		st->cpu_throttled_us = strtoull(value, NULL, 10);
	}
}

static void cpu_v1(const char *key, const char *value, void *data)
{
	struct cgroup_stats *st = data;

	if (strcmp(key, "nr_throttled") == 0) {
		st->cpu_nr_throttled = strtoull(value, NULL, 10);
		st->have |= CGROUP_HAVE_THROTTLE;
	} else if (strcmp(key, "throttled_time") == 0) {
		st->cpu_throttled_us = strtoull(value, NULL, 10) / 1000;
	}
}

static void memory_events_v2(const char *key, const char *value, void *data)
{
	struct cgroup_stats *st = data;

	if (strcmp(key, "max") == 0)
		st->memory_max_hits = strtoull(value, NULL, 10);
	else if (strcmp(key, "oom") == 0)
		st->memory_oom = strtoull(value, NULL, 10);
	else if (strcmp(key, "oom_kill") == 0)
		st->memory_oom_kill = strtoull(value, NULL, 10);
}

static void oom_control_v1(const char *key, const char *value, void *data)
{
	struct cgroup_stats *st = data;

	if (strcmp(key, "oom_kill") == 0)
		st->memory_oom_kill = strtoull(value, NULL, 10);
}

static void pids_events(const char *key, const char *value, void *data)
{
	if (strcmp(key, "max") == 0)
		((struct cgroup_stats *)data)->pids_max_hits = strtoull(value, NULL, 10);
}

/* blkio.throttle.io_service_bytes: "MAJ:MIN Read N" lines and a "Total N". */
static int io_v1(const char *dir, struct cgroup_stats *st)
{
	char path[1100], dev[32], op[16];
	unsigned long long v;
	FILE *f;

	snprintf(path, sizeof(path), "%s/blkio.throttle.io_service_bytes", dir);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fscanf(f, "%31s %15s %llu", dev, op, &v) == 3) {
		if (strcmp(op, "Read") == 0)
			st->io_read_bytes += v;
		else if (strcmp(op, "Write") == 0)
			st->io_write_bytes += v;
	}
	fclose(f);
	st->have |= CGROUP_HAVE_IO;
	return 0;
}

/* io.stat: "MAJ:MIN rbytes=N wbytes=N ..." per device. */
static int io_v2(const char *dir, struct cgroup_stats *st)
{
	char path[1100], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/io.stat", dir);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *p;

		if ((p = strstr(line, "rbytes=")))
			st->io_read_bytes += strtoull(p + 7, NULL, 10);
		if ((p = strstr(line, "wbytes=")))
			st->io_write_bytes += strtoull(p + 7, NULL, 10);
	}
	fclose(f);
	st->have |= CGROUP_HAVE_IO;
	return 0;
}

/* "some avg10=1.23 ..." / "full avg10=..." from a v2 pressure file, in hundredths. */
static void read_psi(const char *dir, const char *file, uint64_t *some, uint64_t *full)
{
	char path[1100], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "avg10=");
		uint64_t v;

		if (!p)
			continue;
		v = (uint64_t)(strtod(p + 6, NULL) * 100 + 0.5);
		if (strncmp(line, "some", 4) == 0 && some)
			*some = v;
		else if (strncmp(line, "full", 4) == 0 && full)
			*full = v;
	}
	fclose(f);
}

int cgroup_read_stats(const char *rel, struct cgroup_stats *ret)
{
	struct cgroup_stats st = { 0 };
	char dir[1024];
	int v2;

	if ((v2 = cgroup_resource_dir(_CGROUP_RES_MAX, rel, dir, sizeof(dir))) < 0)
		return v2;
	if (access(dir, F_OK) < 0)
		return -ENOENT;
	/* v2 always has cpu.stat's usage and the pressure files, controllers or not. */
	read_keyed(dir, "cpu.stat", cpu_v2, &st);
	read_psi(dir, "cpu.pressure", &st.psi_cpu_some, NULL);
	read_psi(dir, "memory.pressure", &st.psi_memory_some, &st.psi_memory_full);
	read_psi(dir, "io.pressure", &st.psi_io_some, &st.psi_io_full);
	if (access(dir, F_OK) == 0)
		st.have |= CGROUP_HAVE_PSI;

	v2 = cgroup_resource_dir(CGROUP_RES_CPU, rel, dir, sizeof(dir));
	if (v2 == 0)
		read_keyed(dir, "cpu.stat", cpu_v1, &st);

	v2 = cgroup_resource_dir(CGROUP_RES_MEMORY, rel, dir, sizeof(dir));
	if (v2 >= 0 && access(dir, F_OK) == 0) {
		if (v2) {
			/* "max" (no limit) does not parse: memory_max stays 0. */
			cgroup_read_u64(dir, "memory.max", &st.memory_max);
			cgroup_read_u64(dir, "memory.current", &st.memory_current);
			cgroup_read_u64(dir, "memory.peak", &st.memory_peak);
			read_keyed(dir, "memory.events", memory_events_v2, &st);
		} else {
			cgroup_read_u64(dir, "memory.usage_in_bytes", &st.memory_current);
			/* v1 says "no limit" with a page-rounded LONG_MAX. */
			if (cgroup_read_u64(dir, "memory.limit_in_bytes", &st.memory_max) == 0 &&
			    st.memory_max >= (1ULL << 62))
				st.memory_max = 0;
			cgroup_read_u64(dir, "memory.max_usage_in_bytes", &st.memory_peak);
			cgroup_read_u64(dir, "memory.failcnt", &st.memory_max_hits);
			read_keyed(dir, "memory.oom_control", oom_control_v1, &st);
		}
		st.have |= CGROUP_HAVE_MEMORY;
	}

	v2 = cgroup_resource_dir(CGROUP_RES_PIDS, rel, dir, sizeof(dir));
	if (v2 >= 0 && access(dir, F_OK) == 0) {
		cgroup_read_u64(dir, "pids.current", &st.pids_current);
		cgroup_read_u64(dir, "pids.max", &st.pids_max);
		read_keyed(dir, "pids.events", pids_events, &st);
		st.have |= CGROUP_HAVE_PIDS;
	}

	v2 = cgroup_resource_dir(CGROUP_RES_IO, rel, dir, sizeof(dir));
	if (v2 >= 0 && access(dir, F_OK) == 0)
		v2 ? io_v2(dir, &st) : io_v1(dir, &st);
	*ret = st;
	return 0;
}
