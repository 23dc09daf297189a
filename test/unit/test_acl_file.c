/*
 * Unit tests for api/acl_file: the ACL file of spec.aclConfigSecret. A good file gives
 * its users with their rules as written; each refused line refuses the whole file with
 * the line number and the reason, never a rule's text (a rule may be a password); the
 * operator's users and spec.users' cannot be redefined, in any case for the former.
 */
#include <errno.h>
#include <string.h>

#include "api/acl_file.h"
#include "unit.h"

#define HASH64 "5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8"

static int parse(const char *text, struct api_acl_file *f, struct err *e)
{
	static const char *const taken[] = { "app" };

	return api_acl_file_parse(text, strlen(text), taken, ARRAY_LEN(taken), f, e);
}

START_TEST(a_good_file_gives_every_user_and_rule)
{
	const char *text = "# the team's users\r\n"
	                   "user reader on >s3cret ~cache:* +@read\r\n"
	                   "\n"
	                   "  USER\twriter ON #" HASH64 " nopass ~* +@write -@dangerous\n"
	                   "user idle";
	struct api_acl_file f;
	struct err e = { 0 };
	const struct api_acl_file_user *u;

	ck_assert_int_eq(parse(text, &f, &e), 0);
	ck_assert_uint_eq(f.n, 3);
	ck_assert_ptr_nonnull(u = api_acl_file_user(&f, "reader"));
	ck_assert_uint_eq(u->line, 2);
	ck_assert_uint_eq(u->nrules, 4);
	ck_assert_str_eq(u->rules[1], ">s3cret");
	ck_assert_str_eq(u->rules[3], "+@read"); /* the \r is not part of the rule */
	ck_assert_ptr_nonnull(u = api_acl_file_user(&f, "writer"));
	ck_assert_uint_eq(u->line, 4);
	ck_assert_uint_eq(u->nrules, 6);
	ck_assert_str_eq(u->rules[0], "ON"); /* keywords are Redis's, in any case */
	ck_assert_ptr_nonnull(u = api_acl_file_user(&f, "idle"));
	ck_assert_uint_eq(u->nrules, 0);
	ck_assert_ptr_null(api_acl_file_user(&f, "app"));
	api_acl_file_release(&f);
	ck_assert_uint_eq(f.n, 0);
}
END_TEST

static const struct {
	const char *text, *msg; /* msg: the start of e.msg */
} refused[] = {
	{ "user a on\nacl setuser b on\n", "line 2: must be \"user <name> <rules>...\"" },
	{ "user\n", "line 1: must be" },
	{ "user a on\n\nuser default on nopass +@all\n", "line 3: user default belongs to the op" },
	{ "user REDIS-OPERATOR on\n", "line 1: user REDIS-OPERATOR belongs to the operator" },
	{ "user app on >pw\n", "line 1: user app is defined by spec.users" },
	{ "user b on\nuser b off\n", "line 2: user b is already defined on line 1" },
	{ "user b on (+@all ~*)\n", "line 1 (user b), rule 2: a selector" },
	{ "user b on (~x\n", "line 1 (user b), rule 2: a selector" },
	{ "user b on ~*)\n", "line 1 (user b), rule 2: a selector" },
	{ "user b on #abc\n", "line 1 (user b), rule 2: a password hash" },
	{ "user b on !" HASH64 "0\n", "line 1 (user b), rule 2: a password hash" },
	{ "user b on >p\xc3\xa4ss\n", "line 1 (user b), rule 2: a rule holds a control" },
	{ "user b on >p\x01ss\n", "line 1 (user b), rule 2: a rule holds a control" },
	{ "user >hunter2 on\n", "line 1: the user name is missing, starts like a rule" },
};

START_TEST(a_refused_line_refuses_the_file)
{
	struct api_acl_file f = { 0 };
	struct err e = { 0 };
	const char *text = refused[_i].text;

	ck_assert_int_eq(parse(text, &f, &e), -EINVAL);
	ck_assert_msg(strncmp(e.msg, refused[_i].msg, strlen(refused[_i].msg)) == 0, "case %d: %s",
	              _i, e.msg);
	ck_assert_uint_eq(f.n, 0); /* nothing of it: never half applied */
	ck_assert_ptr_null(f.users);
	/* the reason never quotes a rule */
	ck_assert_ptr_null(strstr(e.msg, "hunter2"));
	ck_assert_ptr_null(strstr(e.msg, ">p"));
	ck_assert_ptr_null(strstr(e.msg, "abc"));
}
END_TEST

START_TEST(limits_and_binary_are_refused)
{
	struct api_acl_file f;
	struct err e = { 0 };
	size_t n = API_ACL_FILE_MAX + 1;
	char *big = xmalloc(n);

	memset(big, '\n', n);
	ck_assert_int_eq(api_acl_file_parse(big, n, NULL, 0, &f, &e), -E2BIG);
	free(big);
	err_clear(&e); /* the first error is kept */
	ck_assert_int_eq(api_acl_file_parse("user a\0b", 8, NULL, 0, &f, &e), -EINVAL);
	ck_assert_ptr_nonnull(strstr(e.msg, "NUL"));
	ck_assert_int_eq(api_acl_file_parse("", 0, NULL, 0, &f, &e), 0);
	ck_assert_uint_eq(f.n, 0);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("acl_file");
	TCase *t = tcase_create("parse");

	tcase_add_test(t, a_good_file_gives_every_user_and_rule);
	tcase_add_loop_test(t, a_refused_line_refuses_the_file, 0, ARRAY_LEN(refused));
	tcase_add_test(t, limits_and_binary_are_refused);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(make_suite)
