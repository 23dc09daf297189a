/*
 * strmap: a hash map from NUL-terminated strings to pointers.
 *
 *   struct strmap m;
 *   strmap_init(&m);
 *   strmap_set(&m, "default/web", obj);            (returns the value it replaced)
 *   obj = strmap_get(&m, "default/web");           (NULL when absent)
 *   e = strmap_upsert(&m, key, &created);          (one probe for "find or add")
 *   strmap_remove(&m, "default/web", &old);
 *   for (size_t it = 0; (e = strmap_next(&m, &it));) use(e->key, e->value);
 *   strmap_release(&m, free_value);
 *
 * Open addressing with linear probing and backward-shift deletion (no tombstones), so
 * lookups stay short however many keys come and go. The table doubles at 3/4 full and
 * never shrinks (strmap_release gives the memory back).
 *
 * Ownership: the map copies each key and frees it on removal; entry->key is borrowed
 * by callers. Values are the caller's: the map never frees one except through the
 * free_value callback of strmap_release. A `struct strmap_entry *` is valid until the
 * next insertion or removal (slots move); the key string it points to stays valid
 * until that key is removed. Do not insert or remove while iterating.
 *
 * The map does not limit key length or count; callers holding peer-controlled keys cap
 * both. Not thread-safe: guard it like the rest of its owner.
 */
#ifndef REDIS_OPERATOR_STRMAP_H
#define REDIS_OPERATOR_STRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strmap_entry {
	char *key;     /* owned by the map; NULL marks an empty slot */
	void *value;   /* the caller's */
	uint64_t hash; /* of key, kept to skip string compares and rehashing */
};

struct strmap {
	struct strmap_entry *slots; /* NULL until the first insertion */
	size_t cap;                 /* a power of two, or 0 */
	size_t len;                 /* keys present */
};

#define STRMAP_INIT                                                                                \
	{                                                                                          \
		NULL, 0, 0                                                                         \
	}

void strmap_init(struct strmap *m);
/* Frees every key, calls free_value (when not NULL) on every value, and empties the
 * map, which may be reused. NULL-safe. */
void strmap_release(struct strmap *m, void (*free_value)(void *));

size_t strmap_len(const struct strmap *m);
/* The entry for key, or NULL. Borrowed; see the validity rule above. */
struct strmap_entry *strmap_find(const struct strmap *m, const char *key);
/* The value for key, or NULL when absent (store no NULL values if that is ambiguous). */
void *strmap_get(const struct strmap *m, const char *key);
bool strmap_contains(const struct strmap *m, const char *key);

/*
 * The entry for key, added with a NULL value when absent; *created (when not NULL)
 * tells which. Borrowed; see the validity rule above.
 */
struct strmap_entry *strmap_upsert(struct strmap *m, const char *key, bool *created);
/* Maps key to value; returns the value it replaced, or NULL. */
void *strmap_set(struct strmap *m, const char *key, void *value);
/* Removes key; true when it was present, with its value in *value_out (when not NULL). */
bool strmap_remove(struct strmap *m, const char *key, void **value_out);

/* Iteration: start *iter at 0; returns each entry once, then NULL. Order is unspecified. */
struct strmap_entry *strmap_next(const struct strmap *m, size_t *iter);

/* The map's string hash (FNV-1a 64 with a final mix), for callers that want the same one. */
uint64_t strmap_hash(const char *key);

#endif
