/* Unit tests for lib/log: both formats, escaping, levels, debug components, redaction. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "lib/log.h"
#include "lib/redact.h"
#include "unit.h"

/* Captures the lines one log call writes. */
static char captured[16384];

static enum log_format fmt;
static const char *debug_list;
static enum log_level level;

static const char *capture_with(void (*emit)(void))
{
	FILE *f;

	memset(captured, 0, sizeof(captured));
	f = fmemopen(captured, sizeof(captured), "w");
	log_configure(level, fmt, debug_list, f);
	emit();
	fclose(f);
	return captured;
}

static void emit_basic(void)
{
	log_info("controller", "reconciled \"x\"", "ns", "default", "name", "a b", NULL);
}

START_TEST(json_line_parses)
{
	json_error_t jerr;
	json_t *j;

	level = LOG_LEVEL_INFO;
	fmt = LOG_FORMAT_JSON;
	debug_list = "";
	capture_with(emit_basic);
	ck_assert_int_eq(captured[strlen(captured) - 1], '\n');
	j = json_loads(captured, 0, &jerr);
	ck_assert_msg(j != NULL, "not JSON: %s (%s)", captured, jerr.text);
	ck_assert_str_eq(json_string_value(json_object_get(j, "level")), "info");
	ck_assert_str_eq(json_string_value(json_object_get(j, "component")), "controller");
	ck_assert_str_eq(json_string_value(json_object_get(j, "msg")), "reconciled \"x\"");
	ck_assert_str_eq(json_string_value(json_object_get(j, "name")), "a b");
	ck_assert_ptr_nonnull(json_object_get(j, "ts"));
	json_decref(j);
}
END_TEST

START_TEST(logfmt_quotes_when_needed)
{
	level = LOG_LEVEL_INFO;
	fmt = LOG_FORMAT_LOGFMT;
	debug_list = "";
	capture_with(emit_basic);
	ck_assert_ptr_nonnull(strstr(captured, " level=info "));
	ck_assert_ptr_nonnull(strstr(captured, " ns=default "));
	ck_assert_ptr_nonnull(strstr(captured, " name=\"a b\""));
	ck_assert_ptr_nonnull(strstr(captured, " msg=\"reconciled \\\"x\\\"\""));
}
END_TEST

static void emit_secrets(void)
{
	log_warn("k8s", "request", "password", "hunter2", "Authorization", "Bearer abc.def",
	         "header", "Bearer xyz", "clientToken", "t0k", "user", "alice", NULL);
}

START_TEST(secrets_redacted)
{
	level = LOG_LEVEL_INFO;
	fmt = LOG_FORMAT_JSON;
	debug_list = "";
	capture_with(emit_secrets);
	ck_assert_ptr_null(strstr(captured, "hunter2"));
	ck_assert_ptr_null(strstr(captured, "abc.def"));
	ck_assert_ptr_null(strstr(captured, "xyz"));
	ck_assert_ptr_null(strstr(captured, "t0k"));
	ck_assert_ptr_nonnull(strstr(captured, "\"user\":\"alice\""));
	ck_assert_ptr_nonnull(strstr(captured, "\"password\":\"[REDACTED]\""));
}
END_TEST

static void emit_debug(void)
{
	log_debug("watch", "event", NULL);
	log_debug("k8s", "request", NULL);
	log_info("other", "shown", NULL);
}

START_TEST(levels_and_debug_components)
{
	level = LOG_LEVEL_INFO;
	fmt = LOG_FORMAT_LOGFMT;
	debug_list = "k8s,queue";
	capture_with(emit_debug);
	ck_assert_ptr_null(strstr(captured, "component=watch"));
	ck_assert_ptr_nonnull(strstr(captured, "component=k8s"));
	ck_assert_ptr_nonnull(strstr(captured, "msg=shown"));

	level = LOG_LEVEL_ERROR;
	debug_list = "";
	capture_with(emit_debug);
	ck_assert_str_eq(captured, "");

	level = LOG_LEVEL_DEBUG;
	capture_with(emit_debug);
	ck_assert_ptr_nonnull(strstr(captured, "component=watch"));
}
END_TEST

static void emit_control(void)
{
	log_error(NULL, "bad\x01value\nnext", "k", "tab\there", NULL);
}

START_TEST(control_characters_escaped)
{
	json_t *j;

	level = LOG_LEVEL_INFO;
	fmt = LOG_FORMAT_JSON;
	debug_list = "";
	capture_with(emit_control);
	ck_assert_ptr_null(strchr(captured, '\x01'));
	ck_assert_int_eq((int)(strchr(captured, '\n') - captured), (int)strlen(captured) - 1);
	j = json_loads(captured, 0, NULL);
	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(json_string_value(json_object_get(j, "msg")), "bad\x01value\nnext");
	json_decref(j);
}
END_TEST

START_TEST(parse_level_and_format)
{
	enum log_level l;
	enum log_format f;

	ck_assert_int_eq(log_parse_level("warn", &l), 0);
	ck_assert_int_eq(l, LOG_LEVEL_WARN);
	ck_assert_int_eq(log_parse_level("WARN", &l), -EINVAL);
	ck_assert_int_eq(log_parse_level("", &l), -EINVAL);
	ck_assert_int_eq(log_parse_format("logfmt", &f), 0);
	ck_assert_int_eq(f, LOG_FORMAT_LOGFMT);
	ck_assert_int_eq(log_parse_format("xml", &f), -EINVAL);
	ck_assert(redact_key_is_sensitive("redisPassword"));
	ck_assert(redact_key_is_sensitive("MASTERAUTH"));
	ck_assert(!redact_key_is_sensitive("pod"));
}
END_TEST

static Suite *log_suite(void)
{
	Suite *s = suite_create("log");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, json_line_parses);
	tcase_add_test(tc, logfmt_quotes_when_needed);
	tcase_add_test(tc, secrets_redacted);
	tcase_add_test(tc, levels_and_debug_components);
	tcase_add_test(tc, control_characters_escaped);
	tcase_add_test(tc, parse_level_and_format);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(log_suite)
