/*
 * Lures: files the enforcer plants in every sandbox where an attacker looks, and that no honest
 * tool call opens. The enforcer creates them (enforcer/lures.c), the monitor watches them
 * (collectors/lure/), the detectors judge what touched them: both halves read this one table.
 *
 * - a decoy is a credential-shaped file carrying the sandbox's marker; opening it is a finding,
 *   and the marker seen leaving (a DNS name, an argv) is exfiltration;
 * - a tripwire stands where a kernel tunable, a cgroup control file, a device node, the
 *   sandbox's init's /proc entries or a system account or secret file would be.
 *   It is a plain file the sandbox's uid may open, so the open reaches the monitor, which refuses
 *   it (EPERM) and records what was tried: the kernel's own refusal of the real file (a
 *   read-only mount, permissions) happens before any hook this kernel offers could see it.
 */
#ifndef FB_LURES_H
#define FB_LURES_H

#include <stddef.h>

enum lure_kind {
	LURE_DECOY,   /* credential-shaped; reads allowed and recorded */
	LURE_KERNEL,  /* a kernel tunable: writes refused, reads allowed */
	LURE_CGROUP,  /* a cgroup control file: writes refused, reads allowed */
	LURE_DEVICE,  /* a device node: every open refused */
	LURE_PROCESS, /* the sandbox's init's environment, memory, namespaces: every open refused */
	LURE_SYSTEM,  /* an account file (/etc/passwd): writes refused, reads allowed, unrecorded */
	LURE_SECRET,  /* a secret only root reads (/etc/shadow, sudoers): every open refused */
};

struct lure {
	const char *path; /* inside the sandbox, absolute */
	enum lure_kind kind;
};

/* The sandbox's home, where the decoys are (HOME of every call). */
#define LURE_HOME "/home/agent"

/* The marker: LURE_MARKER_LEN lower-case hex characters, unique to one sandbox. */
#define LURE_MARKER_LEN 20

extern const struct lure lures[];
extern const size_t n_lures;

/* "decoy", "kernel", "cgroup", "device", "process", "system", "secret". */
const char *lure_kind_name(enum lure_kind k);

/* Whether a tripwire of kind k refuses a read-only open too (else only writes). */
int lure_refuses_reads(enum lure_kind k);

/* Whether a let-through read of kind k is recorded: not for account files, which every `ls -l`
 * and `id` reads. */
int lure_records_reads(enum lure_kind k);

/*
 * Whether lure l is planted only where the sandbox's tree already has the file (a kernel's
 * tunable, init's entries in /proc, a host's file in the read-only /etc); the others are made
 * where absent (in the sandbox's own /dev and /sys).
 */
int lure_where_present(const struct lure *l);

/*
 * Whether the sandbox's init holds lure l open (O_PATH) for the monitor to reach through
 * /proc/INIT/fd: /proc/sys/net resolves by the network namespace of whoever looks it up, so the
 * monitor's lookup through /proc/INIT/root finds its own namespace's tunable, not the tripwire.
 */
int lure_held_by_init(const struct lure *l);

/* The lure at path (inside the sandbox), or NULL. */
const struct lure *lure_find(const char *path);

/* Whether marker is LURE_MARKER_LEN lower-case hex characters. */
int lure_marker_valid(const char *marker);

/*
 * The text of decoy path for marker into buf: credential-shaped, each secret-looking value made
 * from the marker so that any copy of it carries the marker. Returns its length, or -ENOSPC.
 */
int lure_decoy_text(const char *path, const char *marker, char *buf, size_t size);

/*
 * A decoy value for environment variable name (sandbox.decoy_env in the policy), shaped by the
 * name (an AWS key id, a GitHub token...), carrying the whole marker. Its length, or -ENOSPC.
 */
int lure_decoy_env_text(const char *name, const char *marker, char *buf, size_t size);

/*
 * The decoy of the policy's credential name (given in variable env, or NULL) for marker: shaped
 * by env like a decoy_env value, then the marker, then 16 hex digits of a hash of name and
 * marker, so two credentials of a sandbox have different decoys and every copy carries the
 * marker. Its length, or -ENOSPC.
 */
int lure_credential_decoy(const char *name, const char *env, const char *marker, char *buf,
			  size_t size);

#endif
