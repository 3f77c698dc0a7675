/*
 * Launch latency of one tool call, side by side in one run (interleaved, so machine noise hits
 * every launcher alike): plain fork+exec of /bin/true, `firebreak exec` of /bin/true into an
 * existing sandbox (watched and unwatched), and `bwrap --unshare-all`. Then `firebreak create`
 * latency. Prints medians, p90 and the ratio to fork+exec.
 * Usage: bench_exec FIREBREAK_BIN RUNTIME_DIR WATCHED_SANDBOX UNWATCHED_SANDBOX POLICY [N]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Runs argv to completion with stdout/stderr to /dev/null; returns its wall time in ms. */
static double run(char *const argv[])
{
	double t0 = now_ms();
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "bench_exec: %s failed\n", argv[0]);
		exit(1);
	}
	return now_ms() - t0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, int n, double p)
{
	qsort(v, (size_t)n, sizeof(double), cmp);
	return v[(int)(p * (n - 1))];
}

int main(int argc, char **argv)
{
	if (argc < 6) {
		fprintf(stderr,
			"usage: bench_exec FIREBREAK RUNTIME_DIR WATCHED UNWATCHED POLICY [N]\n");
		return 2;
	}
	char *fb = argv[1], *rt = argv[2], *policy = argv[5];
	int n = argc > 6 ? atoi(argv[6]) : 200;
	char *plain[] = { "/bin/true", NULL };
	char *watched[] = { fb,	      "--runtime-dir", rt,   "exec",	  argv[3],
			    "--tool", "run",	       "--", "/bin/true", NULL };
	char *unwatched[] = { fb,	"--runtime-dir", rt,   "exec",	    argv[4],
			      "--tool", "run",		 "--", "/bin/true", NULL };
	char *bwrap[] = { "/usr/bin/bwrap", "--unshare-all", "--ro-bind", "/",	       "/", "--dev",
			  "/dev",	    "--proc",	     "/proc",	  "/bin/true", NULL };
	const char *names[] = { "fork+exec /bin/true", "firebreak exec (unwatched)",
				"firebreak exec (watched)", "bwrap --unshare-all" };
	char *const *cmds[] = { plain, unwatched, watched, bwrap };
	double *t[4], *create = malloc(sizeof(double) * (size_t)(n / 4 + 1));
	double base;

	for (int k = 0; k < 4; k++)
		t[k] = malloc(sizeof(double) * (size_t)n);
	for (int k = 0; k < 4; k++) /* warm-up: page cache, dentries */
		for (int i = 0; i < 5; i++)
			run(cmds[k]);
	for (int i = 0; i < n; i++)
		for (int k = 0; k < 4; k++)
			t[k][i] = run(cmds[k]);
	base = pct(t[0], n, 0.5);
	printf("launch latency of /bin/true, %d runs each, interleaved\n", n);
	for (int k = 0; k < 4; k++) {
		double med = pct(t[k], n, 0.5);

		printf("  %-28s median %6.3f ms  p90 %6.3f ms  ratio %5.2fx\n", names[k], med,
		       pct(t[k], n, 0.9), med / base);
	}
	for (int i = 0; i < n / 4; i++) {
		char *c[] = { fb,     "--runtime-dir", rt,  "create", "bench-create", "--policy",
			      policy, "--unwatched",   NULL };
		char *d[] = { fb, "--runtime-dir", rt, "destroy", "bench-create", NULL };

		create[i] = run(c);
		run(d);
	}
	printf("  %-28s median %6.3f ms  p90 %6.3f ms  (%d runs)\n", "firebreak create",
	       pct(create, n / 4, 0.5), pct(create, n / 4, 0.9), n / 4);
	return 0;
}
