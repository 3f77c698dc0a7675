/*
 * The deployment's root CA and each sandbox's signing CA (proxy-ca.h), with
 * OpenSSL's libcrypto: a well-kept X.509 implementation rather than one of ours, and no process
 * spawned per create (the openssl CLI costs ~10 ms a call).
 */
#include "proxy-ca.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "egress-proxy.h"
#include "fileio.h"
#include "macro.h"
#include "policy/policy.h"

#define ROOT_DAYS 3650
#define HOST_BUNDLE "/etc/ssl/certs/ca-certificates.crt"

/* OpenSSL's last error as text, after what. */
static int ca_fail(int r, char *err, size_t errlen, const char *what)
{
	unsigned long e = ERR_get_error();
	char ssl[256] = "";

	if (e)
		ERR_error_string_n(e, ssl, sizeof(ssl));
	snprintf(err, errlen, "%s%s%s", what, ssl[0] ? ": " : "", ssl);
	ERR_clear_error();
	return r;
}

static int ca_paths(const struct config *cfg, char *dir, char *cert, char *key, size_t size)
{
	if ((size_t)snprintf(dir, size, "%s/" PROXY_CA_DIR, cfg->runtime_dir) >= size ||
	    (size_t)snprintf(cert, size, "%s/ca.pem", dir) >= size ||
	    (size_t)snprintf(key, size, "%s/ca.key", dir) >= size)
		return -ENAMETOOLONG;
	return 0;
}

/* A v3 extension from its config text, signed by issuer (NULL: self). 0 or -1. */
static int add_ext(X509 *cert, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX ctx;
	X509_EXTENSION *ext;
	int ok;

	X509V3_set_ctx_nodb(&ctx);
	X509V3_set_ctx(&ctx, issuer ? issuer : cert, cert, NULL, NULL, 0);
	ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
	if (!ext)
		return -1;
	ok = X509_add_ext(cert, ext, -1);
	X509_EXTENSION_free(ext);
	return ok ? 0 : -1;
}

/* A certificate of key for subject cn, valid from not_before to not_after (seconds from now),
 * with a random serial; issued by issuer (NULL: self-signed). */
static X509 *new_cert(EVP_PKEY *key, const char *cn, long not_before, long not_after, X509 *issuer)
{
	unsigned char serial[16];
	X509 *c = X509_new();
	X509_NAME *name;
	BIGNUM *bn;

	if (!c || RAND_bytes(serial, sizeof(serial)) != 1)
		goto fail;
	serial[0] &= 0x7f; /* positive */
	bn = BN_bin2bn(serial, sizeof(serial), NULL);
	if (!bn || !BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(c))) {
		BN_free(bn);
		goto fail;
	}
	BN_free(bn);
	name = X509_get_subject_name(c);
	if (!X509_set_version(c, 2) || !X509_gmtime_adj(X509_getm_notBefore(c), not_before) ||
	    !X509_gmtime_adj(X509_getm_notAfter(c), not_after) || !X509_set_pubkey(c, key) ||
	    !X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (unsigned char *)"Firebreak", -1,
					-1, 0) ||
	    !X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (unsigned char *)cn, -1, -1,
					0) ||
	    !X509_set_issuer_name(c, issuer ? X509_get_subject_name(issuer) : name))
		goto fail;
	return c;
fail:
	X509_free(c);
	return NULL;
}

/* Writes a PEM file of cert (and key, if any) as path, mode, owner: a temporary name, fsync,
 * rename, so a reader sees the whole file or none. */
static int write_pem(const char *path, X509 *cert, EVP_PKEY *key, mode_t mode, uid_t uid, gid_t gid)
{
	char tmp[PATH_MAX + 8];
	FILE *f;
	int fd, ok;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.new", path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0)
		return -errno;
	if (fchown(fd, uid, gid) < 0 || !(f = fdopen(fd, "w"))) {
		int r = -errno;

		close(fd);
		unlink(tmp);
		return r;
	}
	ok = (!cert || PEM_write_X509(f, cert)) &&
	     (!key || PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL));
	ok = fflush(f) == 0 && fsync(fileno(f)) == 0 && ok;
	if (fclose(f) != 0 || !ok || rename(tmp, path) < 0) {
		unlink(tmp);
		return -EIO;
	}
	return 0;
}

static int make_root(const char *cert_path, const char *key_path, char *err, size_t errlen)
{
	unsigned char id[4];
	char cn[64];
	EVP_PKEY *key = EVP_EC_gen("P-256");
	X509 *c = NULL;
	int r;

	if (!key || RAND_bytes(id, sizeof(id)) != 1)
		return ca_fail(-ENOMEM, err, errlen, "the root's key");
	snprintf(cn, sizeof(cn), "Firebreak sandbox CA %02x%02x%02x%02x", id[0], id[1], id[2],
		 id[3]);
	c = new_cert(key, cn, -3600, (long)ROOT_DAYS * 86400, NULL);
	if (!c || add_ext(c, NULL, NID_basic_constraints, "critical,CA:TRUE") < 0 ||
	    add_ext(c, NULL, NID_key_usage, "critical,keyCertSign,cRLSign") < 0 ||
	    add_ext(c, NULL, NID_subject_key_identifier, "hash") < 0 ||
	    !X509_sign(c, key, EVP_sha256())) {
		r = ca_fail(-EINVAL, err, errlen, "the root's certificate");
		goto out;
	}
	/* The key first: a root whose ca.pem exists is whole. */
	if ((r = write_pem(key_path, NULL, key, 0600, 0, 0)) < 0 ||
	    (r = write_pem(cert_path, c, NULL, 0644, 0, 0)) < 0)
		snprintf(err, errlen, "write the root: %s", strerror(-r));
out:
	X509_free(c);
	EVP_PKEY_free(key);
	return r;
}

int proxy_ca_ensure(const struct config *cfg, char *err, size_t errlen)
{
	char dir[PATH_MAX], cert[PATH_MAX], key[PATH_MAX], lock[PATH_MAX + 8];
	int fd, r;

	if ((r = ca_paths(cfg, dir, cert, key, sizeof(dir))) < 0)
		return ca_fail(r, err, errlen, "the runtime dir's path is too long");
	if (access(cert, F_OK) == 0)
		return 0;
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return ca_fail(-errno, err, errlen, dir);
	snprintf(lock, sizeof(lock), "%s/lock", dir);
	fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || flock(fd, LOCK_EX) < 0) {
		r = -errno;
		if (fd >= 0)
			close(fd);
		return ca_fail(r, err, errlen, lock);
	}
	/* Another create may have made it while we waited. */
	r = access(cert, F_OK) == 0 ? 0 : make_root(cert, key, err, errlen);
	close(fd);
	return r;
}

static int load_root(const struct config *cfg, X509 **ret_cert, EVP_PKEY **ret_key, char *err,
		     size_t errlen)
{
	char dir[PATH_MAX], cert[PATH_MAX], key[PATH_MAX];
	FILE *f;

	if (ca_paths(cfg, dir, cert, key, sizeof(dir)) < 0)
		return ca_fail(-ENAMETOOLONG, err, errlen, "the runtime dir's path is too long");
	if (!(f = fopen(cert, "re")))
		return ca_fail(-errno, err, errlen, cert);
	*ret_cert = PEM_read_X509(f, NULL, NULL, NULL);
	fclose(f);
	if (!(f = fopen(key, "re")))
		return ca_fail(-errno, err, errlen, key);
	*ret_key = PEM_read_PrivateKey(f, NULL, NULL, NULL);
	fclose(f);
	if (!*ret_cert || !*ret_key)
		return ca_fail(-EBADMSG, err, errlen, "the deployment's root CA");
	return 0;
}

/* The host's bundle, then the root: what the sandbox trusts. */
static int write_bundle(const char *path, const struct config *cfg)
{
	char dir[PATH_MAX], cert[PATH_MAX], key[PATH_MAX];
	int out, in, r = 0;

	if ((r = ca_paths(cfg, dir, cert, key, sizeof(dir))) < 0)
		return r;
	out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (out < 0)
		return -errno;
	for (int i = 0; i < 2 && r == 0; i++) {
		in = open(i ? cert : HOST_BUNDLE, O_RDONLY | O_CLOEXEC);
		if (in < 0) {
			if (i == 0 && errno == ENOENT)
				continue; /* a host with no public CAs: the root alone */
			r = -errno;
			break;
		}
		r = fd_copy(in, out);
		close(in);
	}
	if (close(out) < 0 && r == 0)
		r = -errno;
	return r;
}

int proxy_ca_issue_sandbox(const struct config *cfg, int64_t lifetime_ns, const char *dir,
			   uid_t uid, gid_t gid, char *err, size_t errlen)
{
	char path[PATH_MAX];
	long lifetime = (long)(lifetime_ns / 1000000000) + 86400;
	X509 *root = NULL, *c = NULL;
	EVP_PKEY *root_key = NULL, *key = NULL;
	int r;

	if ((r = load_root(cfg, &root, &root_key, err, errlen)) < 0)
		goto out;
	key = EVP_EC_gen("P-256");
	c = key ? new_cert(key, "Firebreak sandbox signing CA", -300, lifetime, root) : NULL;
	if (!c || add_ext(c, root, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") < 0 ||
	    add_ext(c, root, NID_key_usage, "critical,keyCertSign") < 0 ||
	    add_ext(c, root, NID_subject_key_identifier, "hash") < 0 ||
	    add_ext(c, root, NID_authority_key_identifier, "keyid:always") < 0 ||
	    !X509_sign(c, root_key, EVP_sha256())) {
		r = ca_fail(-EINVAL, err, errlen, "the sandbox's signing CA");
		goto out;
	}
	snprintf(path, sizeof(path), "%s/" EGRESS_PROXY_SIGNING, dir);
	if ((r = write_pem(path, c, key, 0600, uid, gid)) < 0) {
		snprintf(err, errlen, "write %s: %s", path, strerror(-r));
		goto out;
	}
	snprintf(path, sizeof(path), "%s/" EGRESS_PROXY_BUNDLE, dir);
	if ((r = write_bundle(path, cfg)) < 0)
		snprintf(err, errlen, "write %s: %s", path, strerror(-r));
out:
	X509_free(c);
	X509_free(root);
	EVP_PKEY_free(key);
	EVP_PKEY_free(root_key);
	return r;
}
