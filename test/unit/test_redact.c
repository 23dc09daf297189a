/*
 * Unit tests for lib/redact: which keys and values are secrets, the redacted copy of
 * JSON (a Secret's data and stringData, password fields, credentials by their looks),
 * redact_text as lib/log uses it, and the log lines themselves: the controller's debug
 * plan log of a plan that creates and patches the connection Secret, captured at debug
 * level, holds no password (plain or base64) and no key material.
 */
#include <stdio.h>
#include <string.h>

#include "api/rediscluster.h"
#include "controller/desired.h"
#include "controller/actions.h"
#include "controller/pki.h"
#include "lib/jsonx.h"
#include "lib/log.h"
#include "lib/redact.h"
#include "unit.h"

#define PW     "hunter2-Xy7qPz"
#define PW_B64 "aHVudGVyMi1YeTdxUHo=" /* base64 of PW */

static json_t *parse(const char *text)
{
	json_t *j = NULL;

	ck_assert_msg(jsonx_loadb(text, strlen(text), 1 << 20, &j, NULL) == 0, "bad JSON: %s",
	              text);
	return j;
}

/* --- keys and values ------------------------------------------------------------------- */

static const struct {
	const char *key;
	bool sensitive;
} keys[] = {
	{ "password", true },
	{ "redisPassword", true },
	{ "MASTERAUTH", true },
	{ "requirepass", true },
	{ "clientToken", true },
	{ "Authorization", true },
	{ "tls_private_key", true },
	{ "privateKey", true },
	{ "apiKey", true },
	{ "passwords", true },
	{ "secretName", false },
	{ "authSecretRef", false },
	{ "passwordSecrets", true },
	{ "pod", false },
	{ "name", false },
	{ "key", false },
	{ "fillPassword", true },
	{ "usernames", false },
	{ "aVeryLongKeyNameThatGoesOnAndOnAndOnForMoreThanSixtyFourBytesAndThenSaysToken", true },
};

START_TEST(key_sensitivity)
{
	ck_assert_msg(redact_key_is_sensitive(keys[_i].key) == keys[_i].sensitive, "%s",
	              keys[_i].key);
}
END_TEST

static const struct {
	const char *value;
	bool sensitive;
} values[] = {
	{ "Bearer abc.def", true },
	{ "basic dXNlcjpwdw==", true },
	{ "-----BEGIN EC PRIVATE KEY-----\nMHc...\n-----END EC PRIVATE KEY-----\n", true },
	{ "-----BEGIN PRIVATE KEY-----", true },
	{ "redis://default:" PW "@c-leader.ns.svc:6379", true },
	{ "redis://:pw@host", true },
	{ "url=redis://u:p@h and more", true },
	{ "-----BEGIN CERTIFICATE-----", false },
	{ "https://10.0.0.5:8000/v1/status", false },
	{ "redis://c-leader.ns.svc:6379", false },
	{ "mailto:someone@example.com", false },
	{ "http://h/path?x=a:b@c", false },
	{ "primary", false },
};

START_TEST(value_sensitivity)
{
	ck_assert_msg(redact_value_is_sensitive(values[_i].value) == values[_i].sensitive, "%s",
	              values[_i].value);
}
END_TEST

/* --- the redacted copy ----------------------------------------------------------------- */

static const struct {
	const char *name, *in, *want;
} copies[] = {
	{ "a Secret: data and stringData values, keys kept",
	  "{\"kind\":\"Secret\",\"metadata\":{\"name\":\"c-auth\"},\"type\":\"Opaque\","
	  "\"data\":{\"password\":\"" PW_B64 "\",\"port\":\"NjM3OQ==\"},"
	  "\"stringData\":{\"tls.key\":\"k\",\"n\":7}}",
	  "{\"kind\":\"Secret\",\"metadata\":{\"name\":\"c-auth\"},\"type\":\"Opaque\","
	  "\"data\":{\"password\":\"[REDACTED]\",\"port\":\"[REDACTED]\"},"
	  "\"stringData\":{\"tls.key\":\"[REDACTED]\",\"n\":\"[REDACTED]\"}}" },
	{ "a Secret's last-applied annotation (its data again); a ConfigMap's stays",
	  "[{\"kind\":\"Secret\",\"metadata\":{\"annotations\":{\"a\":\"b\","
	  "\"kubectl.kubernetes.io/last-applied-configuration\":\"{\\\"data\\\":{}}\"}}},"
	  "{\"kind\":\"ConfigMap\",\"metadata\":{\"annotations\":{"
	  "\"kubectl.kubernetes.io/last-applied-configuration\":\"{}\"}}}]",
	  "[{\"kind\":\"Secret\",\"metadata\":{\"annotations\":{\"a\":\"b\","
	  "\"kubectl.kubernetes.io/last-applied-configuration\":\"[REDACTED]\"}}},"
	  "{\"kind\":\"ConfigMap\",\"metadata\":{\"annotations\":{"
	  "\"kubectl.kubernetes.io/last-applied-configuration\":\"{}\"}}}]" },
	{ "a plan action on a Secret: its body's data",
	  "{\"actions\":[{\"action\":\"patch\",\"kind\":\"Secret\",\"name\":\"c-conn\","
	  "\"body\":{\"metadata\":{\"labels\":{\"a\":\"b\"}},\"data\":{\"url\":\"eA==\"}}},"
	  "{\"action\":\"patch\",\"kind\":\"ConfigMap\",\"body\":{\"data\":{\"k\":\"v\"}}}]}",
	  "{\"actions\":[{\"action\":\"patch\",\"kind\":\"Secret\",\"name\":\"c-conn\","
	  "\"body\":{\"metadata\":{\"labels\":{\"a\":\"b\"}},\"data\":{\"url\":\"[REDACTED]\"}}},"
	  "{\"action\":\"patch\",\"kind\":\"ConfigMap\",\"body\":{\"data\":{\"k\":\"v\"}}}]}" },
	{ "stringData anywhere",
	  "[{\"stringData\":{\"password\":\"x\",\"deep\":{\"a\":[\"b\",1]}}}]",
	  "[{\"stringData\":{\"password\":\"[REDACTED]\",\"deep\":{\"a\":[\"[REDACTED]\","
	  "\"[REDACTED]\"]}}}]" },
	{ "password fields; booleans, null and names stay",
	  "{\"users\":[{\"name\":\"app\",\"password\":\"x\",\"passwords\":[\"a\",\"b\"],"
	  "\"passwordSecrets\":[{\"name\":\"s\"}]}],\"fillPassword\":true,\"token\":null,"
	  "\"requirepass\":123,\"secretName\":\"c-auth\"}",
	  "{\"users\":[{\"name\":\"app\",\"password\":\"[REDACTED]\",\"passwords\":[\"[REDACTED]\","
	  "\"[REDACTED]\"],\"passwordSecrets\":[{\"name\":\"s\"}]}],\"fillPassword\":true,"
	  "\"token\":null,\"requirepass\":\"[REDACTED]\",\"secretName\":\"c-auth\"}" },
	{ "values by their looks",
	  "{\"url\":\"redis://default:" PW "@h:6379\",\"status\":\"https://10.0.0.5:8000/v1\","
	  "\"h\":\"Bearer x\",\"pem\":\"-----BEGIN RSA PRIVATE KEY-----\\nx\"}",
	  "{\"url\":\"[REDACTED]\",\"status\":\"https://10.0.0.5:8000/v1\",\"h\":\"[REDACTED]\","
	  "\"pem\":\"[REDACTED]\"}" },
	{ "a pod spec: Secret volumes by name stay readable",
	  "{\"volumes\":[{\"name\":\"auth\",\"secret\":{\"secretName\":\"c-auth\",\"items\":"
	  "[{\"key\":\"password\",\"path\":\"password\"}]}}]}",
	  "{\"volumes\":[{\"name\":\"auth\",\"secret\":{\"secretName\":\"c-auth\",\"items\":"
	  "[{\"key\":\"password\",\"path\":\"password\"}]}}]}" },
};

/* A list item carries no kind: the caller says it is a Secret. */
START_TEST(secret_without_kind)
{
	json_t *j = json_pack("{s:{s:{s:s}},s:{s:s}}", "metadata", "annotations",
	                      "kubectl.kubernetes.io/last-applied-configuration", "{\"data\":1}",
	                      "data", "password", PW_B64);
	json_t *plain = redact_json(j), *sec = redact_json_secret(j);

	ck_assert_str_eq(jsonx_get_string(plain, "data.password"), REDACT_MARK); /* by its key */
	ck_assert_str_ne(json_string_value(json_object_get(
	                         jsonx_get(plain, "metadata.annotations"),
	                         "kubectl.kubernetes.io/last-applied-configuration")),
	                 REDACT_MARK);
	ck_assert_str_eq(json_string_value(json_object_get(
	                         jsonx_get(sec, "metadata.annotations"),
	                         "kubectl.kubernetes.io/last-applied-configuration")),
	                 REDACT_MARK);
	json_decref(plain);
	json_decref(sec);
	json_decref(j);
}
END_TEST

START_TEST(redacted_copy)
{
	json_t *in = parse(copies[_i].in), *want = parse(copies[_i].want);
	json_t *got = redact_json(in), *again = parse(copies[_i].in);
	char *text = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);

	ck_assert_msg(json_equal(got, want), "%s: got %s", copies[_i].name, text);
	ck_assert_msg(json_equal(in, again), "%s: the input changed", copies[_i].name);
	free(text);
	json_decref(in);
	json_decref(want);
	json_decref(got);
	json_decref(again);
}
END_TEST

START_TEST(redact_text_cases)
{
	const char *plain = "{\"pod\":\"c-1\",\"n\":[1,2]}";
	const char *secret = "{\"kind\":\"Secret\",\"data\":{\"password\":\"" PW_B64 "\"}}";
	char *owned;

	ck_assert_ptr_eq(redact_text("pod", "c-1", &owned), "c-1");
	ck_assert_ptr_null(owned);
	ck_assert_str_eq(redact_text("password", "x", &owned), REDACT_MARK);
	ck_assert_str_eq(redact_text(NULL, "Bearer x", &owned), REDACT_MARK);
	ck_assert_ptr_eq(redact_text("plan", plain, &owned), plain); /* nothing to hide */
	ck_assert_ptr_null(owned);
	ck_assert_str_eq(redact_text("x", "[1/3] restarting", &owned), "[1/3] restarting");
	ck_assert_str_eq(redact_text("obj", secret, &owned),
	                 "{\"kind\":\"Secret\",\"data\":{\"password\":\"[REDACTED]\"}}");
	ck_assert_ptr_nonnull(owned);
	free(owned);
	ck_assert_str_eq(redact_text("list", "[\"Bearer x\"]", &owned), "[\"[REDACTED]\"]");
	free(owned);
}
END_TEST

/* --- what the log prints --------------------------------------------------------------- */

static char captured[1 << 16];

/* Runs emit with the log writing into captured: level, format and debug components. */
static void capture(enum log_level level, enum log_format fmt, const char *debug,
                    void (*emit)(void *), void *arg)
{
	FILE *f;

	memset(captured, 0, sizeof(captured));
	f = fmemopen(captured, sizeof(captured) - 1, "w");
	ck_assert_ptr_nonnull(f);
	log_configure(level, fmt, debug, f);
	emit(arg);
	fclose(f);
	log_configure(LOG_LEVEL_INFO, LOG_FORMAT_JSON, NULL, NULL);
}

static void decode_cluster(struct api_redis_cluster *rc)
{
	json_t *obj = parse("{\"apiVersion\":\"redis.io/v1\",\"kind\":\"RedisCluster\","
	                    "\"metadata\":{\"name\":\"c\",\"namespace\":\"ns\",\"uid\":\"u-1\","
	                    "\"generation\":1},\"spec\":{\"instances\":1,"
	                    "\"connectionSecret\":{\"name\":\"c-conn\"}}}");
	struct err e = { 0 };

	ck_assert_msg(api_redis_cluster_decode(obj, rc, &e) == 0, "%s", e.msg);
	json_decref(obj);
}

/* As controller/reconcile.c's log_plan does it. */
static void log_plan(void *arg)
{
	json_t *d = ctl_plan_dump(arg);
	char *text = json_dumps(d, JSON_COMPACT);

	log_debug("plan", "planned", "ns", "ns", "name", "c", "plan", text, (char *)NULL);
	free_secret(text);
	json_decref(d);
}

static void assert_no_secret(const char *what)
{
	ck_assert_msg(captured[0] != '\0', "%s: nothing logged", what);
	ck_assert_msg(!strstr(captured, PW), "%s: the password is in %.400s", what, captured);
	ck_assert_msg(!strstr(captured, PW_B64), "%s: the base64 password is in %.400s", what,
	              captured);
	ck_assert_msg(!strstr(captured, "PRIVATE KEY"), "%s: key material logged", what);
	ck_assert_msg(strstr(captured, REDACT_MARK) != NULL, "%s: no mark in %.400s", what,
	              captured);
}

START_TEST(debug_plan_log_hides_the_connection_secret)
{
	static const enum log_format fmts[] = { LOG_FORMAT_JSON, LOG_FORMAT_LOGFMT };
	struct api_redis_cluster rc;
	struct ctl_plan p;
	json_t *line, *plan;

	decode_cluster(&rc);
	ctl_plan_init(&p);
	ctl_plan_create(&p, &k8s_res_secrets, desired_connection_secret(&rc, PW));
	ctl_plan_patch(&p, &k8s_res_secrets, "c-conn",
	               json_pack("{s:{s:s,s:s}}", "data", "password", PW_B64, "port", "NjM3OQ=="));
	for (size_t i = 0; i < ARRAY_LEN(fmts); i++) {
		capture(LOG_LEVEL_DEBUG, fmts[i], NULL, log_plan, &p);
		assert_no_secret(i ? "logfmt, debug level" : "JSON, debug level");
		capture(LOG_LEVEL_INFO, fmts[i], "plan", log_plan, &p);
		assert_no_secret(i ? "logfmt, debug component" : "JSON, debug component");
	}
	/* still one JSON line whose plan field is the plan, names and keys readable */
	capture(LOG_LEVEL_DEBUG, LOG_FORMAT_JSON, NULL, log_plan, &p);
	line = parse(captured);
	plan = parse(json_string_value(json_object_get(line, "plan")));
	ck_assert_str_eq(jsonx_get_string(plan, "actions[0].body.metadata.name"), "c-conn");
	ck_assert_str_eq(jsonx_get_string(plan, "actions[0].body.data.password"), REDACT_MARK);
	ck_assert_str_eq(jsonx_get_string(plan, "actions[1].body.data.port"), REDACT_MARK);
	json_decref(plan);
	json_decref(line);
	ctl_plan_release(&p);
	api_redis_cluster_release(&rc);
}
END_TEST

static void log_object(void *arg)
{
	char *text = json_dumps(arg, JSON_COMPACT);

	log_warn("apply", "object", "object", text, (char *)NULL);
	log_error("apply", "error", "body", text, (char *)NULL);
	free_secret(text);
}

/* Any level, any key: an operator TLS Secret with its generated keys. */
START_TEST(secret_objects_at_every_level)
{
	json_t *sec = json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1", "kind", "Secret",
	                        "metadata", "name", "c-operator-tls");
	struct err e = { 0 };

	ck_assert_int_eq(ctl_pki_fill_operator(sec, "c", &e), 0);
	json_object_set_new(sec, "data", json_pack("{s:s}", "password", PW_B64));
	capture(LOG_LEVEL_WARN, LOG_FORMAT_JSON, NULL, log_object, sec);
	assert_no_secret("warn and error, JSON");
	ck_assert_ptr_nonnull(strstr(captured, "c-operator-tls"));
	ctl_pki_wipe(sec);
	json_decref(sec);
}
END_TEST

static Suite *redact_suite(void)
{
	Suite *s = suite_create("redact");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, key_sensitivity, 0, ARRAY_LEN(keys));
	tcase_add_loop_test(tc, value_sensitivity, 0, ARRAY_LEN(values));
	tcase_add_loop_test(tc, redacted_copy, 0, ARRAY_LEN(copies));
	tcase_add_test(tc, redact_text_cases);
	tcase_add_test(tc, secret_without_kind);
	tcase_add_test(tc, debug_plan_log_hides_the_connection_secret);
	tcase_add_test(tc, secret_objects_at_every_level);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(redact_suite)
