/*
 * A string-keyed hash map (open addressing, linear probing). Keys are borrowed: the caller keeps
 * each key alive while its entry is in the map (usually the key lives inside the value).
 */
#ifndef FB_HASHMAP_H
#define FB_HASHMAP_H

#include <stddef.h>

struct hashmap;

/* Returns a new empty map in *ret, or -ENOMEM. Free with hashmap_free(). */
int hashmap_new(struct hashmap **ret);

/* Frees the map, not its keys or values; accepts NULL. */
void hashmap_free(struct hashmap *m);

/* Inserts or replaces key → value; returns 0, or -ENOMEM. */
int hashmap_put(struct hashmap *m, const char *key, void *value);

/* Returns the value for key, or NULL. */
void *hashmap_get(const struct hashmap *m, const char *key);

/* Removes key; returns its value, or NULL if it was absent. */
void *hashmap_remove(struct hashmap *m, const char *key);

size_t hashmap_size(const struct hashmap *m);

/* Iterates: start with *pos = 0; returns the next value or NULL at the end. */
void *hashmap_next(const struct hashmap *m, size_t *pos);

#endif
