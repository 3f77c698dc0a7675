#include "mounts.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/mount.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "plant-lures.h"

/* Host directories shown read-only (or as the same symlink where the host has a symlink). */
static const char *const shown[] = { "usr",   "bin",	"sbin", "lib", "lib32",
				     "lib64", "libx32", "etc",	"opt" };

/* Inside those, what is hidden: secrets root owns and the monitor's own configuration. */
static const char *const hidden_etc_files[] = {
	"etc/shadow", "etc/shadow-", "etc/gshadow", "etc/gshadow-", "etc/sudoers", "etc/machine-id",
};
static const char *const hidden_etc_dirs[] = {
	"etc/ssh",    "etc/sudoers.d",	"etc/firebreak",  "etc/ssl/private",
	"etc/docker", "etc/containerd", "etc/kubernetes",
};

/* /proc entries that must not be writable (a sandbox uid cannot write them anyway; this is the
 * second lock) or that expose the host kernel's state. */
static const char *const proc_read_only[] = { "proc/sys", "proc/sysrq-trigger", "proc/irq",
					      "proc/bus", "proc/fs" };
static const char *const proc_masked[] = { "proc/kcore", "proc/keys", "proc/timer_list",
					   "proc/sched_debug", "proc/kallsyms" };

static const char *const devices[] = { "null", "zero", "full", "random", "urandom", "tty" };

int mounts_fail(int r, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	n = strlen(err);
	snprintf(err + n, errlen - n, ": %s", strerror(-r));
	return r;
}

/* Sets (and clears) mount attributes on path and everything below it. */
static int set_attrs(const char *path, uint64_t set, uint64_t clear)
{
	struct mount_attr attr = { .attr_set = set, .attr_clr = clear };

	if (syscall(SYS_mount_setattr, AT_FDCWD, path, AT_RECURSIVE, &attr, sizeof(attr)) < 0)
		return -errno;
	return 0;
}

static int bind_read_only(const char *src, const char *dst)
{
	if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) < 0)
		return -errno;
	return set_attrs(dst, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0);
}

static int make_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static int show_host(const char *root, char *err, size_t errlen)
{
	char src[256], dst[512], target[256];
	struct stat st;
	int r;

	for (size_t i = 0; i < ARRAY_SIZE(shown); i++) {
		snprintf(src, sizeof(src), "/%s", shown[i]);
		snprintf(dst, sizeof(dst), "%s/%s", root, shown[i]);
		if (lstat(src, &st) < 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			ssize_t n = readlink(src, target, sizeof(target) - 1);

			if (n < 0)
				return mounts_fail(-errno, err, errlen, "readlink %s", src);
			target[n] = '\0';
			if (symlink(target, dst) < 0)
				return mounts_fail(-errno, err, errlen, "symlink %s", dst);
			continue;
		}
		if (!S_ISDIR(st.st_mode))
			continue;
		if (mkdir(dst, 0755) < 0)
			return mounts_fail(-errno, err, errlen, "mkdir %s", dst);
		if ((r = bind_read_only(src, dst)) < 0)
			return mounts_fail(r, err, errlen, "bind %s read-only", src);
	}
	return 0;
}

static int hide(const char *root, char *err, size_t errlen)
{
	char dst[512];
	struct stat st;

	for (size_t i = 0; i < ARRAY_SIZE(hidden_etc_files); i++) {
		snprintf(dst, sizeof(dst), "%s/%s", root, hidden_etc_files[i]);
		if (stat(dst, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (mount("/dev/null", dst, NULL, MS_BIND, NULL) < 0)
			return mounts_fail(-errno, err, errlen, "hide %s", hidden_etc_files[i]);
	}
	for (size_t i = 0; i < ARRAY_SIZE(hidden_etc_dirs); i++) {
		snprintf(dst, sizeof(dst), "%s/%s", root, hidden_etc_dirs[i]);
		if (stat(dst, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		if (mount("tmpfs", dst, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
			  "size=4k,mode=0755") < 0)
			return mounts_fail(-errno, err, errlen, "hide %s", hidden_etc_dirs[i]);
	}
	return 0;
}

/*
 * The sandbox's own /etc/resolv.conf: a file on a tiny tmpfs of its own (not a bind of a host
 * file, whose path /proc/self/mountinfo would show), which `firebreak create` fills through
 * /proc/<init>/root once it knows the sandbox's link to the gate. Only root can write it.
 */
static int make_resolv_conf(const char *root, char *err, size_t errlen)
{
	char dir[512], file[600], dst[512];
	int r;

	snprintf(dst, sizeof(dst), "%s/etc/resolv.conf", root);
	if (access(dst, F_OK) < 0)
		return 0; /* the host has none: nothing to put ours over */
	snprintf(dir, sizeof(dir), "%s/.resolv", root);
	snprintf(file, sizeof(file), "%s/resolv.conf", dir);
	if (mkdir(dir, 0700) < 0 ||
	    mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0755") < 0)
		return mounts_fail(-errno, err, errlen, "resolv.conf tmpfs");
	if ((r = make_file(file)) < 0)
		return mounts_fail(r, err, errlen, "create resolv.conf");
	{
		static const char none[] =
			"# firebreak: no network unless the policy allows some\n";
		int fd = open(file, O_WRONLY | O_CLOEXEC);

		if (fd < 0 || write(fd, none, sizeof(none) - 1) != (ssize_t)(sizeof(none) - 1)) {
			r = -errno;
			if (fd >= 0)
				close(fd);
			return mounts_fail(r, err, errlen, "write resolv.conf");
		}
		close(fd);
	}
	if (mount(file, dst, NULL, MS_BIND, NULL) < 0)
		return mounts_fail(-errno, err, errlen, "bind resolv.conf");
	/* The bind keeps the file; its tmpfs need not stay mounted anywhere else. */
	if (umount2(dir, MNT_DETACH) < 0 || rmdir(dir) < 0)
		return mounts_fail(-errno, err, errlen, "detach the resolv.conf tmpfs");
	return 0;
}

/* The places a TLS library looks for its trust store (Debian's bundle, and the file OpenSSL's
 * default cert.pem names), where they exist in the host's /etc. */
static const char *const trust_files[] = { "etc/ssl/certs/ca-certificates.crt",
					   "etc/ssl/cert.pem" };

/*
 * The sandbox's trust store: the L7 proxy's bundle (the host's public CAs and the deployment's
 * root, enforcer/proxy-ca.h) copied onto a tmpfs of its own and bound over the host's, as
 * resolv.conf is (a bind of the state dir's file would show its host path in mountinfo). The
 * host's own file is not touched.
 */
static int make_trust_store(const char *root, const char *bundle, char *err, size_t errlen)
{
	char dir[512], file[600], dst[512], opts[64];
	struct stat st;
	int in, out, r = 0;

	if (!bundle)
		return 0;
	if ((in = open(bundle, O_RDONLY | O_CLOEXEC)) < 0 || fstat(in, &st) < 0)
		return mounts_fail(-errno, err, errlen, "the trust bundle %s", bundle);
	snprintf(dir, sizeof(dir), "%s/.trust", root);
	snprintf(file, sizeof(file), "%s/ca-certificates.crt", dir);
	snprintf(opts, sizeof(opts), "size=%lld,mode=0755", (long long)st.st_size + 8192);
	if (mkdir(dir, 0700) < 0 ||
	    mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts) < 0) {
		close(in);
		return mounts_fail(-errno, err, errlen, "trust store tmpfs");
	}
	out = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0)
		r = -errno;
	else
		r = fd_copy(in, out);
	close(in);
	if (out >= 0 && close(out) < 0 && r == 0)
		r = -errno;
	if (r < 0)
		return mounts_fail(r, err, errlen, "copy the trust bundle");
	for (size_t i = 0; i < ARRAY_SIZE(trust_files); i++) {
		snprintf(dst, sizeof(dst), "%s/%s", root, trust_files[i]);
		if (access(dst, F_OK) == 0 && mount(file, dst, NULL, MS_BIND, NULL) < 0)
			return mounts_fail(-errno, err, errlen, "bind the trust store over %s",
					   trust_files[i]);
	}
	if (umount2(dir, MNT_DETACH) < 0 || rmdir(dir) < 0)
		return mounts_fail(-errno, err, errlen, "detach the trust store tmpfs");
	return 0;
}

static int make_tmpfs(const char *path, const char *opts, mode_t mode)
{
	if (mkdir(path, mode) < 0 && errno != EEXIST)
		return -errno;
	if (mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
		return -errno;
	return 0;
}

static int make_dev(const char *root, char *err, size_t errlen)
{
	char dev[512], path[600], src[64];
	int r;

	snprintf(dev, sizeof(dev), "%s/dev", root);
	if ((r = make_tmpfs(dev, "size=64k,mode=0755", 0755)) < 0)
		return mounts_fail(r, err, errlen, "mount /dev");
	for (size_t i = 0; i < ARRAY_SIZE(devices); i++) {
		snprintf(path, sizeof(path), "%s/%s", dev, devices[i]);
		snprintf(src, sizeof(src), "/dev/%s", devices[i]);
		if ((r = make_file(path)) < 0)
			return mounts_fail(r, err, errlen, "create %s", path);
		if (mount(src, path, NULL, MS_BIND, NULL) < 0)
			return mounts_fail(-errno, err, errlen, "bind %s", src);
	}
	snprintf(path, sizeof(path), "%s/pts", dev);
	if (mkdir(path, 0755) < 0 || mount("devpts", path, "devpts", MS_NOSUID | MS_NOEXEC,
					   "newinstance,ptmxmode=0666,mode=0620") < 0)
		return mounts_fail(-errno, err, errlen, "mount /dev/pts");
	snprintf(path, sizeof(path), "%s/shm", dev);
	if ((r = make_tmpfs(path, "size=64m,mode=1777", 01777)) < 0)
		return mounts_fail(r, err, errlen, "mount /dev/shm");
	static const char *const links[][2] = {
		{ "pts/ptmx", "ptmx" },		 { "/proc/self/fd", "fd" },
		{ "/proc/self/fd/0", "stdin" },	 { "/proc/self/fd/1", "stdout" },
		{ "/proc/self/fd/2", "stderr" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(links); i++) {
		snprintf(path, sizeof(path), "%s/%s", dev, links[i][1]);
		if (symlink(links[i][0], path) < 0)
			return mounts_fail(-errno, err, errlen, "symlink %s", path);
	}
	return set_attrs(dev, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, 0);
}

/*
 * The sandbox's /proc lists only the processes the reader may ptrace-access (hidepid=invisible):
 * with each step in a Landlock domain of its own (step-landlock.c), a step's own, never another
 * step's nor the init.
 */
static int make_proc(const char *root, char *err, size_t errlen)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/proc", root);
	if (mkdir(path, 0555) < 0 ||
	    mount("proc", path, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=invisible") < 0)
		return mounts_fail(-errno, err, errlen, "mount /proc");
	for (size_t i = 0; i < ARRAY_SIZE(proc_read_only); i++) {
		snprintf(path, sizeof(path), "%s/%s", root, proc_read_only[i]);
		if (access(path, F_OK) < 0)
			continue;
		if (mount(path, path, NULL, MS_BIND | MS_REC, NULL) < 0 ||
		    set_attrs(path,
			      MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
				      MOUNT_ATTR_NOEXEC,
			      0) < 0)
			return mounts_fail(-errno, err, errlen, "read-only %s", proc_read_only[i]);
	}
	for (size_t i = 0; i < ARRAY_SIZE(proc_masked); i++) {
		snprintf(path, sizeof(path), "%s/%s", root, proc_masked[i]);
		if (access(path, F_OK) < 0)
			continue;
		if (mount("/dev/null", path, NULL, MS_BIND, NULL) < 0)
			return mounts_fail(-errno, err, errlen, "mask %s", proc_masked[i]);
	}
	return 0;
}

int sandbox_mounts_setup(const struct sandbox_mounts *m, char *err, size_t errlen)
{
	char path[512], opts[128];
	int r;

	/* Nothing we mount here may propagate back to the host. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return mounts_fail(-errno, err, errlen, "make / private");
	if (mount("tmpfs", m->root, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=0755") < 0)
		return mounts_fail(-errno, err, errlen, "mount the new root on %s", m->root);
	if ((r = show_host(m->root, err, errlen)) < 0 || (r = hide(m->root, err, errlen)) < 0)
		return r;

	if ((r = make_resolv_conf(m->root, err, errlen)) < 0 ||
	    (r = make_trust_store(m->root, m->trust, err, errlen)) < 0)
		return r;

	snprintf(path, sizeof(path), "%s/tmp", m->root);
	snprintf(opts, sizeof(opts), "size=%" PRIu64 ",mode=1777", m->tmp_bytes);
	if ((r = make_tmpfs(path, opts, 01777)) < 0)
		return mounts_fail(r, err, errlen, "mount /tmp");
	snprintf(path, sizeof(path), "%s/workspace", m->root);
	snprintf(opts, sizeof(opts), "size=%" PRIu64 ",mode=0755,uid=%u,gid=%u", m->workspace_bytes,
		 (unsigned)m->uid, (unsigned)m->gid);
	if ((r = make_tmpfs(path, opts, 0755)) < 0)
		return mounts_fail(r, err, errlen, "mount /workspace");
	if ((r = make_dev(m->root, err, errlen)) < 0 || (r = make_proc(m->root, err, errlen)) < 0 ||
	    (r = sandbox_lures_plant(m, err, errlen)) < 0)
		return r;

	/* Into the new root; the old one is detached so nothing of it stays reachable. */
	if (chdir(m->root) < 0 || syscall(SYS_pivot_root, ".", ".") < 0)
		return mounts_fail(-errno, err, errlen, "pivot_root");
	if (umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
		return mounts_fail(-errno, err, errlen, "detach the old root");
	/* The root itself is read-only: only /tmp and /workspace take writes. */
	if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) <
	    0)
		return mounts_fail(-errno, err, errlen, "make / read-only");
	return 0;
}
