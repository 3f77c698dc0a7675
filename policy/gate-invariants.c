/*
 * The built-in invariants: what no policy can allow except by naming the entry (a scope's
 * "wrappers" or "unsafe_allow"). Tables, default refuse, one line of reason per entry: the
 * wrappers, and for each program family the options, operands and subcommands it refuses. They
 * are judged before the scope's own rules, by the basename of argv[0] and of the resolved program
 * both, because multi-call binaries (busybox) act on argv[0] and a symlink (sh -> dash) hides the
 * real program behind another name.
 *
 * Where a program's option grammar is fully known (python) the scan follows it and stops where
 * the program's own arguments end; elsewhere it is conservative: every argument is examined, so a
 * script argument that merely looks like "-e" is refused too. A refusal too many is a policy fix;
 * one too few is an escape.
 */
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <strings.h>

#include "gate-internal.h"
#include "macro.h"

struct wrapper {
	const char *name; /* a basename pattern (fnmatch); also what "wrappers" names */
	const char *reason;
};

static const struct wrapper wrappers[] = {
	{ "sh", "a shell: runs any command" },
	{ "bash", "a shell: runs any command" },
	{ "rbash", "a shell: runs any command" },
	{ "dash", "a shell: runs any command" },
	{ "ash", "a shell: runs any command" },
	{ "zsh", "a shell: runs any command" },
	{ "ksh", "a shell: runs any command" },
	{ "ksh93", "a shell: runs any command" },
	{ "mksh", "a shell: runs any command" },
	{ "yash", "a shell: runs any command" },
	{ "posh", "a shell: runs any command" },
	{ "fish", "a shell: runs any command" },
	{ "csh", "a shell: runs any command" },
	{ "tcsh", "a shell: runs any command" },
	{ "pwsh", "a shell: runs any command" },
	{ "busybox", "multi-call: runs the applet (sh, wget, …) named by its first operand" },
	{ "toybox", "multi-call: runs the applet named by its first operand" },
	{ "env", "runs its operands as a command, with any environment" },
	{ "xargs", "runs a command built from its input" },
	{ "parallel", "runs commands built from its arguments and input" },
	{ "timeout", "runs its operands as a command" },
	{ "nice", "runs its operands as a command" },
	{ "ionice", "runs its operands as a command" },
	{ "nohup", "runs its operands as a command" },
	{ "stdbuf", "runs its operands as a command, with LD_PRELOAD set" },
	{ "setsid", "runs its operands as a command in a new session" },
	{ "time", "runs its operands as a command" },
	{ "watch", "runs its operands through sh -c, repeatedly" },
	{ "flock", "runs its operands (or -c's value through sh) as a command" },
	{ "script", "runs a shell, or -c's value through one" },
	{ "taskset", "runs its operands as a command" },
	{ "chrt", "runs its operands as a command" },
	{ "numactl", "runs its operands as a command" },
	{ "prlimit", "runs its operands as a command" },
	{ "setarch", "runs its operands as a command" },
	{ "linux32", "runs its operands as a command" },
	{ "linux64", "runs its operands as a command" },
	{ "cgexec", "runs its operands as a command" },
	{ "run-parts", "runs every program in a directory" },
	{ "dbus-run-session", "runs its operands as a command" },
	{ "sudo", "runs a command as another user" },
	{ "su", "runs a shell as another user" },
	{ "doas", "runs a command as another user" },
	{ "runuser", "runs a command as another user" },
	{ "pkexec", "runs a command as another user" },
	{ "sg", "runs a command with another group" },
	{ "newgrp", "runs a shell with another group" },
	{ "setpriv", "runs its operands with other privileges" },
	{ "capsh", "runs a shell with other capabilities" },
	{ "chroot", "runs a command under another root" },
	{ "unshare", "runs a command in new namespaces" },
	{ "nsenter", "runs a command in other namespaces" },
	{ "systemd-run", "runs a command as a transient unit outside the sandbox's cgroup" },
	{ "bwrap", "runs a command in a sandbox of its own making" },
	{ "firejail", "runs a command in a sandbox of its own making" },
	{ "fakeroot", "runs its operands as a command" },
	{ "proot", "runs a command under another root" },
	{ "strace", "runs (or attaches to) a program under ptrace" },
	{ "ltrace", "runs (or attaches to) a program under ptrace" },
	{ "gdb", "runs a program, and shell commands from its command language" },
	{ "valgrind", "runs its operands as a command" },
	{ "expect", "runs a Tcl script that spawns programs" },
	{ "awk", "awk programs run commands with system() and pipes" },
	{ "gawk", "awk programs run commands with system() and pipes" },
	{ "mawk", "awk programs run commands with system() and pipes" },
	{ "nawk", "awk programs run commands with system() and pipes" },
	{ "original-awk", "awk programs run commands with system() and pipes" },
	{ "sed", "GNU sed's e command and s///e flag run shell commands" },
	{ "ed", "runs !command lines of its script (read from stdin)" },
	{ "red", "runs !command lines of its script (read from stdin)" },
	{ "ex", "runs :! commands of its script (read from stdin)" },
	{ "vi", "runs :! commands of its script (read from stdin)" },
	{ "vim", "runs :! commands of its script (read from stdin)" },
	{ "nvim", "runs :! commands of its script (read from stdin)" },
	{ "make", "runs the recipes of a Makefile the agent can write, through the shell" },
	{ "ssh", "runs a command on another host, and ProxyCommand/LocalCommand locally" },
	{ "scp", "runs ssh, or the program -S names" },
	{ "sftp", "runs ssh, or the program -S or -D names" },
	{ "ld.so", "the dynamic loader runs any ELF file it is given" },
	{ "ld-linux*", "the dynamic loader runs any ELF file it is given" },
	{ "ld-*.so*", "the dynamic loader runs any ELF file it is given" },
};

/* How an entry of the option table is found in an argv. */
enum inv_kind {
	INV_SHORT,	 /* a letter anywhere in a single-dash bundle: "-c", "-Ic" */
	INV_LONG,	 /* a long option or any abbreviation of it, with or without "=value" */
	INV_WORD,	 /* a whole argument: find's "-exec" */
	INV_WORD_PREFIX, /* an argument that begins so: find's "-fprint0" */
	INV_OPERAND,	 /* an argument or an option's "=value" beginning so, case-insensitively */
	INV_STDIN,	 /* "-" in place of a program file: the program is read from stdin */
	INV_SUBCOMMAND,	 /* git: the subcommand `what` (where NULL), or operand `what` of `where` */
};

/* An entry of a family's table (struct family below): the family is the first word of its name. */
struct unsafe {
	const char *name; /* what "unsafe_allow" names and refusals quote */
	enum inv_kind kind;
	const char *what;
	const char *where; /* git: NULL anywhere, "" before the subcommand, else subcommands */
	const char *rule;
	const char *reason;
};

#define CODE GATE_RULE_INLINE_CODE
#define OPT GATE_RULE_UNSAFE_OPTION
#define OPD GATE_RULE_UNSAFE_OPERAND
#define WRAP GATE_RULE_WRAPPER

/* Each family's entries, checked in this order (the first hit is the refusal). */
static const struct unsafe python_unsafe[] = {
	{ "python -c", INV_SHORT, "c", NULL, CODE, "runs its value as Python code" },
	{ "python -i", INV_SHORT, "i", NULL, CODE, "then reads Python code from stdin" },
	{ "python -", INV_STDIN, "-", NULL, CODE, "reads the program from stdin" },
};

static const struct unsafe perl_unsafe[] = {
	{ "perl -e", INV_SHORT, "e", NULL, CODE, "runs its value as Perl code" },
	{ "perl -E", INV_SHORT, "E", NULL, CODE, "runs its value as Perl code" },
	{ "perl -M", INV_SHORT, "M", NULL, CODE, "'use's its value, which can hold code" },
	{ "perl -m", INV_SHORT, "m", NULL, CODE, "'use's its value, which can hold code" },
	{ "perl -", INV_STDIN, "-", NULL, CODE, "reads the program from stdin" },
};

static const struct unsafe ruby_unsafe[] = {
	{ "ruby -e", INV_SHORT, "e", NULL, CODE, "runs its value as Ruby code" },
	{ "ruby -", INV_STDIN, "-", NULL, CODE, "reads the program from stdin" },
};

static const struct unsafe node_unsafe[] = {
	{ "node -e", INV_SHORT, "e", NULL, CODE, "runs its value as JavaScript" },
	{ "node --eval", INV_LONG, "--eval", NULL, CODE, "runs its value as JavaScript" },
	{ "node -p", INV_SHORT, "p", NULL, CODE, "runs its value as JavaScript" },
	{ "node --print", INV_LONG, "--print", NULL, CODE, "runs its value as JavaScript" },
	{ "node -i", INV_SHORT, "i", NULL, CODE, "reads JavaScript from stdin" },
	{ "node --interactive", INV_LONG, "--interactive", NULL, CODE,
	  "reads JavaScript from stdin" },
	{ "node -", INV_STDIN, "-", NULL, CODE, "reads the program from stdin" },
};

static const struct unsafe php_unsafe[] = {
	{ "php -r", INV_SHORT, "r", NULL, CODE, "runs its value as PHP code" },
	{ "php -B", INV_SHORT, "B", NULL, CODE, "runs its value as PHP code" },
	{ "php -R", INV_SHORT, "R", NULL, CODE, "runs its value as PHP code" },
	{ "php -E", INV_SHORT, "E", NULL, CODE, "runs its value as PHP code" },
	{ "php -a", INV_SHORT, "a", NULL, CODE, "reads PHP code from stdin" },
	{ "php -d", INV_SHORT, "d", NULL, CODE,
	  "sets ini values such as auto_prepend_file, which runs a file first" },
	{ "php -", INV_STDIN, "-", NULL, CODE, "reads the program from stdin" },
};

static const struct unsafe lua_unsafe[] = {
	{ "lua -e", INV_SHORT, "e", NULL, CODE, "runs its value as Lua code" },
	{ "lua -i", INV_SHORT, "i", NULL, CODE, "reads Lua code from stdin" },
	{ "lua -", INV_STDIN, "-", NULL, CODE, "reads the program from stdin" },
};

static const struct unsafe find_unsafe[] = {
	{ "find -exec", INV_WORD, "-exec", NULL, OPT, "runs a command per file" },
	{ "find -execdir", INV_WORD, "-execdir", NULL, OPT, "runs a command per file" },
	{ "find -ok", INV_WORD, "-ok", NULL, OPT, "runs a command per file" },
	{ "find -okdir", INV_WORD, "-okdir", NULL, OPT, "runs a command per file" },
	{ "find -delete", INV_WORD, "-delete", NULL, OPT, "deletes files: find reads" },
	{ "find -fprint", INV_WORD_PREFIX, "-fprint", NULL, OPT,
	  "writes a file the caller names (-fprint, -fprint0, -fprintf)" },
	{ "find -fls", INV_WORD, "-fls", NULL, OPT, "writes a file the caller names" },
};

static const struct unsafe git_unsafe[] = {
	{ "git -c", INV_SHORT, "c", "", OPT,
	  "sets any config, e.g. core.sshCommand, core.pager, core.fsmonitor: programs git runs" },
	{ "git --config-env", INV_LONG, "--config-env", "", OPT,
	  "sets any config from the environment, as -c does" },
	{ "git --exec-path", INV_LONG, "--exec-path", "", OPT,
	  "runs git's helper programs from a directory the caller names" },
	{ "git clone -c", INV_SHORT, "c", "clone", OPT,
	  "sets config in the new repository (core.sshCommand…) before fetching" },
	{ "git clone --config", INV_LONG, "--config", "clone", OPT,
	  "sets config in the new repository (core.sshCommand…) before fetching" },
	{ "git --upload-pack", INV_LONG, "--upload-pack", "clone fetch pull ls-remote", OPT,
	  "names the program run as the other end of a fetch" },
	{ "git -u", INV_SHORT, "u", "clone fetch pull ls-remote", OPT,
	  "is --upload-pack: names the program run as the other end of a fetch" },
	{ "git --receive-pack", INV_LONG, "--receive-pack", "push send-pack", OPT,
	  "names the program run as the other end of a push" },
	{ "git --exec", INV_LONG, "--exec", "push send-pack archive", OPT,
	  "names the program run as the other end" },
	{ "git rebase --exec", INV_LONG, "--exec", "rebase", OPT,
	  "runs a shell command after each commit" },
	{ "git rebase -x", INV_SHORT, "x", "rebase", OPT,
	  "is --exec: runs a shell command after each commit" },
	{ "git difftool --extcmd", INV_LONG, "--extcmd", "difftool", OPT,
	  "runs the command it names" },
	{ "git difftool -x", INV_SHORT, "x", "difftool", OPT,
	  "is --extcmd: runs the command it names" },
	{ "git grep --open-files-in-pager", INV_LONG, "--open-files-in-pager", "grep", OPT,
	  "runs the pager it names" },
	{ "git grep -O", INV_SHORT, "O", "grep", OPT,
	  "is --open-files-in-pager: runs the pager it names" },
	{ "git ext::", INV_OPERAND, "ext::", NULL, OPD,
	  "the ext transport runs a shell command to reach the 'remote'" },
	{ "git fd::", INV_OPERAND, "fd::", NULL, OPD,
	  "the fd transport talks over descriptors the caller picked" },
	{ "git bisect run", INV_SUBCOMMAND, "run", "bisect", WRAP,
	  "runs its operands as a command" },
	{ "git submodule foreach", INV_SUBCOMMAND, "foreach", "submodule", WRAP,
	  "runs a shell command in each submodule" },
	{ "git filter-branch", INV_SUBCOMMAND, "filter-branch", NULL, WRAP,
	  "runs shell filters given as arguments" },
};

static const struct unsafe tar_unsafe[] = {
	{ "tar -I", INV_SHORT, "I", NULL, OPT,
	  "is --use-compress-program: runs the program it names" },
	{ "tar --use-compress-program", INV_LONG, "--use-compress-program", NULL, OPT,
	  "runs the program it names" },
	{ "tar --to-command", INV_LONG, "--to-command", NULL, OPT,
	  "pipes each file into a shell command" },
	{ "tar --checkpoint-action", INV_LONG, "--checkpoint-action", NULL, OPT,
	  "can run a shell command (exec=) at each checkpoint" },
	{ "tar -F", INV_SHORT, "F", NULL, OPT,
	  "is --info-script: runs a script at each volume's end" },
	{ "tar --info-script", INV_LONG, "--info-script", NULL, OPT,
	  "runs a script at each volume's end" },
	{ "tar --new-volume-script", INV_LONG, "--new-volume-script", NULL, OPT,
	  "runs a script at each volume's end" },
	{ "tar --rsh-command", INV_LONG, "--rsh-command", NULL, OPT,
	  "names the remote shell run for host:file archives" },
	{ "tar --rmt-command", INV_LONG, "--rmt-command", NULL, OPT,
	  "names the remote tape program run" },
};

static const struct unsafe rsync_unsafe[] = {
	{ "rsync -e", INV_SHORT, "e", NULL, OPT, "is --rsh: names the remote shell run" },
	{ "rsync --rsh", INV_LONG, "--rsh", NULL, OPT, "names the remote shell run" },
	{ "rsync --rsync-path", INV_LONG, "--rsync-path", NULL, OPT,
	  "names the program run at the other end" },
};

static const struct unsafe ssh_unsafe[] = {
	{ "ssh -o", INV_SHORT, "o", NULL, OPT,
	  "sets any option, e.g. ProxyCommand or LocalCommand: local shell commands" },
	{ "ssh -F", INV_SHORT, "F", NULL, OPT, "reads a config file, which can hold them" },
};

static const struct unsafe scp_unsafe[] = {
	{ "scp -o", INV_SHORT, "o", NULL, OPT, "sets any ssh option, e.g. ProxyCommand" },
	{ "scp -F", INV_SHORT, "F", NULL, OPT, "reads an ssh config file" },
	{ "scp -S", INV_SHORT, "S", NULL, OPT, "names the program run in place of ssh" },
};

static const struct unsafe sftp_unsafe[] = {
	{ "sftp -o", INV_SHORT, "o", NULL, OPT, "sets any ssh option, e.g. ProxyCommand" },
	{ "sftp -F", INV_SHORT, "F", NULL, OPT, "reads an ssh config file" },
	{ "sftp -S", INV_SHORT, "S", NULL, OPT, "names the program run in place of ssh" },
	{ "sftp -D", INV_SHORT, "D", NULL, OPT, "names a local sftp server program to run" },
};

static const struct unsafe curl_unsafe[] = {
	{ "curl -K", INV_SHORT, "K", NULL, OPT,
	  "is --config: reads more options from a file, past the gate" },
	{ "curl --config", INV_LONG, "--config", NULL, OPT,
	  "reads more options from a file, past the gate" },
};

/* How the gate reads one program's options, for the table above. */
struct family {
	const char *name;
	const char *patterns[5];     /* basenames, fnmatch */
	const char *rest_letters;    /* short options whose value is the rest of the bundle */
	const char *long_values[5];  /* long options with a separate value (exact, git global) */
	int exact;		     /* the grammar is known: a value may be the next argument,
				      * and the options end at the first operand */
	const char *stop_letters;    /* exact: after this option, the rest is not ours (-m) */
	int words;		     /* single-dash words, no bundles (find) */
	int subcommands;	     /* git: global options, a subcommand, its options */
	int oldstyle;		     /* tar: a first argument without '-' is a bundle */
	const struct unsafe *unsafe; /* what the invariants refuse in its arguments */
	size_t n_unsafe;
};

#define UNSAFE(fam) fam##_unsafe, ARRAY_SIZE(fam##_unsafe)

static const struct family families[] = {
	{ "python",
	  { "python", "python[0-9]*", "pypy", "pypy[0-9]*" },
	  "cmWX",
	  { "--check-hash-based-pycs" },
	  1,
	  "m",
	  0,
	  0,
	  0,
	  UNSAFE(python) },
	/* perl's -l, -0, -C and -d take only digits or ':': "-lne" is -l -n -e. */
	{ "perl", { "perl", "perl5*" }, "IFx", { 0 }, 0, "", 0, 0, 0, UNSAFE(perl) },
	{ "ruby", { "ruby", "ruby[0-9]*" }, "CEFIKrxTW0", { 0 }, 0, "", 0, 0, 0, UNSAFE(ruby) },
	{ "node", { "node", "nodejs" }, "", { 0 }, 0, "", 0, 0, 0, UNSAFE(node) },
	{ "php", { "php", "php[0-9]*" }, "cfzStF", { 0 }, 0, "", 0, 0, 0, UNSAFE(php) },
	{ "lua", { "lua", "lua[0-9]*", "luajit" }, "l", { 0 }, 0, "", 0, 0, 0, UNSAFE(lua) },
	{ "find", { "find" }, "", { 0 }, 0, "", 1, 0, 0, UNSAFE(find) },
	{ "git",
	  { "git" },
	  "Cc",
	  { "--git-dir", "--work-tree", "--namespace", "--super-prefix" },
	  0,
	  "",
	  0,
	  1,
	  0,
	  UNSAFE(git) },
	{ "tar", { "tar", "gtar", "bsdtar" }, "fCTbgHKLNVX", { 0 }, 0, "", 0, 0, 1, UNSAFE(tar) },
	{ "rsync", { "rsync" }, "", { 0 }, 0, "", 0, 0, 0, UNSAFE(rsync) },
	{ "ssh", { "ssh" }, "BbcDEeIiJLlmOpQRWw", { 0 }, 0, "", 0, 0, 0, UNSAFE(ssh) },
	{ "scp", { "scp" }, "cDiJlP", { 0 }, 0, "", 0, 0, 0, UNSAFE(scp) },
	{ "sftp", { "sftp" }, "BbciJlPRs", { 0 }, 0, "", 0, 0, 0, UNSAFE(sftp) },
	{ "curl", { "curl" }, "AbcCdDeEFHmoPQrTtuUwxXYyz", { 0 }, 0, "", 0, 0, 0, UNSAFE(curl) },
};

int gate_wrapper_known(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(wrappers); i++)
		if (strcmp(wrappers[i].name, name) == 0)
			return 1;
	return 0;
}

int gate_unsafe_known(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(families); i++)
		for (size_t j = 0; j < families[i].n_unsafe; j++)
			if (strcmp(families[i].unsafe[j].name, name) == 0)
				return 1;
	return 0;
}

static int named(char *const *list, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(list[i], name) == 0)
			return 1;
	return 0;
}

static const struct wrapper *find_wrapper(const char *base)
{
	for (size_t i = 0; i < ARRAY_SIZE(wrappers); i++)
		if (fnmatch(wrappers[i].name, base, 0) == 0)
			return &wrappers[i];
	return NULL;
}

static const struct family *find_family(const char *base)
{
	for (size_t i = 0; i < ARRAY_SIZE(families); i++)
		for (size_t j = 0; j < ARRAY_SIZE(families[i].patterns) && families[i].patterns[j];
		     j++)
			if (fnmatch(families[i].patterns[j], base, 0) == 0)
				return &families[i];
	return NULL;
}

/* Whether an entry scoped to `where` applies with subcommand sub (NULL: none seen yet). */
static int applies(const struct unsafe *u, const char *sub)
{
	size_t n;

	if (!u->where)
		return 1;
	if (!u->where[0])
		return sub == NULL;
	if (!sub)
		return 0;
	n = strlen(sub);
	for (const char *w = u->where; *w;) {
		size_t k = strcspn(w, " ");

		if (k == n && strncmp(w, sub, n) == 0)
			return 1;
		w += k;
		w += *w == ' ';
	}
	return 0;
}

struct scan {
	const struct family *fam;
	const struct policy_tool *tool;
	char *const *argv;
	struct gate_decision *d;
	const char *sub;
	int after_dd;	   /* "--" seen: only operands follow */
	int next_is_value; /* the argument before took the next one as its value */
};

/* What an argument means for the scan. */
enum scan_step {
	SCAN_NEXT,    /* go on with the next argument */
	SCAN_REFUSED, /* refused: d says why */
	SCAN_DONE,    /* the program's own arguments start: nothing after is an option of it */
};

static int refuse(struct scan *s, const struct unsafe *u, int arg)
{
	char q[GATE_QUOTE_SIZE];

	return gate_refuse(s->d, u->rule, arg,
			   "argument %d %s is %s (%s; a scope may allow it in \"unsafe_allow\")",
			   arg, gate_quote(s->argv[arg], q, sizeof(q)), u->name, u->reason);
}

/* Checks entries of kind in the family against what; returns 1 with a refusal. */
static int check(struct scan *s, enum inv_kind kind, const char *what, int arg)
{
	for (size_t i = 0; i < s->fam->n_unsafe; i++) {
		const struct unsafe *u = &s->fam->unsafe[i];
		int hit;

		if (u->kind != kind)
			continue;
		switch (kind) {
		case INV_SHORT:
			hit = what[0] == u->what[0] && applies(u, s->sub);
			break;
		case INV_LONG: {
			/* Any abbreviation: getopt_long and git's parse-options take a unique
			 * prefix, and a prefix that is not unique is refused by the program. */
			size_t n = strcspn(what, "=");

			hit = n > 2 && strncmp(u->what, what, n) == 0 && applies(u, s->sub);
			break;
		}
		case INV_WORD:
			hit = strcmp(what, u->what) == 0;
			break;
		case INV_WORD_PREFIX:
			hit = strncmp(what, u->what, strlen(u->what)) == 0;
			break;
		case INV_OPERAND: {
			const char *eq = strchr(what, '=');
			size_t n = strlen(u->what);

			hit = strncasecmp(what, u->what, n) == 0 ||
			      (eq && strncasecmp(eq + 1, u->what, n) == 0);
			break;
		}
		case INV_STDIN:
			hit = 1;
			break;
		case INV_SUBCOMMAND:
			hit = u->where ? (s->sub && strcmp(s->sub, u->where) == 0 &&
					  strcmp(what, u->what) == 0)
				       : strcmp(what, u->what) == 0;
			break;
		default:
			hit = 0;
		}
		if (hit && !named(s->tool->unsafe_allow, s->tool->n_unsafe_allow, u->name))
			return refuse(s, u, arg);
	}
	return 0;
}

static int in_list(const char *const *list, size_t n, const char *name)
{
	for (size_t i = 0; i < n && list[i]; i++)
		if (strcmp(list[i], name) == 0)
			return 1;
	return 0;
}

/* After "--": operands only, though for git the first one is still the subcommand. */
static enum scan_step scan_after_dd(struct scan *s, const char *a, int i)
{
	if (s->fam->exact)
		return SCAN_DONE;
	if (s->fam->subcommands && !s->sub) {
		s->sub = a;
		if (check(s, INV_SUBCOMMAND, a, i))
			return SCAN_REFUSED;
	}
	return SCAN_NEXT;
}

/* "--name" or "--name=value"; a global option of git's, or an exact grammar's, may take the
 * next argument as its value. */
static enum scan_step scan_long(struct scan *s, const char *a, int i)
{
	const struct family *fam = s->fam;
	int global = fam->subcommands && !s->sub;

	if (check(s, INV_LONG, a, i))
		return SCAN_REFUSED;
	if ((fam->exact || global) && !strchr(a, '=') &&
	    in_list(fam->long_values, ARRAY_SIZE(fam->long_values), a))
		s->next_is_value = 1;
	return SCAN_NEXT;
}

/* "-x", a bundle "-abc", or (find) a single-dash word. */
static enum scan_step scan_short(struct scan *s, const char *a, int i)
{
	const struct family *fam = s->fam;
	int global = fam->subcommands && !s->sub;
	const char *rest = fam->subcommands && s->sub ? "" : fam->rest_letters;

	if (check(s, INV_WORD, a, i) || check(s, INV_WORD_PREFIX, a, i))
		return SCAN_REFUSED;
	if (fam->words)
		return SCAN_NEXT;
	for (size_t j = 1; a[j]; j++) {
		if (check(s, INV_SHORT, a + j, i))
			return SCAN_REFUSED;
		if (fam->exact && strchr(fam->stop_letters, a[j]))
			return SCAN_DONE;
		if (strchr(rest, a[j])) {
			/* The rest of the bundle is its value, or else the next argument. */
			s->next_is_value = !a[j + 1] && (fam->exact || global);
			break;
		}
	}
	return SCAN_NEXT;
}

/* An operand: tar's old-style first bundle, git's subcommand, or an exact grammar's end. */
static enum scan_step scan_operand(struct scan *s, const char *a, int i)
{
	const struct family *fam = s->fam;

	if (fam->oldstyle && i == 1) {
		for (size_t j = 0; a[j]; j++)
			if (check(s, INV_SHORT, a + j, i))
				return SCAN_REFUSED;
		return SCAN_NEXT;
	}
	if (fam->subcommands) {
		if (!s->sub)
			s->sub = a;
		return check(s, INV_SUBCOMMAND, a, i) ? SCAN_REFUSED : SCAN_NEXT;
	}
	return fam->exact ? SCAN_DONE : SCAN_NEXT;
}

static enum scan_step scan_arg(struct scan *s, int i)
{
	const char *a = s->argv[i];

	if (check(s, INV_OPERAND, a, i))
		return SCAN_REFUSED;
	if (s->next_is_value) {
		s->next_is_value = 0;
		return SCAN_NEXT;
	}
	if (s->after_dd)
		return scan_after_dd(s, a, i);
	if (strcmp(a, "--") == 0) {
		s->after_dd = 1;
		return SCAN_NEXT;
	}
	if (strcmp(a, "-") == 0) {
		if (check(s, INV_STDIN, a, i))
			return SCAN_REFUSED;
		return s->fam->exact ? SCAN_DONE : SCAN_NEXT;
	}
	if (a[0] == '-' && a[1] == '-')
		return scan_long(s, a, i);
	if (a[0] == '-')
		return scan_short(s, a, i);
	return scan_operand(s, a, i);
}

/* Reads argv as fam's program would, refusing the first unsafe entry found. */
static int scan_family(struct scan *s, size_t argc)
{
	for (size_t i = 1; i < argc; i++) {
		enum scan_step step = scan_arg(s, (int)i);

		if (step != SCAN_NEXT)
			return step == SCAN_REFUSED;
	}
	return 0;
}

static int check_wrapper(const struct policy_tool *t, char *const argv[], const char *base,
			 const char *via, struct gate_decision *d)
{
	const struct wrapper *w = find_wrapper(base);
	char q[GATE_QUOTE_SIZE], q2[GATE_QUOTE_SIZE];

	if (!w || named(t->wrappers, t->n_wrappers, w->name))
		return 0;
	if (via)
		return gate_refuse(d, GATE_RULE_WRAPPER, 0,
				   "argv[0] %s resolves to %s, which is %s (%s; a scope may allow "
				   "it in \"wrappers\")",
				   gate_quote(argv[0], q, sizeof(q)),
				   gate_quote(via, q2, sizeof(q2)), w->name, w->reason);
	return gate_refuse(d, GATE_RULE_WRAPPER, 0,
			   "argv[0] %s is %s (%s; a scope may allow it in \"wrappers\")",
			   gate_quote(argv[0], q, sizeof(q)), w->name, w->reason);
}

int gate_check_invariants(const struct policy_tool *t, char *const argv[], size_t argc,
			  const char *resolved, struct gate_decision *d)
{
	const char *names[2] = { gate_basename(argv[0]),
				 resolved ? gate_basename(resolved) : NULL };
	const struct family *done = NULL;

	if (check_wrapper(t, argv, names[0], NULL, d) ||
	    (names[1] && check_wrapper(t, argv, names[1], resolved, d)))
		return 1;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		struct scan s = { .tool = t, .argv = argv, .d = d };

		if (!names[i] || !(s.fam = find_family(names[i])) || s.fam == done)
			continue;
		done = s.fam;
		if (scan_family(&s, argc))
			return 1;
	}
	return 0;
}
