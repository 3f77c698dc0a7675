/*
 * What the cgroup v1 and v2 backends share (cgroup-v1.c, cgroup-v2.c): numbers written as the
 * kernel reads them, pids.max (the same file and format in both), and the walk over the disks
 * that an io cap is set on, one disk at a time, in the backend's own words.
 */
#include "cgroup-backend.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int cgroup_write_u64(const char *dir, const char *file, uint64_t value)
{
	char v[32];

	snprintf(v, sizeof(v), "%" PRIu64, value);
	return cgroup_write(dir, file, v);
}

int cgroup_set_pids(const char *dir, uint64_t max)
{
	return cgroup_write_u64(dir, "pids.max", max);
}

/* Calls fn(major, minor) for each whole block device worth throttling (not loop, ram, zram). */
static int each_disk(int (*fn)(unsigned major, unsigned minor, void *data), void *data)
{
	DIR *d = opendir("/sys/block");
	struct dirent *de;
	int r = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d)) && r == 0) {
		char path[300], buf[32];
		unsigned major, minor;
		FILE *f;

		if (de->d_name[0] == '.' || !strncmp(de->d_name, "loop", 4) ||
		    !strncmp(de->d_name, "ram", 3) || !strncmp(de->d_name, "zram", 4))
			continue;
		snprintf(path, sizeof(path), "/sys/block/%s/dev", de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(buf, sizeof(buf), f) && sscanf(buf, "%u:%u", &major, &minor) == 2)
			r = fn(major, minor, data);
		fclose(f);
	}
	closedir(d);
	return r;
}

struct io_caps {
	const struct cgroup_backend *b;
	const char *dir;
	uint64_t read_bps, write_bps;
};

static int io_one(unsigned major, unsigned minor, void *data)
{
	const struct io_caps *c = data;

	return c->b->set_io_device(c->dir, major, minor, c->read_bps, c->write_bps);
}

int cgroup_set_io(const struct cgroup_backend *b, const char *dir, uint64_t read_bps,
		  uint64_t write_bps)
{
	struct io_caps c = { b, dir, read_bps, write_bps };

	return each_disk(io_one, &c);
}
