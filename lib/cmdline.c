#include "cmdline.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "macro.h"

enum family { F_NONE, F_SHELL, F_PYTHON, F_PERL, F_RUBY, F_PHP, F_NODE, F_LUA };

/*
 * How each language takes inline code: the option letters that do (code), the letters that may
 * come before them in one cluster (flags: take no value), the letters whose value is the next
 * argument (valued), the letters that make it print and exit (exits), whether the code may be
 * attached to its letter (-c'print(1)'), whether several may be given (perl -e A -e B).
 */
static const struct lang {
	enum family f;
	const char *code, *flags, *valued, *exits;
	int attached, multi;
	const char *longs[3]; /* long options taking code */
} langs[] = {
	{ F_SHELL, "c", "abefhiklmnprstuvxBCEHPT", "oO", "", 0, 0, { NULL } },
	{ F_PYTHON, "c", "bBdEiIOPqsSuvR", "WXm", "Vh", 1, 0, { NULL } },
	{ F_PERL, "eE", "aclnpsStTuUwWX", "", "vh", 1, 1, { NULL } },
	{ F_RUBY, "e", "acdlnpsvwWy", "", "h", 1, 1, { NULL } },
	{ F_PHP, "r", "nqe", "fdc", "vhim", 1, 0, { NULL } },
	{ F_NODE, "ep", "", "r", "vh", 0, 0, { "--eval", "--print", NULL } },
	{ F_LUA, "e", "iEW", "l", "v", 1, 1, { NULL } },
};

static const char *base(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static int one_of(const char *name, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(name, *list) == 0)
			return 1;
	return 0;
}

/* name is stem followed by a version only: python3, python3.11, perl5.36. */
static int versioned(const char *name, const char *stem)
{
	size_t n = strlen(stem);

	return strncmp(name, stem, n) == 0 && name[n + strspn(name + n, "0123456789.")] == '\0';
}

static int shell_name(const char *name)
{
	static const char *const shells[] = { "sh",   "bash", "dash", "zsh",  "ksh", "ash",
					      "mksh", "csh",  "tcsh", "fish", NULL };

	return one_of(name, shells);
}

static int nc_name(const char *name)
{
	static const char *const nc[] = { "nc",		"ncat", "netcat", "nc.traditional",
					  "nc.openbsd", NULL };

	return one_of(name, nc);
}

/* A program that moves bytes between a socket and its stdio. */
static int net_tool(const char *name)
{
	return nc_name(name) || strcmp(name, "telnet") == 0 || strcmp(name, "socat") == 0 ||
	       strcmp(name, "openssl") == 0;
}

static enum family family_of(const char *name)
{
	if (shell_name(name))
		return F_SHELL;
	if (versioned(name, "python"))
		return F_PYTHON;
	if (versioned(name, "perl"))
		return F_PERL;
	if (versioned(name, "ruby"))
		return F_RUBY;
	if (versioned(name, "php"))
		return F_PHP;
	if (strcmp(name, "node") == 0 || strcmp(name, "nodejs") == 0)
		return F_NODE;
	if (versioned(name, "lua") || versioned(name, "luajit"))
		return F_LUA;
	return F_NONE;
}

static const struct lang *lang_of(enum family f)
{
	for (size_t i = 0; i < ARRAY_SIZE(langs); i++)
		if (langs[i].f == f)
			return &langs[i];
	return NULL;
}

/*
 * The program's name (path's base name; for busybox the applet: argv[0], or argv[1] after
 * "busybox") into name, and how many of argv come before its own arguments.
 */
static size_t program(const char *path, const char *const *argv, size_t argc, char *name,
		      size_t size)
{
	const char *b = base(path);

	if (strcmp(b, "busybox") == 0 && argc > 0) {
		if (strcmp(base(argv[0]), "busybox") != 0) {
			strscpy(name, size, base(argv[0]));
			return 1;
		}
		if (argc > 1) {
			strscpy(name, size, base(argv[1]));
			return 2;
		}
	}
	strscpy(name, size, b);
	return argc ? 1 : 0;
}

static void append(char *buf, size_t size, size_t *pos, const char *s)
{
	int n = snprintf(buf + *pos, size - *pos, "%s%s", *pos ? "\n" : "", s);

	if (n > 0)
		*pos = *pos + (size_t)n < size ? *pos + (size_t)n : size - 1;
}

/*
 * The inline code in a's n arguments (the program's own, after argv[0]) for language l, into
 * buf (several pieces one to a line). Returns 1 if there was any, -1 if the arguments name a
 * script or module (or say print-and-exit), 0 if neither (the program reads stdin).
 */
static int inline_code(const struct lang *l, const char *const *a, size_t n, char *buf, size_t size)
{
	size_t pos = 0;
	int found = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		const char *arg = a[i];
		int stop = 0;

		if (strcmp(arg, "--") == 0) {
			if (l->f == F_SHELL)
				continue; /* end of options: an operand may follow */
			return found ? 1 : i + 1 < n ? -1 : 0;
		}
		if (strcmp(arg, "--version") == 0 || strcmp(arg, "--help") == 0)
			return found ? 1 : -1;
		if (strncmp(arg, "--", 2) == 0) {
			for (size_t k = 0; l->longs[k]; k++) {
				size_t len = strlen(l->longs[k]);

				if (strncmp(arg, l->longs[k], len) == 0 && arg[len] == '=') {
					append(buf, size, &pos, arg + len + 1);
					found = 1;
				} else if (strcmp(arg, l->longs[k]) == 0 && i + 1 < n) {
					append(buf, size, &pos, a[++i]);
					found = 1;
				}
			}
			continue;
		}
		if (strcmp(arg, "-") == 0) {
			if (l->f == F_SHELL)
				continue;
			return found ? 1 : 0; /* the program from stdin */
		}
		if (arg[0] != '-' && !(l->f == F_SHELL && arg[0] == '+'))
			return found ? 1 : -1; /* a script (or, after code, its arguments) */
		for (const char *c = arg + 1; *c && !stop; c++) {
			if (strchr(l->code, *c)) {
				if (c[1] && l->attached)
					append(buf, size, &pos, c + 1);
				else if (i + 1 < n)
					append(buf, size, &pos, a[++i]);
				found = 1;
				stop = 1;
			} else if (strchr(l->exits, *c)) {
				return found ? 1 : -1;
			} else if (strchr(l->valued, *c)) {
				if (l->f == F_PYTHON && *c == 'm')
					return -1; /* a module is its program */
				if (!c[1] && i + 1 < n)
					i++;
				stop = 1;
			} else if (!strchr(l->flags, *c)) {
				stop = 1; /* a value attached to an option (-MIO, -W5) */
			}
		}
		if (found && !l->multi)
			return 1;
		if (l->f == F_PHP && strcmp(arg, "-f") == 0)
			return -1;
		if (l->f == F_SHELL && strcmp(arg, "-s") == 0)
			return 0;
	}
	return found;
}

/* Loopback, as a host name in /dev/tcp/HOST/PORT or a connect: nothing leaves the sandbox. */
static int loopback_host(const char *h, size_t n)
{
	return (n == 9 && strncmp(h, "localhost", 9) == 0) ||
	       (n >= 4 && strncmp(h, "127.", 4) == 0) || (n == 3 && strncmp(h, "::1", 3) == 0) ||
	       (n == 7 && strncmp(h, "0.0.0.0", 7) == 0);
}

/* "/dev/tcp/HOST/" or /dev/udp/ with a literal HOST beyond loopback (a $variable is not known). */
static int dev_tcp(const char *code, char *why, size_t size)
{
	for (const char *p = code; (p = strstr(p, "/dev/")); p += 5) {
		const char *h = p + 9;
		size_t n;

		if (strncmp(p + 5, "tcp/", 4) != 0 && strncmp(p + 5, "udp/", 4) != 0)
			continue;
		n = strcspn(h, "/ \t\n'\"");
		if (n == 0 || h[0] == '$' || h[0] == '`' || loopback_host(h, n))
			continue;
		snprintf(why, size, "reaches %.*s through %.8s", (int)(n < 64 ? n : 64), h, p);
		return 1;
	}
	return 0;
}

/* nc or ncat told to run a program for the peer: -e, -c (in a cluster too), --exec, --sh-exec. */
static int nc_exec(const char *const *a, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *arg = a[i];

		if (strncmp(arg, "--exec", 6) == 0 || strncmp(arg, "--sh-exec", 9) == 0 ||
		    strncmp(arg, "--lua-exec", 10) == 0)
			return 1;
		if (arg[0] != '-' || arg[1] == '-')
			continue;
		for (const char *c = arg + 1; isalpha((unsigned char)*c); c++)
			if (*c == 'e' || *c == 'c')
				return 1;
	}
	return 0;
}

static int starts_nocase(const char *s, const char *prefix)
{
	return strncasecmp(s, prefix, strlen(prefix)) == 0;
}

/* socat with an exec: or system: address and a network one: a program given to the network. */
static int socat_exec(const char *const *a, size_t n)
{
	static const char *const net[] = { "tcp",   "udp",   "openssl", "ssl",	"sctp",
					   "socks", "proxy", "vsock",	"dccp", NULL };
	int exec = 0, sock = 0;

	for (size_t i = 0; i < n; i++) {
		exec |= starts_nocase(a[i], "exec:") || starts_nocase(a[i], "system:");
		for (size_t k = 0; net[k]; k++)
			sock |= starts_nocase(a[i], net[k]);
	}
	return exec && sock;
}

/* The signatures of a network tool's own arguments. */
static int net_tool_exec(const char *name, const char *const *a, size_t n, char *why, size_t size)
{
	if (nc_name(name) && nc_exec(a, n)) {
		snprintf(why, size, "%s runs a program for its peer (-e/-c)", name);
		return 1;
	}
	if (strcmp(name, "socat") == 0 && socat_exec(a, n)) {
		snprintf(why, size, "socat joins exec:/system: to a network address");
		return 1;
	}
	return 0;
}

#define WORDS_MAX 32

/*
 * A shell's -c string: /dev/tcp beyond loopback; a pipeline of a shell and a network tool, or
 * a network tool given a program; a FIFO made next to both (the mkfifo reverse shell).
 */
static int shell_code(const char *code, char *why, size_t size)
{
	char buf[CMDLINE_CODE_MAX], *save = NULL, *cmd;
	int fifo = 0, any_net = 0, any_shell = 0;

	if (dev_tcp(code, why, size))
		return 1;
	strscpy(buf, sizeof(buf), code);
	/* Commands end at ; newline && || and a lone & (not one of 2>&1, &>, <&3, |&); a
	 * pipeline's segments at |. */
	for (char *p = buf; *p; p++) {
		if (*p == '\n') {
			*p = ';';
		} else if (p[0] == '|' && p[1] == '|') {
			p[0] = p[1] = ';';
		} else if (*p == '&' && p[1] != '>' &&
			   (p == buf || (p[-1] != '>' && p[-1] != '<' && p[-1] != '|'))) {
			*p = ';';
		}
	}
	for (cmd = strtok_r(buf, ";", &save); cmd; cmd = strtok_r(NULL, ";", &save)) {
		char *save2 = NULL, *seg, net[32] = "";
		int shell = 0;

		for (seg = strtok_r(cmd, "|", &save2); seg; seg = strtok_r(NULL, "|", &save2)) {
			const char *w[WORDS_MAX];
			char *save3 = NULL, *t;
			size_t n = 0, first = 0;

			for (t = strtok_r(seg, " \t()'\"{}", &save3); t && n < WORDS_MAX;
			     t = strtok_r(NULL, " \t()'\"{}", &save3))
				w[n++] = t;
			/* The command word: past exec, nohup, setsid and VAR=value. */
			while (first < n &&
			       (one_of(w[first],
				       (const char *const[]){ "exec", "nohup", "setsid", NULL }) ||
				strchr(w[first], '=')))
				first++;
			if (first >= n)
				continue;
			if (net_tool_exec(base(w[first]), w + first + 1, n - first - 1, why, size))
				return 1;
			if (net_tool(base(w[first])) &&
			    (strcmp(base(w[first]), "openssl") != 0 ||
			     (first + 1 < n && strcmp(w[first + 1], "s_client") == 0)))
				strscpy(net, sizeof(net), base(w[first]));
			shell |= shell_name(base(w[first]));
			fifo |= strcmp(base(w[first]), "mkfifo") == 0 ||
				strcmp(base(w[first]), "mknod") == 0;
		}
		if (net[0] && shell) {
			snprintf(why, size, "pipes a shell to or from %s", net);
			return 1;
		}
		any_net |= net[0] != '\0';
		any_shell |= shell;
	}
	if (fifo && any_net && any_shell) {
		snprintf(why, size, "joins a shell and a network tool through a FIFO");
		return 1;
	}
	return 0;
}

static int holds_any(const char *code, const char *const *list)
{
	for (; *list; list++)
		if (strstr(code, *list))
			return 1;
	return 0;
}

/*
 * An interpreter's inline code: a pty spawned, /dev/tcp beyond loopback, or a socket connected
 * and handed to a shell (dup2 onto stdio, a shell's path or name).
 */
static int interpreter_code(const char *code, char *why, size_t size)
{
	static const char *const sockets[] = { "socket",
					       "Socket",
					       "fsockopen",
					       "require(\"net\")",
					       "require('net')",
					       "stream_socket_client",
					       NULL };
	static const char *const connects[] = { "connect(",
						".connect",
						":connect",
						"fsockopen",
						"TCPSocket",
						"IO::Socket",
						"create_connection",
						"createConnection",
						"stream_socket_client",
						NULL };
	/* What joins the socket to a shell: a shell named (its path, its quoted name, its -i), fds
	 * moved onto stdio, a pty. Not a bare subprocess or exec(): a test one-liner that checks
	 * a port on loopback and then runs psql is honest. */
	static const char *const hooks[] = { "dup2",	  "fdopen",   "pty.",	    "/bin/sh",
					     "/bin/bash", "/bin/zsh", "/bin/dash",  "sh -i",
					     "bash -i",	  "\"sh\"",   "'sh'",	    "\"bash\"",
					     "'bash'",	  "cmd.exe",  "open(STDIN", "open STDIN",
					     ">&S",	  "sh <&",    NULL };

	if (strstr(code, "pty.spawn")) {
		snprintf(why, size, "spawns a shell on a pty (pty.spawn)");
		return 1;
	}
	if (dev_tcp(code, why, size))
		return 1;
	/* A socket, not a database (sqlite3.connect): both words, and a shell for it. */
	if (holds_any(code, sockets) && holds_any(code, connects) && holds_any(code, hooks)) {
		snprintf(why, size, "connects a socket and hands it to a shell");
		return 1;
	}
	return 0;
}

int cmdline_may_reverse_shell(const char *path)
{
	const char *b = base(path);

	return family_of(b) != F_NONE || nc_name(b) || strcmp(b, "socat") == 0 ||
	       strcmp(b, "busybox") == 0;
}

int cmdline_reverse_shell(const char *path, const char *const *argv, size_t argc, char *why,
			  size_t size)
{
	char name[32], code[CMDLINE_CODE_MAX], found[160];
	size_t skip = program(path, argv, argc, name, sizeof(name));
	const struct lang *l = lang_of(family_of(name));
	const char *const *a = argv + skip;
	size_t n = argc - skip;

	if (net_tool_exec(name, a, n, why, size))
		return 1;
	if (!l || inline_code(l, a, n, code, sizeof(code)) != 1)
		return 0;
	if (!(l->f == F_SHELL ? shell_code(code, found, sizeof(found))
			      : interpreter_code(code, found, sizeof(found))))
		return 0;
	snprintf(why, size, "%s's inline code %s", name, found);
	return 1;
}

enum cmdline_feed cmdline_feeder(const char *path, const char *const *argv, size_t argc)
{
	static const char *const fetchers[] = { "curl",	  "wget",  "wget2", "fetch",
						"telnet", "socat", NULL };
	char name[32];
	size_t skip = program(path, argv, argc, name, sizeof(name));
	const char *const *a = argv + skip;
	size_t n = argc - skip;

	if (one_of(name, fetchers) || nc_name(name))
		return CMDLINE_FEED_DOWNLOADED;
	if (strcmp(name, "base64") == 0 || strcmp(name, "base32") == 0 ||
	    strcmp(name, "basenc") == 0) {
		for (size_t i = 0; i < n; i++) {
			if (strcmp(a[i], "--decode") == 0)
				return CMDLINE_FEED_DECODED;
			if (a[i][0] != '-' || a[i][1] == '-')
				continue;
			for (const char *c = a[i] + 1; isalpha((unsigned char)*c); c++)
				if (*c == 'd' || *c == 'D')
					return CMDLINE_FEED_DECODED;
		}
		return CMDLINE_FEED_NONE;
	}
	if (strcmp(name, "xxd") == 0) {
		static const char *const revert[] = { "-r",   "-rp",	 "-pr", "-rps",
						      "-psr", "-revert", NULL };

		for (size_t i = 0; i < n; i++)
			if (one_of(a[i], revert))
				return CMDLINE_FEED_DECODED;
		return CMDLINE_FEED_NONE;
	}
	if (strcmp(name, "openssl") == 0 && n > 0) {
		if (strcmp(a[0], "s_client") == 0)
			return CMDLINE_FEED_DOWNLOADED;
		if (strcmp(a[0], "dgst") == 0) /* its -d is debug output */
			return CMDLINE_FEED_NONE;
		for (size_t i = 1; i < n; i++)
			if (strcmp(a[i], "-d") == 0 || strcmp(a[i], "-decrypt") == 0)
				return CMDLINE_FEED_DECODED;
	}
	return CMDLINE_FEED_NONE;
}

int cmdline_code_from_stdin(const char *path, const char *const *argv, size_t argc)
{
	char name[32], code[CMDLINE_CODE_MAX];
	size_t skip = program(path, argv, argc, name, sizeof(name));
	const struct lang *l = lang_of(family_of(name));

	return l && inline_code(l, argv + skip, argc - skip, code, sizeof(code)) == 0;
}

size_t cmdline_from_json(const json_t *argv, const char **out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < json_array_size(argv) && n < max; i++) {
		const char *s = json_string_value(json_array_get(argv, i));

		if (s)
			out[n++] = s;
	}
	return n;
}
