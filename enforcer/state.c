#include "state.h"

#include <dirent.h>
#include <signal.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "event.h"
#include "log.h"
#include "macro.h"
#include "procstat.h"

int state_dir(const struct config *cfg, const char *name, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s/%s/%s", cfg->runtime_dir, SANDBOX_STATE_DIR, name);

	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int state_path(const struct config *cfg, const char *name, const char *file, char *buf, size_t size)
{
	return config_sandbox_path(cfg, name, file, buf, size);
}

int state_save(const struct config *cfg, const struct sandbox_state *st)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	json_t *obj;
	int r;

	if ((r = state_path(cfg, st->name, "state.json", path, sizeof(path))) < 0)
		return r;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	obj = json_pack("{s:s, s:i, s:I, s:I, s:i, s:i, s:I, s:s, s:b, s:i, s:s, s:s}", "name",
			st->name, "init_pid", (int)st->init_pid, "init_start",
			(json_int_t)st->init_start, "created_ts", (json_int_t)st->created_ts, "uid",
			(int)st->uid, "gid", (int)st->gid, "open_files", (json_int_t)st->open_files,
			"policy_hash", st->policy_hash, "unwatched", st->unwatched, "link",
			(int)st->link, "seccomp_hash", st->seccomp_hash, "decoy_marker",
			st->decoy_marker);
	if (!obj)
		return -ENOMEM;
	r = json_dump_file(obj, tmp, JSON_COMPACT);
	json_decref(obj);
	if (r < 0)
		return -EIO;
	if (rename(tmp, path) < 0)
		return -errno;
	return 0;
}

int state_load(const struct config *cfg, const char *name, struct sandbox_state *ret)
{
	char path[PATH_MAX];
	struct sandbox_state st = { 0 };
	json_t *obj;
	const char *n = NULL, *hash = NULL, *shash = "", *marker = "";
	int pid = 0, uid = 0, gid = 0, unwatched = 0, link = 0;
	json_int_t start = 0, created = 0, nofile = 0;
	int r;

	if (!event_sandbox_name_valid(name))
		return -EINVAL;
	if ((r = state_path(cfg, name, "state.json", path, sizeof(path))) < 0)
		return r;
	if (access(path, F_OK) < 0)
		return -errno;
	if ((r = state_path_trusted(path)) < 0)
		return r;
	obj = json_load_file(path, JSON_REJECT_DUPLICATES, NULL);
	if (!obj)
		return -EBADMSG;
	r = json_unpack(obj, "{s:s, s:i, s:I, s:I, s:i, s:i, s:I, s:s, s:b, s?:i, s?:s, s?:s}",
			"name", &n, "init_pid", &pid, "init_start", &start, "created_ts", &created,
			"uid", &uid, "gid", &gid, "open_files", &nofile, "policy_hash", &hash,
			"unwatched", &unwatched, "link", &link, "seccomp_hash", &shash,
			"decoy_marker", &marker);
	if (r == 0 && (strscpy(st.name, sizeof(st.name), n) < 0 ||
		       strscpy(st.policy_hash, sizeof(st.policy_hash), hash) < 0 ||
		       strscpy(st.seccomp_hash, sizeof(st.seccomp_hash), shash) < 0 ||
		       strscpy(st.decoy_marker, sizeof(st.decoy_marker), marker) < 0))
		r = -1;
	json_decref(obj);
	if (r < 0)
		return -EBADMSG;
	st.init_pid = pid;
	st.init_start = (uint64_t)start;
	st.created_ts = created;
	st.uid = (uid_t)uid;
	st.gid = (gid_t)gid;
	st.open_files = (uint64_t)nofile;
	st.unwatched = unwatched;
	st.link = link > 0 ? (unsigned)link : 0;
	*ret = st;
	return 0;
}

int state_init_alive(const struct sandbox_state *st)
{
	return st->init_pid > 0 && st->init_start > 0 &&
	       proc_start_time(st->init_pid) == st->init_start;
}

int state_next_step(const struct config *cfg, const char *name, int64_t *ret)
{
	char path[PATH_MAX], buf[32] = "";
	_cleanup_close_ int fd = -1;
	long long n = 0;
	ssize_t len;

	if (state_path(cfg, name, "steps", path, sizeof(path)) < 0)
		return -ENAMETOOLONG;
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX) < 0)
		return -errno;
	len = pread(fd, buf, sizeof(buf) - 1, 0);
	if (len > 0) {
		buf[len] = '\0';
		n = atoll(buf);
	}
	n++;
	/* Fixed width: the new number always overwrites the old one whole, no truncate needed. */
	len = snprintf(buf, sizeof(buf), "%020lld\n", n);
	if (pwrite(fd, buf, (size_t)len, 0) != len)
		return -errno;
	*ret = n;
	return 0;
}

int state_each(const struct config *cfg, int (*cb)(const char *name, void *data), void *data)
{
	char path[PATH_MAX + 16];
	DIR *d;
	struct dirent *de;
	int r = 0;

	snprintf(path, sizeof(path), "%s/%s", cfg->runtime_dir, SANDBOX_STATE_DIR);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d)) && r == 0)
		if (de->d_name[0] != '.' && event_sandbox_name_valid(de->d_name))
			r = cb(de->d_name, data);
	closedir(d);
	return r;
}

/* Removes what dirfd holds, depth levels of directories deep at most (the proxy's proxy/errors/
 * is the deepest); never follows a link. 0 or the first -errno. */
static int remove_under(int dirfd, int depth)
{
	DIR *d = fdopendir(dirfd);
	struct dirent *de;
	int r = 0;

	if (!d) {
		close(dirfd);
		return -errno;
	}
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (unlinkat(dirfd, de->d_name, 0) == 0)
			continue;
		if (errno == EISDIR && depth > 0) {
			int sub = openat(dirfd, de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			int rs = sub < 0 ? -errno : remove_under(sub, depth - 1);

			if (rs == 0 && unlinkat(dirfd, de->d_name, AT_REMOVEDIR) < 0)
				rs = -errno;
			if (rs < 0 && r == 0)
				r = rs;
		} else if (r == 0) {
			r = -errno;
		}
	}
	closedir(d);
	return r;
}

int state_remove(const struct config *cfg, const char *name)
{
	char dir[PATH_MAX], path[PATH_MAX + 300];
	int fd, r;

	if (!event_sandbox_name_valid(name) || state_dir(cfg, name, dir, sizeof(dir)) < 0)
		return -EINVAL;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* Files, root/ (empty on the host: the tree lives in the sandbox's own mount namespace)
	 * and the L7 proxy's proxy/ with its errors/. */
	r = remove_under(fd, 2);
	if (rmdir(dir) < 0 && r == 0)
		r = -errno;
	/* The parent goes too once the last sandbox is gone (ENOTEMPTY otherwise: fine). */
	snprintf(path, sizeof(path), "%s/%s", cfg->runtime_dir, SANDBOX_STATE_DIR);
	rmdir(path);
	return r;
}

struct link_scan {
	const struct config *cfg;
	unsigned char *used;
	unsigned max;
};

static int mark_link(const char *name, void *data)
{
	struct link_scan *ls = data;
	struct sandbox_state st;

	if (state_load(ls->cfg, name, &st) == 0 && st.link > 0 && st.link <= ls->max)
		ls->used[st.link] = 1;
	return 0;
}

int state_lock(const struct config *cfg)
{
	char path[PATH_MAX + 32];
	int fd, r;

	/* Beside the sandboxes' dir, not in it: that dir goes away with the last sandbox. */
	snprintf(path, sizeof(path), "%s/%s.lock", cfg->runtime_dir, SANDBOX_STATE_DIR);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

int state_alloc_link(const struct config *cfg, unsigned max, int (*busy)(unsigned k), unsigned *ret)
{
	struct link_scan ls = { cfg, NULL, max };
	int r = -ENOSPC;

	ls.used = calloc(max + 1, 1);
	if (!ls.used)
		return -ENOMEM;
	state_each(cfg, mark_link, &ls);
	for (unsigned k = 1; k <= max; k++) {
		if (!ls.used[k] && !(busy && busy(k))) {
			*ret = k;
			r = 0;
			break;
		}
	}
	free(ls.used);
	return r;
}

static int mark_uid(const char *name, void *data)
{
	struct link_scan *ls = data;
	struct sandbox_state st;

	if (state_load(ls->cfg, name, &st) == 0 && st.uid >= SANDBOX_UID_BASE &&
	    st.uid < SANDBOX_UID_BASE + SANDBOX_UID_COUNT)
		ls->used[st.uid - SANDBOX_UID_BASE] = 1;
	return 0;
}

/* Whether any process on the host runs as uid (another runtime dir's sandbox, say). */
static int uid_running(uid_t uid)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	char path[300];
	struct stat st;
	int found = 0;

	if (!d)
		return 0;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s", de->d_name);
		found = stat(path, &st) == 0 && st.st_uid == uid;
	}
	closedir(d);
	return found;
}

int state_alloc_uid(const struct config *cfg, uid_t *ret)
{
	struct link_scan ls = { cfg, calloc(SANDBOX_UID_COUNT, 1), SANDBOX_UID_COUNT };
	int r = -ENOSPC;

	if (!ls.used)
		return -ENOMEM;
	state_each(cfg, mark_uid, &ls);
	for (unsigned i = 0; i < SANDBOX_UID_COUNT; i++) {
		if (!ls.used[i] && !uid_running(SANDBOX_UID_BASE + i)) {
			*ret = SANDBOX_UID_BASE + i;
			r = 0;
			break;
		}
	}
	free(ls.used);
	return r;
}

int state_path_trusted(const char *path)
{
	char real[PATH_MAX], *p;
	struct stat st;

	if (!realpath(path, real))
		return -errno;
	/* From the file up to /, each level: root's, and no one else may change it. */
	for (p = real + strlen(real);;) {
		if (lstat(real[0] ? real : "/", &st) < 0)
			return -errno;
		if (st.st_uid != 0 || ((st.st_mode & S_IWGRP) && st.st_gid != 0) ||
		    ((st.st_mode & S_IWOTH) && !(S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX))))
			return log_error("firebreak: refusing %s: %s is not root's alone", path,
					 real[0] ? real : "/"),
			       -EPERM;
		if (p == real)
			break;
		while (p > real && *p != '/')
			p--;
		*p = '\0';
	}
	return 0;
}

void state_stop_pidfile(const struct config *cfg, const char *name, const char *pidfile,
			const char *comm, int sig)
{
	char path[PATH_MAX + 16], now[32] = "";
	FILE *f;
	int pid = 0;

	state_path(cfg, name, pidfile, path, sizeof(path));
	f = fopen(path, "re");
	if (!f)
		return;
	if (fscanf(f, "%d", &pid) != 1)
		pid = 0;
	fclose(f);
	if (pid <= 1)
		return;
	/* Only ours: the pid must still be comm. */
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "re");
	if (f) {
		if (!fgets(now, sizeof(now), f))
			now[0] = '\0';
		fclose(f);
	}
	if (strncmp(now, comm, strlen(comm)) != 0)
		return;
	kill(pid, sig);
	/* Wait (1 s at most) so that nothing of the sandbox outlives its destroy. */
	for (int i = 0; i < 100 && kill(pid, 0) == 0; i++) {
		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		f = fopen(path, "re");
		if (!f)
			break;
		/* A zombie is gone for our purpose (pid 1 reaps it when it will). */
		if (fscanf(f, "%*d %*s %31s", now) == 1 && now[0] == 'Z') {
			fclose(f);
			break;
		}
		fclose(f);
		usleep(10000);
	}
}
