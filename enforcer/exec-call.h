/*
 * One tool call inside the exec launcher (enforcer/launcher.c): the gate's decision, the step's
 * records, its start in a prepared step process and its end. Internal to enforcer/.
 */
#ifndef FB_EXEC_CALL_H
#define FB_EXEC_CALL_H

#include <jansson.h>
#include <limits.h>
#include <stdint.h>

#include "exec-step.h"
#include "policy/gate.h"
#include "sandbox.h"
#include "state.h"
#include "strbuf.h"

struct policy;
struct report;

/* What every call of one sandbox shares: opened and checked once, when the launcher starts. */
struct launcher {
	const struct config *cfg;
	struct sandbox_state st; /* with the identity steps run as */
	struct sandbox_limits lim;
	struct policy *policy; /* the one the sandbox was created with (its hash checked) */
	struct report *rp;     /* the monitor (NULL: unwatched, or to be reconnected) */
	char sbrel[128];       /* the sandbox's cgroup */
	char cgdir[PATH_MAX];  /* its v2 directory, where the egress hooks hang */
	struct exec_sandbox sb;
	struct exec_step next; /* the next step's process, made ahead (next.pid 0: none) */
	int events_fd;	       /* the sandbox's v2 cgroup.events: a freeze under a call */
	int init_pidfd;	       /* the sandbox's init: readable once it is gone */
};

struct exec_call {
	struct launcher *L;
	json_t *msg; /* the request, which req's and env_in's strings point into */
	struct sandbox_exec_request req;
	char **env_in; /* the caller's environment, which the tool's env_allow filters */
	int client;    /* the caller's connection */
	int stdio[3];
	struct gate_decision d;
	struct gate_env *env;
	struct exec_step run;
	int64_t timeout_ns;
	int64_t deadline; /* monotonic, 0: none */
	int registered;	  /* the egress hooks know the step: unregister it */
	int64_t t0;
	int exec_err; /* the child's -errno if it never ran the program, else 0 */
	int status;
	int why;	    /* EXEC_WHY_* or the signal that interrupted the caller */
	int held;	    /* frozen under it: answered, its process left as it is until it ends */
	uint64_t end_seq;   /* step.end's number on the monitor's connection; 0: not sent */
	struct strbuf tell; /* what the caller is shown on its stderr */
};

/*
 * Begins c (its request filled in): refusal, the step's cgroup and records, and the program
 * started in the step's process. Returns 0 (running: wait for c->run.pidfd), or the call's answer
 * (> 0: its exit status, 126 refused), or -errno (it never started).
 */
int exec_call_begin(struct exec_call *c);

/* The step's process ended (status as waitpid's) or why says how it was cut short; records
 * step.end and returns the call's exit status (125: frozen under it). */
int exec_call_end(struct exec_call *c);

/* Undoes what the call made (its cgroup, unless frozen; its hook entry) and frees it. */
void exec_call_free(struct exec_call *c);

/* The monitor's connection for the calls, reopened if the monitor restarted; NULL if none
 * answers (then a watched sandbox runs nothing). */
struct report *launcher_record(struct launcher *L);

/* The record failed: the connection is dropped, and the next call reopens it. */
void launcher_record_lost(struct launcher *L);

#endif
