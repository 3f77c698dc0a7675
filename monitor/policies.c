#include "policies.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "hashmap.h"
#include "lures.h"
#include "macro.h"
#include "policy/policy.h"
#include "timeutil.h"

struct kept_policy {
	char hash[72]; /* the map's key */
	char *text;
};

/* Keeps text under hash in memory; with store, also in the store. */
static int keep(struct daemon *d, const char *hash, const char *name, const char *text, int store)
{
	struct kept_policy *k;

	if (hashmap_get(d->policies, hash))
		return 0;
	if (!(k = calloc(1, sizeof(*k))) || !(k->text = strdup(text))) {
		free(k);
		return -ENOMEM;
	}
	strscpy(k->hash, sizeof(k->hash), hash);
	if (hashmap_put(d->policies, k->hash, k) < 0) {
		free(k->text);
		free(k);
		return -ENOMEM;
	}
	if (store) {
		struct writer_op op = { .type = WRITER_OP_POLICY };

		event_init(&op.ev);
		if (!(op.policy = calloc(1, sizeof(*op.policy))) ||
		    !(op.policy->text = strdup(text))) {
			writer_op_clear(&op);
			return -ENOMEM;
		}
		strscpy(op.policy->hash, sizeof(op.policy->hash), hash);
		strscpy(op.policy->name, sizeof(op.policy->name), name);
		op.policy->ts = time_now_ns();
		sink_submit(d->sink, &op);
	}
	return 0;
}

int policies_init(struct daemon *d, struct store *s)
{
	struct store_sandbox *sb;
	size_t pos = 0;
	int r;

	if ((r = hashmap_new(&d->policies)) < 0)
		return r;
	while ((sb = registry_next(d->registry, &pos))) {
		char *text = NULL;

		if (!sb->policy_hash[0] || !registry_live(sb) ||
		    hashmap_get(d->policies, sb->policy_hash))
			continue;
		r = store_policy_get(s, sb->policy_hash, &text);
		if (r == 0)
			r = keep(d, sb->policy_hash, "", text, 0);
		free(text);
		if (r < 0 && r != -ENOENT)
			return r;
	}
	return 0;
}

/* Loads text, checking it hashes to want. NULL (logged) if not. */
static struct policy *load(const struct store_sandbox *sb, const char *source, const char *text,
			   const char *want)
{
	struct policy *p = NULL;
	char err[256];

	if (policy_load_text(source, text, strlen(text), &p, err, sizeof(err)) < 0) {
		log_warn("sandbox %s: its policy: %s", sb->name, err);
		return NULL;
	}
	if (strcmp(policy_hash(p), want) != 0) {
		log_warn("sandbox %s: %s is not the policy it registered with", sb->name, source);
		policy_free(p);
		return NULL;
	}
	return p;
}

struct policy *policies_for(struct daemon *d, const struct store_sandbox *sb)
{
	struct kept_policy *k;
	char path[PATH_MAX + 128];
	struct policy *p;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	if (!sb->policy_hash[0])
		return NULL;
	if ((k = hashmap_get(d->policies, sb->policy_hash)))
		return load(sb, "the kept policy", k->text, sb->policy_hash);
	if (registry_adopted(sb))
		return NULL; /* watched without --policy text, and none kept */
	/* The enforcer's copy, taken at create, in its root-only state dir. */
	if (config_sandbox_path(d->cfg, sb->name, "policy.json", path, sizeof(path)) < 0 ||
	    !(f = fopen(path, "re"))) {
		log_warn("sandbox %s: its policy %s: %m", sb->name, path);
		return NULL;
	}
	if (getdelim(&text, &len, '\0', f) < 0) {
		free(text);
		text = NULL;
	}
	fclose(f);
	if (!text)
		return NULL;
	p = load(sb, path, text, sb->policy_hash);
	if (p && keep(d, policy_hash(p), policy_name(p), text, 1) < 0)
		log_warn("sandbox %s: its policy could not be kept in the store", sb->name);
	free(text);
	return p;
}

int policies_decoy_marker(struct daemon *d, const struct store_sandbox *sb, char *marker)
{
	char path[PATH_MAX + 128];
	json_t *doc = NULL;
	const char *m;

	marker[0] = '\0';
	if (!registry_adopted(sb) &&
	    config_sandbox_path(d->cfg, sb->name, "state.json", path, sizeof(path)) == 0)
		doc = json_load_file(path, 0, NULL);
	m = json_string_value(json_object_get(doc, "decoy_marker"));
	if (m && lure_marker_valid(m))
		strscpy(marker, LURE_MARKER_LEN + 1, m);
	json_decref(doc);
	return marker[0] != '\0';
}

int policies_take_text(struct daemon *d, const char *text, size_t len, char *hash, char *err,
		       size_t errlen)
{
	struct policy *p = NULL;
	char *copy;
	int r;

	if ((r = policy_load_text("the policy sent", text, len, &p, err, errlen)) < 0)
		return r;
	strscpy(hash, 72, policy_hash(p));
	if (!(copy = strndup(text, len))) {
		policy_free(p);
		return -ENOMEM;
	}
	r = keep(d, hash, policy_name(p), copy, 1);
	free(copy);
	policy_free(p);
	return r;
}

void policies_stop(struct daemon *d)
{
	struct kept_policy *k;
	size_t pos = 0;

	while (d->policies && (k = hashmap_next(d->policies, &pos))) {
		free(k->text);
		free(k);
	}
	hashmap_free(d->policies);
	d->policies = NULL;
}
