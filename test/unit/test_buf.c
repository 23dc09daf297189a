/* Unit tests for lib/buf and lib/alloc: limits, growth, consume, detach, secrets. */
#include <errno.h>
#include <string.h>

#include "lib/buf.h"
#include "unit.h"

START_TEST(append_within_limit)
{
	struct buf b = BUF_INIT(8);

	ck_assert_str_eq(buf_cstr(&b), "");
	ck_assert_int_eq(buf_append_str(&b, "abcd"), 0);
	ck_assert_int_eq(buf_append(&b, "efgh", 4), 0);
	ck_assert_str_eq(buf_cstr(&b), "abcdefgh");
	ck_assert_uint_eq(b.len, 8);
	/* One more byte passes the limit: refused, buffer unchanged. */
	ck_assert_int_eq(buf_append_char(&b, 'x'), -EMSGSIZE);
	ck_assert_str_eq(buf_cstr(&b), "abcdefgh");
	buf_release(&b);
}
END_TEST

START_TEST(printf_respects_limit)
{
	struct buf b = BUF_INIT(10);

	ck_assert_int_eq(buf_printf(&b, "%d-%s", 42, "ok"), 0);
	ck_assert_str_eq(buf_cstr(&b), "42-ok");
	ck_assert_int_eq(buf_printf(&b, "%s", "toolong"), -EMSGSIZE);
	ck_assert_str_eq(buf_cstr(&b), "42-ok");
	ck_assert_int_eq(buf_printf(&b, "%s", "12345"), 0);
	ck_assert_uint_eq(b.len, 10);
	buf_release(&b);
}
END_TEST

START_TEST(huge_append_does_not_overflow)
{
	struct buf b = BUF_INIT(BUF_NO_LIMIT);

	ck_assert_int_eq(buf_append_str(&b, "x"), 0);
	ck_assert_int_eq(buf_append(&b, "y", (size_t)-1), -EMSGSIZE);
	ck_assert_str_eq(buf_cstr(&b), "x");
	buf_release(&b);
}
END_TEST

START_TEST(growth_keeps_content)
{
	struct buf b = BUF_INIT(BUF_NO_LIMIT);

	for (int i = 0; i < 10000; i++)
		ck_assert_int_eq(buf_append_char(&b, (char)('a' + i % 26)), 0);
	ck_assert_uint_eq(b.len, 10000);
	ck_assert_int_eq(b.data[9999], 'a' + 9999 % 26);
	ck_assert_int_eq(b.data[10000], '\0');
	buf_release(&b);
}
END_TEST

START_TEST(consume_and_clear)
{
	struct buf b = BUF_INIT(64);

	buf_append_str(&b, "line1\nline2\n");
	buf_consume(&b, 6);
	ck_assert_str_eq(buf_cstr(&b), "line2\n");
	buf_consume(&b, 100);
	ck_assert_uint_eq(b.len, 0);
	ck_assert_str_eq(buf_cstr(&b), "");
	buf_append_str(&b, "again");
	buf_clear(&b);
	ck_assert_str_eq(buf_cstr(&b), "");
	buf_release(&b);
	buf_release(NULL);
	buf_release_secret(NULL);
}
END_TEST

START_TEST(detach_hands_over)
{
	struct buf b = BUF_INIT(64);
	size_t len = 99;
	char *s;

	s = buf_detach(&b, &len);
	ck_assert_str_eq(s, "");
	ck_assert_uint_eq(len, 0);
	free(s);
	buf_append_str(&b, "hello");
	s = buf_detach(&b, &len);
	ck_assert_str_eq(s, "hello");
	ck_assert_uint_eq(len, 5);
	ck_assert_ptr_null(b.data);
	ck_assert_uint_eq(b.limit, 64);
	free(s);
}
END_TEST

START_TEST(alloc_helpers)
{
	char *s = xasprintf("%s=%d", "n", 7);
	char *t = xstrndup("abcdef", 3);
	char *secret = xstrdup("hunter2");
	int *v = xreallocarray(NULL, 4, sizeof(int));

	ck_assert_str_eq(s, "n=7");
	ck_assert_str_eq(t, "abc");
	v[3] = 1;
	secure_zero(s, strlen(s));
	ck_assert_int_eq(s[0], 0);
	free_secret(secret);
	free_secret(NULL);
	free(s);
	free(t);
	free(v);
}
END_TEST

START_TEST(reallocarray_overflow_aborts)
{
	(void)xreallocarray(NULL, (size_t)-1, 16);
}
END_TEST

static Suite *buf_suite(void)
{
	Suite *s = suite_create("buf");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, append_within_limit);
	tcase_add_test(tc, printf_respects_limit);
	tcase_add_test(tc, huge_append_does_not_overflow);
	tcase_add_test(tc, growth_keeps_content);
	tcase_add_test(tc, consume_and_clear);
	tcase_add_test(tc, detach_hands_over);
	tcase_add_test(tc, alloc_helpers);
	tcase_add_test_raise_signal(tc, reallocarray_overflow_aborts, 6 /* SIGABRT */);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(buf_suite)
