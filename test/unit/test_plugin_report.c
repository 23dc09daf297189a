/* Unit tests for the pure parts of `kubectl redis report` and `logs`: a Secret's
 * structural redaction (data, stringData, last-applied annotation, managedFields), the
 * by-value scrub (raw, base64, JSON-escaped forms; short values left), and the logs'
 * line prefixes. */
#include <string.h>

#include "lib/redact.h"
#include "plugin/plugin.h"
#include "plugin/scrub.h"
#include "unit.h"

/* "hunter2-xyz" is aHVudGVyMi14eXo= in base64; "q\"uote" is escaped in JSON. */
static const char secret_json[] =
        "{\"metadata\":{\"name\":\"demo-auth\",\"annotations\":{"
        "\"kubectl.kubernetes.io/last-applied-configuration\":"
        "\"{\\\"data\\\":{\\\"password\\\":\\\"aHVudGVyMi14eXo=\\\"}}\",\"keep\":\"me\"},"
        "\"managedFields\":[{\"manager\":\"kubectl\"}]},"
        "\"data\":{\"password\":\"aHVudGVyMi14eXo=\",\"short\":\"YWI=\"},"
        "\"stringData\":{\"token\":\"q\\\"uote-token\"}}";

static json_t *load(const char *t)
{
	json_t *j = json_loads(t, 0, NULL);

	ck_assert_ptr_nonnull(j);
	return j;
}

START_TEST(secret_structure_redacted)
{
	json_t *s = load(secret_json), *c = plugin_scrub_object(s, "Secret");
	char *t = json_dumps(c, 0);

	ck_assert_ptr_null(strstr(t, "aHVudGVyMi14eXo="));
	ck_assert_ptr_null(strstr(t, "uote-token"));
	ck_assert_ptr_null(strstr(t, "managedFields"));
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(c, "data"), "short")),
	                 REDACT_MARK);
	ck_assert_str_eq(json_string_value(json_object_get(
	                         json_object_get(json_object_get(c, "metadata"), "annotations"),
	                         "kubectl.kubernetes.io/last-applied-configuration")),
	                 REDACT_MARK);
	ck_assert_ptr_nonnull(strstr(t, "\"keep\": \"me\""));
	ck_assert_ptr_nonnull(strstr(t, "demo-auth")); /* names stay */
	free(t);
	json_decref(c);
	/* not a Secret: only lib/redact's rules (a key naming a secret) */
	c = plugin_scrub_object(s, "ConfigMap");
	ck_assert_str_eq(
	        json_string_value(json_object_get(
	                json_object_get(json_object_get(c, "metadata"), "annotations"), "keep")),
	        "me");
	json_decref(c);
	json_decref(s);
}
END_TEST

static const struct {
	const char *in, *want;
} scrub_cases[] = {
	{ "auth ok", "auth ok" },
	{ "pw=hunter2-xyz!", "pw=" REDACT_MARK "!" },
	{ "hunter2-xyzhunter2-xyz", REDACT_MARK REDACT_MARK },
	{ "b64 aHVudGVyMi14eXo= end", "b64 " REDACT_MARK " end" },
	{ "{\"t\":\"q\\\"uote-token\"}", "{\"t\":\"" REDACT_MARK "\"}" },
	{ "raw q\"uote-token", "raw " REDACT_MARK },
	{ "ab is too short to scrub", "ab is too short to scrub" },
	{ "", "" },
};

START_TEST(scrub_by_value)
{
	json_t *s = load(secret_json);
	struct plugin_secrets v = { 0 };
	struct buf b = BUF_INIT(BUF_NO_LIMIT);

	plugin_secrets_add_secret(&v, s);
	buf_append_str(&b, scrub_cases[_i].in);
	plugin_scrub_text(&v, &b);
	ck_assert_str_eq(buf_cstr(&b), scrub_cases[_i].want);
	buf_release(&b);
	plugin_secrets_release(&v);
	ck_assert_uint_eq(v.n, 0);
	json_decref(s);
}
END_TEST

static const struct {
	const char *in, *want;
} prefix_cases[] = {
	{ "a\nb\n", "[demo-1] a\n[demo-1] b\n" },
	{ "a\nno newline", "[demo-1] a\n[demo-1] no newline\n" },
	{ "\n", "[demo-1] \n" },
	{ "", "" },
};

START_TEST(logs_prefix)
{
	struct buf b = BUF_INIT(BUF_NO_LIMIT);

	plugin_logs_prefix("demo-1", prefix_cases[_i].in, strlen(prefix_cases[_i].in), &b);
	ck_assert_str_eq(buf_cstr(&b), prefix_cases[_i].want);
	buf_release(&b);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("plugin_report");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, secret_structure_redacted);
	tcase_add_loop_test(tc, scrub_by_value, 0, ARRAY_LEN(scrub_cases));
	tcase_add_loop_test(tc, logs_prefix, 0, ARRAY_LEN(prefix_cases));
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(suite)
