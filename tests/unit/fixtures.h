/*
 * What the unit tests share: a temporary directory per test group (and database paths in it),
 * files of the repository the test binary was built from, long strings, and policies loaded from
 * text. Include it after <cmocka.h>. Everything is static inline, so that a test pays only for
 * what it uses.
 */
#ifndef FB_TEST_FIXTURES_H
#define FB_TEST_FIXTURES_H

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/policy.h"

/* The group's temporary directory: "" until fixture_dir_up(). */
static inline char *fixture_dir(void)
{
	static char dir[64];

	return dir;
}

/* Makes /tmp/fb-test-NAME-XXXXXX the group's directory; 0 or -1, as a cmocka setup answers. */
static inline int fixture_dir_up(const char *name)
{
	snprintf(fixture_dir(), 64, "/tmp/fb-test-%s-XXXXXX", name);
	return mkdtemp(fixture_dir()) ? 0 : -1;
}

static inline int fixture_remove_entry(const char *path, const struct stat *st, int flag,
				       struct FTW *ftw)
{
	return remove(path);
}

/* Removes the group's directory and all in it, whatever the tests left; a cmocka teardown. */
static inline int fixture_dir_down(void **state)
{
	return nftw(fixture_dir(), fixture_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The path of database file NAME.db in the group's directory (valid until the next call). */
static inline const char *fixture_db_path(const char *name)
{
	static char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s.db", fixture_dir(), name);
	return path;
}

/*
 * The path of rel in the repository: the test binary is ROOT/build/tests/NAME, or
 * ROOT/build/asan/tests/NAME for the sanitizers' build (make unit-asan).
 */
static inline void fixture_repo_path(const char *rel, char *buf, size_t size)
{
	char exe[PATH_MAX], *top = NULL;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	assert_true(n > 0);
	exe[n] = '\0';
	for (char *p = strstr(exe, "/build/"); p; p = strstr(p + 1, "/build/"))
		top = p;
	assert_non_null(top);
	*top = '\0';
	n = snprintf(buf, size, "%s/%s", exe, rel);
	assert_true(n > 0 && (size_t)n < size);
}

/* A string of n copies of c; the caller frees it. */
static inline char *fixture_repeat(char c, size_t n)
{
	char *s = malloc(n + 1);

	assert_non_null(s);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

/* The policy in text, loaded as file name; a refusal fails the test with its message. */
static inline struct policy *fixture_policy(const char *name, const char *text)
{
	struct policy *p = NULL;
	char err[512] = "";

	if (policy_load_text(name, text, strlen(text), &p, err, sizeof(err)) < 0)
		fail_msg("policy refused: %s", err);
	assert_non_null(p);
	return p;
}

/* Loads text as p.json, which must be refused as invalid (want: what was expected, for the
 * failure's message); leaves the refusal's message in err. */
static inline void fixture_policy_refused(const char *text, const char *want, char *err,
					  size_t errlen)
{
	struct policy *p = NULL;
	int r = policy_load_text("p.json", text, strlen(text), &p, err, errlen);

	if (r == 0) {
		policy_free(p);
		fail_msg("accepted, expected %s", want);
	}
	assert_int_equal(r, -EINVAL);
	assert_null(p);
}

#endif
