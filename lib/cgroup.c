/* Probing the host's cgroup shape, and the operations that span every hierarchy. */
#include "cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cgroup-backend.h"
#include "log.h"
#include "macro.h"
#include "timeutil.h"

#define FB_CGROUP_NAME_MAX 80

/* The same order as enum cgroup_resource (cgroup-backend.h). */
enum resource { RES_MEMORY, RES_PIDS, RES_CPU, RES_IO, _RES_MAX };

struct hierarchy {
	char mount[128];
	int v2;
};

static struct {
	int probed;
	int error;
	struct hierarchy h[CGROUP_MAX_HIERARCHIES]; /* h[0] is v2 */
	int n;
	int res[_RES_MAX]; /* index into h, -1 if the host has no such controller */
	struct cgroup_layout layout;
} cg;

int cgroup_write(const char *dir, const char *file, const char *value)
{
	char path[512];
	_cleanup_close_ int fd = -1;
	size_t len = strlen(value);

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, value, len) != (ssize_t)len)
		return -errno;
	return 0;
}

int cgroup_read_u64(const char *dir, const char *file, uint64_t *ret)
{
	char path[512], buf[64];
	_cleanup_close_ int fd = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return n < 0 ? -errno : -ENODATA;
	buf[n] = '\0';
	if (strncmp(buf, "max", 3) == 0) {
		*ret = UINT64_MAX;
		return 0;
	}
	*ret = strtoull(buf, NULL, 10);
	return 0;
}

static int add_hierarchy(const char *mount, int v2)
{
	for (int i = 0; i < cg.n; i++)
		if (strcmp(cg.h[i].mount, mount) == 0)
			return i;
	if (cg.n == CGROUP_MAX_HIERARCHIES)
		return -ENOSPC;
	strscpy(cg.h[cg.n].mount, sizeof(cg.h[cg.n].mount), mount);
	cg.h[cg.n].v2 = v2;
	return cg.n++;
}

/* Whether the comma-separated list opts holds word. */
static int has_word(const char *opts, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = opts; (p = strstr(p, word)); p += n)
		if ((p == opts || p[-1] == ',') && (p[n] == ',' || p[n] == '\0' || p[n] == '\n'))
			return 1;
	return 0;
}

static int probe(void)
{
	static const char *const v1_names[_RES_MAX] = { "memory", "pids", "cpu", "blkio" };
	static const char *const v2_names[_RES_MAX] = { "memory", "pids", "cpu", "io" };
	char line[1024], v1[_RES_MAX][128] = { { 0 } }, v2[128] = "", controllers[256] = "";
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char mnt[256], fstype[32], opts[512];
		char *sep = strstr(line, " - ");

		/* "ID PARENT MAJ:MIN ROOT MOUNT OPTS... - FSTYPE SOURCE SUPEROPTS" */
		if (!sep || sscanf(line, "%*s %*s %*s %*s %255s", mnt) != 1 ||
		    sscanf(sep + 3, "%31s %*s %511s", fstype, opts) != 2)
			continue;
		if (strcmp(fstype, "cgroup2") == 0 && !v2[0])
			strscpy(v2, sizeof(v2), mnt);
		else if (strcmp(fstype, "cgroup") == 0)
			for (int r = 0; r < _RES_MAX; r++)
				if (!v1[r][0] && has_word(opts, v1_names[r]))
					strscpy(v1[r], sizeof(v1[r]), mnt);
	}
	fclose(f);
	if (!v2[0])
		return -ENODEV;
	add_hierarchy(v2, 1);
	{
		char path[200];
		FILE *c;

		snprintf(path, sizeof(path), "%s/cgroup.controllers", v2);
		c = fopen(path, "re");
		if (c) {
			if (!fgets(controllers, sizeof(controllers), c))
				controllers[0] = '\0';
			fclose(c);
		}
	}
	for (int r = 0; r < _RES_MAX; r++) {
		cg.res[r] = -1;
		if (has_word(controllers, v2_names[r]))
			cg.res[r] = 0;
		else if (v1[r][0])
			cg.res[r] = add_hierarchy(v1[r], 0);
	}
	return 0;
}

int cgroup_layout(const struct cgroup_layout **ret)
{
	if (!cg.probed) {
		cg.probed = 1;
		cg.error = probe();
		if (cg.error == 0) {
			char *dst[_RES_MAX] = { cg.layout.memory, cg.layout.pids, cg.layout.cpu,
						cg.layout.io };
			int *v2[_RES_MAX] = { &cg.layout.memory_v2, &cg.layout.pids_v2,
					      &cg.layout.cpu_v2, &cg.layout.io_v2 };

			strscpy(cg.layout.v2, sizeof(cg.layout.v2), cg.h[0].mount);
			for (int r = 0; r < _RES_MAX; r++) {
				if (cg.res[r] < 0)
					continue;
				strscpy(dst[r], 128, cg.h[cg.res[r]].mount);
				*v2[r] = cg.h[cg.res[r]].v2;
			}
		}
	}
	if (cg.error < 0)
		return cg.error;
	if (ret)
		*ret = &cg.layout;
	return 0;
}

const char *cgroup_describe(void)
{
	static char buf[1024];
	const struct cgroup_layout *l;

	if (cgroup_layout(&l) < 0)
		return "no cgroup v2 hierarchy";
	snprintf(buf, sizeof(buf), "v2 %s; memory %s%s; pids %s%s; cpu %s%s; io %s%s", l->v2,
		 l->memory, l->memory_v2 ? " (v2)" : " (v1)", l->pids,
		 l->pids_v2 ? " (v2)" : " (v1)", l->cpu, l->cpu_v2 ? " (v2)" : " (v1)", l->io,
		 l->io_v2 ? " (v2)" : " (v1)");
	return buf;
}

static void dir_of(int h, const char *rel, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%s", cg.h[h].mount, rel);
}

/* mkdir -p of rel under one hierarchy; for v2, enables used controllers along the way. */
static int make_path(int h, const char *rel)
{
	char path[512], parent[512];
	size_t base;

	dir_of(h, rel, path, sizeof(path));
	base = strlen(cg.h[h].mount) + 1;
	for (size_t i = base; path[i]; i++) {
		if (path[i] != '/')
			continue;
		path[i] = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			return -errno;
		path[i] = '/';
	}
	if (h == 0) {
		/* v2 needs each controller we use from v2 enabled in every ancestor's subtree. */
		static const char *const names[_RES_MAX] = { "memory", "pids", "cpu", "io" };

		snprintf(parent, sizeof(parent), "%s", cg.h[0].mount);
		for (const char *p = rel;; p++) {
			for (int r = 0; r < _RES_MAX; r++) {
				char v[16];

				if (cg.res[r] != 0)
					continue;
				snprintf(v, sizeof(v), "+%s", names[r]);
				cgroup_write(parent, "cgroup.subtree_control", v);
			}
			p = strchr(p, '/');
			if (!p)
				break;
			snprintf(parent, sizeof(parent), "%s/%.*s", cg.h[0].mount, (int)(p - rel),
				 rel);
		}
	}
	if (mkdir(path, 0755) < 0)
		return -errno;
	return 0;
}

static const struct cgroup_backend *backend_of(int h)
{
	return cg.h[h].v2 ? &cgroup_v2_backend : &cgroup_v1_backend;
}

static int apply_caps(const char *rel, const struct cgroup_caps *c)
{
	char dir[512];
	int r;

	if (c->memory_bytes) {
		if (cg.res[RES_MEMORY] < 0)
			return log_error("cgroup: no memory controller on this host"), -ENOTSUP;
		dir_of(cg.res[RES_MEMORY], rel, dir, sizeof(dir));
		if ((r = backend_of(cg.res[RES_MEMORY])
				 ->set_memory(dir, c->memory_bytes, c->no_swap)) < 0)
			return log_errno(r, "cgroup %s: memory cap", rel);
	}
	if (c->pids) {
		if (cg.res[RES_PIDS] < 0)
			return log_error("cgroup: no pids controller on this host"), -ENOTSUP;
		dir_of(cg.res[RES_PIDS], rel, dir, sizeof(dir));
		if ((r = backend_of(cg.res[RES_PIDS])->set_pids(dir, c->pids)) < 0)
			return log_errno(r, "cgroup %s: pids cap", rel);
	}
	if (c->cpu_quota_us) {
		if (cg.res[RES_CPU] < 0)
			return log_error("cgroup: no cpu controller on this host"), -ENOTSUP;
		dir_of(cg.res[RES_CPU], rel, dir, sizeof(dir));
		if ((r = backend_of(cg.res[RES_CPU])
				 ->set_cpu(dir, c->cpu_quota_us,
					   c->cpu_period_us ? c->cpu_period_us : 100000)) < 0)
			return log_errno(r, "cgroup %s: cpu cap", rel);
	}
	if (c->io_read_bps || c->io_write_bps) {
		if (cg.res[RES_IO] < 0)
			return log_error("cgroup: no io controller on this host"), -ENOTSUP;
		dir_of(cg.res[RES_IO], rel, dir, sizeof(dir));
		if ((r = cgroup_set_io(backend_of(cg.res[RES_IO]), dir, c->io_read_bps,
				       c->io_write_bps)) < 0)
			return log_errno(r, "cgroup %s: io cap", rel);
	}
	return 0;
}

int cgroup_create(const char *rel, const struct cgroup_caps *caps)
{
	int r;

	if ((r = cgroup_layout(NULL)) < 0)
		return r;
	for (int h = 0; h < cg.n; h++) {
		r = make_path(h, rel);
		if (r == -EEXIST && h == 0)
			return r;
		if (r < 0 && r != -EEXIST) {
			log_errno(r, "cgroup: create %s in %s", rel, cg.h[h].mount);
			cgroup_remove(rel, 100);
			return r;
		}
	}
	if (caps && (r = apply_caps(rel, caps)) < 0) {
		cgroup_remove(rel, 100);
		return r;
	}
	return 0;
}

int cgroup_create_step(const char *rel)
{
	char dir[512];
	int r;

	if ((r = cgroup_layout(NULL)) < 0)
		return r;
	dir_of(0, rel, dir, sizeof(dir));
	return mkdir(dir, 0755) < 0 ? -errno : 0;
}

int cgroup_open_step(const char *rel)
{
	char dir[512];
	int r;

	if ((r = cgroup_layout(NULL)) < 0)
		return r;
	dir_of(0, rel, dir, sizeof(dir));
	r = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return r < 0 ? -errno : r;
}

int cgroup_join_resources(const char *rel)
{
	char dir[512];
	int r;

	if ((r = cgroup_layout(NULL)) < 0)
		return r;
	for (int h = 1; h < cg.n; h++) {
		dir_of(h, rel, dir, sizeof(dir));
		if ((r = cgroup_write(dir, "cgroup.procs", "0")) < 0)
			return log_errno(r, "cgroup: join %s", dir);
	}
	return 0;
}

int cgroup_attach(const char *rel, pid_t pid)
{
	char dir[512], v[32];
	int r;

	if ((r = cgroup_layout(NULL)) < 0)
		return r;
	snprintf(v, sizeof(v), "%d", (int)pid);
	for (int h = 0; h < cg.n; h++) {
		dir_of(h, rel, dir, sizeof(dir));
		if ((r = cgroup_write(dir, "cgroup.procs", v)) < 0)
			return log_errno(r, "cgroup: move %d into %s", (int)pid, dir);
	}
	return 0;
}

int cgroup_open_kill(const char *rel)
{
	char path[600];
	int r;

	if ((r = cgroup_layout(NULL)) < 0)
		return r;
	snprintf(path, sizeof(path), "%s/%s/cgroup.kill", cg.h[0].mount, rel);
	r = open(path, O_WRONLY | O_CLOEXEC);
	return r < 0 ? -errno : r;
}

/* Without cgroup.kill (kernels before 5.14): freeze, SIGKILL every task, thaw. */
static int kill_by_freezing(const char *dir)
{
	char path[600];
	FILE *f;
	int pid;

	cgroup_write(dir, "cgroup.freeze", "1");
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	if (f) {
		while (fscanf(f, "%d", &pid) == 1)
			kill(pid, SIGKILL);
		fclose(f);
	}
	/* Children's processes: recurse. */
	DIR *d = opendir(dir);
	struct dirent *de;
	if (d) {
		while ((de = readdir(d))) {
			char sub[600];

			if (de->d_type != DT_DIR || de->d_name[0] == '.')
				continue;
			snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
			kill_by_freezing(sub);
		}
		closedir(d);
	}
	cgroup_write(dir, "cgroup.freeze", "0");
	return 0;
}

int cgroup_kill(const char *rel)
{
	char dir[512];
	int r;

	if ((r = cgroup_layout(NULL)) < 0)
		return r;
	dir_of(0, rel, dir, sizeof(dir));
	r = cgroup_write(dir, "cgroup.kill", "1");
	if (r == -ENOENT && access(dir, F_OK) == 0)
		return kill_by_freezing(dir);
	return r;
}

int cgroup_populated(const char *rel)
{
	char path[600], line[64];
	FILE *f;
	int r = -ENODATA;

	if ((r = cgroup_layout(NULL)) < 0)
		return r;
	snprintf(path, sizeof(path), "%s/%s/cgroup.events", cg.h[0].mount, rel);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	r = -ENODATA;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "populated ", 10) == 0)
			r = line[10] == '1';
	fclose(f);
	return r;
}

/*
 * Waits up to timeout_ms for rel's cgroup.events to say "key want" (e.g. "frozen 1"). The kernel
 * notifies pollers of the file on every change (POLLPRI), so this wakes at the change, not on a
 * sleep's tick. 0, -ETIMEDOUT, or -errno.
 */
int cgroup_v2_open(const char *rel, const char *file)
{
	char path[600];
	int fd, r;

	if ((r = cgroup_layout(NULL)) < 0)
		return r;
	snprintf(path, sizeof(path), "%s/%s/%s", cg.h[0].mount, rel, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int cgroup_events_open(const char *rel)
{
	return cgroup_v2_open(rel, "cgroup.events");
}

/* The value after "key " in the keyed file open at fd, read into buf: 0 and *ret, or -errno. */
static int keyed_find(int fd, const char *key, char *buf, size_t size, const char **ret)
{
	size_t klen = strlen(key);
	ssize_t n = pread(fd, buf, size - 1, 0);

	if (n < 0)
		return -errno;
	buf[n] = '\0';
	for (char *line = buf; line && *line;
	     line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
		if (strncmp(line, key, klen) == 0 && line[klen] == ' ') {
			*ret = line + klen + 1;
			return 0;
		}
	return -ENODATA;
}

int cgroup_keyed_u64(int fd, const char *key, uint64_t *ret)
{
	char buf[512];
	const char *v;
	int r = keyed_find(fd, key, buf, sizeof(buf), &v);

	if (r == 0)
		*ret = strtoull(v, NULL, 10);
	return r;
}

int cgroup_events_has(int fd, const char *key, char want)
{
	char buf[256];
	const char *v;
	int r = keyed_find(fd, key, buf, sizeof(buf), &v);

	return r < 0 ? r : *v == want;
}

static int events_wait(const char *rel, const char *key, char want, int timeout_ms)
{
	uint64_t deadline = time_mono_ns() + (uint64_t)timeout_ms * 1000000;
	int fd, r;

	if ((fd = cgroup_events_open(rel)) < 0)
		return fd;
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLPRI };
		uint64_t now = time_mono_ns();

		/* 1: there; a key this kernel does not print is as good as "not yet". */
		if ((r = cgroup_events_has(fd, key, want)) == -ENODATA)
			r = 0;
		if (r != 0)
			break;
		if (now >= deadline) {
			r = -ETIMEDOUT;
			break;
		}
		if (poll(&pfd, 1, (int)((deadline - now) / 1000000) + 1) < 0 && errno != EINTR) {
			r = -errno;
			break;
		}
	}
	close(fd);
	return r < 0 ? r : 0;
}

int cgroup_freeze(const char *rel, int on, int timeout_ms)
{
	char dir[512];
	int r;

	if ((r = cgroup_layout(NULL)) < 0)
		return r;
	dir_of(0, rel, dir, sizeof(dir));
	if ((r = cgroup_write(dir, "cgroup.freeze", on ? "1" : "0")) < 0)
		return r;
	return timeout_ms > 0 ? events_wait(rel, "frozen", on ? '1' : '0', timeout_ms) : 0;
}

int cgroup_frozen(const char *rel)
{
	int r = events_wait(rel, "frozen", '1', 0);

	return r == 0 ? 1 : r == -ETIMEDOUT ? 0 : r;
}

int cgroup_wait_empty(const char *rel, int timeout_ms)
{
	return events_wait(rel, "populated", '0', timeout_ms);
}

/* rmdir dir and its child cgroups, deepest first. */
static int remove_tree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char sub[600];

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name);
		remove_tree(sub);
	}
	closedir(d);
	return rmdir(dir) < 0 ? -errno : 0;
}

int cgroup_remove(const char *rel, int timeout_ms)
{
	char dir[512];
	int r, found = 0, err = 0;
	struct timespec ts = { 0, 10 * 1000000L };

	if ((r = cgroup_layout(NULL)) < 0)
		return r;
	dir_of(0, rel, dir, sizeof(dir));
	if (access(dir, F_OK) == 0) {
		cgroup_kill(rel);
		/* Killed tasks leave asynchronously; rmdir succeeds once none is left. */
		for (int waited = 0; cgroup_populated(rel) == 1 && waited < timeout_ms;
		     waited += 10)
			nanosleep(&ts, NULL);
	}
	for (int h = 0; h < cg.n; h++) {
		dir_of(h, rel, dir, sizeof(dir));
		if (access(dir, F_OK) < 0)
			continue;
		found = 1;
		r = remove_tree(dir);
		for (int waited = 0; r == -EBUSY && waited < timeout_ms; waited += 10) {
			nanosleep(&ts, NULL);
			r = remove_tree(dir);
		}
		if (r < 0 && !err)
			err = log_errno(r, "cgroup: remove %s", dir);
	}
	return err ? err : found ? 0 : -ENOENT;
}

int cgroup_resource_dir(enum cgroup_resource res, const char *rel, char *buf, size_t size)
{
	int r = cgroup_layout(NULL), h, n;

	if (r < 0)
		return r;
	h = res == _CGROUP_RES_MAX ? 0 : cg.res[res];
	if (h < 0)
		return -ENODEV;
	n = snprintf(buf, size, "%s/%s", cg.h[h].mount, rel);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return cg.h[h].v2;
}

int cgroup_v2_dir(const char *rel, char *buf, size_t size)
{
	int r = cgroup_layout(NULL), n;

	if (r < 0)
		return r;
	n = snprintf(buf, size, "%s/%s", cg.h[0].mount, rel);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int cgroup_of_pid(pid_t pid, char *buf, size_t size)
{
	char path[64], line[PATH_MAX + 8];
	int r = -ENOENT;
	FILE *f;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	else
		strcpy(path, "/proc/self/cgroup");
	if (!(f = fopen(path, "re")))
		return -ENOENT;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "0::/", 4) == 0) {
			line[strcspn(line, "\n")] = '\0';
			r = strscpy(buf, size, line + 4) < 0 ? -ENAMETOOLONG : 0;
			break;
		}
	fclose(f);
	return r;
}

int cgroup_within(const char *rel, const char *ancestor)
{
	size_t n = strlen(ancestor);

	return strncmp(rel, ancestor, n) == 0 && (rel[n] == '\0' || rel[n] == '/');
}

unsigned cgroup_level(const char *rel)
{
	unsigned level = 1;

	for (; *rel; rel++)
		level += *rel == '/';
	return level;
}

int cgroup_id(const char *rel, uint64_t *ret)
{
	char dir[512];
	struct stat st;
	int r;

	if ((r = cgroup_layout(NULL)) < 0)
		return r;
	dir_of(0, rel, dir, sizeof(dir));
	/* On cgroup2 (kernfs) a directory's inode number is the cgroup id BPF reports. */
	if (stat(dir, &st) < 0)
		return -errno;
	*ret = (uint64_t)st.st_ino;
	return 0;
}

int cgroup_memory_peak(const char *rel, uint64_t *ret)
{
	char dir[512];
	int r;

	if ((r = cgroup_layout(NULL)) < 0)
		return r;
	if (cg.res[RES_MEMORY] < 0)
		return -ENOTSUP;
	dir_of(cg.res[RES_MEMORY], rel, dir, sizeof(dir));
	return backend_of(cg.res[RES_MEMORY])->memory_peak(dir, ret);
}

void cgroup_prune(const char *rel)
{
	char dir[512];

	if (cgroup_layout(NULL) < 0)
		return;
	for (int h = 0; h < cg.n; h++) {
		dir_of(h, rel, dir, sizeof(dir));
		rmdir(dir); /* EBUSY or ENOTEMPTY while anything is in it: exactly what we want */
	}
}

int cgroup_list_children(const char *rel, int (*cb)(const char *name, void *data), void *data)
{
	char dir[512], seen[64][FB_CGROUP_NAME_MAX];
	size_t nseen = 0;
	int r, found = 0;

	if ((r = cgroup_layout(NULL)) < 0)
		return r;
	/* A crash may leave a child in some hierarchies only: list the union, each name once. */
	for (int h = 0; h < cg.n; h++) {
		DIR *d;
		struct dirent *de;

		dir_of(h, rel, dir, sizeof(dir));
		d = opendir(dir);
		if (!d)
			continue;
		found = 1;
		while ((de = readdir(d))) {
			size_t i;

			if (de->d_type != DT_DIR || de->d_name[0] == '.' ||
			    strlen(de->d_name) >= FB_CGROUP_NAME_MAX)
				continue;
			for (i = 0; i < nseen; i++)
				if (strcmp(seen[i], de->d_name) == 0)
					break;
			if (i < nseen)
				continue;
			if (nseen < ARRAY_SIZE(seen))
				strcpy(seen[nseen++], de->d_name);
			r = cb(de->d_name, data);
			if (r != 0) {
				closedir(d);
				return r;
			}
		}
		closedir(d);
	}
	return found ? 0 : -ENOENT;
}
