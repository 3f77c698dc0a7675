#include "actions.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "names.h"
#include "cgroup.h"
#include "daemon.h"
#include "macro.h"
#include "records.h"
#include "netns-thread.h"
#include "timeutil.h"

/* How long an action waits for cgroup.events to confirm it (freeze: frozen; kill: empty). */
#define ACTION_CONFIRM_MS 1000

static const char *const kind_names[_ACTION_MAX] = { "freeze", "thaw", "kill", "quarantine" };

const char *action_kind_name(enum action_kind k)
{
	return k < _ACTION_MAX ? kind_names[k] : "?";
}

/* The state a sandbox is in after an action that worked. */
static const char *state_after(enum action_kind k)
{
	return k == ACTION_FREEZE || k == ACTION_QUARANTINE ? "frozen"
	       : k == ACTION_THAW			    ? "running"
							    : "killed";
}

/*
 * The sandbox's link at the gate, "fb-s<k>" (enforcer/egress.h), from the enforcer's state of it;
 * 0, or -ENOENT (no link: no egress, or an adopted cgroup).
 */
static int gate_link(struct daemon *d, const struct store_sandbox *sb, char *buf, size_t size)
{
	char path[PATH_MAX + 128];
	json_t *doc;
	json_int_t k;

	if (config_sandbox_path(d->cfg, sb->name, "state.json", path, sizeof(path)) < 0)
		return -ENOENT;
	doc = json_load_file(path, 0, NULL);
	k = json_integer_value(json_object_get(doc, "link"));
	json_decref(doc);
	if (k <= 0 || k > 99999)
		return -ENOENT;
	snprintf(buf, size, "fb-s%u", (unsigned)k);
	return 0;
}

/* Takes interface ifname of the gate's namespace down: nothing passes it either way. */
static int gate_link_down(const char *ifname, int *ret_down)
{
	struct ifreq ifr = { 0 };
	int home, s, r = 0;

	/* A socket made in the gate's namespace acts there; only this thread moves, and back. */
	if ((home = netns_enter(NETNS_DIR "/" EGRESS_GATE_NETNS, NULL)) < 0)
		return home;
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	r = s < 0 ? -errno : 0;
	netns_leave(home);
	if (r < 0)
		return r;
	strscpy(ifr.ifr_name, sizeof(ifr.ifr_name), ifname);
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0) {
		r = -errno;
	} else {
		ifr.ifr_flags &= ~IFF_UP;
		if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
			r = -errno;
		else
			*ret_down = !(ifr.ifr_flags & IFF_UP);
	}
	close(s);
	return r;
}

/* Does the action: the first thing that happens, nothing but the cgroup write before it. */
static int act(enum action_kind k, const char *rel)
{
	switch (k) {
	case ACTION_FREEZE:
		return cgroup_freeze(rel, 1, 0);
	case ACTION_THAW:
		return cgroup_freeze(rel, 0, 0);
	case ACTION_KILL:
		return cgroup_kill(rel);
	case ACTION_QUARANTINE: /* the freeze first; the link at the gate in action_finish */
		return cgroup_freeze(rel, 1, 0);
	default:
		return -EINVAL;
	}
}

/* Waits for cgroup.events to show it done: frozen, thawed, or no process left. */
static int confirm(enum action_kind k, const char *rel)
{
	switch (k) {
	case ACTION_FREEZE:
	case ACTION_THAW:
	case ACTION_QUARANTINE:
		return cgroup_freeze(rel, k != ACTION_THAW, ACTION_CONFIRM_MS);
	default:
		return cgroup_wait_empty(rel, ACTION_CONFIRM_MS);
	}
}

void action_record(struct daemon *d, const struct store_sandbox *sb,
		   const struct action_request *rq, int64_t done_ts, int64_t queue_ns,
		   int64_t act_ns, int64_t confirm_ns, const char *result, json_t **ret_record)
{
	struct writer_op op;
	struct store_action *a = calloc(1, sizeof(*a));
	int64_t latency = rq->trigger_ts ? done_ts - rq->trigger_ts : queue_ns + act_ns;
	char kind[32];
	json_t *f;

	snprintf(kind, sizeof(kind), "action.%s", action_kind_name(rq->kind));
	writer_event_init(&op, sb, done_ts, EVENT_STEP_NONE, NULL, EVENT_SOURCE_MONITOR, kind);
	op.type = WRITER_OP_ACTION;
	f = json_pack("{s:s, s:s, s:s*, s:s, s:I, s:I, s:I, s:I}", "action",
		      action_kind_name(rq->kind), "requested_by", rq->requested_by, "reason",
		      rq->reason, "result", result, "queue_ns", (json_int_t)queue_ns, "act_ns",
		      (json_int_t)act_ns, "confirm_ns", (json_int_t)confirm_ns, "latency_ns",
		      (json_int_t)latency);
	if (f && rq->detection_id)
		json_object_set_new(f, "detection_id", json_integer((json_int_t)rq->detection_id));
	if (f && rq->incident_id)
		json_object_set_new(f, "incident_id", json_integer((json_int_t)rq->incident_id));
	if (!a || !f || event_set_fields(&op.ev, f) < 0) {
		json_decref(f);
		free(a);
		writer_op_clear(&op);
		log_error("sandbox %s: %s done (%s) but not recorded: out of memory", sb->name,
			  action_kind_name(rq->kind), result);
		return;
	}
	a->ts = done_ts;
	a->sandbox_id = sb->id;
	strscpy(a->kind, sizeof(a->kind), action_kind_name(rq->kind));
	strscpy(a->requested_by, sizeof(a->requested_by), rq->requested_by);
	a->detection_id = rq->detection_id;
	a->incident_id = rq->incident_id;
	a->latency_ns = latency;
	strscpy(a->result, sizeof(a->result), result);
	if (rq->reason)
		strscpy(a->reason, sizeof(a->reason), rq->reason);
	op.action = a;
	sink_submit(d->sink, &op);
	if (ret_record)
		*ret_record = f; /* the caller's reference */
	else
		json_decref(f);
}

int action_act(const struct store_sandbox *sb, enum action_kind kind, struct action_done *done)
{
	done->t0 = time_mono_ns();
	done->r = act(kind, sb->cgroup);
	done->t1 = time_mono_ns();
	return done->r;
}

int action_conclude(struct daemon *d, struct store_sandbox *sb, const struct action_request *rq,
		    const struct action_done *done, uint64_t queued, int c, json_t **ret_record)
{
	char result[64], ifname[IFNAMSIZ];
	int down = 0, q = 0;
	uint64_t t2;

	/* Quarantine: frozen, and nothing of the sandbox passes the gate any more. */
	if (done->r == 0 && rq->kind == ACTION_QUARANTINE &&
	    ((q = gate_link(d, sb, ifname, sizeof(ifname))) < 0 ||
	     (q = gate_link_down(ifname, &down)) < 0))
		log_warn_errno(q, "sandbox %s: quarantine: its link at the gate", sb->name);
	t2 = time_mono_ns();
	if (done->r < 0)
		snprintf(result, sizeof(result), "failed: %s", strerror(-done->r));
	else if (q < 0)
		snprintf(result, sizeof(result), "frozen; gate link: %s", strerror(-q));
	else
		strscpy(result, sizeof(result),
			c == 0 && (rq->kind != ACTION_QUARANTINE || down) ? "ok" : "unconfirmed");
	if (done->r == 0) {
		strcpy(sb->state, state_after(rq->kind));
		sb->updated_ts = time_now_ns();
		record_sandbox(d, sb);
	}
	action_record(d, sb, rq, time_now_ns(), (int64_t)(done->t0 - queued),
		      (int64_t)(done->t1 - done->t0), (int64_t)(t2 - done->t1), result, ret_record);
	log_info("sandbox %s: %s by %s: %s in %llu us (confirmed after %llu us)%s%s", sb->name,
		 action_kind_name(rq->kind), rq->requested_by, result,
		 (unsigned long long)(done->t1 - done->t0) / 1000,
		 (unsigned long long)(t2 - done->t1) / 1000, rq->reason ? ": " : "",
		 rq->reason ? rq->reason : "");
	return done->r < 0 ? done->r : c;
}

int action_finish(struct daemon *d, struct store_sandbox *sb, const struct action_request *rq,
		  const struct action_done *done, json_t **ret_record)
{
	int c = done->r == 0 ? confirm(rq->kind, sb->cgroup) : 0;

	return action_conclude(d, sb, rq, done, done->t0, c, ret_record);
}

int action_apply(struct daemon *d, struct store_sandbox *sb, const struct action_request *rq,
		 json_t **ret_record)
{
	struct action_done done;

	action_act(sb, rq->kind, &done);
	return action_finish(d, sb, rq, &done, ret_record);
}

int action_kind_from_name(const char *name)
{
	for (int k = 0; k < _ACTION_MAX; k++)
		if (strcmp(name, kind_names[k]) == 0)
			return k;
	return -EINVAL;
}
