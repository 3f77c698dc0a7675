/*
 * The policies the daemon judges sandboxes by, by content hash: the enforcer's copy of a
 * sandbox's policy (its root-only state dir), or the text `firebreak watch --policy` sent for an
 * adopted cgroup. Each text is kept in the store once (schema 003), so verdicts' policy_hash name
 * text that can be read back, and a restarted daemon finds an adopted cgroup's policy again.
 */
#ifndef FB_POLICIES_H
#define FB_POLICIES_H

#include <stddef.h>

struct daemon;
struct policy;
struct store;
struct store_sandbox;

/* Reads back the texts of the live sandboxes' policies (before the writer owns the store). */
int policies_init(struct daemon *d, struct store *s);

/*
 * Sandbox sb's policy, loaded (the caller frees it), or NULL: none registered, or its text is
 * nowhere to be found or does not hash to what the sandbox registered with (logged).
 */
struct policy *policies_for(struct daemon *d, const struct store_sandbox *sb);

/*
 * Takes len bytes of policy text sent by a client: loads it (the one loader), and keeps and
 * stores it; writes its hash to hash (72 bytes). 0, or -EINVAL with the loader's message in err.
 */
int policies_take_text(struct daemon *d, const char *text, size_t len, char *hash, char *err,
		       size_t errlen);

/*
 * The marker in sandbox sb's decoys (lib/lures.h), from the enforcer's state.json, into marker
 * (LURE_MARKER_LEN + 1 bytes): 1, or 0 with "" (an adopted cgroup, a sandbox made before decoys).
 */
int policies_decoy_marker(struct daemon *d, const struct store_sandbox *sb, char *marker);

void policies_stop(struct daemon *d);

#endif
