/*
 * instance/backup_leftover: which incomplete multipart uploads a completed backup aborts:
 * only a backup's data object right under its cluster's prefix, never a deeper key (a
 * destination path nested under this one), another file or another cluster's backup.
 * The sweep itself runs against versitygw in the backup fault checks
 * (test/integration/instance/backup_fault_checks.sh).
 */
#include <string.h>

#include "instance/backup.h"
#include "unit.h"

START_TEST(cluster_prefix)
{
	char p[INST_BACKUP_KEY_MAX];

	inst_backup_cluster_prefix("base/cache/prod/nightly-1.r2/dump.rdb", p);
	ck_assert_str_eq(p, "base/cache/prod/");
	inst_backup_cluster_prefix("cache/prod/b/appendonlydir.tar.gz", p);
	ck_assert_str_eq(p, "cache/prod/");
	inst_backup_cluster_prefix("b/dump.rdb", p); /* never a real key: the bucket's root */
	ck_assert_str_eq(p, "");
	inst_backup_cluster_prefix("dump.rdb", p);
	ck_assert_str_eq(p, "");
}
END_TEST

START_TEST(leftover_keys)
{
	static const struct {
		const char *key;
		bool ours;
	} cases[] = {
		{ "base/cache/prod/nightly-1/dump.rdb", true },
		{ "base/cache/prod/nightly-1.r3/dump.rdb", true },
		{ "base/cache/prod/x/appendonlydir.tar.gz", true },
		{ "base/cache/prod/x/manifest.json", false },  /* a single PUT, never multipart */
		{ "base/cache/prod/x/notes/dump.rdb", false }, /* deeper: another path's */
		{ "base/cache/prod/dump.rdb", false },         /* no backup directory */
		{ "base/cache/prod//dump.rdb", false },        /* an empty one */
		{ "base/cache/prod-eu/x/dump.rdb", false },    /* another namespace */
		{ "base/cache/prod/x/dump.rdb.tmp", false },   /* another file */
		{ "other/cache/prod/x/dump.rdb", false },      /* another path */
	};

	for (size_t i = 0; i < ARRAY_LEN(cases); i++)
		ck_assert_msg(inst_backup_leftover_key("base/cache/prod/", cases[i].key) ==
		                      cases[i].ours,
		              "%s", cases[i].key);
}
END_TEST

static Suite *backup_leftover_suite(void)
{
	Suite *s = suite_create("instance_backup_leftover");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, cluster_prefix);
	tcase_add_test(tc, leftover_keys);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(backup_leftover_suite)
