/* What detect.c and the rules (rules-*.c) share: the per-sandbox state. */
#ifndef FB_DETECT_INTERNAL_H
#define FB_DETECT_INTERNAL_H

#include "detect.h"
#include "lures.h"
#include "policy/policy.h"

#define DETECT_TOOLS_MAX 128
#define DETECT_PROGRAMS_MAX 16	 /* per tool: its commands' programs and its children */
#define DETECT_STEPS_MAX 16	 /* running steps whose gate-approved program is remembered */
#define DETECT_DENIALS_MAX 64	 /* refused attempts remembered for the burst and scan rules */
#define DETECT_DNS_MAX 128	 /* DNS queries remembered for the tunnel rule */
#define DETECT_DNS_NAME_MAX 1024 /* a query's name as the DNS collector writes it */
#define DNS_LABEL_MAX 63	 /* a DNS label's length on the wire */
/* A label of this many characters or more, with more than this many bits of entropy per
 * character, looks random (encoded data): 50 random letters and digits have about 4.6, a
 * 32-digit hex hash at most 4, English words about 3.5. */
#define DETECT_DNS_RANDOM_MIN 24
#define DETECT_DNS_RANDOM_BITS 4.0
#define DETECT_DNS_SUSPICIOUS_MIN 3 /* suspicious queries under one parent within the window */
#define DETECT_DNS_SUSPICIOUS 1	    /* a query's label is long or random-looking */
#define DETECT_DNS_DATA 2	    /* a TXT or NULL query */

struct detect_dns_query {
	int64_t ts;
	int64_t id;
	uint64_t name, parent; /* hashes of the name and of its parent domain */
	unsigned flags;	       /* DETECT_DNS_* */
};
#define DETECT_IMAGES_MAX 32 /* execs remembered for loader-injection (who set a variable) */
#define DETECT_REFUSED_MAX 8 /* refused connects remembered for the reverse-shell rule */
#define DETECT_PIPES_MAX 16  /* pipeline ends remembered for exec.pipe-to-shell */
#define DETECT_FILE_STEPS 8  /* steps whose start and credential opens the file rules keep */
#define DETECT_CRED_DIRS 4   /* distinct directories of credential opens kept per step */

/*
 * The L7 proxy's flows (rules-http-flow.c). Upload volume: each tool's bytes sent in slices of a
 * sixteenth of the window, so a window's sum costs a fixed 16 slots however many requests it
 * holds. Beacons: a fixed table of (tool, host) keys, each with its last requests' start times;
 * the least recently seen key goes when a new one needs its slot.
 */
#define DETECT_UPLOAD_SLICES 16
#define DETECT_BEACON_KEYS 32
#define DETECT_BEACON_TIMES POLICY_BEACON_COUNT_MAX

struct detect_upload {
	int64_t slice[DETECT_UPLOAD_SLICES]; /* which slice (ts / width) each slot holds */
	uint64_t bytes[DETECT_UPLOAD_SLICES];
	int64_t quiet_until; /* reported once per window */
	struct {
		int64_t ts, id;
	} last[DETECT_IDS_MAX]; /* its last requests, for the verdict's ids */
	size_t last_next;
};

struct detect_beacon {
	char tool[FB_TOOL_MAX + 1];
	uint64_t host; /* detect_name_hash of the host; the slot is free while n is 0 */
	int64_t seen;  /* the newest start, for eviction */
	int64_t quiet_until;
	size_t n;
	int64_t start[DETECT_BEACON_TIMES], id[DETECT_BEACON_TIMES]; /* oldest first */
};

struct detect_denial {
	int64_t ts;
	int64_t id;
	char dst[48];
};

struct detect_state {
	struct detect_config cfg;
	int have_policy;
	size_t n_tools;
	struct detect_tool {
		char name[FB_TOOL_MAX + 1];
		int network;	    /* its scope opens some egress */
		int single_process; /* declared: it never forks */
		int interpreter;    /* one of its programs is an interpreter */
		int has_children;   /* declared "children": execs outside them are findings */
		uint64_t env_may;   /* bit i: the policy may start its calls with loader_env i */
		char *programs[DETECT_PROGRAMS_MAX]; /* its commands' programs, as written */
		size_t n_programs;
		char *children[DETECT_PROGRAMS_MAX]; /* globs */
		size_t n_children;
		struct detect_upload upload; /* what it sent through the L7 proxy */
	} * tools; /* n_tools of them: a sandbox's state is as small as its policy */
	struct detect_upload upload_other; /* sent from no tool's address (or no policy) */
	struct detect_beacon *beacons;	   /* DETECT_BEACON_KEYS of them, made at the first proxied
					      request: most sandboxes never make one (11 KiB each) */
	enum policy_action actions[POLICY_SEVERITIES];
	enum policy_action on_lost; /* what monitor.blind does ("on_lost_events") */
	char **off;		    /* rule ids switched off, NULL-terminated (owned) */

	/* The program the gate approved for each running step (step.start). */
	struct {
		int64_t step;
		char program[256];
	} steps[DETECT_STEPS_MAX];
	size_t steps_next;

	/* The last refused or dropped attempts, a ring (oldest at head). */
	struct detect_denial denials[DETECT_DENIALS_MAX];
	size_t den_head, den_n;
	int64_t burst_quiet_until; /* a burst is reported once per window */
	int64_t scan_quiet_until;

	/* The last execs (pid, program's name, loader variables), a ring: a variable a process's
	 * image already had is not set anew by its next exec (exec.loader-injection). */
	struct {
		int32_t pid;
		uint64_t env;
		char name[32];
	} images[DETECT_IMAGES_MAX];
	size_t images_next;

	/* The last refused connects beyond loopback, by pid (net.reverse-shell). */
	struct {
		int32_t pid;
		int64_t ts, id;
	} refused[DETECT_REFUSED_MAX];
	size_t refused_next;

	/* The last pipeline ends (exec.pipe-to-shell): a decoder's or downloader's stdout pipe
	 * (feeder), a shell's or interpreter's stdin pipe that it reads code from. */
	struct {
		int64_t step, ts, id;
		int64_t pipe; /* 0: empty */
		int feeder;
		char name[16];
	} pipes[DETECT_PIPES_MAX];
	size_t pipes_next;
	/* OOM kills seen by the tracer (proc.oom-kill) less those the cgroup's counter showed
	 * (negative: counted first), as of oom_ts: one verdict per kill (rules-host.c). */
	int64_t oom_balance, oom_ts;

	/* Resource counters of the sandbox's cgroup, as last seen. */
	int64_t oom_kills, pids_max_hits;
	int memory_near;    /* reported near its cap; re-armed below 80% */
	int workspace_near; /* the same for the workspace */
	/* CPU: where the current window started (ts, throttled us); saturated was reported. */
	int64_t cpu_ts, cpu_throttled;
	int cpu_saturated;

	/* The sandbox's decoys' marker (lures.h), "" if it has none (an adopted cgroup). */
	char marker[LURE_MARKER_LEN + 1];
	/* The last DNS queries, a ring (oldest at head), and when the tunnel rule may speak again.
	 */
	struct detect_dns_query dns[DETECT_DNS_MAX];
	size_t dns_head, dns_n;
	int64_t dns_quiet_until;
	/* The file rules (rules-file.c): where each recent step began, credential files per step.
	 */
	struct detect_file_step {
		int64_t step, first_ts;
		unsigned creds;			 /* credential-location files opened */
		char dirs[DETECT_CRED_DIRS][96]; /* their distinct directories */
		unsigned n_dirs;
		int hunt_reported;
	} file_steps[DETECT_FILE_STEPS];
	size_t file_steps_next;
	char persist_last[128]; /* the last persistence path reported, so a write is one verdict */
};

/* Fills v's common fields from ev. */
void detect_verdict_init(struct detect_verdict *v, const struct event *ev, enum policy_rule rule,
			 enum detect_severity sev);

/* The rules: each looks at ev and writes at most max verdicts, returning how many. */
size_t detect_rules_net(struct detect_state *st, const struct event *ev, struct detect_verdict *out,
			size_t max);
size_t detect_rules_host(struct detect_state *st, const struct event *ev,
			 struct detect_verdict *out, size_t max);
size_t detect_rules_dns(struct detect_state *st, const struct event *ev, struct detect_verdict *out,
			size_t max);
size_t detect_rules_file(struct detect_state *st, const struct event *ev,
			 struct detect_verdict *out, size_t max);
size_t detect_rules_behavior(struct detect_state *st, const struct event *ev,
			     struct detect_verdict *out, size_t max);
size_t detect_rules_lure(struct detect_state *st, const struct event *ev,
			 struct detect_verdict *out, size_t max);
size_t detect_rules_senses(struct detect_state *st, const struct event *ev,
			   struct detect_verdict *out, size_t max);
size_t detect_rules_exec(struct detect_state *st, const struct event *ev,
			 struct detect_verdict *out, size_t max);
size_t detect_rules_http(struct detect_state *st, const struct event *ev,
			 struct detect_verdict *out, size_t max);
size_t detect_rules_http_flow(struct detect_state *st, const struct event *ev,
			      struct detect_verdict *out, size_t max);

/* FNV-1a of a name, case folded (DNS names, hosts). */
uint64_t detect_name_hash(const char *s);

/* Whether path's base name is an interpreter (python3.11, bash, node...). */
int detect_interpreter(const char *path);

/* The tool named name in the policy, or NULL (no policy, or not in it). */
const struct detect_tool *detect_tool(const struct detect_state *st, const char *name);

#endif
