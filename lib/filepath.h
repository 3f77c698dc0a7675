/*
 * What a path inside a sandbox is, for the file collector (which never aggregates what matters)
 * and the file detectors (which judge it): a credential location, a persistence point, a shell
 * history, a sensitive kernel file. Paths are as the sandbox sees them ("/workspace/x").
 */
#ifndef FB_FILEPATH_H
#define FB_FILEPATH_H

#include <stdint.h>

enum {
	FILEPATH_CREDENTIAL = 1 << 0, /* .ssh, .aws, .netrc, .git-credentials, kube tokens, *.pem */
	FILEPATH_SHELL_RC = 1 << 1,   /* .bashrc, .profile, .zshrc ... */
	FILEPATH_PYTHON_HOOK = 1 << 2, /* *.pth, sitecustomize.py, usercustomize.py */
	FILEPATH_GIT_HOOK = 1 << 3,    /* .git/hooks/NAME, not a *.sample */
	FILEPATH_CRON = 1 << 4,	       /* crontabs */
	FILEPATH_HISTORY = 1 << 5,     /* .bash_history, .python_history ... */
	FILEPATH_PROC_PEEK = 1 << 6,   /* /proc/N/{environ,mem,maps,...} of a process N */
	FILEPATH_KERNEL = 1 << 7,      /* /proc/kcore and the masked /proc files, /sys */
	FILEPATH_SITE_DIR = 1 << 8,    /* directly in a site-packages or dist-packages directory */
	FILEPATH_LOGIN_KEY = 1 << 9,   /* .ssh/authorized_keys(2): who may log in */
};

/* Everything a sensitive path is: such paths are always individual events. */
#define FILEPATH_SENSITIVE                                                                         \
	(FILEPATH_CREDENTIAL | FILEPATH_SHELL_RC | FILEPATH_PYTHON_HOOK | FILEPATH_GIT_HOOK |      \
	 FILEPATH_CRON | FILEPATH_HISTORY | FILEPATH_PROC_PEEK | FILEPATH_KERNEL |                 \
	 FILEPATH_LOGIN_KEY)

/* The FILEPATH_* bits of path (absolute, as the sandbox sees it); 0 for an ordinary file. */
unsigned filepath_class(const char *path);

/* The pid N of a /proc/N/... path (also /proc/N/task/M/...: N), or 0 if it names none. */
int32_t filepath_proc_pid(const char *path);

#endif
