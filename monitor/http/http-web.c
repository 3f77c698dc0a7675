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
#include "fileio.h"
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
		if ((r = file_read_all(path, WEB_FILE_MAX, &hc->web[i].data, &hc->web[i].len)) < 0)
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
