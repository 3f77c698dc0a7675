/*
 * The web page (dashboards/web: static HTML, CSS and JavaScript, no build step), read into memory
 * while the HTTP child can still open files and served at / without a token: the page holds no
 * data; it asks the API for everything, with the token its user gives it.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "http-child.h"
#include "log.h"
#include "macro.h"

#define WEB_FILE_MAX (1 << 20)

/* Where the page is: configured, else beside the binary (a built tree: build/../dashboards/web),
 * else where a package puts it. */
static void web_dir(const struct config *cfg, char *out, size_t size)
{
	char exe[PATH_MAX];
	ssize_t n;

	if (cfg->web_dir[0]) {
		strscpy(out, size, cfg->web_dir);
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		snprintf(out, size, "%s/../dashboards/web", dirname(exe));
		if (access(out, R_OK) == 0)
			return;
	}
	strscpy(out, size, "/usr/share/firebreak/web");
}

static int read_file(const char *path, char **ret, size_t *ret_len)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *buf;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > WEB_FILE_MAX)
		return -EINVAL;
	if (!(buf = malloc((size_t)st.st_size + 1)))
		return -ENOMEM;
	if (read(fd, buf, (size_t)st.st_size) != st.st_size) {
		free(buf);
		return -EIO;
	}
	*ret = buf;
	*ret_len = (size_t)st.st_size;
	return 0;
}

void http_web_load(struct http_child *hc)
{
	static const struct web_file files[WEB_FILES] = {
		{ "/", "index.html", "text/html; charset=utf-8", NULL, 0 },
		{ "/app.js", "app.js", "text/javascript; charset=utf-8", NULL, 0 },
		{ "/style.css", "style.css", "text/css; charset=utf-8", NULL, 0 },
	};
	char dir[PATH_MAX], path[PATH_MAX + 32];
	int r;

	web_dir(hc->cfg, dir, sizeof(dir));
	for (int i = 0; i < WEB_FILES; i++) {
		hc->web[i] = files[i];
		snprintf(path, sizeof(path), "%s/%s", dir, files[i].name);
		if ((r = read_file(path, &hc->web[i].data, &hc->web[i].len)) < 0)
			log_warn_errno(r, "web page: %s (the API works without it)", path);
	}
}

const struct web_file *http_web_find(const struct http_child *hc, const char *url)
{
	for (int i = 0; i < WEB_FILES; i++)
		if (strcmp(url, hc->web[i].path) == 0)
			return hc->web[i].data ? &hc->web[i] : NULL;
	return NULL;
}
