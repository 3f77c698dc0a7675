/*
 * The real values of a sandbox's credentials, for its proxy only (egress-proxy.h). Each is read
 * from a file only root may read or write (a file others can read is not a secret any more, and
 * one others can write lets them choose what the proxy sends), and becomes one squid line
 * request_header_add HEADER "SCHEME VALUE" fb_cI fb_cI_note
 * in a file only the proxy's uid reads. squid expands '%' codes in that string, so '%' is
 * doubled; a value squid cannot quote ('"', '\', spaces, controls) is refused, not mangled.
 */
#include "egress-proxy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "policy/policy.h"

int egress_proxy_credential_read(const struct policy_credential *c, char *buf, size_t size)
{
	struct stat st;
	ssize_t n;
	int fd = open(c->from, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);

	if (fd < 0)
		return log_errno(-errno, "firebreak create: credential %s: %s", c->name, c->from);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & 077) != 0) {
		close(fd);
		return log_error("firebreak create: credential %s: %s must be a regular file "
				 "owned by root that no one else may read or write (mode 0600 or "
				 "0400)",
				 c->name, c->from),
		       -EPERM;
	}
	n = read(fd, buf, size);
	close(fd);
	if (n < 0)
		return log_errno(-errno, "firebreak create: credential %s: %s", c->name, c->from);
	if ((size_t)n >= size)
		return log_error("firebreak create: credential %s: %s is longer than %d bytes",
				 c->name, c->from, EGRESS_PROXY_CREDENTIAL_MAX),
		       -EFBIG;
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	if (n > 0 && buf[n - 1] == '\r')
		n--;
	buf[n] = '\0';
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] <= ' ' || buf[i] > '~' || buf[i] == '"' || buf[i] == '\\')
			return log_error("firebreak create: credential %s: %s holds a character "
					 "squid cannot send as is (at byte %zd): printable ASCII "
					 "without spaces, '\"' or '\\' only",
					 c->name, c->from, i),
			       -EINVAL;
	if (n == 0)
		return log_error("firebreak create: credential %s: %s is empty", c->name, c->from),
		       -EINVAL;
	return (int)n;
}

/* One credential's line into f; the value is wiped before it returns. */
static int write_line(FILE *f, const struct policy_credential *c, size_t i)
{
	char value[EGRESS_PROXY_CREDENTIAL_MAX + 1], quoted[2 * EGRESS_PROXY_CREDENTIAL_MAX + 1];
	int n = egress_proxy_credential_read(c, value, sizeof(value));
	size_t q = 0;

	for (int j = 0; j < n; j++) {
		if (value[j] == '%')
			quoted[q++] = '%';
		quoted[q++] = value[j];
	}
	quoted[q] = '\0';
	if (n >= 0)
		fprintf(f, "request_header_add %s \"%s%s%s\" fb_c%zu fb_c%zu_note\n", c->header,
			c->scheme ? c->scheme : "", c->scheme ? " " : "", quoted, i, i);
	explicit_bzero(value, sizeof(value));
	explicit_bzero(quoted, sizeof(quoted));
	return n < 0 ? n : 0;
}

int egress_proxy_secret_open(const char *path, uid_t uid, FILE **ret)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600), r;
	FILE *f;

	if (fd < 0 || fchown(fd, uid, uid) < 0 || !(f = fdopen(fd, "w"))) {
		r = -errno;
		if (fd >= 0)
			close(fd);
		return log_errno(r, "firebreak create: %s", path);
	}
	/* Unbuffered: no copy of a value lingers in stdio's buffer after fclose frees it. */
	setvbuf(f, NULL, _IONBF, 0);
	*ret = f;
	return 0;
}

int egress_proxy_credentials(const struct policy *p, const char *path, uid_t uid)
{
	FILE *f;
	int r = 0;

	if (policy_credential_count(p) == 0)
		return 0;
	if ((r = egress_proxy_secret_open(path, uid, &f)) < 0)
		return r;
	fputs("# firebreak: the real credentials (docs/egress.md, \"Credentials\"); the proxy's "
	      "only\n",
	      f);
	for (size_t i = 0; i < policy_credential_count(p) && r == 0; i++)
		r = write_line(f, policy_credential(p, i), i);
	if (fclose(f) != 0 && r == 0)
		r = log_errno(-errno, "firebreak create: %s", path);
	if (r < 0)
		unlink(path);
	return r;
}
