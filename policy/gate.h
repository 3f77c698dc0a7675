/*
 * The per-tool command gate: decides, before anything runs, whether an argv may run under a tool's
 * scope in a policy, and rebuilds the environment it runs with. Deterministic: the same policy,
 * tool, argv and host files give the same decision; no shell is involved and nothing runs here.
 *
 * Precedence (docs/policy.md): built-in invariants (wrappers, inline code, unsafe options) > the
 * scope's pinned programs > deny > allow > default deny.
 */
#ifndef FB_GATE_H
#define FB_GATE_H

#include <limits.h>
#include <stddef.h>

#include "policy.h"
#include "sha256.h"

/* Caps on what the caller hands the gate (the agent's argv and the harness's environment). */
#define GATE_ARGC_MAX 4096	       /* arguments, argv[0] included */
#define GATE_ARG_MAX (128 * 1024)      /* bytes in one argument (the kernel's MAX_ARG_STRLEN) */
#define GATE_ENV_MAX 4096	       /* caller variables examined; the rest are dropped */
#define GATE_ENV_VALUE_MAX (32 * 1024) /* bytes in one passed variable; a longer one is dropped */
#define GATE_OPERAND_MATCH_MAX 4096   /* bytes of an operand a pattern can match; longer: refused */
#define GATE_MATCH_BUDGET (16u << 20) /* pattern x operand cells one check may spend matching */

#define GATE_RULE_MAX 31
#define GATE_MESSAGE_MAX 512

/* Stable rule ids: what a refusal (or an allow) is attributed to. docs/policy.md explains each. */
#define GATE_RULE_ALLOW "allow"
#define GATE_RULE_UNKNOWN_TOOL "unknown-tool"
#define GATE_RULE_ARGV "argv"
#define GATE_RULE_WRAPPER "wrapper"
#define GATE_RULE_INLINE_CODE "inline-code"
#define GATE_RULE_UNSAFE_OPTION "unsafe-option"
#define GATE_RULE_UNSAFE_OPERAND "unsafe-operand"
#define GATE_RULE_NOT_IN_SCOPE "program-not-in-scope"
#define GATE_RULE_PREFIX "prefix"
#define GATE_RULE_FLAG_DENIED "flag-denied"
#define GATE_RULE_FLAG_NOT_ALLOWED "flag-not-allowed"
#define GATE_RULE_FLAG_AMBIGUOUS "flag-ambiguous"
#define GATE_RULE_FLAG_VALUE "flag-value"
#define GATE_RULE_OPERAND "operand"
#define GATE_RULE_ENV "env"

/* gate_check() flags. */
enum {
	/*
	 * For `policy check` on a machine that is not the sandbox host: a program missing here is
	 * resolved by its name alone (a bare argv[0] to the first PATH directory where the scope
	 * pins it; no realpath()). The enforcer never sets it.
	 */
	GATE_RESOLVE_BY_NAME = 1 << 0,
};

/* One decision; a plain value the caller owns. */
struct gate_decision {
	int allowed;			/* 1: run it; 0: refused */
	char rule[GATE_RULE_MAX + 1];	/* GATE_RULE_* */
	char message[GATE_MESSAGE_MAX]; /* one line: "RULE: …", naming the argument */
	char program[PATH_MAX];		/* the absolute path to exec, "" if it did not
					 * resolve; exec this, never argv[0] */
	char policy_hash[SHA256_PREFIXED_HEX_SIZE];
	int command; /* the scope's command that matched, -1 if none */
	int arg;     /* argv index the rule fired on, -1 if none */
};

/*
 * Decides whether argv (NULL-terminated) may run under tool's scope in p. Returns 0 with the
 * decision in *ret (allowed or refused), or -ENOMEM; nothing else fails.
 */
int gate_check(const struct policy *p, const char *tool, char *const argv[], unsigned flags,
	       struct gate_decision *ret);

/* A rebuilt environment: opaque, owned by the caller of gate_build_env() (gate_env_free). */
struct gate_env;

/*
 * Builds the environment for a call of tool: sandbox PATH, HOME=/home/agent, TMPDIR=/tmp and
 * sandbox.env; then the tool's env; then those of envp (the caller's, NULL-terminated) that the
 * tool's env_allow names, never a never-pass variable unless named exactly. Returns 0,
 * -ENOENT for an unknown tool, or -ENOMEM.
 */
int gate_build_env(const struct policy *p, const char *tool, char *const envp[],
		   struct gate_env **ret);

/*
 * Adds the policy's sandbox.decoy_env and its credentials' env, each a decoy value carrying
 * marker (lib/lures.h), in place of any entry of the same name. 0 or -ENOMEM.
 */
int gate_env_add_decoys(struct gate_env *e, const struct policy *p, const char *marker);

/* "NAME=value" strings for execve(), NULL-terminated; owned by e. */
char *const *gate_env_vector(const struct gate_env *e);

/* Names of the caller's variables that were not passed, NULL-terminated; owned by e. */
char *const *gate_env_dropped(const struct gate_env *e);

/* Frees e; accepts NULL. */
void gate_env_free(struct gate_env *e);

/*
 * Whether the caller's variable name would pass into tool's calls: 1 yes, 0 no (with a one-line
 * "env: …" reason in why), -ENOENT for an unknown tool.
 */
int gate_env_allowed(const struct policy *p, const char *tool, const char *name, char *why,
		     size_t whylen);

/*
 * Whether a call of tool can start with name in its environment: fixed by the policy (sandbox or
 * tool env) or passed from the caller by env_allow. 1 or 0 (also for an unknown tool).
 */
int gate_env_may_start(const struct policy *p, const char *tool, const char *name);

/* Whether name is on the built-in never-pass list (LD_*, PYTHON*, GIT_*, *_OPTIONS, ...). */
int gate_env_never_pass(const char *name);

/* Whether name is a built-in wrapper a scope's "wrappers" may name ("timeout", "sh", ...). */
int gate_wrapper_known(const char *name);

/* Whether name is a built-in unsafe option a scope's "unsafe_allow" may name ("find -exec"). */
int gate_unsafe_known(const char *name);

/* Whether rule is one of the GATE_RULE_* ids. */
int gate_rule_known(const char *rule);

/*
 * Runs one of the policy's test vectors (policy_test()). Returns 1 if the gate decided as the
 * vector expects, 0 if not, -ENOMEM; *ret holds the decision (for an env vector: allowed, rule
 * "env" or "allow", and the reason).
 */
int gate_run_test(const struct policy *p, const struct policy_test *t, unsigned flags,
		  struct gate_decision *ret);

#endif
