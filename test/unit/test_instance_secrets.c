/*
 * Unit tests for instance/secrets: reading the password files and noticing their
 * changes. inst_creds_refresh() takes the files' stamp before it reads them, so a file
 * caught half-written (truncated, not yet filled) fails this time and the write that
 * completes it, even one landing while the failed read ran, is a change the next call
 * picks up. These tests pin the visible half: the failure keeps the old passwords and
 * the completed file is loaded.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "instance/internal.h"
#include "testutil.h"
#include "unit.h"

static char root[256], auth[300], opauth[300], users[300];
static struct inst_settings set;
static struct inst_creds c; /* loaded from the files setup() writes */

static void put(const char *dir, const char *text)
{
	char p[400];
	FILE *f;

	snprintf(p, sizeof(p), "%s/password", dir);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	fputs(text, f);
	fclose(f);
}

static void setup(void)
{
	tu_tmpdir(root, sizeof(root), "inst-secrets");
	snprintf(auth, sizeof(auth), "%s/auth", root);
	snprintf(opauth, sizeof(opauth), "%s/opauth", root);
	snprintf(users, sizeof(users), "%s/users", root);
	ck_assert_int_eq(mkdir(auth, 0700), 0);
	ck_assert_int_eq(mkdir(opauth, 0700), 0);
	memset(&set, 0, sizeof(set));
	set.auth_dir = auth;
	set.operator_auth_dir = opauth;
	set.users_dir = users; /* absent: no spec users */
	put(auth, "default-1\n");
	put(opauth, "operator-1");
	ck_assert_int_eq(inst_creds_load(&set, &c, NULL), 0);
	ck_assert_str_eq(c.operator_pw, "operator-1");
}

static void teardown(void)
{
	inst_creds_release(&c);
	tu_rmtree(root);
}

START_TEST(unchanged_files_are_not_reread)
{
	struct err e = { 0 };

	ck_assert_int_eq(inst_creds_refresh(&set, &c, &e), 0);
}
END_TEST

START_TEST(rotation_keeps_the_old_password_until_dropped)
{
	struct err e = { 0 };

	put(opauth, "operator-2");
	ck_assert_int_eq(inst_creds_refresh(&set, &c, &e), 1);
	ck_assert_str_eq(c.operator_pw, "operator-2");
	ck_assert_uint_eq(c.operator_cur.n, 1);
	ck_assert_uint_eq(c.operator_all.n, 2);
	inst_creds_drop_old(&c);
	ck_assert_uint_eq(c.operator_all.n, 1);
}
END_TEST

START_TEST(a_half_written_file_is_retried_once_complete)
{
	struct err e = { 0 };

	put(opauth, ""); /* truncated by the writer, not yet filled */
	ck_assert_int_lt(inst_creds_refresh(&set, &c, &e), 0);
	ck_assert_ptr_nonnull(strstr(e.msg, "opauth/password: empty password"));
	ck_assert_str_eq(c.operator_pw, "operator-1");         /* kept */
	ck_assert_int_eq(inst_creds_refresh(&set, &c, &e), 0); /* no new change yet */
	put(opauth, "operator-2");
	ck_assert_int_eq(inst_creds_refresh(&set, &c, &e), 1);
	ck_assert_str_eq(c.operator_pw, "operator-2");
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("instance_secrets");
	TCase *t = tcase_create("refresh");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, unchanged_files_are_not_reread);
	tcase_add_test(t, rotation_keeps_the_old_password_until_dropped);
	tcase_add_test(t, a_half_written_file_is_retried_once_complete);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(make_suite)
