/* Unit tests for plugin/args: the command line against the verb table, and the man page
 * and the bash completion checked against that same table (a verb added to the table
 * and forgotten in either fails here). */
#include <errno.h>
#include <string.h>

#include "plugin/plugin.h"
#include "testutil.h"
#include "unit.h"

#define MAX_WORDS 8

static const struct {
	const char *words[MAX_WORDS]; /* argv[1..] */
	int rc;
	const char *verb;
	size_t npos;
	const char *pos1;     /* pos[1], or NULL */
	enum plugin_flag opt; /* checked when opt_value is set */
	const char *opt_value;
	const char *msg; /* substring of e.msg when rc != 0 */
} cases[] = {
	{ { "status", "demo" }, 0, "status", 1, NULL, 0, NULL, NULL },
	{ { "status", "demo", "-o", "json" }, 0, "status", 1, NULL, PLUGIN_F_OUTPUT, "json", NULL },
	{ { "status", "-n", "prod", "demo" },
	  0,
	  "status",
	  1,
	  NULL,
	  PLUGIN_F_NAMESPACE,
	  "prod",
	  NULL },
	{ { "status", "demo", "--namespace=prod" },
	  0,
	  "status",
	  1,
	  NULL,
	  PLUGIN_F_NAMESPACE,
	  "prod",
	  NULL },
	{ { "status", "demo", "--output=yaml" },
	  0,
	  "status",
	  1,
	  NULL,
	  PLUGIN_F_OUTPUT,
	  "yaml",
	  NULL },
	{ { "status", "--help" }, 0, "status", 0, NULL, PLUGIN_F_HELP, "", NULL },
	{ { "switchover", "demo" }, 0, "switchover", 1, NULL, 0, NULL, NULL },
	{ { "switchover", "demo", "demo-2" }, 0, "switchover", 2, "demo-2", 0, NULL, NULL },
	{ { "switchover", "demo", "--", "-odd" }, 0, "switchover", 2, "-odd", 0, NULL, NULL },
	{ { "restart", "demo" }, 0, "restart", 1, NULL, 0, NULL, NULL },
	{ { "restart", "demo", "demo-2" }, 0, "restart", 2, "demo-2", 0, NULL, NULL },
	{ { "restart", "demo", "demo-2", "demo-3" },
	  -EINVAL,
	  NULL,
	  0,
	  NULL,
	  0,
	  NULL,
	  "unexpected argument \"demo-3\"" },
	{ { "backup", "demo", "--name", "b1" }, 0, "backup", 1, NULL, PLUGIN_F_NAME, "b1", NULL },
	{ { "fence", "demo", "all" }, 0, "fence", 2, "all", 0, NULL, NULL },
	{ { "hibernate", "demo", "on", "--kubeconfig", "/k" },
	  0,
	  "hibernate",
	  2,
	  "on",
	  PLUGIN_F_KUBECONFIG,
	  "/k",
	  NULL },
	{ { "-n", "prod", "status", "demo" },
	  0,
	  "status",
	  1,
	  NULL,
	  PLUGIN_F_NAMESPACE,
	  "prod",
	  NULL },
	{ { "--kubeconfig", "/k", "--context=c", "fence", "demo", "c-1" },
	  0,
	  "fence",
	  2,
	  "c-1",
	  PLUGIN_F_CONTEXT,
	  "c",
	  NULL },
	{ { "-n", "prod" }, -EINVAL, NULL, 0, NULL, 0, NULL, "a verb is required" },
	{ { "-o", "json", "status", "demo" }, 0, "status", 1, NULL, PLUGIN_F_OUTPUT, "json", NULL },
	{ { "-o", "json", "switchover", "demo" },
	  -EINVAL,
	  NULL,
	  0,
	  NULL,
	  0,
	  NULL,
	  "switchover: unknown flag -o" },
	{ { NULL }, -EINVAL, NULL, 0, NULL, 0, NULL, "a verb is required" },
	{ { "stat", "demo" }, -EINVAL, NULL, 0, NULL, 0, NULL, "unknown verb \"stat\"" },
	{ { "status" }, -EINVAL, NULL, 0, NULL, 0, NULL, "status: NAME is expected" },
	{ { "promote", "demo" },
	  -EINVAL,
	  NULL,
	  0,
	  NULL,
	  0,
	  NULL,
	  "promote: more arguments are expected" },
	{ { "status", "a", "b" }, -EINVAL, NULL, 0, NULL, 0, NULL, "unexpected argument \"b\"" },
	{ { "status", "demo", "-o" }, -EINVAL, NULL, 0, NULL, 0, NULL, "flag -o needs a value" },
	{ { "status", "demo", "--output=" }, -EINVAL, NULL, 0, NULL, 0, NULL, "empty value" },
	{ { "switchover", "demo", "-o", "json" },
	  -EINVAL,
	  NULL,
	  0,
	  NULL,
	  0,
	  NULL,
	  "switchover: unknown flag -o" },
	{ { "backup", "demo", "--to", "x" }, -EINVAL, NULL, 0, NULL, 0, NULL, "unknown flag --to" },
	{ { "status", "demo", "--help=x" }, -EINVAL, NULL, 0, NULL, 0, NULL, "takes no value" },
	{ { "status", "demo", "--namespacex", "a" },
	  -EINVAL,
	  NULL,
	  0,
	  NULL,
	  0,
	  NULL,
	  "unknown flag --namespacex" },
};

START_TEST(parse_cases)
{
	char *argv[MAX_WORDS + 1] = { (char *)"kubectl-redis" };
	struct plugin_args a;
	struct err e = { 0 };
	int argc = 1, rc;

	while (argc <= MAX_WORDS && cases[_i].words[argc - 1]) {
		argv[argc] = (char *)cases[_i].words[argc - 1];
		argc++;
	}
	memset(&a, 0xa5, sizeof(a));
	rc = plugin_args_parse(argc, argv, &a, &e);
	ck_assert_msg(rc == cases[_i].rc, "case %d: rc %d (%s)", _i, rc, e.msg);
	if (rc) {
		ck_assert_msg(strstr(e.msg, cases[_i].msg), "case %d: message \"%s\" lacks \"%s\"",
		              _i, e.msg, cases[_i].msg);
		return;
	}
	ck_assert_str_eq(a.verb->name, cases[_i].verb);
	ck_assert_uint_eq(a.npos, cases[_i].npos);
	if (cases[_i].npos)
		ck_assert_str_eq(a.pos[0], "demo");
	if (cases[_i].pos1)
		ck_assert_str_eq(a.pos[1], cases[_i].pos1);
	if (cases[_i].opt_value)
		ck_assert_str_eq(a.opt[cases[_i].opt], cases[_i].opt_value);
	if (!cases[_i].opt_value || cases[_i].opt != PLUGIN_F_OUTPUT)
		ck_assert_ptr_null(a.opt[PLUGIN_F_OUTPUT]);
}
END_TEST

/* Every verb has a handler, a synopsis starting with NAME, sane bounds; names unique. */
START_TEST(table_is_sound)
{
	size_t n;
	const struct plugin_verb *v = plugin_verbs(&n);

	ck_assert_uint_ge(n, 9);
	for (size_t i = 0; i < n; i++) {
		ck_assert_msg(v[i].run && v[i].help && *v[i].help, "%s", v[i].name);
		ck_assert_msg(strncmp(v[i].synopsis, "NAME", 4) == 0, "%s", v[i].name);
		ck_assert_msg(v[i].min_pos >= 1 && v[i].min_pos <= v[i].max_pos &&
		                      v[i].max_pos <= PLUGIN_POS_MAX,
		              "%s", v[i].name);
		for (size_t j = 0; j < i; j++)
			ck_assert_str_ne(v[i].name, v[j].name);
	}
}
END_TEST

/* The man page's VERBS section: one ".B <verb> ..." entry per verb, in the table's order. */
START_TEST(man_page_lists_the_verbs)
{
	char *man = tu_must_read("plugin/kubectl-redis.1", NULL), *p, *end, want[64];
	size_t n;
	const struct plugin_verb *v = plugin_verbs(&n);

	p = strstr(man, ".SH VERBS\n");
	ck_assert_ptr_nonnull(p);
	end = strstr(p + 1, ".SH ");
	ck_assert_ptr_nonnull(end);
	*end = '\0';
	for (size_t i = 0; i < n; i++) {
		snprintf(want, sizeof(want), ".TP\n.B %s ", v[i].name);
		ck_assert_msg((p = strstr(p, want)), "man page: no entry \"%s\" (in order)",
		              v[i].name);
	}
	n = 0;
	for (p = strstr(man, ".SH VERBS\n"); (p = strstr(p, ".TP\n.B ")); p++)
		n++;
	ck_assert_uint_eq(n, (plugin_verbs(&n), n));
	free(man);
}
END_TEST

/* completion.bash: its verb list is exactly the table's names, in order. */
START_TEST(completion_lists_the_verbs)
{
	char *c = tu_must_read("plugin/completion.bash", NULL), *p, *q;
	struct buf want = BUF_INIT(BUF_NO_LIMIT);
	size_t n;
	const struct plugin_verb *v = plugin_verbs(&n);

	for (size_t i = 0; i < n; i++)
		buf_printf(&want, "%s%s", i ? " " : "", v[i].name);
	p = strstr(c, "\n_kubectl_redis_verbs=\"");
	ck_assert_ptr_nonnull(p);
	p += strlen("\n_kubectl_redis_verbs=\"");
	q = strchr(p, '"');
	ck_assert_ptr_nonnull(q);
	*q = '\0';
	ck_assert_str_eq(p, buf_cstr(&want));
	buf_release(&want);
	free(c);
}
END_TEST

/* The usage text names every verb with its synopsis. */
START_TEST(usage_lists_the_verbs)
{
	struct buf u = BUF_INIT(BUF_NO_LIMIT);
	char line[128];
	size_t n;
	const struct plugin_verb *v = plugin_verbs(&n);

	plugin_usage(&u);
	for (size_t i = 0; i < n; i++) {
		snprintf(line, sizeof(line), "  %-10s %-22s %s\n", v[i].name, v[i].synopsis,
		         v[i].help);
		ck_assert_msg(strstr(buf_cstr(&u), line), "usage lacks %s", v[i].name);
	}
	buf_release(&u);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("plugin_args");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, parse_cases, 0, ARRAY_LEN(cases));
	tcase_add_test(tc, table_is_sound);
	tcase_add_test(tc, man_page_lists_the_verbs);
	tcase_add_test(tc, completion_lists_the_verbs);
	tcase_add_test(tc, usage_lists_the_verbs);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(suite)
