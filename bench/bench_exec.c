/*
 * Launch latency of one tool call, side by side in one run (interleaved, so machine noise hits
 * every launcher alike): plain fork+exec of /bin/true; a harness asking the sandbox's exec
 * launcher over its socket (launcher-wire.h), watched and unwatched; `firebreak exec` (the same
 * plus starting the CLI); `unshare` and `bwrap --unshare-all`. Then the same spaced 100 ms apart,
 * as an agent's tool calls come (an idle machine makes joining a cgroup slow), and `firebreak
 * create` latency. Prints median, p90, p99 and the ratio to fork+exec of each.
 * Usage: bench_exec FIREBREAK_BIN RUNTIME_DIR WATCHED_SANDBOX UNWATCHED_SANDBOX POLICY [N]
 */
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int null_fd(void)
{
	static int fd = -1;

	if (fd < 0)
		fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	return fd;
}

/* Runs argv to completion with stdout/stderr to /dev/null; returns its wall time in ms. */
static double run(char *const argv[])
{
	double t0 = now_ms();
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		dup2(null_fd(), 1);
		dup2(null_fd(), 2);
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

/* A harness's tool call over the launcher's socket: connect, ask, wait for the exit. */
static double ask(const char *sock)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *req = "{\"tool\":\"run\",\"argv\":[\"/bin/true\"],\"env\":[]}";
	int fds[3] = { null_fd(), null_fd(), null_fd() };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(fds))];
	} cm;
	struct iovec iov = { .iov_base = (void *)req, .iov_len = strlen(req) };
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = cm.buf,
			      .msg_controllen = sizeof(cm.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	double t0 = now_ms();
	char answer[4096];
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || sendmsg(fd, &msg, 0) < 0) {
		perror("bench_exec: launcher");
		exit(1);
	}
	for (;;) {
		ssize_t n = recv(fd, answer, sizeof(answer) - 1, 0);
		json_t *a;

		if (n <= 0) {
			fprintf(stderr, "bench_exec: the launcher hung up\n");
			exit(1);
		}
		answer[n] = '\0';
		a = json_loads(answer, 0, NULL);
		if (json_object_get(a, "exit")) {
			if (json_integer_value(json_object_get(a, "exit")) != 0) {
				fprintf(stderr, "bench_exec: the call failed: %s\n", answer);
				exit(1);
			}
			json_decref(a);
			break;
		}
		if (json_object_get(a, "error")) {
			fprintf(stderr, "bench_exec: %s\n", answer);
			exit(1);
		}
		json_decref(a);
	}
	close(fd);
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
	return v[(int)(p * (n - 1) + 0.5)];
}

enum { PLAIN, ASK_WATCHED, ASK_UNWATCHED, CLI_WATCHED, CLI_UNWATCHED, UNSHARE, BWRAP, KINDS };

static const char *const names[KINDS] = {
	"fork+exec /bin/true",	    "launcher socket (watched)",  "launcher socket (unwatched)",
	"firebreak exec (watched)", "firebreak exec (unwatched)", "unshare -Urnpf --mount-proc",
	"bwrap --unshare-all",
};

struct kinds {
	char *const *cmd[KINDS];
	char sock[2][512];
};

static double one(const struct kinds *k, int kind)
{
	if (kind == ASK_WATCHED || kind == ASK_UNWATCHED)
		return ask(k->sock[kind - ASK_WATCHED]);
	return run(k->cmd[kind]);
}

/* Runs each kind n times, interleaved, sleeping gap_ms between calls; prints one table. */
static void measure(const struct kinds *k, const int *kinds, int nk, int n, int gap_ms,
		    const char *title)
{
	double *t[KINDS], base, base99;

	for (int j = 0; j < nk; j++)
		t[j] = malloc(sizeof(double) * (size_t)n);
	for (int j = 0; j < nk; j++) /* warm-up: page cache, dentries */
		for (int i = 0; i < 5; i++)
			one(k, kinds[j]);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < nk; j++) {
			if (gap_ms)
				usleep((useconds_t)gap_ms * 1000);
			t[j][i] = one(k, kinds[j]);
		}
	base = pct(t[0], n, 0.5);
	base99 = pct(t[0], n, 0.99);
	printf("%s, %d runs each, interleaved\n", title, n);
	for (int j = 0; j < nk; j++) {
		double med = pct(t[j], n, 0.5), p99 = pct(t[j], n, 0.99);

		printf("  %-30s median %7.3f ms  p90 %7.3f ms  p99 %7.3f ms  ratio %5.2fx  p99 "
		       "ratio %5.2fx\n",
		       names[kinds[j]], med, pct(t[j], n, 0.9), p99, med / base, p99 / base99);
		free(t[j]);
	}
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
	char *unshare[] = { "/usr/bin/unshare", "-Urnpf", "--mount-proc", "/bin/true", NULL };
	char *bwrap[] = { "/usr/bin/bwrap", "--unshare-all", "--ro-bind", "/",	       "/", "--dev",
			  "/dev",	    "--proc",	     "/proc",	  "/bin/true", NULL };
	struct kinds k = { .cmd = { [PLAIN] = plain,
				    [CLI_WATCHED] = watched,
				    [CLI_UNWATCHED] = unwatched,
				    [UNSHARE] = unshare,
				    [BWRAP] = bwrap } };
	const int back[] = { PLAIN,	    ASK_WATCHED, ASK_UNWATCHED, CLI_WATCHED,
			     CLI_UNWATCHED, UNSHARE,	 BWRAP };
	const int spaced[] = { PLAIN, ASK_WATCHED, CLI_WATCHED, UNSHARE };
	double *create = malloc(sizeof(double) * (size_t)(n / 4 + 1));

	snprintf(k.sock[0], sizeof(k.sock[0]), "%s/sandboxes/%s/launcher.sock", rt, argv[3]);
	snprintf(k.sock[1], sizeof(k.sock[1]), "%s/sandboxes/%s/launcher.sock", rt, argv[4]);
	measure(&k, back, (int)(sizeof(back) / sizeof(back[0])), n, 0,
		"launch latency of /bin/true, back to back");
	measure(&k, spaced, (int)(sizeof(spaced) / sizeof(spaced[0])), n / 2, 100,
		"launch latency of /bin/true, spaced 100 ms apart");
	for (int i = 0; i < n / 4; i++) {
		char *c[] = { fb,     "--runtime-dir", rt,  "create", "bench-create", "--policy",
			      policy, "--unwatched",   NULL };
		char *d[] = { fb, "--runtime-dir", rt, "destroy", "bench-create", NULL };

		create[i] = run(c);
		run(d);
	}
	printf("  %-30s median %7.3f ms  p90 %7.3f ms  (%d runs)\n", "firebreak create",
	       pct(create, n / 4, 0.5), pct(create, n / 4, 0.9), n / 4);
	return 0;
}
