/*
 * Unit tests for the users of spec.aclConfigSecret's file in the manager's pure parts: the
 * rule list (instance/acl.c, INST_ACL_FILE: "reset", the line's rules as written, the
 * deny list last) and the rendered config (instance/render.c: a file user is rendered,
 * one that spec.users also defines is spec.users' alone); and the Secret volume read
 * (instance/secrets.c): the file is kept as read, and reported changed until applied.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "api/acl_file.h"
#include "instance/acl.h"
#include "instance/internal.h"
#include "instance/render.h"
#include "lib/buf.h"
#include "testutil.h"
#include "unit.h"

#define S(x)    ((char *)(x))
#define PW_HASH "30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4" /* "pw" */

static size_t deny_len(void)
{
	size_t n = 0;

	while (inst_acl_deny[n])
		n++;
	return n;
}

START_TEST(file_rules_are_the_line_then_the_deny_list)
{
	char *rules[] = { S("ON"), S("~*"), S("+@all"), S("+CONFIG") };
	struct inst_pwset p = { 0 };
	struct inst_strv s = { 0 };
	size_t n = deny_len();

	p.n = 1; /* ignored: the file's passwords are its own */
	inst_acl_rules(INST_ACL_FILE, true, &p, rules, 4, &s);
	ck_assert_uint_eq(s.n, 1 + 4 + n);
	ck_assert_str_eq(s.v[0], "reset");
	for (size_t i = 0; i < 4; i++) /* as written, in their case */
		ck_assert_str_eq(s.v[1 + i], rules[i]);
	for (size_t k = 0; k < n; k++) /* after +CONFIG: -config wins */
		ck_assert_str_eq(s.v[5 + k], inst_acl_deny[k]);
	inst_strv_release(&s);
	rules[1] = S(">pw");
	rules[2] = S("<pw");
	inst_acl_rules(INST_ACL_FILE, true, NULL, rules, 4, &s);
	ck_assert_str_eq(s.v[2], "#" PW_HASH);
	ck_assert_str_eq(s.v[3], "!" PW_HASH);
	inst_strv_release(&s);
}
END_TEST

static char *render_with_file(const char *file)
{
	static char *alice_rules[] = { S("+@read") };
	static struct inst_user_spec users[] = { { S("alice"), true, 1, alice_rules } };
	static const char *const taken[] = { "alice" };
	struct inst_desired d = { .nusers = 1, .users = users };
	struct inst_render r = { .port = 6379, .bind = "0.0.0.0", .desired = &d };
	struct inst_conf c = { 0 };
	struct buf b = BUF_INIT(INST_CONF_MAX);
	struct err e = { 0 };

	r.unix_socket = "/run/redis.sock";
	r.data_dir = "/data";
	ck_assert_int_eq(api_acl_file_parse(file, strlen(file), taken, 1, &d.acl, &e), 0);
	/* as the manager keeps it after a refused change: alice in the file too */
	d.acl.users[0].name[0] = 'a', d.acl.users[0].name[1] = 'l';
	ck_assert_int_eq(inst_render_lines(&r, &c, &e), 0);
	ck_assert_int_eq(inst_conf_text(&c, &b, &e), 0);
	inst_conf_release(&c);
	api_acl_file_release(&d.acl);
	return buf_detach(&b, NULL);
}

START_TEST(file_users_are_rendered_spec_users_win)
{
	char *text = render_with_file("user xxice on >a +@all\nuser reader on >pw ~r:* +get\n");

	ck_assert_msg(strstr(text, "\nuser \"reader\" \"reset\" \"on\" \"#" PW_HASH
	                           "\" \"~r:*\" \"+get\" \"-client|kill\""),
	              "%s", text);
	ck_assert_ptr_null(strstr(text, "\">pw\"")); /* never in clear */
	ck_assert_msg(strstr(text, "\nuser \"alice\" \"reset\" \"on\" \"+@read\""), "%s", text);
	ck_assert_ptr_null(strstr(strstr(text, "\nuser \"alice\"") + 1, "\nuser \"alice\""));
	free(text);
}
END_TEST

static void put(const char *dir, const char *name, const char *text)
{
	char p[400];
	FILE *f;

	mkdir(dir, 0700);
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	ck_assert_ptr_nonnull(f = fopen(p, "w"));
	fputs(text, f);
	fclose(f);
}

/* The first boot renders none of the file (d->acl is empty): the supervisor's secret
 * poll must apply it once the server runs, so the file is "changed" until applied. */
START_TEST(a_read_file_is_pending_until_applied)
{
	char root[256], auth[300], op[300], acl[300];
	struct inst_settings set = { 0 };
	struct inst_creds c = { 0 };
	struct err e = { 0 };

	tu_tmpdir(root, sizeof(root), "acl-file");
	snprintf(auth, sizeof(auth), "%s/auth", root);
	snprintf(op, sizeof(op), "%s/op", root);
	snprintf(acl, sizeof(acl), "%s/acl", root);
	put(auth, "password", "d");
	put(op, "password", "o");
	set.auth_dir = auth, set.operator_auth_dir = op, set.acl_dir = acl;
	set.users_dir = acl; /* a file, not a directory: no spec users */
	ck_assert_int_eq(inst_creds_load(&set, &c, &e), 0);
	ck_assert_ptr_null(c.acl_text); /* no file: none */
	ck_assert_int_eq(inst_creds_refresh(&set, &c, &e), 0);
	put(acl, "acl", "user a on >p +get\n");
	ck_assert_int_eq(inst_creds_refresh(&set, &c, &e), 1);
	ck_assert_uint_eq(c.acl_len, 18);
	ck_assert_int_eq(memcmp(c.acl_text, "user a on >p +get\n", 18), 0);
	ck_assert_int_eq(inst_creds_refresh(&set, &c, &e), 1); /* not applied yet */
	c.acl_applied = true;
	ck_assert_int_eq(inst_creds_refresh(&set, &c, &e), 0);
	inst_creds_release(&c);
	tu_rmtree(root);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("acl_render");
	TCase *t = tcase_create("file users");

	tcase_add_test(t, file_rules_are_the_line_then_the_deny_list);
	tcase_add_test(t, file_users_are_rendered_spec_users_win);
	tcase_add_test(t, a_read_file_is_pending_until_applied);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(make_suite)
