#include "hashmap.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct slot {
	const char *key; /* NULL: empty */
	void *value;
	uint64_t hash;
};

struct hashmap {
	struct slot *slots;
	size_t cap; /* a power of two */
	size_t size;
};

/* FNV-1a: short keys (sandbox names), no adversarial pressure worth a keyed hash here. */
static uint64_t hash_string(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ULL;
	}
	return h;
}

int hashmap_new(struct hashmap **ret)
{
	struct hashmap *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->cap = 16;
	m->slots = calloc(m->cap, sizeof(*m->slots));
	if (!m->slots) {
		free(m);
		return -ENOMEM;
	}
	*ret = m;
	return 0;
}

void hashmap_free(struct hashmap *m)
{
	if (!m)
		return;
	free(m->slots);
	free(m);
}

static struct slot *find(const struct hashmap *m, const char *key, uint64_t h)
{
	size_t mask = m->cap - 1;

	for (size_t i = h & mask;; i = (i + 1) & mask) {
		struct slot *s = &m->slots[i];

		if (!s->key || (s->hash == h && strcmp(s->key, key) == 0))
			return s;
	}
}

static int grow(struct hashmap *m)
{
	struct slot *old = m->slots;
	size_t old_cap = m->cap;
	struct slot *slots = calloc(old_cap * 2, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	m->slots = slots;
	m->cap = old_cap * 2;
	for (size_t i = 0; i < old_cap; i++)
		if (old[i].key)
			*find(m, old[i].key, old[i].hash) = old[i];
	free(old);
	return 0;
}

int hashmap_put(struct hashmap *m, const char *key, void *value)
{
	uint64_t h = hash_string(key);
	struct slot *s;

	if ((m->size + 1) * 4 > m->cap * 3) {
		int r = grow(m);
		if (r < 0)
			return r;
	}
	s = find(m, key, h);
	if (!s->key)
		m->size++;
	s->key = key;
	s->hash = h;
	s->value = value;
	return 0;
}

void *hashmap_get(const struct hashmap *m, const char *key)
{
	struct slot *s = find(m, key, hash_string(key));

	return s->key ? s->value : NULL;
}

void *hashmap_remove(struct hashmap *m, const char *key)
{
	size_t mask = m->cap - 1;
	struct slot *s = find(m, key, hash_string(key));
	void *value;
	size_t i, j;

	if (!s->key)
		return NULL;
	value = s->value;
	/* Backward-shift deletion keeps probe chains intact without tombstones. */
	i = (size_t)(s - m->slots);
	j = i;
	for (;;) {
		size_t home;

		j = (j + 1) & mask;
		if (!m->slots[j].key)
			break;
		home = m->slots[j].hash & mask;
		/* Move j back to i unless its home lies cyclically in (i, j]. */
		if ((j > i && (home <= i || home > j)) || (j < i && (home <= i && home > j))) {
			m->slots[i] = m->slots[j];
			i = j;
		}
	}
	m->slots[i].key = NULL;
	m->size--;
	return value;
}

size_t hashmap_size(const struct hashmap *m)
{
	return m->size;
}

void *hashmap_next(const struct hashmap *m, size_t *pos)
{
	for (; *pos < m->cap; (*pos)++)
		if (m->slots[*pos].key)
			return m->slots[(*pos)++].value;
	return NULL;
}
