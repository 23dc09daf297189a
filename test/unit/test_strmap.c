/* Unit tests for lib/strmap: basic operations, growth, removal against a reference
 * model (backward-shift deletion), iteration, ownership of keys and values. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lib/strmap.h"
#include "unit.h"

static int tags[4];

START_TEST(empty_map)
{
	struct strmap m = STRMAP_INIT;
	size_t it = 0;
	void *v = &tags[0];

	ck_assert_uint_eq(strmap_len(&m), 0);
	ck_assert_ptr_null(strmap_find(&m, "a"));
	ck_assert_ptr_null(strmap_get(&m, "a"));
	ck_assert(!strmap_contains(&m, ""));
	ck_assert(!strmap_remove(&m, "a", &v));
	ck_assert_ptr_eq(v, &tags[0]); /* untouched on failure */
	ck_assert_ptr_null(strmap_next(&m, &it));
	strmap_release(&m, NULL);
	strmap_release(NULL, NULL);
}
END_TEST

START_TEST(set_get_replace_remove)
{
	struct strmap m;
	void *v = NULL;

	strmap_init(&m);
	ck_assert_ptr_null(strmap_set(&m, "default/web", &tags[0]));
	ck_assert_ptr_null(strmap_set(&m, "default/db", &tags[1]));
	ck_assert_ptr_null(strmap_set(&m, "", &tags[2])); /* the empty key is a key */
	ck_assert_uint_eq(strmap_len(&m), 3);
	ck_assert_ptr_eq(strmap_get(&m, "default/web"), &tags[0]);
	ck_assert_ptr_eq(strmap_get(&m, "default/db"), &tags[1]);
	ck_assert_ptr_eq(strmap_get(&m, ""), &tags[2]);
	ck_assert_ptr_null(strmap_get(&m, "default/we"));
	ck_assert_ptr_null(strmap_get(&m, "default/webx"));

	ck_assert_ptr_eq(strmap_set(&m, "default/web", &tags[3]), &tags[0]);
	ck_assert_uint_eq(strmap_len(&m), 3);
	ck_assert_ptr_eq(strmap_get(&m, "default/web"), &tags[3]);

	ck_assert(strmap_remove(&m, "default/web", &v));
	ck_assert_ptr_eq(v, &tags[3]);
	ck_assert(!strmap_contains(&m, "default/web"));
	ck_assert(!strmap_remove(&m, "default/web", NULL));
	ck_assert(strmap_remove(&m, "", NULL));
	ck_assert_uint_eq(strmap_len(&m), 1);
	ck_assert(strmap_contains(&m, "default/db"));
	strmap_release(&m, NULL);
	ck_assert_uint_eq(strmap_len(&m), 0);
	/* Usable again after release. */
	strmap_set(&m, "again", &tags[0]);
	ck_assert_ptr_eq(strmap_get(&m, "again"), &tags[0]);
	strmap_release(&m, NULL);
}
END_TEST

START_TEST(upsert_and_key_ownership)
{
	struct strmap m = STRMAP_INIT;
	struct strmap_entry *e;
	char key[16] = "ns/name";
	const char *stored;
	bool created = false;

	e = strmap_upsert(&m, key, &created);
	ck_assert(created);
	ck_assert_ptr_null(e->value);
	ck_assert_ptr_ne(e->key, key); /* copied */
	e->value = &tags[1];
	stored = e->key;
	key[0] = 'X'; /* the caller's buffer no longer matters */
	e = strmap_upsert(&m, "ns/name", &created);
	ck_assert(!created);
	ck_assert_ptr_eq(e->value, &tags[1]);
	ck_assert_ptr_eq(strmap_find(&m, "ns/name"), e);
	ck_assert_ptr_null(strmap_find(&m, key));
	/* The stored key string survives growth of the table. */
	for (int i = 0; i < 1000; i++) {
		char k[32];

		snprintf(k, sizeof(k), "k%d", i);
		strmap_upsert(&m, k, NULL);
	}
	ck_assert_ptr_eq(strmap_find(&m, "ns/name")->key, stored);
	ck_assert_str_eq(stored, "ns/name");
	strmap_release(&m, NULL);
}
END_TEST

static int freed;

static void count_free(void *v)
{
	freed++;
	free(v);
}

START_TEST(release_frees_values)
{
	struct strmap m = STRMAP_INIT;

	freed = 0;
	for (int i = 0; i < 100; i++) {
		char k[16];

		snprintf(k, sizeof(k), "%d", i);
		strmap_set(&m, k, xstrdup(k));
	}
	strmap_release(&m, count_free);
	ck_assert_int_eq(freed, 100);
}
END_TEST

/* Many keys, removals in a scrambled order, checked against a plain array after each
 * step. Sizes include ones just around the growth thresholds. */
static const unsigned model_sizes[] = { 1, 12, 13, 25, 100, 10000 };

static uint64_t lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 33;
}

static void check_model(const struct strmap *m, const bool *present, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		char k[24];
		uintptr_t *v;

		snprintf(k, sizeof(k), "ns-%u/pod", i);
		v = strmap_get(m, k);
		ck_assert_msg(present[i] == (v != NULL), "key %s: present %d", k, present[i]);
		if (v)
			ck_assert_uint_eq(*v, i);
	}
}

START_TEST(against_model)
{
	unsigned n = model_sizes[_i];
	uintptr_t *vals = xcalloc(n, sizeof(*vals));
	bool *present = xcalloc(n, sizeof(*present));
	struct strmap m = STRMAP_INIT;
	uint64_t seed = 99;
	size_t left = n;

	for (unsigned i = 0; i < n; i++) {
		char k[24];

		vals[i] = i;
		present[i] = true;
		snprintf(k, sizeof(k), "ns-%u/pod", i);
		ck_assert_ptr_null(strmap_set(&m, k, &vals[i]));
	}
	ck_assert_uint_eq(strmap_len(&m), n);
	/* Growth at 3/4 full: 12 keys fit 16 slots, 13 need 32. */
	if (n == 12 || n == 13)
		ck_assert_uint_eq(m.cap, n == 12 ? 16 : 32);
	ck_assert_uint_le(strmap_len(&m) * 4, m.cap * 3);
	check_model(&m, present, n);
	while (left > n / 4) {
		unsigned i = (unsigned)(lcg(&seed) % n);
		char k[24];

		snprintf(k, sizeof(k), "ns-%u/pod", i);
		ck_assert(strmap_remove(&m, k, NULL) == present[i]);
		left -= present[i];
		present[i] = false;
		ck_assert_uint_eq(strmap_len(&m), left);
		if (n <= 100 || left % 997 == 0)
			check_model(&m, present, n);
	}
	check_model(&m, present, n);
	strmap_release(&m, NULL);
	free(vals);
	free(present);
}
END_TEST

START_TEST(iteration_visits_each_once)
{
	struct strmap m = STRMAP_INIT;
	unsigned seen[500] = { 0 };
	struct strmap_entry *e;
	size_t it = 0, count = 0;

	for (unsigned i = 0; i < 500; i++) {
		char k[16];

		snprintf(k, sizeof(k), "k%u", i);
		strmap_set(&m, k, &seen[i]);
	}
	for (unsigned i = 0; i < 500; i += 2) {
		char k[16];

		snprintf(k, sizeof(k), "k%u", i);
		strmap_remove(&m, k, NULL);
	}
	while ((e = strmap_next(&m, &it))) {
		unsigned *p = e->value;
		char k[16];

		snprintf(k, sizeof(k), "k%u", (unsigned)(p - seen));
		ck_assert_str_eq(e->key, k);
		(*p)++;
		count++;
	}
	ck_assert_uint_eq(count, 250);
	for (unsigned i = 0; i < 500; i++)
		ck_assert_uint_eq(seen[i], i % 2);
	ck_assert_ptr_null(strmap_next(&m, &it)); /* stays finished */
	strmap_release(&m, NULL);
}
END_TEST

START_TEST(hash_is_stable)
{
	/* FNV-1a 64 then a murmur-style mix (values computed independently). Pinned so the
	 * function does not change by accident. */
	ck_assert_uint_eq(strmap_hash(""), 0xecba3df2c3383c52ULL);
	ck_assert_uint_eq(strmap_hash("default/web"), 0x94ba56774a69ff48ULL);
	ck_assert_uint_ne(strmap_hash("a"), strmap_hash("b"));
	ck_assert_uint_ne(strmap_hash("ns/a"), strmap_hash("ns/b"));
	/* Low bits (the home slot) differ across sequential names. */
	{
		unsigned buckets[16] = { 0 };

		for (int i = 0; i < 1600; i++) {
			char k[16];

			snprintf(k, sizeof(k), "pod-%d", i);
			buckets[strmap_hash(k) & 15]++;
		}
		for (int b = 0; b < 16; b++)
			ck_assert_uint_gt(buckets[b], 50);
	}
}
END_TEST

static Suite *strmap_suite(void)
{
	Suite *s = suite_create("strmap");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, empty_map);
	tcase_add_test(tc, set_get_replace_remove);
	tcase_add_test(tc, upsert_and_key_ownership);
	tcase_add_test(tc, release_frees_values);
	tcase_add_loop_test(tc, against_model, 0, ARRAY_LEN(model_sizes));
	tcase_add_test(tc, iteration_visits_each_once);
	tcase_add_test(tc, hash_is_stable);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(strmap_suite)
