/*
 * Unit tests for instance/http_tls: the verdict for every mode and every subset of the
 * three files (the exact reason text, which /healthz, /v1/status and the 503 of a
 * mutation carry), the mode parser, and a reason cut to a short buffer.
 */
#include <errno.h>
#include <string.h>

#include "instance/http_tls.h"
#include "unit.h"

#define A INST_HTTP_TLS_AUTO
#define R INST_HTTP_TLS_REQUIRED
#define D "/etc/redis-operator/http-tls"
#define REFUSED(files)                                                                             \
	INST_HTTP_SERVE_REFUSED,                                                                   \
	        "TLS material incomplete: " files " missing in " D "; mutations refused"

/* present: bit 0 tls.crt, bit 1 tls.key, bit 2 ca.crt */
static const struct {
	enum inst_http_tls_mode mode;
	unsigned present;
	enum inst_http_serve want;
	const char *reason;
} cases[] = {
	{ A, 7, INST_HTTP_SERVE_HTTPS, "" },
	{ R, 7, INST_HTTP_SERVE_HTTPS, "" },
	{ A, 0, INST_HTTP_SERVE_PLAIN, "" }, /* today's hand-made pod without TLS */
	{ R, 0, REFUSED("tls.crt, tls.key, ca.crt") },
	{ A, 3, REFUSED("ca.crt") },
	{ R, 3, REFUSED("ca.crt") },
	{ A, 1, REFUSED("tls.key, ca.crt") },
	{ A, 2, REFUSED("tls.crt, ca.crt") },
	{ A, 4, REFUSED("tls.crt, tls.key") },
	{ R, 5, REFUSED("tls.key") },
	{ A, 6, REFUSED("tls.crt") },
};

START_TEST(judge_table)
{
	bool present[INST_HTTP_TLS_NFILES];
	char reason[INST_HTTP_TLS_REASON_MAX];

	for (unsigned i = 0; i < INST_HTTP_TLS_NFILES; i++)
		present[i] = cases[_i].present & (1U << i);
	memset(reason, 'x', sizeof(reason));
	ck_assert_int_eq(inst_http_tls_judge(cases[_i].mode, present, D, reason, sizeof(reason)),
	                 cases[_i].want);
	ck_assert_str_eq(reason, cases[_i].reason);
}
END_TEST

START_TEST(reason_cut_to_buffer)
{
	const bool present[INST_HTTP_TLS_NFILES] = { true, true, false };
	char reason[20];

	ck_assert_int_eq(inst_http_tls_judge(R, present, D, reason, sizeof(reason)),
	                 INST_HTTP_SERVE_REFUSED);
	ck_assert_str_eq(reason, "TLS material incomp");
}
END_TEST

START_TEST(mode_parse)
{
	enum inst_http_tls_mode m = R;

	ck_assert_int_eq(inst_http_tls_mode_parse(NULL, &m), 0);
	ck_assert_int_eq(m, A);
	ck_assert_int_eq(inst_http_tls_mode_parse("required", &m), 0);
	ck_assert_int_eq(m, R);
	ck_assert_int_eq(inst_http_tls_mode_parse("auto", &m), 0);
	ck_assert_int_eq(m, A);
	ck_assert_int_eq(inst_http_tls_mode_parse("Required", &m), -EINVAL);
	ck_assert_int_eq(inst_http_tls_mode_parse("", &m), -EINVAL);
	ck_assert_int_eq(m, A);
	ck_assert_str_eq(inst_http_serve_name(INST_HTTP_SERVE_HTTPS), "https");
	ck_assert_str_eq(inst_http_serve_name(INST_HTTP_SERVE_PLAIN), "plain");
	ck_assert_str_eq(inst_http_serve_name(INST_HTTP_SERVE_REFUSED), "refused");
	ck_assert_str_eq(inst_http_serve_name((enum inst_http_serve)9), "unknown");
}
END_TEST

static Suite *http_tls_suite(void)
{
	Suite *s = suite_create("instance_http_tls");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, judge_table, 0, ARRAY_LEN(cases));
	tcase_add_test(tc, reason_cut_to_buffer);
	tcase_add_test(tc, mode_parse);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(http_tls_suite)
