/*
 * Unit tests for lib/engine/engine: version parsing (exactly three parts, each 0..999),
 * the packed version's order and parts, and engine names.
 */
#include <errno.h>
#include <string.h>

#include "lib/engine/engine.h"
#include "unit.h"

static const struct version_case {
	const char *s;
	int want;
	unsigned v;
} version_cases[] = {
	{ "7.0.15", 0, VK_VERSION(7, 0, 15) },
	{ "8.0.1", 0, VK_VERSION(8, 0, 1) },
	{ "255.255.255", 0, VK_VERSION(255, 255, 255) },
	{ "0.0.0", 0, 0 },
	{ "999.999.999", 0, VK_VERSION(999, 999, 999) },
	{ "1000.0.0", -EINVAL, 0 },
	{ "7.0", -EINVAL, 0 },
	{ "7.0.15.1", -EINVAL, 0 },
	{ "7..1", -EINVAL, 0 },
	{ "7.0.", -EINVAL, 0 },
	{ "", -EINVAL, 0 },
	{ "a.b.c", -EINVAL, 0 },
	{ "7.0.15 ", -EINVAL, 0 },
	{ "-1.0.0", -EINVAL, 0 },
	{ "v7.0.0", -EINVAL, 0 },
};

START_TEST(version_parse)
{
	const struct version_case *c = &version_cases[_i];
	unsigned v = 12345;

	ck_assert_int_eq(vk_version_parse(c->s, strlen(c->s), &v), c->want);
	ck_assert_uint_eq(v, c->want ? 12345 : c->v);
}
END_TEST

START_TEST(names)
{
	ck_assert(VK_VERSION(7, 0, 15) < VK_VERSION(7, 2, 0));
	ck_assert(VK_VERSION(7, 2, 4) < VK_VERSION(8, 0, 0));
	ck_assert_uint_eq(VK_VERSION_MAJOR(VK_VERSION(8, 0, 1)), 8);
	ck_assert_uint_eq(VK_VERSION_MINOR(VK_VERSION(7, 2, 4)), 2);
	ck_assert_uint_eq(VK_VERSION_PATCH(VK_VERSION(7, 0, 15)), 15);
	ck_assert_str_eq(vk_engine_name(VK_ENGINE_REDIS), "redis");
	ck_assert_str_eq(vk_engine_name(VK_ENGINE_VALKEY), "valkey");
	ck_assert_str_eq(vk_engine_name(VK_ENGINE_UNKNOWN), "unknown");
	ck_assert_str_eq(vk_engine_name((enum vk_engine)42), "unknown");
}
END_TEST

static Suite *engine_engine_suite(void)
{
	Suite *s = suite_create("engine_engine");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, version_parse, 0, ARRAY_LEN(version_cases));
	tcase_add_test(tc, names);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(engine_engine_suite)
