/* Unit tests for lib/yamlx: golden files under test/data/yamlx (NAME.yaml with NAME.json,
 * the canonical dump of the documents array, or NAME.err, "ERRNO message"), inline edge
 * cases, and the depth and node limits at their boundaries. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/buf.h"
#include "lib/jsonx.h"
#include "lib/yamlx.h"
#include "testutil.h"
#include "unit.h"

#define DATA "test/data/yamlx/"

/* The whole file, without trailing whitespace; free() it. */
static char *read_text(const char *path)
{
	size_t len;
	char *text = tu_must_read(path, &len);

	while (len && strchr(" \n", text[len - 1]))
		text[--len] = '\0';
	return text;
}

static const struct {
	const char *name;
	bool fails; /* NAME.err rather than NAME.json */
} golden[] = {
	{ "crd", false },
	{ "multidoc", false },
	{ "anchors", false },
	{ "block_scalars", false },
	{ "flow", false },
	{ "quoted", false },
	{ "scalars", false },
	{ "keys", false },
	{ "bad_mapping_value", true },
	{ "bad_indent", true },
	{ "bad_seq_then_map", true },
	{ "bad_tab_indent", true },
	{ "bad_unclosed_flow", true },
	{ "bad_unclosed_quote", true },
	{ "bad_directive", true },
	{ "bad_control_char", true },
	{ "bad_utf8", true },
	{ "bad_duplicate_key", true },
	{ "bad_duplicate_merge", true },
	{ "bad_merge_scalar", true },
	{ "bad_merge_list", true },
	{ "bad_unknown_anchor", true },
	{ "bad_recursive_alias", true },
	{ "bad_billion_laughs", true },
	{ "bad_alias_key", true },
	{ "bad_complex_key", true },
	{ "bad_unknown_tag", true },
	{ "bad_collection_tag", true },
	{ "bad_str_tag_on_seq", true },
	{ "bad_seq_tag_on_scalar", true },
	{ "bad_int_tag", true },
	{ "bad_bool_tag", true },
	{ "bad_int_range", true },
	{ "bad_float_range", true },
	{ "bad_inf", true },
	{ "bad_nul_escape", true },
};

START_TEST(golden_files)
{
	char yaml[256], want_path[256], got[ERR_MSG_MAX + 32];
	json_t *docs = NULL;
	char *want, *dump;
	struct err e;
	int r;

	snprintf(yaml, sizeof(yaml), DATA "%s.yaml", golden[_i].name);
	snprintf(want_path, sizeof(want_path), DATA "%s.%s", golden[_i].name,
	         golden[_i].fails ? "err" : "json");
	want = read_text(want_path);
	err_clear(&e);
	r = yamlx_load_file(yaml, 1 << 20, &docs, &e);
	if (golden[_i].fails) {
		ck_assert_msg(r < 0, "%s: parsed, expected %s", yaml, want);
		ck_assert_ptr_null(docs);
		ck_assert_int_eq(e.code, r);
		/* yamlx_load_file prefixes the path; the golden message does not have it. */
		ck_assert_msg(strncmp(e.msg, yaml, strlen(yaml)) == 0 && e.msg[strlen(yaml)] == ':',
		              "%s: message without the path: %s", yaml, e.msg);
		snprintf(got, sizeof(got), "%s %s", err_name(r), e.msg + strlen(yaml) + 2);
		ck_assert_str_eq(got, want);
	} else {
		ck_assert_msg(r == 0, "%s: %s", yaml, e.msg);
		dump = jsonx_dumps_compact(docs);
		ck_assert_str_eq(dump, want);
		free(dump);
		json_decref(docs);
	}
	free(want);
}
END_TEST

static const struct {
	const char *text;
	size_t len; /* 0: strlen(text) */
	int rc;
	const char *want; /* documents as canonical JSON, or the error message */
} inline_cases[] = {
	{ "", 0, 0, "[]" },
	{ "# nothing but a comment\n", 0, 0, "[]" },
	{ "---\n---\n...\n", 0, 0, "[]" },
	{ "--- ~\n--- null\n--- \n", 0, 0, "[]" },
	{ "a: 1", 0, 0, "[{\"a\":1}]" },
	{ "- 1\n- -1\n", 0, 0, "[[1,-1]]" },
	{ "\xef\xbb\xbf"
	  "a: bom\n",
	  0, 0, "[{\"a\":\"bom\"}]" },
	{ "a: |\n  x\n", 0, 0, "[{\"a\":\"x\\n\"}]" },
	{ "--- 0\n--- false\n--- ''\n", 0, 0, "[0,false,\"\"]" },
	{ "a: &x 1\n---\nb: *x\n", 0, -EPROTO, "line 3, column 4: unknown anchor \"x\"" },
	{ "a: 1\0b: 2\n", 10, -EPROTO, "line 1, column 5: control characters are not allowed" },
	{ "a: [1\n", 0, -EPROTO,
	  "line 2, column 1: did not find expected ',' or ']' (while parsing a flow sequence at "
	  "line 1, column 4)" },
	{ "k: v\nk: w\n", 0, -EPROTO, "line 2, column 1: duplicate key \"k\"" },
	{ "? a\n? a\n", 0, -EPROTO, "line 2, column 3: duplicate key \"a\"" },
	{ "x: -.inf\n", 0, -ERANGE,
	  "line 1, column 4: number not representable in JSON (quote it to keep a string)" },
	{ "x: .NaN\n", 0, -ERANGE,
	  "line 1, column 4: number not representable in JSON (quote it to keep a string)" },
	{ "x: 0x10000000000000000\n", 0, -ERANGE,
	  "line 1, column 4: number not representable in JSON (quote it to keep a string)" },
	{ "x: -9223372036854775809\n", 0, -ERANGE,
	  "line 1, column 4: number not representable in JSON (quote it to keep a string)" },
	{ "x: !!float abc\n", 0, -EPROTO, "line 1, column 4: invalid !!float value" },
	{ "x: !!null 0\n", 0, -EPROTO, "line 1, column 4: invalid !!null value" },
	{ "\"nul\\0key\": 1\n", 0, -EPROTO, "line 1, column 1: NUL character in a scalar" },
};

START_TEST(inline_yaml)
{
	const char *text = inline_cases[_i].text;
	size_t len = inline_cases[_i].len ? inline_cases[_i].len : strlen(text);
	json_t *docs = (json_t *)1;
	struct err e;
	char *dump;
	int r;

	err_clear(&e);
	r = yamlx_load(text, len, &docs, &e);
	ck_assert_msg(r == inline_cases[_i].rc, "%s: rc %s want %s (%s)", text, err_name(r),
	              err_name(inline_cases[_i].rc), e.msg);
	if (r < 0) {
		ck_assert_ptr_eq(docs, (json_t *)1);
		ck_assert_int_eq(e.code, r);
		ck_assert_str_eq(e.msg, inline_cases[_i].want);
		ck_assert_int_eq(yamlx_load(text, len, &docs, NULL), r);
		return;
	}
	dump = jsonx_dumps_compact(docs);
	ck_assert_str_eq(dump, inline_cases[_i].want);
	free(dump);
	json_decref(docs);
}
END_TEST

START_TEST(null_data)
{
	json_t *docs = NULL;

	ck_assert_int_eq(yamlx_load(NULL, 0, &docs, NULL), 0);
	ck_assert_uint_eq(json_array_size(docs), 0);
	json_decref(docs);
}
END_TEST

/* n nested flow sequences around a scalar: "[[[1]]]". */
static char *nested(size_t n)
{
	struct buf b = BUF_INIT(BUF_NO_LIMIT);

	for (size_t i = 0; i < n; i++)
		buf_append_char(&b, '[');
	buf_append_char(&b, '1');
	for (size_t i = 0; i < n; i++)
		buf_append_char(&b, ']');
	return buf_detach(&b, NULL);
}

static const struct {
	size_t depth;
	int rc;
} depth_cases[] = {
	{ YAMLX_MAX_DEPTH - 1, 0 },
	{ YAMLX_MAX_DEPTH, 0 },
	{ YAMLX_MAX_DEPTH + 1, -EMSGSIZE },
	{ 10000, -EMSGSIZE },
};

START_TEST(depth_limit)
{
	char *text = nested(depth_cases[_i].depth);
	json_t *docs = NULL;
	struct err e;
	int r;

	err_clear(&e);
	r = yamlx_load(text, strlen(text), &docs, &e);
	ck_assert_msg(r == depth_cases[_i].rc, "depth %zu: %s (%s)", depth_cases[_i].depth,
	              err_name(r), e.msg);
	if (r < 0) {
		char want[128];

		snprintf(want, sizeof(want), "line 1, column %d: nesting deeper than %d",
		         YAMLX_MAX_DEPTH + 1, YAMLX_MAX_DEPTH);
		ck_assert_str_eq(e.msg, want);
	}
	json_decref(docs);
	free(text);
}
END_TEST

/* "a: &x <60 deep>\nb: <n deep around *x>\n" */
static char *alias_nested(size_t n)
{
	struct buf b = BUF_INIT(BUF_NO_LIMIT);
	char *inner = nested(60);

	buf_printf(&b, "a: &x %s\nb: ", inner);
	for (size_t i = 0; i < n; i++)
		buf_append_char(&b, '[');
	buf_append_str(&b, "*x");
	for (size_t i = 0; i < n; i++)
		buf_append_char(&b, ']');
	buf_append_char(&b, '\n');
	free(inner);
	return buf_detach(&b, NULL);
}

/* An anchored 60-deep node copied 49 deep would nest 110 deep: refused like the parser. */
START_TEST(alias_depth_limit)
{
	char *text = alias_nested(49);
	char *ok = alias_nested(YAMLX_MAX_DEPTH - 1 - 60); /* the root mapping is one level */
	json_t *docs = NULL;
	struct err e;

	err_clear(&e);
	ck_assert_int_eq(yamlx_load(text, strlen(text), &docs, &e), -EMSGSIZE);
	ck_assert_str_eq(e.msg, "line 2, column 53: nesting deeper than 100");
	ck_assert_int_eq(yamlx_load(ok, strlen(ok), &docs, NULL), 0);
	json_decref(docs);
	free(ok);
	ok = alias_nested(YAMLX_MAX_DEPTH - 60);
	ck_assert_int_eq(yamlx_load(ok, strlen(ok), &docs, NULL), -EMSGSIZE);
	free(text);
	free(ok);
}
END_TEST

/* A flow sequence with n scalars: n + 1 nodes. */
static char *wide(size_t n)
{
	struct buf b = BUF_INIT(BUF_NO_LIMIT);

	buf_append_char(&b, '[');
	for (size_t i = 0; i < n; i++)
		buf_append_str(&b, i ? ",1" : "1");
	buf_append_char(&b, ']');
	return buf_detach(&b, NULL);
}

START_TEST(node_limit)
{
	char *fits = wide(YAMLX_MAX_NODES - 1);
	char *over = wide(YAMLX_MAX_NODES);
	json_t *docs = NULL;
	struct err e;

	ck_assert_int_eq(yamlx_load(fits, strlen(fits), &docs, NULL), 0);
	ck_assert_uint_eq(json_array_size(json_array_get(docs, 0)), YAMLX_MAX_NODES - 1);
	json_decref(docs);
	docs = NULL;
	err_clear(&e);
	ck_assert_int_eq(yamlx_load(over, strlen(over), &docs, &e), -EMSGSIZE);
	ck_assert_ptr_null(docs);
	ck_assert_msg(strstr(e.msg, "more than 262144 nodes") != NULL, "%s", e.msg);
	free(fits);
	free(over);
}
END_TEST

/* Aliases count by what they copy: 2 copies of a 4-node list cost 8 nodes. */
START_TEST(alias_counts_expansion)
{
	size_t n = YAMLX_MAX_NODES - 1 - 4 - 8; /* root list, the anchored list, 2 aliases */
	char *head = wide(n);
	char *text;
	json_t *docs = NULL;

	head[strlen(head) - 1] = '\0'; /* drop ']' */
	text = xasprintf("%s,&a [1,2,3],*a,*a]", head);
	ck_assert_int_eq(yamlx_load(text, strlen(text), &docs, NULL), 0);
	json_decref(docs);
	free(text);
	text = xasprintf("%s,&a [1,2,3],*a,*a,1]", head);
	ck_assert_int_eq(yamlx_load(text, strlen(text), &docs, NULL), -EMSGSIZE);
	free(text);
	free(head);
}
END_TEST

START_TEST(file_errors)
{
	json_t *docs = NULL;
	struct err e;

	err_clear(&e);
	ck_assert_int_eq(yamlx_load_file(DATA "does-not-exist.yaml", 100, &docs, &e), -ENOENT);
	ck_assert_str_eq(e.msg, DATA "does-not-exist.yaml: No such file or directory");
	err_clear(&e);
	ck_assert_int_eq(yamlx_load_file(DATA "flow.yaml", 10, &docs, &e), -EMSGSIZE);
	ck_assert_str_eq(e.msg, DATA "flow.yaml: larger than 10 bytes");
	err_clear(&e);
	ck_assert_int_eq(yamlx_load_file(DATA, 100, &docs, &e), -EISDIR);
	ck_assert_str_eq(e.msg, DATA ": Is a directory");
	ck_assert_ptr_null(docs);
	/* Exactly at the limit is fine. */
	ck_assert_int_eq(yamlx_load_file(DATA "bad_inf.yaml", 8, &docs, NULL), -ERANGE);
	ck_assert_int_eq(yamlx_load_file(DATA "bad_inf.yaml", 7, &docs, NULL), -EMSGSIZE);
	ck_assert_int_eq(yamlx_load_file("/dev/null", 8, &docs, NULL), 0);
	ck_assert_uint_eq(json_array_size(docs), 0);
	json_decref(docs);
}
END_TEST

static Suite *yamlx_suite(void)
{
	Suite *s = suite_create("yamlx");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, golden_files, 0, ARRAY_LEN(golden));
	tcase_add_loop_test(tc, inline_yaml, 0, ARRAY_LEN(inline_cases));
	tcase_add_test(tc, null_data);
	tcase_add_loop_test(tc, depth_limit, 0, ARRAY_LEN(depth_cases));
	tcase_add_test(tc, alias_depth_limit);
	tcase_add_test(tc, node_limit);
	tcase_add_test(tc, alias_counts_expansion);
	tcase_add_test(tc, file_errors);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(yamlx_suite)
