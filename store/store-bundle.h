/*
 * Incident bundles (store/store-bundle.c): a sandbox's history in a SQLite file of the store's own
 * schema, plus a "bundle" table saying what it is. `firebreak export` writes one, the API serves
 * one, `firebreak replay` reads one (docs/replay.md).
 */
#ifndef FB_STORE_BUNDLE_H
#define FB_STORE_BUNDLE_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

#define STORE_BUNDLE_FORMAT "firebreak-bundle-1"
/* An event's fields in a bundle, at most (the sources write far less). */
#define STORE_BUNDLE_FIELD_MAX (1 << 20)

struct store_bundle_spec {
	int64_t sandbox_id;
	int64_t incident_id; /* 0: the sandbox's whole history */
	int64_t until;	     /* ns: events up to then (0: all) */
	int64_t made_ts;
};

/* The bundle's bytes (a SQLite file) in *ret, to release with sqlite3_free; 0 or -errno. */
int store_bundle_make(struct store *src, const struct store_bundle_spec *spec, unsigned char **ret,
		      size_t *ret_len);

/*
 * Opens a bundle file read-only after checking it: its schema version, that its schema objects
 * are exactly a bundle's (no trigger, view or extra table can run anything), SQLite's quick check,
 * one sandbox with a valid name, no oversized rows. 0 and *ret, or -errno with the reason in err.
 */
int store_bundle_open(const char *path, struct store **ret, char *err, size_t errlen);

#endif
