/* Unit tests for lib/err: the HTTP/Kubernetes → errno table and err_set semantics. */
#include <errno.h>
#include <string.h>

#include "lib/err.h"
#include "unit.h"

static const struct {
	long status;
	const char *reason;
	int want;
} http_cases[] = {
	{ 200, NULL, 0 },
	{ 201, "Created", 0 },
	{ 400, "BadRequest", -EBADMSG },
	{ 401, NULL, -EACCES },
	{ 403, "Forbidden", -EPERM },
	{ 404, "NotFound", -ENOENT },
	{ 404, NULL, -ENOENT },
	{ 405, "MethodNotAllowed", -EOPNOTSUPP },
	{ 409, "AlreadyExists", -EEXIST },
	{ 409, "Conflict", -EBUSY },
	{ 409, NULL, -EBUSY },
	{ 410, "Gone", -ESTALE },
	{ 410, "Expired", -ESTALE },
	{ 410, NULL, -ESTALE },
	{ 413, "RequestEntityTooLarge", -EMSGSIZE },
	{ 422, "Invalid", -EINVAL },
	{ 422, NULL, -EINVAL },
	{ 429, "TooManyRequests", -EAGAIN },
	{ 500, "InternalError", -EIO },
	{ 500, NULL, -EIO },
	{ 502, NULL, -EIO },
	{ 503, "ServiceUnavailable", -EAGAIN },
	{ 504, "Timeout", -ETIMEDOUT },
	{ 418, NULL, -EINVAL }, /* unknown 4xx */
	{ 418, "SomethingNew", -EINVAL },
	{ 302, NULL, -EPROTO },      /* redirects are not followed */
	{ 0, NULL, -EPROTO },        /* no status at all */
	{ 500, "Expired", -ESTALE }, /* a known reason wins over the status */
};

START_TEST(http_table)
{
	ck_assert_msg(err_from_http(http_cases[_i].status, http_cases[_i].reason) ==
	                      http_cases[_i].want,
	              "status %ld reason %s: got %s want %s", http_cases[_i].status,
	              http_cases[_i].reason ? http_cases[_i].reason : "(none)",
	              err_name(err_from_http(http_cases[_i].status, http_cases[_i].reason)),
	              err_name(http_cases[_i].want));
}
END_TEST

START_TEST(set_keeps_first_error)
{
	struct err e;

	err_clear(&e);
	ck_assert_int_eq(err_set(&e, -EINVAL, "spec.%s: %s", "instances", "must be >= 1"), -EINVAL);
	ck_assert_int_eq(err_set(&e, -EIO, "later"), -EIO);
	ck_assert_int_eq(e.code, -EINVAL);
	ck_assert_str_eq(e.msg, "spec.instances: must be >= 1");
	ck_assert_int_eq(err_set(NULL, -ENOENT, "x"), -ENOENT);
	err_clear(NULL);
}
END_TEST

START_TEST(set_truncates_long_message)
{
	struct err e;
	char big[2 * ERR_MSG_MAX];

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	err_clear(&e);
	err_set(&e, -EMSGSIZE, "%s", big);
	ck_assert_uint_eq(strlen(e.msg), ERR_MSG_MAX - 1);
}
END_TEST

START_TEST(names_and_transience)
{
	ck_assert_str_eq(err_name(-ENOENT), "ENOENT");
	ck_assert_str_eq(err_name(-ESTALE), "ESTALE");
	ck_assert_str_eq(err_name(12345), "E?");
	ck_assert(err_is_transient(-EAGAIN));
	ck_assert(err_is_transient(-ETIMEDOUT));
	ck_assert(err_is_transient(-EIO));
	ck_assert(!err_is_transient(-EINVAL));
	ck_assert(!err_is_transient(-EBUSY));
	ck_assert(!err_is_transient(0));
}
END_TEST

static Suite *err_suite(void)
{
	Suite *s = suite_create("err");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, http_table, 0, ARRAY_LEN(http_cases));
	tcase_add_test(tc, set_keeps_first_error);
	tcase_add_test(tc, set_truncates_long_message);
	tcase_add_test(tc, names_and_transience);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(err_suite)
