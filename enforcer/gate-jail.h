/*
 * The jail of the gate's servers (the DNS gate's dnsmasq, the L7 proxy's squid): each runs as
 * pid 1 of a pid namespace of its own (it sees no host process), in a mount namespace whose root
 * is a small read-only tmpfs holding /usr and the /lib links read-only, /dev/null and
 * /dev/urandom, and the few files its caller names, nothing else (no /proc, /etc, /run, /var);
 * then lib/jail.c's drop (an unprivileged uid and gid, no capability in any set, no_new_privs,
 * not dumpable) and the server's own seccomp allowlist. It stays in the gate's network
 * namespace, where it binds low ports without privilege (the gate's ip_unprivileged_port_start
 * is 0).
 */
#ifndef FB_GATE_JAIL_H
#define FB_GATE_JAIL_H

#include <stddef.h>
#include <sys/types.h>

/* A host file or directory given to the jail at path jail (absolute, one level deep). */
struct gate_jail_file {
	const char *host;
	const char *jail;
	int dir;      /* a directory */
	int writable; /* else read-only; the file's own mode still decides */
	int exec;     /* mapped executable (a preloaded library); else noexec */
};

struct gate_jail {
	const char *who; /* "DNS jail": what errors are prefixed with */
	uid_t uid;	 /* and gid */
	const struct gate_jail_file *files;
	size_t n_files;
	char *const *envp;
	/* a private tmpfs /dev/shm of this size ("8m"), owned by uid; NULL: none */
	const char *shm_size;
	/* loads the server's filter, the last step before exec; 0 or -errno */
	int (*seccomp)(void);
};

/*
 * Starts argv (argv[0] an absolute path under /usr) in a new jail; the child dies with the
 * caller. Returns its pid (as the caller's pid namespace sees it), or -errno; a failure inside
 * the jail before exec makes the child exit 126.
 */
pid_t gate_jail_spawn(const struct gate_jail *j, char *const *argv);

/*
 * A jailed server's keeper: a child of the caller, in the gate's network namespace and a session
 * of its own, holding none of the caller's files, its stderr appended to log (root's), stdin and
 * stdout /dev/null. It runs start(arg) (on its own copy of *arg), which starts the server and
 * returns once it listens (0) or -errno, and goes on with serve(arg), which must not return.
 * gate_keeper_start returns once it is forked (0 or -errno), so the caller can go on with its
 * own work while the server starts; gate_keeper_wait waits for start's answer (-EIO if the
 * keeper died first; 0 if none was started).
 */
struct gate_keeper {
	pid_t pid;
	int ready_fd; /* start's answer comes here; -1 once read */
};

int gate_keeper_start(const char *log, int (*start)(void *arg), void (*serve)(void *arg), void *arg,
		      struct gate_keeper *k);
int gate_keeper_wait(struct gate_keeper *k);

/* The path of file (a shim or module a jail maps) in this binary's folder, into buf: 0, or
 * -errno if it is not there or not readable. */
int gate_jail_beside_exe(const char *file, char *buf, size_t size);

/* The system calls every jailed server makes (glibc's start, files, memory, time, sockets,
 * signals to its own children): allowed in the libseccomp filter ctx. 0 or -errno. */
int gate_jail_allow_common(void *ctx);

/* Socket families AF_INET, AF_INET6 and AF_UNIX, and fork (clone without namespace flags;
 * clone3 is ENOSYS so glibc falls back to it). 0 or -errno. */
int gate_jail_allow_inet_fork(void *ctx);

#endif
