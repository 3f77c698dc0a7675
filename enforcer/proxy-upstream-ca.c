/*
 * The CAs the L7 proxy verifies upstreams with, as a hashed directory (proxy-ca.h). squid given a
 * bundle as cafile= parses every certificate in it at each start (the host's ~150: ~30 ms of a
 * create); from a directory OpenSSL reads a CA only when a chain needs it, by the hash of its
 * subject name. The directory is named by the bundle's content, made once, never changed after:
 * a running proxy keeps seeing what it started with, and a new bundle gets a directory of its own.
 */
#include "proxy-ca.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "macro.h"
#include "sha256.h"

#define UPSTREAM_DIR "upstream" /* in PROXY_CA_DIR: one directory per bundle content */
#define BUNDLE_MAX (16u << 20)

static int fail(int r, char *err, size_t errlen, const char *what)
{
	snprintf(err, errlen, "%s: %s", what, strerror(-r));
	return r;
}

/* A directory of plain files (ours, half made), gone. */
static void remove_flat_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;

	if (d) {
		while ((e = readdir(d)))
			if (e->d_name[0] != '.')
				unlinkat(dirfd(d), e->d_name, 0);
		closedir(d);
	}
	rmdir(path);
}

/* Each certificate of the bundle (PEM, len bytes) as dir/HASH.N: 0, or -errno. */
static int split_bundle(const char *pem, size_t len, const char *dir)
{
	BIO *in = BIO_new_mem_buf(pem, (int)len);
	X509 *x;
	int n = 0, r = 0;

	if (!in)
		return -ENOMEM;
	while (r == 0 && (x = PEM_read_bio_X509(in, NULL, NULL, NULL))) {
		char path[PATH_MAX + 48];
		unsigned long h = X509_subject_name_hash(x);
		FILE *f = NULL;

		/* Subjects that hash alike take the next suffix, as c_rehash does. */
		for (int i = 0; i < 16 && !f; i++) {
			snprintf(path, sizeof(path), "%s/%08lx.%d", dir, h, i);
			f = fopen(path, "wxe");
			if (!f && errno != EEXIST)
				break;
		}
		if (!f || !PEM_write_X509(f, x))
			r = -EIO;
		if (f && fclose(f) != 0)
			r = -EIO;
		X509_free(x);
		n++;
	}
	BIO_free(in);
	return r < 0 ? r : n > 0 ? 0 : -ENOENT;
}

int proxy_upstream_ca_dir(const struct config *cfg, char *dir, size_t size, char *err,
			  size_t errlen)
{
	_cleanup_free_ char *pem = NULL;
	uint8_t digest[SHA256_DIGEST_SIZE];
	char parent[PATH_MAX], tmp[PATH_MAX + 32];
	size_t len = 0;
	int r;

	if ((r = file_read_all(cfg->gate_proxy_upstream_ca, BUNDLE_MAX, &pem, &len)) < 0)
		return fail(r, err, errlen, cfg->gate_proxy_upstream_ca);
	sha256_digest(pem, len, digest);
	if ((size_t)snprintf(parent, sizeof(parent), "%s/" PROXY_CA_DIR "/" UPSTREAM_DIR,
			     cfg->runtime_dir) >= sizeof(parent) ||
	    (size_t)snprintf(dir, size, "%s/%02x%02x%02x%02x%02x%02x%02x%02x", parent, digest[0],
			     digest[1], digest[2], digest[3], digest[4], digest[5], digest[6],
			     digest[7]) >= size)
		return fail(-ENAMETOOLONG, err, errlen, cfg->runtime_dir);
	if (access(dir, F_OK) == 0)
		return 0; /* made by an earlier create: complete, as only a rename puts it there */
	if ((mkdir(parent, 0755) < 0 && errno != EEXIST))
		return fail(-errno, err, errlen, parent);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", dir, (int)getpid());
	if (mkdir(tmp, 0755) < 0)
		return fail(-errno, err, errlen, tmp);
	if ((r = split_bundle(pem, len, tmp)) < 0) {
		remove_flat_dir(tmp);
		return fail(r, err, errlen, cfg->gate_proxy_upstream_ca);
	}
	if (rename(tmp, dir) < 0) {
		r = -errno;
		remove_flat_dir(tmp);
		/* A create racing ours made the same directory first: it is as good as ours. */
		if (r != -EEXIST && r != -ENOTEMPTY)
			return fail(r, err, errlen, dir);
	}
	return 0;
}
