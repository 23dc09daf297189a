/* Unit tests for lib/jsonx: path grammar, typed getters and their messages, the setter,
 * the canonical dump, the bounded parser, containment. */
#include <errno.h>
#include <string.h>

#include "lib/jsonx.h"
#include "unit.h"

static json_t *parse(const char *text)
{
	json_error_t je;
	json_t *j = json_loads(text, JSON_DECODE_ANY, &je);

	ck_assert_msg(j != NULL, "bad test JSON %s: %s", text, je.text);
	return j;
}

/* Compares j's canonical text with want (NULL: j must be NULL). */
static void assert_json(const json_t *j, const char *want, const char *what)
{
	char *got;

	if (!want) {
		ck_assert_msg(j == NULL, "%s: expected nothing", what);
		return;
	}
	ck_assert_msg(j != NULL, "%s: expected %s, got nothing", what, want);
	got = jsonx_dumps_compact(j);
	ck_assert_msg(strcmp(got, want) == 0, "%s: got %s want %s", what, got, want);
	free(got);
}

/* --- jsonx_get ---------------------------------------------------------------------------- */

static const char get_doc[] =
        "{\"spec\":{\"users\":[{\"name\":\"a\"},{\"name\":\"b\"}],\"storage\":{\"size\":5},"
        "\"x\":null},\"metadata\":{\"annotations\":{\"redis.io/hash\":\"h\",\"a.b\":\"dots\","
        "\"q\\\"k\":\"quote\",\"b\\\\s\":\"bs\",\"[x]\":\"brackets\"}},\"arr\":[[1,2],[3]]}";

static const struct {
	const char *path;
	const char *want; /* canonical JSON, or NULL for absent */
} get_cases[] = {
	{ "spec.users[1].name", "\"b\"" },
	{ "spec.users[0]", "{\"name\":\"a\"}" },
	{ "spec.users[2]", NULL },
	{ "spec.users[0].missing", NULL },
	{ "spec.storage.size", "5" },
	{ "[\"spec\"].storage.size", "5" },
	{ "spec[\"storage\"][\"size\"]", "5" },
	{ "metadata.annotations[\"redis.io/hash\"]", "\"h\"" },
	{ "metadata.annotations[\"a.b\"]", "\"dots\"" },
	{ "metadata.annotations[\"q\\\"k\"]", "\"quote\"" },
	{ "metadata.annotations[\"b\\\\s\"]", "\"bs\"" },
	{ "metadata.annotations[\"[x]\"]", "\"brackets\"" },
	{ "metadata.annotations.a", NULL },
	{ "arr[0][1]", "2" },
	{ "arr[1][0]", "3" },
	{ "arr[1][1]", NULL },
	{ "arr[007][0]", NULL },
	{ "spec.x", "null" },               /* present, and null */
	{ "spec.x.y", NULL },               /* through null: absent */
	{ "spec.storage.size.more", NULL }, /* through a number: not reachable */
	{ "spec.users.name", NULL },        /* key into an array */
	{ "spec[0]", NULL },                /* index into an object */
	/* malformed paths */
	{ "spec..x", NULL },
	{ ".spec", NULL },
	{ "spec.", NULL },
	{ "spec[", NULL },
	{ "spec[]", NULL },
	{ "spec[x]", NULL },
	{ "spec[-1]", NULL },
	{ "spec[+1]", NULL },
	{ "arr[0", NULL },
	{ "spec]", NULL },
	{ "arr[0]x", NULL },
	{ "spec.[0]", NULL },
	{ "metadata.annotations[\"a.b]", NULL },
	{ "metadata.annotations[\"a.b\"", NULL },
	{ "metadata.annotations[\"a\\n\"]", NULL },
	{ "arr[99999999999999999999999999]", NULL },
};

START_TEST(get_paths)
{
	json_t *doc = parse(get_doc);

	assert_json(jsonx_get(doc, get_cases[_i].path), get_cases[_i].want, get_cases[_i].path);
	json_decref(doc);
}
END_TEST

START_TEST(get_root_and_null)
{
	json_t *doc = parse("{\"a\":1}");

	ck_assert_ptr_eq(jsonx_get(doc, ""), doc);
	ck_assert_ptr_null(jsonx_get(NULL, "a"));
	ck_assert_ptr_null(jsonx_get(NULL, ""));
	json_decref(doc);
}
END_TEST

/* --- typed getters ------------------------------------------------------------------------ */

enum getter {
	G_STR,
	G_STR_REQ,
	G_INT,
	G_INT_REQ,
	G_BOOL,
	G_BOOL_REQ,
	G_OBJ,
	G_OBJ_REQ,
	G_ARR,
	G_ARR_REQ
};

static const char getter_doc[] =
        "{\"s\":\"str\",\"i\":42,\"neg\":-5,\"r\":1.5,\"b\":true,\"f\":false,\"o\":{\"k\":\"v\"},"
        "\"a\":[1],\"n\":null,\"big\":9223372036854775807,\"small\":-9223372036854775808,"
        "\"spec\":{\"storage\":{\"size\":10},\"users\":[{\"name\":7}]}}";

static const struct {
	enum getter g;
	const char *path;
	int rc;
	const char *want; /* error message, or the value: string, int (decimal), bool, JSON */
} getter_cases[] = {
	{ G_STR, "s", 0, "str" },
	{ G_STR, "missing", 0, "def" },
	{ G_STR, "n", 0, "def" },
	{ G_STR, "o.k", 0, "v" },
	{ G_STR, "i", -EINVAL, "i: expected string, got integer" },
	{ G_STR, "spec.storage.size", -EINVAL, "spec.storage.size: expected string, got integer" },
	{ G_STR, "spec.users[0].name", -EINVAL,
	  "spec.users[0].name: expected string, got integer" },
	{ G_STR, "s.x", -EINVAL, "s: expected object, got string" },
	{ G_STR, "a.x", -EINVAL, "a: expected object, got array" },
	{ G_STR, "o[0]", -EINVAL, "o: expected array, got object" },
	{ G_STR, "spec.users[0].name.x", -EINVAL,
	  "spec.users[0].name: expected object, got integer" },
	{ G_STR, "[0]", -EINVAL, "(root): expected array, got object" },
	{ G_STR, "", -EINVAL, "(root): expected string, got object" },
	{ G_STR, "n.x", 0, "def" },
	{ G_STR, "a[5]", 0, "def" },
	{ G_STR, "a..b", -EINVAL, "a..b: malformed JSON path" },
	{ G_STR, "missing[", -EINVAL, "missing[: malformed JSON path" },
	{ G_STR_REQ, "s", 0, "str" },
	{ G_STR_REQ, "missing", -ENOENT, "missing: required" },
	{ G_STR_REQ, "n", -ENOENT, "n: required" },
	{ G_STR_REQ, "r", -EINVAL, "r: expected string, got real" },
	{ G_INT, "i", 0, "42" },
	{ G_INT, "missing", 0, "7" },
	{ G_INT, "n", 0, "7" },
	{ G_INT, "neg", -ERANGE, "neg: -5 is out of range [0, 100]" },
	{ G_INT, "big", -ERANGE, "big: 9223372036854775807 is out of range [0, 100]" },
	{ G_INT, "r", -EINVAL, "r: expected integer, got real" },
	{ G_INT, "b", -EINVAL, "b: expected integer, got boolean" },
	{ G_INT, "s", -EINVAL, "s: expected integer, got string" },
	{ G_INT_REQ, "i", 0, "42" },
	{ G_INT_REQ, "missing", -ENOENT, "missing: required" },
	{ G_INT_REQ, "big", 0, "9223372036854775807" },
	{ G_INT_REQ, "small", 0, "-9223372036854775808" },
	{ G_BOOL, "b", 0, "true" },
	{ G_BOOL, "f", 0, "false" },
	{ G_BOOL, "missing", 0, "true" },
	{ G_BOOL, "s", -EINVAL, "s: expected boolean, got string" },
	{ G_BOOL, "n", 0, "true" },
	{ G_BOOL_REQ, "f", 0, "false" },
	{ G_BOOL_REQ, "missing", -ENOENT, "missing: required" },
	{ G_BOOL_REQ, "i", -EINVAL, "i: expected boolean, got integer" },
	{ G_OBJ, "o", 0, "{\"k\":\"v\"}" },
	{ G_OBJ, "missing", 0, NULL },
	{ G_OBJ, "a", -EINVAL, "a: expected object, got array" },
	{ G_OBJ, "n", 0, NULL },
	{ G_OBJ_REQ, "spec.storage", 0, "{\"size\":10}" },
	{ G_OBJ_REQ, "spec.nothing", -ENOENT, "spec.nothing: required" },
	{ G_OBJ_REQ, "s", -EINVAL, "s: expected object, got string" },
	{ G_ARR, "a", 0, "[1]" },
	{ G_ARR, "missing", 0, NULL },
	{ G_ARR, "o", -EINVAL, "o: expected array, got object" },
	{ G_ARR_REQ, "spec.users", 0, "[{\"name\":7}]" },
	{ G_ARR_REQ, "missing", -ENOENT, "missing: required" },
	{ G_ARR_REQ, "b", -EINVAL, "b: expected array, got boolean" },
};

/* Runs one getter; *got receives the value as text ("" untouched marker on failure). */
static int run_getter(json_t *doc, enum getter g, const char *path, char *got, size_t n,
                      struct err *e)
{
	const char *s = "UNTOUCHED";
	int64_t i = 12345;
	bool b = false;
	json_t *j = (json_t *)1;
	int r = -1;

	switch (g) {
	case G_STR: r = jsonx_string(doc, path, "def", &s, e); break;
	case G_STR_REQ: r = jsonx_string_req(doc, path, &s, e); break;
	case G_INT: r = jsonx_int(doc, path, 0, 100, 7, &i, e); break;
	case G_INT_REQ: r = jsonx_int_req(doc, path, INT64_MIN, INT64_MAX, &i, e); break;
	case G_BOOL: r = jsonx_bool(doc, path, true, &b, e); break;
	case G_BOOL_REQ: r = jsonx_bool_req(doc, path, &b, e); break;
	case G_OBJ: r = jsonx_object(doc, path, &j, e); break;
	case G_OBJ_REQ: r = jsonx_object_req(doc, path, &j, e); break;
	case G_ARR: r = jsonx_array(doc, path, &j, e); break;
	case G_ARR_REQ: r = jsonx_array_req(doc, path, &j, e); break;
	}
	if (r < 0) {
		/* Outputs are written only on success. */
		ck_assert_str_eq(s, "UNTOUCHED");
		ck_assert_int_eq(i, 12345);
		ck_assert(!b);
		ck_assert_ptr_eq(j, (json_t *)1);
	} else if (g <= G_STR_REQ) {
		snprintf(got, n, "%s", s);
	} else if (g <= G_INT_REQ) {
		snprintf(got, n, "%lld", (long long)i);
	} else if (g <= G_BOOL_REQ) {
		snprintf(got, n, "%s", b ? "true" : "false");
	} else {
		char *d = j ? jsonx_dumps_compact(j) : NULL;

		snprintf(got, n, "%s", d ? d : "(null)");
		free(d);
	}
	return r;
}

START_TEST(getters)
{
	json_t *doc = parse(getter_doc);
	const char *want = getter_cases[_i].want;
	char got[256] = "";
	struct err e;
	int r;

	err_clear(&e);
	r = run_getter(doc, getter_cases[_i].g, getter_cases[_i].path, got, sizeof(got), &e);
	ck_assert_msg(r == getter_cases[_i].rc, "%s: rc %s want %s (%s)", getter_cases[_i].path,
	              err_name(r), err_name(getter_cases[_i].rc), e.msg);
	if (r < 0) {
		ck_assert_int_eq(e.code, r);
		ck_assert_str_eq(e.msg, want);
	} else {
		ck_assert_int_eq(e.code, 0);
		ck_assert_str_eq(got, want ? want : "(null)");
	}
	/* The struct err is optional. */
	ck_assert_int_eq(
	        run_getter(doc, getter_cases[_i].g, getter_cases[_i].path, got, sizeof(got), NULL),
	        getter_cases[_i].rc);
	json_decref(doc);
}
END_TEST

START_TEST(int_bounds_inclusive)
{
	json_t *doc = parse("{\"lo\":1,\"hi\":64}");
	int64_t v;

	ck_assert_int_eq(jsonx_int(doc, "lo", 1, 64, 0, &v, NULL), 0);
	ck_assert_int_eq(v, 1);
	ck_assert_int_eq(jsonx_int(doc, "hi", 1, 64, 0, &v, NULL), 0);
	ck_assert_int_eq(v, 64);
	ck_assert_int_eq(jsonx_int(doc, "hi", 1, 63, 0, &v, NULL), -ERANGE);
	ck_assert_int_eq(jsonx_int(doc, "lo", 2, 64, 0, &v, NULL), -ERANGE);
	json_decref(doc);
}
END_TEST

/* --- type names --------------------------------------------------------------------------- */

static const struct {
	const char *json;
	const char *name;
} type_cases[] = {
	{ "{}", "object" }, { "[]", "array" },     { "\"x\"", "string" },  { "1", "integer" },
	{ "1.5", "real" },  { "true", "boolean" }, { "false", "boolean" }, { "null", "null" },
};

START_TEST(type_names)
{
	json_t *j = parse(type_cases[_i].json);

	ck_assert_str_eq(jsonx_type_name(j), type_cases[_i].name);
	json_decref(j);
	ck_assert_str_eq(jsonx_type_name(NULL), "absent");
}
END_TEST

/* --- jsonx_set_path ----------------------------------------------------------------------- */

static const struct {
	const char *doc;
	const char *path;
	const char *value;
	int rc;
	const char *want; /* the document afterwards */
} set_cases[] = {
	{ "{}", "a.b.c", "1", 0, "{\"a\":{\"b\":{\"c\":1}}}" },
	{ "{}", "a", "{\"x\":[1]}", 0, "{\"a\":{\"x\":[1]}}" },
	{ "{\"a\":{\"b\":1}}", "a.c", "2", 0, "{\"a\":{\"b\":1,\"c\":2}}" },
	{ "{\"a\":{\"b\":1}}", "a.b", "{\"c\":2}", 0, "{\"a\":{\"b\":{\"c\":2}}}" },
	{ "{}", "a[0].b", "1", 0, "{\"a\":[{\"b\":1}]}" },
	{ "{}", "a[0][0]", "1", 0, "{\"a\":[[1]]}" },
	{ "{\"a\":[1]}", "a[1]", "2", 0, "{\"a\":[1,2]}" },
	{ "{\"a\":[1]}", "a[0]", "2", 0, "{\"a\":[2]}" },
	{ "{\"a\":[{\"b\":1}]}", "a[0].c", "2", 0, "{\"a\":[{\"b\":1,\"c\":2}]}" },
	{ "{\"a\":null}", "a.b", "1", 0, "{\"a\":{\"b\":1}}" },
	{ "{}", "metadata.annotations[\"redis.io/hash\"]", "\"h\"", 0,
	  "{\"metadata\":{\"annotations\":{\"redis.io/hash\":\"h\"}}}" },
	{ "[]", "[0].a", "1", 0, "[{\"a\":1}]" },
	{ "{}", "a", "null", 0, "{\"a\":null}" },
	/* failures leave the document as it was */
	{ "{\"a\":[1]}", "a[2]", "2", -ERANGE, "{\"a\":[1]}" },
	{ "{\"a\":[]}", "a[1].b", "2", -ERANGE, "{\"a\":[]}" },
	{ "{\"a\":\"s\"}", "a.b", "1", -EINVAL, "{\"a\":\"s\"}" },
	{ "{\"a\":{}}", "a[0]", "1", -EINVAL, "{\"a\":{}}" },
	{ "{\"a\":[]}", "a.b", "1", -EINVAL, "{\"a\":[]}" },
	{ "{\"a\":{\"b\":[]}}", "a.b.c", "1", -EINVAL, "{\"a\":{\"b\":[]}}" },
	{ "{\"a\":{\"b\":{}}}", "a.b[0]", "1", -EINVAL, "{\"a\":{\"b\":{}}}" },
	{ "{}", "", "1", -EINVAL, "{}" },
	{ "{}", "a..b", "1", -EINVAL, "{}" },
	{ "{}", "a.b[", "1", -EINVAL, "{}" },
	{ "[]", "a", "1", -EINVAL, "[]" },
	{ "{}", "[0]", "1", -EINVAL, "{}" },
};

START_TEST(set_path)
{
	json_t *doc = parse(set_cases[_i].doc);
	int r = jsonx_set_path(doc, set_cases[_i].path, parse(set_cases[_i].value));

	ck_assert_msg(r == set_cases[_i].rc, "%s: rc %s want %s", set_cases[_i].path, err_name(r),
	              err_name(set_cases[_i].rc));
	assert_json(doc, set_cases[_i].want, set_cases[_i].path);
	json_decref(doc);
}
END_TEST

START_TEST(set_path_null_root_steals)
{
	/* The value is stolen even on failure: the leak checkers (asan, valgrind) verify. */
	ck_assert_int_eq(jsonx_set_path(NULL, "a", json_string("leak?")), -EINVAL);
	ck_assert_int_eq(jsonx_set_path(NULL, "a", NULL), -EINVAL);
}
END_TEST

/* --- dump and parse ----------------------------------------------------------------------- */

START_TEST(dumps_compact)
{
	json_t *j = parse("{ \"b\" : 1, \"a\" : [true, null, \"x\", {\"z\":1,\"y\":2}], \"c\":"
	                  " \"\\u00e9\\n\" }");
	char *s = jsonx_dumps_compact(j);

	ck_assert_str_eq(
	        s, "{\"a\":[true,null,\"x\",{\"y\":2,\"z\":1}],\"b\":1,\"c\":\"\xc3\xa9\\n\"}");
	free(s);
	json_decref(j);
	s = jsonx_dumps_compact(NULL);
	ck_assert_str_eq(s, "null");
	free(s);
	j = json_integer(5);
	s = jsonx_dumps_compact(j);
	ck_assert_str_eq(s, "5");
	free(s);
	json_decref(j);
}
END_TEST

static const struct {
	const char *text;
	size_t len; /* 0: strlen(text) */
	size_t max;
	int rc;
	const char *want; /* canonical JSON, or the error message */
} load_cases[] = {
	{ "{\"b\":1, \"a\":[2]}", 0, 100, 0, "{\"a\":[2],\"b\":1}" },
	{ "[1,2]", 0, 5, 0, "[1,2]" },
	{ "[1,2]", 0, 4, -EMSGSIZE, "JSON text of 5 bytes exceeds the limit of 4 bytes" },
	{ "{\"a\":1}\0", 8, 100, -EPROTO, "NUL byte at offset 7" },
	{ "{\"a\":\0}", 7, 100, -EPROTO, "NUL byte at offset 5" },
	{ "{\"a\":", 0, 100, -EPROTO, "line 1, column 5: unexpected token near end of file" },
	{ "{\n  \"a\": 1,\n  \"b\": }", 0, 100, -EPROTO,
	  "line 3, column 8: unexpected token near '}'" },
	{ "{\"a\":1,\"a\":2}", 0, 100, -EPROTO,
	  "line 1, column 10: duplicate object key near '\"a\"'" },
	{ "\"str\"", 0, 100, -EPROTO, "line 1, column 5: '[' or '{' expected near '\"str\"'" },
	{ "{} x", 0, 100, -EPROTO, "line 1, column 4: end of file expected near 'x'" },
	{ "", 0, 100, -EPROTO, "line 1, column 0: '[' or '{' expected near end of file" },
	{ "{\"a\":\"\\u0000\"}", 0, 100, -EPROTO,
	  "line 1, column 13: \\u0000 is not allowed without JSON_ALLOW_NUL near '\"\\u0000\"'" },
};

START_TEST(loadb)
{
	size_t len = load_cases[_i].len ? load_cases[_i].len : strlen(load_cases[_i].text);
	json_t *j = (json_t *)1;
	struct err e;
	int r;

	err_clear(&e);
	r = jsonx_loadb(load_cases[_i].text, len, load_cases[_i].max, &j, &e);
	ck_assert_msg(r == load_cases[_i].rc, "rc %s want %s (%s)", err_name(r),
	              err_name(load_cases[_i].rc), e.msg);
	if (r < 0) {
		ck_assert_ptr_eq(j, (json_t *)1);
		ck_assert_int_eq(e.code, r);
		ck_assert_str_eq(e.msg, load_cases[_i].want);
		return;
	}
	assert_json(j, load_cases[_i].want, load_cases[_i].text);
	json_decref(j);
}
END_TEST

START_TEST(loadb_empty_null_data)
{
	json_t *j = NULL;

	ck_assert_int_eq(jsonx_loadb(NULL, 0, 10, &j, NULL), -EPROTO);
	ck_assert_ptr_null(j);
}
END_TEST

/* jsonx_contains: have, want (NULL: a C NULL), whether want is in have. */
static const struct {
	const char *have, *want;
	bool contains;
} contains_cases[] = {
	{ "{\"a\":1,\"b\":2}", "{\"a\":1}", true },
	{ "{\"a\":1}", "{\"a\":2}", false },
	{ "{\"a\":1}", "{\"b\":1}", false },
	{ "{\"a\":{\"x\":1,\"y\":2}}", "{\"a\":{\"x\":1}}", true },
	{ "{\"a\":[{\"p\":1,\"q\":2}]}", "{\"a\":[{\"p\":1}]}", true },
	{ "{\"a\":[{\"p\":1},{\"p\":2}]}", "{\"a\":[{\"p\":1}]}", false },
	{ "{\"a\":[1]}", "{\"a\":[2]}", false },
	{ "{\"a\":1.0}", "{\"a\":1}", true },
	{ "{\"a\":1.5}", "{\"a\":1}", false },
	{ "{\"a\":\"1\"}", "{\"a\":1}", false },
	{ "{\"a\":null}", "{\"a\":null}", true },
	{ "{}", "{\"a\":null}", true },
	{ "{}", "{\"a\":{}}", false },
	{ "[1,2]", "{\"a\":1}", false },
	{ "{\"a\":1}", "[1]", false },
	{ "{\"a\":1}", NULL, true },
	{ NULL, "{}", false },
	{ "\"x\"", "\"x\"", true },
};

START_TEST(contains)
{
	const char *have = contains_cases[_i].have, *want = contains_cases[_i].want;
	json_t *h = have ? parse(have) : NULL, *w = want ? parse(want) : NULL;

	ck_assert_msg(jsonx_contains(h, w) == contains_cases[_i].contains, "%s in %s: want %d",
	              want ? want : "NULL", have ? have : "NULL", contains_cases[_i].contains);
	json_decref(h);
	json_decref(w);
}
END_TEST

START_TEST(get_string)
{
	json_t *j = parse("{\"a\":{\"b\":\"x\",\"n\":1}}");

	ck_assert_str_eq(jsonx_get_string(j, "a.b"), "x");
	ck_assert_ptr_null(jsonx_get_string(j, "a.n"));
	ck_assert_ptr_null(jsonx_get_string(j, "a.c"));
	ck_assert_ptr_null(jsonx_get_string(j, "a..b"));
	ck_assert_ptr_null(jsonx_get_string(NULL, "a"));
	json_decref(j);
}
END_TEST

START_TEST(find_by_member)
{
	json_t *a =
	        parse("[{\"type\":1},{\"type\":\"Ready\",\"n\":1},{\"type\":\"Ready\",\"n\":2}]");

	ck_assert_int_eq(json_integer_value(json_object_get(jsonx_find(a, "type", "Ready"), "n")),
	                 1);
	ck_assert_ptr_null(jsonx_find(a, "type", "Other"));
	ck_assert_ptr_null(jsonx_find(a, "name", "Ready"));
	ck_assert_ptr_null(jsonx_find(NULL, "type", "Ready"));
	json_decref(a);
}
END_TEST

START_TEST(only_fields)
{
	static const char *const fields[] = { "a", "b", NULL };
	json_t *ok = parse("{\"a\":1,\"b\":2}"), *bad = parse("{\"a\":1,\"c\":2}");
	struct err e = { 0 };

	ck_assert_int_eq(jsonx_only_fields(ok, "x.", fields, &e), 0);
	ck_assert_int_eq(jsonx_only_fields(NULL, "x.", fields, &e), 0);
	ck_assert_int_eq(jsonx_only_fields(bad, "x.", fields, &e), -EINVAL);
	ck_assert_str_eq(e.msg, "x.c: unknown field");
	json_decref(ok);
	json_decref(bad);
}
END_TEST

static Suite *jsonx_suite(void)
{
	Suite *s = suite_create("jsonx");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, get_paths, 0, ARRAY_LEN(get_cases));
	tcase_add_test(tc, get_root_and_null);
	tcase_add_loop_test(tc, getters, 0, ARRAY_LEN(getter_cases));
	tcase_add_test(tc, int_bounds_inclusive);
	tcase_add_loop_test(tc, type_names, 0, ARRAY_LEN(type_cases));
	tcase_add_loop_test(tc, set_path, 0, ARRAY_LEN(set_cases));
	tcase_add_test(tc, set_path_null_root_steals);
	tcase_add_test(tc, dumps_compact);
	tcase_add_loop_test(tc, loadb, 0, ARRAY_LEN(load_cases));
	tcase_add_test(tc, loadb_empty_null_data);
	tcase_add_loop_test(tc, contains, 0, ARRAY_LEN(contains_cases));
	tcase_add_test(tc, get_string);
	tcase_add_test(tc, only_fields);
	tcase_add_test(tc, find_by_member);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(jsonx_suite)
