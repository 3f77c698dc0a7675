/*
 * Workloads for bench/bench_collectors.sh (which builds this with plain gcc). Each mode prints
 * the elapsed time of its timed part in nanoseconds (CLOCK_MONOTONIC) on stdout, one line, and
 * exits 0; anything else exits 1.
 *
 *   getppid_loop getppid N            N x syscall(SYS_getppid)
 *   getppid_loop openclose N          N x open("/dev/null") + close
 *   getppid_loop connect N            N x connect() of one UDP socket to 127.0.0.1:9, the
 *                                     cheapest traced syscall (one net.connect event each in a
 *                                     watched cgroup: bench/bench_pipeline.sh)
 *   getppid_loop connectfor MS        the same connects for MS milliseconds; prints how many
 *                                     it made instead of the time (bench/bench_memory.sh)
 *   getppid_loop forkexec N PROG      N x fork + execv(PROG) + waitpid, one after the other
 *   getppid_loop tarcx DIR NFILES     (untimed) DIR/src holds NFILES small files (made once);
 *                                     timed: tar cf DIR/fb.tar -C DIR/src . ; tar xf it into
 *                                     DIR/x; (untimed) both removed again
 *   getppid_loop cmd PROG [ARGS...]   one fork + execv(PROG, ARGS) + waitpid; must exit 0
 *   getppid_loop kill N               N x kill(getpid(), SIGURG), SIGURG ignored: each one fires
 *                                     the global signal_generate tracepoint
 *   getppid_loop rename N             N x prctl(PR_SET_NAME), alternating two names: each one
 *                                     fires the global task_rename tracepoint
 *
 * Plain fork (clone without namespace flags) rather than posix_spawn: the sandbox's seccomp filter
 * answers clone3 with ENOSYS, and the same code path must run on the host and in the sandbox.
 * Built by bench/bench_collectors.sh with plain gcc (no Makefile rule).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "getppid_loop: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* fork + execv + wait; returns the child's status (exit code, or 128+signal). */
static int run(char *const argv[])
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		die("fork");
	if (pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid");
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

static void must_run(char *const argv[])
{
	int rc = run(argv);

	if (rc != 0) {
		fprintf(stderr, "getppid_loop: %s exited %d\n", argv[0], rc);
		exit(1);
	}
}

static long parse_n(const char *s)
{
	char *end;
	long n = strtol(s, &end, 10);

	if (*s == '\0' || *end != '\0' || n <= 0) {
		fprintf(stderr, "getppid_loop: bad count '%s'\n", s);
		exit(1);
	}
	return n;
}

static void make_files(const char *src, long nfiles)
{
	char path[4096], buf[512];
	struct stat st;

	if (stat(src, &st) == 0)
		return;
	if (mkdir(src, 0755) < 0)
		die("mkdir src");
	for (long i = 0; i < nfiles; i++) {
		/* 30 directories of 100 files, each file 100-300 bytes. */
		snprintf(path, sizeof(path), "%.3000s/d%02ld", src, i % 30);
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			die("mkdir");
		snprintf(path, sizeof(path), "%.3000s/d%02ld/f%05ld.txt", src, i % 30, i);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			die("create");
		size_t len = 100 + (size_t)(i * 37 % 200);
		for (size_t k = 0; k < len; k++)
			buf[k] = (char)('a' + (i + k) % 26);
		if (write(fd, buf, len) != (ssize_t)len)
			die("write");
		close(fd);
	}
}

/* Each mode: the elapsed ns of its timed part, from its arguments (argv[2] on). */
static long long run_getppid(char **argv)
{
	long n = parse_n(argv[2]);
	long long t0 = now_ns();

	for (long i = 0; i < n; i++)
		syscall(SYS_getppid);
	return now_ns() - t0;
}

static long long run_openclose(char **argv)
{
	long n = parse_n(argv[2]);
	long long t0 = now_ns();

	for (long i = 0; i < n; i++) {
		int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (fd < 0)
			die("open /dev/null");
		close(fd);
	}
	return now_ns() - t0;
}

static long long run_connect(char **argv)
{
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons(9),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	long n = parse_n(argv[2]);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	long long t0, t1;

	if (fd < 0)
		die("socket");
	t0 = now_ns();
	for (long i = 0; i < n; i++)
		if (connect(fd, (struct sockaddr *)&to, sizeof(to)) < 0)
			die("connect 127.0.0.1:9");
	t1 = now_ns();
	close(fd);
	return t1 - t0;
}

static long long run_connectfor(char **argv)
{
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons(9),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	long long end = now_ns() + parse_n(argv[2]) * 1000000LL, n = 0;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		die("socket");
	do {
		for (int i = 0; i < 1024; i++, n++) /* the clock once per 1024 connects */
			if (connect(fd, (struct sockaddr *)&to, sizeof(to)) < 0)
				die("connect 127.0.0.1:9");
	} while (now_ns() < end);
	close(fd);
	return n;
}

static long long run_forkexec(char **argv)
{
	long n = parse_n(argv[2]);
	char *cargv[] = { argv[3], NULL };
	long long t0 = now_ns();

	for (long i = 0; i < n; i++)
		must_run(cargv);
	return now_ns() - t0;
}

static long long run_tarcx(char **argv)
{
	char src[4096], tarf[4096], x[4096];
	long long t0, t1;

	if (mkdir(argv[2], 0755) < 0 && errno != EEXIST)
		die("mkdir DIR");
	snprintf(src, sizeof(src), "%s/src", argv[2]);
	snprintf(tarf, sizeof(tarf), "%s/fb.tar", argv[2]);
	snprintf(x, sizeof(x), "%s/x", argv[2]);
	make_files(src, parse_n(argv[3]));
	char *rm[] = { "/bin/rm", "-rf", x, tarf, NULL };
	must_run(rm);
	if (mkdir(x, 0755) < 0)
		die("mkdir x");
	char *c[] = { "/bin/tar", "cf", tarf, "-C", src, ".", NULL };
	char *xx[] = { "/bin/tar", "xf", tarf, "-C", x, NULL };

	sync();
	t0 = now_ns();
	must_run(c);
	must_run(xx);
	t1 = now_ns();
	must_run(rm);
	return t1 - t0;
}

static long long run_cmd(char **argv)
{
	long long t0 = now_ns();

	must_run(argv + 2);
	return now_ns() - t0;
}

static long long run_kill(char **argv)
{
	long n = parse_n(argv[2]);
	long long t0;

	signal(SIGURG, SIG_IGN);
	t0 = now_ns();
	for (long i = 0; i < n; i++)
		if (kill(getpid(), SIGURG) < 0)
			die("kill");
	return now_ns() - t0;
}

static long long run_rename(char **argv)
{
	long n = parse_n(argv[2]);
	long long t0 = now_ns();

	for (long i = 0; i < n; i++)
		if (prctl(PR_SET_NAME, i & 1 ? "bench-a" : "bench-b", 0, 0, 0) < 0)
			die("prctl");
	return now_ns() - t0;
}

static const struct {
	const char *name;
	int argc; /* exactly this many arguments; 0: at least 3 */
	long long (*run)(char **argv);
} modes[] = {
	{ "getppid", 0, run_getppid },	 { "openclose", 0, run_openclose },
	{ "connect", 0, run_connect },	 { "connectfor", 3, run_connectfor },
	{ "forkexec", 4, run_forkexec }, { "tarcx", 4, run_tarcx },
	{ "cmd", 0, run_cmd },		 { "kill", 0, run_kill },
	{ "rename", 0, run_rename },
};

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr,
			"usage: getppid_loop getppid|openclose|connect N | forkexec N PROG | "
			"tarcx DIR NFILES | cmd PROG [ARGS...]\n");
		return 1;
	}
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (strcmp(argv[1], modes[i].name) != 0 || (modes[i].argc && argc != modes[i].argc))
			continue;
		printf("%lld\n", modes[i].run(argv));
		return 0;
	}
	fprintf(stderr, "getppid_loop: unknown mode or wrong arguments\n");
	return 1;
}
