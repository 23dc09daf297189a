/*
 * strmap: string-keyed hash map with linear probing (see strmap.h).
 * Invariants: cap is 0 or a power of two >= STRMAP_MIN_CAP; len * 4 <= cap * 3; every
 * key lies in the unbroken run of occupied slots that starts at its home slot
 * (hash & (cap - 1)), which is what lets lookups stop at the first empty slot and
 * removal shift later entries back instead of leaving tombstones.
 */
#include "strmap.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"

#define STRMAP_MIN_CAP 16

uint64_t strmap_hash(const char *key)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (const unsigned char *p = (const unsigned char *)key; *p; p++)
		h = (h ^ *p) * 0x100000001b3ULL;
	/* FNV's low bits are weak for short keys; linear probing uses exactly those. */
	h = (h ^ (h >> 33)) * 0xff51afd7ed558ccdULL;
	return h ^ (h >> 33);
}

void strmap_init(struct strmap *m)
{
	m->slots = NULL;
	m->cap = 0;
	m->len = 0;
}

void strmap_release(struct strmap *m, void (*free_value)(void *))
{
	if (!m)
		return;
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->slots[i].key)
			continue;
		free(m->slots[i].key);
		if (free_value)
			free_value(m->slots[i].value);
	}
	free(m->slots);
	strmap_init(m);
}

size_t strmap_len(const struct strmap *m)
{
	return m->len;
}

/* The slot holding key, or the empty slot where it would go. cap must be > 0. */
static size_t strmap_probe(const struct strmap *m, const char *key, uint64_t hash)
{
	size_t mask = m->cap - 1;
	size_t i = (size_t)hash & mask;

	while (m->slots[i].key) {
		if (m->slots[i].hash == hash && strcmp(m->slots[i].key, key) == 0)
			break;
		i = (i + 1) & mask;
	}
	return i;
}

struct strmap_entry *strmap_find(const struct strmap *m, const char *key)
{
	size_t i;

	if (!m->len)
		return NULL;
	i = strmap_probe(m, key, strmap_hash(key));
	return m->slots[i].key ? &m->slots[i] : NULL;
}

void *strmap_get(const struct strmap *m, const char *key)
{
	struct strmap_entry *e = strmap_find(m, key);

	return e ? e->value : NULL;
}

bool strmap_contains(const struct strmap *m, const char *key)
{
	return strmap_find(m, key) != NULL;
}

/* Doubles the table (or creates it) and reinserts every entry; keys are not copied. */
static void strmap_grow(struct strmap *m)
{
	struct strmap_entry *old = m->slots;
	size_t old_cap = m->cap;

	m->cap = old_cap ? old_cap * 2 : STRMAP_MIN_CAP;
	m->slots = xcalloc(m->cap, sizeof(*m->slots));
	for (size_t i = 0; i < old_cap; i++) {
		if (old[i].key)
			m->slots[strmap_probe(m, old[i].key, old[i].hash)] = old[i];
	}
	free(old);
}

struct strmap_entry *strmap_upsert(struct strmap *m, const char *key, bool *created)
{
	uint64_t hash = strmap_hash(key);
	size_t i;

	if ((m->len + 1) * 4 > m->cap * 3)
		strmap_grow(m);
	i = strmap_probe(m, key, hash);
	if (created)
		*created = m->slots[i].key == NULL;
	if (!m->slots[i].key) {
		m->slots[i].key = xstrdup(key);
		m->slots[i].value = NULL;
		m->slots[i].hash = hash;
		m->len++;
	}
	return &m->slots[i];
}

void *strmap_set(struct strmap *m, const char *key, void *value)
{
	struct strmap_entry *e = strmap_upsert(m, key, NULL);
	void *old = e->value;

	e->value = value;
	return old;
}

/*
 * Backward-shift deletion: walk the run after the hole; an entry whose home slot does
 * not lie cyclically between the hole and itself can move into the hole, which then
 * moves to where that entry was. The run ends at the first empty slot.
 */
static void strmap_close_hole(struct strmap *m, size_t hole)
{
	size_t mask = m->cap - 1;

	for (size_t j = (hole + 1) & mask; m->slots[j].key; j = (j + 1) & mask) {
		size_t home = (size_t)m->slots[j].hash & mask;

		if (((j - home) & mask) >= ((j - hole) & mask)) {
			m->slots[hole] = m->slots[j];
			hole = j;
		}
	}
	m->slots[hole].key = NULL;
	m->slots[hole].value = NULL;
}

bool strmap_remove(struct strmap *m, const char *key, void **value_out)
{
	struct strmap_entry *e = strmap_find(m, key);

	if (!e)
		return false;
	if (value_out)
		*value_out = e->value;
	free(e->key);
	e->key = NULL;
	m->len--;
	strmap_close_hole(m, (size_t)(e - m->slots));
	return true;
}

struct strmap_entry *strmap_next(const struct strmap *m, size_t *iter)
{
	while (*iter < m->cap) {
		struct strmap_entry *e = &m->slots[(*iter)++];

		if (e->key)
			return e;
	}
	return NULL;
}
