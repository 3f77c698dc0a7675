/* The lures in a sandbox's tree (plant-lures.h). */
#include "plant-lures.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lures.h"
#include "macro.h"
#include "policy/policy.h"
#include "randhex.h"

/* Where the tripwires' own tmpfs is mounted while they are bound; detached afterwards. */
#define LURES_STAGE "/.firebreak-lures"

int sandbox_lures_marker(char *marker)
{
	return random_hex(marker, LURE_MARKER_LEN);
}

/* mkdir -p of path's parent directories (not path itself), each with mode and owner. */
static int make_parents(const char *path, mode_t mode, uid_t uid, gid_t gid)
{
	char dir[512];

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir))
		return -ENAMETOOLONG;
	for (char *s = strchr(dir + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdir(dir, mode) == 0) {
			if (chown(dir, uid, gid) < 0)
				return -errno;
		} else if (errno != EEXIST) {
			return -errno;
		}
		*s = '/';
	}
	return 0;
}

static int write_file(const char *path, const char *text, mode_t mode, uid_t uid, gid_t gid)
{
	size_t len = strlen(text);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	int r = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len || fchown(fd, uid, gid) < 0 ||
	    fchmod(fd, mode) < 0)
		r = errno ? -errno : -EIO;
	close(fd);
	return r;
}

/* The home: a tmpfs of its own, the sandbox uid's, holding the decoys of the home. */
static int plant_home(const struct sandbox_mounts *m, char *err, size_t errlen)
{
	char path[512], opts[128];

	snprintf(path, sizeof(path), "%s%s", m->root, LURE_HOME);
	snprintf(opts, sizeof(opts), "size=%" PRIu64 ",mode=0700,uid=%u,gid=%u", m->home_bytes,
		 (unsigned)m->uid, (unsigned)m->gid);
	if (make_parents(path, 0755, 0, 0) < 0 || mkdir(path, 0700) < 0 ||
	    mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
		return mounts_fail(-errno, err, errlen, "mount %s", LURE_HOME);
	return 0;
}

/* A decoy is the tool's to read (an attacker's open succeeds and is seen). */
static int plant_decoy(const struct sandbox_mounts *m, const char *path, char *err, size_t errlen)
{
	char full[512], text[512];
	int in_home = strncmp(path, LURE_HOME "/", sizeof(LURE_HOME)) == 0;
	uid_t uid = in_home ? m->uid : 0;
	gid_t gid = in_home ? m->gid : 0;
	int r;

	snprintf(full, sizeof(full), "%s%s", m->root, path);
	if ((r = lure_decoy_text(path, m->marker, text, sizeof(text))) < 0 ||
	    (r = make_parents(full, in_home ? 0700 : 0755, uid, gid)) < 0 ||
	    (r = write_file(full, text, in_home ? 0600 : 0644, uid, gid)) < 0)
		return mounts_fail(r, err, errlen, "plant the decoy %s", path);
	return 0;
}

/* The decoys of the policy's credentials that go in a file (the sandbox's, 0600): the value
 * alone and a newline, as a key file holds it. */
static int plant_credential_decoys(const struct sandbox_mounts *m, char *err, size_t errlen)
{
	char full[512], text[128];
	int r, n;

	for (size_t i = 0; m->policy && i < policy_credential_count(m->policy); i++) {
		const struct policy_credential *c = policy_credential(m->policy, i);

		if (!c->file)
			continue;
		snprintf(full, sizeof(full), "%s%s", m->root, c->file);
		if ((n = lure_credential_decoy(c->name, c->env, m->marker, text,
					       sizeof(text) - 1)) < 0)
			return mounts_fail(n, err, errlen, "the decoy of credential %s", c->name);
		text[n] = '\n';
		text[n + 1] = '\0';
		if ((r = make_parents(full, 0700, m->uid, m->gid)) < 0 ||
		    (r = write_file(full, text, 0600, m->uid, m->gid)) < 0)
			return mounts_fail(r, err, errlen, "plant the decoy of credential %s in %s",
					   c->name, c->file);
	}
	return 0;
}

/* The largest host file a tripwire stands in for (an account file); a bigger one is left be. */
#define TRIPWIRE_TEXT_MAX (64 * 1024)

/*
 * Directories bound whole from the stage, a lure under one planted as a file in the stage's copy:
 * pid 1's, whose entries (and the namespaces' magic links) a bind cannot cover one by one, and
 * which with hidepid=invisible (mounts.c) no step could reach through the real directory. The
 * stand-in holds the tripwires only: pid 1's other entries do not exist for the sandbox.
 */
static const char *const bound_whole[] = { "/proc/1" };

/* The index in bound_whole of the directory path lies under, or -1. */
static int bound_dir(const char *path)
{
	for (size_t i = 0; i < ARRAY_SIZE(bound_whole); i++) {
		size_t n = strlen(bound_whole[i]);

		if (strncmp(path, bound_whole[i], n) == 0 && path[n] == '/')
			return (int)i;
	}
	return -1;
}

/*
 * What a tripwire reads as: the real file's text where it has one (a tunable, an account file),
 * else plausible. -EFBIG: the real file is too big to stand in for.
 */
static int tripwire_text(const char *target, const struct lure *l, char *buf, size_t size)
{
	const int real = l->kind == LURE_KERNEL || l->kind == LURE_SYSTEM;
	int fd = real ? open(target, O_RDONLY | O_CLOEXEC) : -1;
	ssize_t n = fd >= 0 ? read(fd, buf, size - 1) : -1;

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	if (n == (ssize_t)size - 1)
		return -EFBIG;
	if (n <= 0 && l->kind == LURE_CGROUP)
		snprintf(buf, size, "%s", strstr(l->path, ".max") ? "max\n" : "0\n");
	return 0;
}

/* A tripwire: a world-writable file of the stage's, bound over target (made if absent), or
 * written into the stage's copy of its directory (bound_whole). */
static int plant_tripwire(const struct sandbox_mounts *m, const struct lure *l, size_t i,
			  char *text, char *err, size_t errlen)
{
	char target[512], src[512];
	int dir = bound_dir(l->path);
	struct stat st;
	int r;

	snprintf(target, sizeof(target), "%s%s", m->root, l->path);
	if (dir >= 0) {
		snprintf(src, sizeof(src), "%s%s/d%d%s", m->root, LURES_STAGE, dir,
			 l->path + strlen(bound_whole[dir]));
		if ((r = make_parents(src, 0755, 0, 0)) < 0 ||
		    (r = write_file(src, "", 0666, 0, 0)) < 0)
			return mounts_fail(r, err, errlen, "tripwire for %s", l->path);
		return 0;
	}
	if (stat(target, &st) < 0) {
		/* A tunable this kernel lacks cannot be made up, nor a file in the read-only /etc.
		 */
		if (lure_where_present(l))
			return 0;
		if ((r = make_parents(target, 0755, 0, 0)) < 0 ||
		    (r = write_file(target, "", 0644, 0, 0)) < 0)
			return mounts_fail(r, err, errlen, "tripwire target %s", l->path);
	}
	if (tripwire_text(target, l, text, TRIPWIRE_TEXT_MAX) < 0)
		return 0; /* left as it is, and unwatched (the collector finds no lure there) */
	snprintf(src, sizeof(src), "%s%s/%zu", m->root, LURES_STAGE, i);
	if ((r = write_file(src, text, 0666, 0, 0)) < 0)
		return mounts_fail(r, err, errlen, "tripwire for %s", l->path);
	if (mount(src, target, NULL, MS_BIND, NULL) < 0)
		return mounts_fail(-errno, err, errlen, "bind the tripwire over %s", l->path);
	/* Held open for good by the init, the one process that plants: the monitor's way to it
	 * (lures.h). */
	if (lure_held_by_init(l) && open(target, O_PATH | O_CLOEXEC) < 0)
		return mounts_fail(-errno, err, errlen, "hold the tripwire %s", l->path);
	return 0;
}

/* The stage's copies of the directories bound whole, over the real ones (where present). */
static int bind_whole_dirs(const struct sandbox_mounts *m, char *err, size_t errlen)
{
	char target[512], src[512];

	for (size_t i = 0; i < ARRAY_SIZE(bound_whole); i++) {
		snprintf(target, sizeof(target), "%s%s", m->root, bound_whole[i]);
		snprintf(src, sizeof(src), "%s%s/d%zu", m->root, LURES_STAGE, i);
		if (access(target, F_OK) < 0 || access(src, F_OK) < 0)
			continue;
		if (mount(src, target, NULL, MS_BIND, NULL) < 0)
			return mounts_fail(-errno, err, errlen, "bind the tripwires over %s",
					   bound_whole[i]);
	}
	return 0;
}

/*
 * The sandbox's /sys/fs/cgroup: a small tmpfs of the sandbox uid's, so that a mkdir there (the
 * first move of a cgroup escape) succeeds into it and is seen by the file collector, instead of
 * failing on the read-only root unseen. The cgroup tripwires are bound over files in it.
 */
static int make_cgroup_dir(const struct sandbox_mounts *m, char *err, size_t errlen)
{
	char path[512], opts[128];

	snprintf(path, sizeof(path), "%s/sys/fs/cgroup", m->root);
	snprintf(opts, sizeof(opts), "size=64k,nr_inodes=128,mode=0755,uid=%u,gid=%u",
		 (unsigned)m->uid, (unsigned)m->gid);
	if (make_parents(path, 0755, 0, 0) < 0 || mkdir(path, 0755) < 0 ||
	    mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts) < 0)
		return mounts_fail(-errno, err, errlen, "mount /sys/fs/cgroup");
	return 0;
}

static int plant_tripwires(const struct sandbox_mounts *m, char *err, size_t errlen)
{
	char stage[512], *text;
	int r = 0;

	snprintf(stage, sizeof(stage), "%s%s", m->root, LURES_STAGE);
	if (mkdir(stage, 0700) < 0 ||
	    mount("tmpfs", stage, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "size=1m,nr_inodes=512,mode=0700") < 0)
		return mounts_fail(-errno, err, errlen, "mount the tripwires' tmpfs");
	if (!(text = malloc(TRIPWIRE_TEXT_MAX)))
		r = mounts_fail(-ENOMEM, err, errlen, "tripwires");
	for (size_t i = 0; i < n_lures && r == 0; i++)
		if (lures[i].kind != LURE_DECOY)
			r = plant_tripwire(m, &lures[i], i, text, err, errlen);
	free(text);
	if (r == 0)
		r = bind_whole_dirs(m, err, errlen);
	/* The binds keep their files; the stage itself is reachable nowhere in the sandbox. */
	if (umount2(stage, MNT_DETACH) < 0 || rmdir(stage) < 0)
		return r ? r : mounts_fail(-errno, err, errlen, "detach the tripwires' tmpfs");
	return r;
}

int sandbox_lures_plant(const struct sandbox_mounts *m, char *err, size_t errlen)
{
	int r;

	if (!lure_marker_valid(m->marker))
		return mounts_fail(-EINVAL, err, errlen, "the decoys' marker");
	if ((r = plant_home(m, err, errlen)) < 0)
		return r;
	for (size_t i = 0; i < n_lures; i++)
		if (lures[i].kind == LURE_DECOY &&
		    (r = plant_decoy(m, lures[i].path, err, errlen)) < 0)
			return r;
	if ((r = plant_credential_decoys(m, err, errlen)) < 0 ||
	    (r = make_cgroup_dir(m, err, errlen)) < 0)
		return r;
	return plant_tripwires(m, err, errlen);
}
