/*
 * A sandbox policy: the resource caps of one sandbox and, per tool, the commands that tool may run
 * (docs/policy.md is the format). Loading is strict: an unknown key, a duplicate key, a wrong type
 * or a bad value refuses the whole file with FILE:LINE:COL: message. A loaded policy is immutable;
 * every decision made under it records its content hash ("sha256:" + hex of the file's bytes).
 */
#ifndef FB_POLICY_H
#define FB_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "sha256.h"

/* Caps on a policy file, which comes from whoever writes policies: all are checked at load. */
#define POLICY_FILE_MAX (1024 * 1024) /* bytes */
#define POLICY_STRING_MAX 4096	      /* bytes in any one string */
#define POLICY_TOOLS_MAX 128
#define POLICY_COMMANDS_MAX 64	/* per tool */
#define POLICY_PREFIX_MAX 16	/* fixed arguments of one command */
#define POLICY_FLAGS_MAX 512	/* per allow or deny list */
#define POLICY_OPERANDS_MAX 128 /* operand patterns of one command */
#define POLICY_PATTERN_MAX 256	/* bytes in one operand pattern */
#define POLICY_ENV_MAX 128	/* entries of any env or env_allow */
#define POLICY_NAMES_MAX 64	/* entries of wrappers or unsafe_allow */
#define POLICY_TESTS_MAX 4096
#define POLICY_TEST_ARGC_MAX 256 /* arguments of one test vector */
#define POLICY_WARNINGS_MAX 256	 /* further warnings are counted, not kept */
#define POLICY_NAME_MAX 63
/* The most requests "http_beacon_count" may ask for: the detectors keep this many per key. */
#define POLICY_BEACON_COUNT_MAX 16

/* The one format version this build reads. */
#define POLICY_VERSION 1

/*
 * The sandbox's caps, after defaults (docs/policy.md lists them). Plain data, owned by the policy
 * and valid while it lives.
 */
struct policy_sandbox {
	uint32_t uid, gid;	  /* 0: not set, the enforcer allocates one per sandbox */
	uint64_t memory_bytes;	  /* memory.max */
	int swap;		  /* 0: memory.swap.max = 0 */
	uint32_t pids;		  /* pids.max */
	double cpu;		  /* cores, fractional: cpu.max = cpu * period */
	uint64_t io_read_bps;	  /* 0: no cap */
	uint64_t io_write_bps;	  /* 0: no cap */
	uint64_t workspace_bytes; /* size of the writable /workspace */
	uint64_t tmp_bytes;	  /* size of the private /tmp */
	uint64_t home_bytes;	  /* size of the private home (HOME, with the decoys) */
	uint32_t open_files;	  /* RLIMIT_NOFILE */
	int64_t wall_clock_ns;	  /* the sandbox's whole lifetime */
	const char *path;	  /* PATH inside, also the gate's search path */
	const char *const *env;	  /* the fixed "NAME=value" list every call gets (PATH, HOME,
				   * TMPDIR, then sandbox.env), NULL-terminated */
};

/* One embedded test vector: an argv (or one environment variable) and the decision expected. */
struct policy_test {
	const char *tool;
	const char *const *argv; /* NULL-terminated; NULL for an env vector */
	const char *env;	 /* the variable an env vector asks about; NULL otherwise */
	int expect_allow;
	const char *rule;   /* the refusal's rule expected, or NULL for any */
	unsigned line, col; /* where the vector is, for messages */
};

/* The task's egress allowlist (the "egress" section), enforced at the gate. */
#define POLICY_EGRESS_MAX 64 /* rules */
#define POLICY_PORTS_MAX 32  /* ports of one rule */
/* The gate's own networks, always closed to sandboxes (enforcer/egress.c uses the same). */
#define POLICY_GATE_LINKS4 "10.199.0.0/16"
#define POLICY_GATE_OUTSIDE4 "10.198.255.252/30"
#define POLICY_GATE_LINKS6 "fd66:6272:fb::/48"

/*
 * What the gate's L7 proxy lets through on a host rule's ports 80 (HTTP) and 443 (HTTPS): every
 * request there passes through it (docs/egress.md, "The L7 proxy"). Absent limits are no limits.
 */
struct policy_http {
	int passthrough;      /* TLS spliced (SNI checked), not intercepted: no L7 checks */
	char *const *methods; /* upper-case tokens; none: any */
	size_t n_methods;
	char *const *paths; /* "/prefix" or a glob with '*'; none: any */
	size_t n_paths;
	int64_t max_request_body; /* bytes; -1: no limit */
	int64_t max_response;	  /* bytes of a response body; -1: no limit */
};

struct policy_egress_rule {
	const char *name;
	const char *host; /* a DNS name only the gate's DNS resolves; NULL for a CIDR rule */
	const char *cidr; /* as written; NULL for a host rule */
	int family;	  /* AF_INET or AF_INET6 (CIDR rules) */
	unsigned char addr[16];
	unsigned prefix;
	int protocol; /* IPPROTO_TCP or IPPROTO_UDP */
	const uint16_t *ports;
	size_t n_ports;
	const struct policy_http *http; /* host rules only; NULL: no limits (still proxied) */
};

/*
 * A credential the sandbox never holds (the "credentials" section; docs/egress.md,
 * "Credentials"): the sandbox gets a decoy unique to it (lib/lures.h), in env, file or both; the
 * gate's L7 proxy puts the real value, read from the root-only file from at create, into header
 * ("scheme value") of a request to one of hosts that carries the decoy whole in that header.
 */
#define POLICY_CREDENTIALS_MAX 16
struct policy_credential {
	const char *name;
	const char *from; /* on the host */
	const char *const *hosts;
	size_t n_hosts;
	const char *header; /* "Authorization" by default */
	const char *scheme; /* "Bearer", or NULL: the header's value is the credential alone */
	const char *env;    /* the variable every call gets the decoy in, or NULL */
	const char *file;   /* the file under the home the decoy is planted in, or NULL */
};

/* What a verdict of some severity does (the "detectors" section's "actions"). */
enum policy_action {
	POLICY_ACTION_RECORD, /* stored, nothing else */
	POLICY_ACTION_ALERT,  /* opens or extends the sandbox's incident */
	POLICY_ACTION_FREEZE,
	POLICY_ACTION_QUARANTINE, /* freeze, and drop all of the sandbox's traffic at the gate */
	POLICY_ACTION_KILL,
};

/* Severities, lowest first, as the detectors use them. */
#define POLICY_SEVERITIES 4

/* The "detectors" section, after defaults (docs/detectors.md). */
struct policy_detectors {
	unsigned deny_burst_count;     /* refused attempts ... */
	int64_t deny_burst_window_ns;  /* ... within this: a burst (and the scan window) */
	unsigned deny_distinct;	       /* distinct refused destinations within it: a scan */
	int64_t cpu_window_ns;	       /* CPU throttled half of this long or more: saturated */
	unsigned dns_label_max;	       /* a DNS query's label longer than this is suspicious */
	unsigned dns_names_max;	       /* distinct names under one parent domain within ... */
	unsigned dns_txt_max;	       /* (or TXT and NULL queries within) ... */
	int64_t dns_window_ns;	       /* ... this: a dns.tunnel */
	uint64_t http_upload_max;      /* bytes a tool may send through the L7 proxy within ... */
	int64_t http_upload_window_ns; /* ... this; more is an exfil.http-upload */
	unsigned http_beacon_count;    /* requests of one tool to one host, at intervals ... */
	unsigned http_beacon_jitter;   /* ... whose stddev is under this % of their mean ... */
	int64_t http_beacon_window_ns; /* ... all within this: a net.http-beacon */
	enum policy_action action[POLICY_SEVERITIES]; /* by severity: low, medium, high, critical */
	enum policy_action on_lost; /* what a sandbox whose events were lost gets (monitor.blind) */
	const char *const *off;	    /* rule ids switched off, NULL-terminated */
};

/*
 * The detector rules, each named here once: the detectors give verdicts by this enum, a policy
 * switches a rule off by its name, docs/detectors.md lists each (a unit test checks it does).
 * A new rule is a line here and its code in the detectors/rules-*.c of its class.
 */
#define POLICY_DETECTOR_RULES(X)                                                                   \
	X(NET_METADATA, "net.metadata")                                                            \
	X(NET_DENY_BURST, "net.deny-burst")                                                        \
	X(NET_DENY_SCAN, "net.deny-scan")                                                          \
	X(TOOL_NETWORK_OUT_OF_SCOPE, "tool.network-out-of-scope")                                  \
	X(ESCAPE_SECCOMP, "escape.seccomp")                                                        \
	X(RESOURCE_OOM_KILL, "resource.oom-kill")                                                  \
	X(RESOURCE_PIDS_CAP, "resource.pids-cap")                                                  \
	X(RESOURCE_MEMORY_NEAR_CAP, "resource.memory-near-cap")                                    \
	X(RESOURCE_WORKSPACE_FULL, "resource.workspace-full")                                      \
	X(RESOURCE_CPU_SATURATED, "resource.cpu-saturated")                                        \
	X(MONITOR_BLIND, "monitor.blind")                                                          \
	X(BEHAVIOR_EXEC_OUT_OF_SCOPE, "behavior.exec-out-of-scope")                                \
	X(BEHAVIOR_INTERPRETER, "behavior.interpreter")                                            \
	X(BEHAVIOR_FORK, "behavior.fork")                                                          \
	X(BEHAVIOR_STEP_OUTLIVED, "behavior.step-outlived")                                        \
	X(ESCAPE_SYSCTL_WRITE, "escape.sysctl-write")                                              \
	X(ESCAPE_CGROUP_WRITE, "escape.cgroup-write")                                              \
	X(ESCAPE_MONITOR_SOCKET, "escape.monitor-socket")                                          \
	X(ESCAPE_TRIPWIRE, "escape.tripwire")                                                      \
	X(ESCAPE_RUNTIME_SOCKET, "escape.runtime-socket")                                          \
	X(CREDENTIAL_DECOY, "credential.decoy")                                                    \
	X(EXFIL_DECOY_MARKER, "exfil.decoy-marker")                                                \
	X(DNS_TUNNEL, "dns.tunnel")                                                                \
	X(SIGNAL_BEYOND_STEP, "signal.beyond-step")                                                \
	X(EXEC_LOADER_INJECTION, "exec.loader-injection")                                          \
	X(EXEC_DRIFT, "exec.drift")                                                                \
	X(EXEC_MASQUERADE, "exec.masquerade")                                                      \
	X(EXEC_PIPE_TO_SHELL, "exec.pipe-to-shell")                                                \
	X(NET_UNEXPECTED_LISTENER, "net.unexpected-listener")                                      \
	X(NET_REVERSE_SHELL, "net.reverse-shell")                                                  \
	X(FILE_CREDENTIAL_HUNT, "file.credential-hunt")                                            \
	X(FILE_PERSISTENCE, "file.persistence")                                                    \
	X(FILE_ANTI_FORENSICS, "file.anti-forensics")                                              \
	X(FILE_SENSITIVE_READ, "file.sensitive-read")                                              \
	X(FILE_SETUID, "file.setuid")                                                              \
	X(EGRESS_PROXY_DOWN, "egress.proxy-down")                                                  \
	X(HTTP_REFUSED, "http.refused")                                                            \
	X(EXFIL_DECOY_HTTP, "exfil.decoy-http")                                                    \
	X(EXFIL_HTTP_UPLOAD, "exfil.http-upload")                                                  \
	X(NET_HTTP_BEACON, "net.http-beacon")

enum policy_rule {
#define POLICY_RULE_ENUM(id, name) RULE_##id,
	POLICY_DETECTOR_RULES(POLICY_RULE_ENUM)
#undef POLICY_RULE_ENUM
		_RULE_MAX
};

/* A rule's name ("net.metadata"); "?" for none. */
const char *policy_rule_name(enum policy_rule r);

/* The rule named name, or -EINVAL. */
int policy_rule_from_name(const char *name);

/* "record", "alert", "freeze", "quarantine", "kill". */
const char *policy_action_name(enum policy_action a);

/* A loaded policy: opaque, immutable, owned by whoever loaded it (policy_free). */
struct policy;

/*
 * Reads and validates the file at path into *ret. Returns 0; -EINVAL with "FILE:LINE:COL: message"
 * in err for a bad policy; or -errno with "FILE: reason" when it cannot be read (-EFBIG over
 * POLICY_FILE_MAX). Warnings (a never-pass variable allowed, a wrapper named...) do not fail the
 * load; see policy_warning().
 */
int policy_load(const char *path, struct policy **ret, char *err, size_t errlen);

/* The same from len bytes of text; name stands for FILE in messages. */
int policy_load_text(const char *name, const char *text, size_t len, struct policy **ret, char *err,
		     size_t errlen);

/* Frees p and everything it owns; accepts NULL. */
void policy_free(struct policy *p);

/* "sha256:…" of the file's bytes. Strings returned below are owned by p. */
const char *policy_hash(const struct policy *p);
const char *policy_name(const struct policy *p);
/* The FILE of messages. */
const char *policy_source(const struct policy *p);

const struct policy_sandbox *policy_sandbox(const struct policy *p);

/* The tools, in the file's order; a tool's index is what the kernel hooks key it by. */
size_t policy_tool_count(const struct policy *p);
const char *policy_tool_name(const struct policy *p, size_t i);
/* The index of tool, or -ENOENT. */
int policy_tool_index(const struct policy *p, const char *tool);
/* Tool i's share of the egress allowlist: bit j set means rule j (policy_egress). */
uint64_t policy_tool_egress(const struct policy *p, size_t i);

/* The detectors' settings (defaults where the policy says nothing). */
const struct policy_detectors *policy_detectors(const struct policy *p);

/* Tool i's command programs, as written, into out (at most max); returns how many. */
size_t policy_tool_programs(const struct policy *p, size_t i, const char **out, size_t max);
/* Tool i's "children" (globs), NULL-terminated, or NULL if it declares none. */
const char *const *policy_tool_children(const struct policy *p, size_t i);
/* Whether tool i is declared "single_process". */
int policy_tool_single_process(const struct policy *p, size_t i);

/* Whether the policy has a scope for tool. */
int policy_has_tool(const struct policy *p, const char *tool);
/* The per-call wall-clock limit of tool; -ENOENT for an unknown tool. */
int policy_tool_timeout(const struct policy *p, const char *tool, int64_t *ret_ns);

size_t policy_egress_count(const struct policy *p);
/* The policy's credentials, in the order written. */
size_t policy_credential_count(const struct policy *p);
const struct policy_credential *policy_credential(const struct policy *p, size_t i);
/* Egress rule i (0-based), or NULL past the end. */
const struct policy_egress_rule *policy_egress(const struct policy *p, size_t i);

/* The ranges no policy may open (cloud metadata, the gate's own networks), as CIDR strings. */
const char *const *policy_egress_never_open(size_t *ret_n);

/* Parses "ADDR" or "ADDR/PREFIX" (no host bits set); 0 or -EINVAL. */
int policy_cidr_parse(const char *s, int *ret_family, unsigned char ret_addr[16],
		      unsigned *ret_prefix);

/* The always-closed range a CIDR overlaps, or NULL. */
const char *policy_cidr_forbidden(int family, const unsigned char addr[16], unsigned prefix);

size_t policy_test_count(const struct policy *p);
/* Test vector i (0-based), or NULL past the end. */
const struct policy_test *policy_test(const struct policy *p, size_t i);

/* Warnings found while loading, each "FILE:LINE:COL: warning: …"; NULL past the end. */
size_t policy_warning_count(const struct policy *p);
const char *policy_warning(const struct policy *p, size_t i);

#endif
