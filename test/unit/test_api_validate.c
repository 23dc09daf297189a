/*
 * Unit tests for api/validate's update semantics, which the live cases cannot show (an
 * object the current CRD refuses cannot be stored to be updated): ratcheting as
 * k8s.io/apiextensions-apiserver v0.37 does it (ratcheting.go, schema/cel/validation.go,
 * apiserver/pkg/cel/common/equality.go): errors of unchanged nodes are dropped, nodes are
 * correlated by object key and by list-map key, items of other lists follow their list,
 * CEL evaluation errors and transition rules are never ratcheted, duplicate list-map keys
 * only when old had none; plus the API's edges: a small error buffer, strict decoding's
 * -EBADMSG, identical objects.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/redisbackup.h"
#include "api/rediscluster.h"
#include "api/validate.h"
#include "lib/buf.h"
#include "unit.h"

#define NOT_CHECKED API_VALIDATE_NOT_CHECKED "\n"
#define SIZE_ERR                                                                                   \
	"spec.storage.size: Invalid value: \"lots\": spec.storage.size must be a positive "        \
	"Kubernetes quantity such as 1Gi\n"
#define CIDR_ERR                                                                                   \
	"spec.exposure.ipAllowList[0]: Invalid value: \"10.0.0.1\": spec.exposure.ipAllowList "    \
	"entries must be CIDRs such as 203.0.113.0/24 or 2001:db8::/32\n"
#define TLS_ERR                                                                                    \
	"spec: Invalid value: spec.tlsSecret and spec.caSecret must be set together; add the "     \
	"missing one or remove both\n"
#define EXPOSED    "\"exposure\":{\"enabled\":true,\"entryPoints\":[\"e\"],\"ipAllowList\":"
#define USER(n, p) "{\"name\":\"" n "\",\"passwordSecrets\":[{\"name\":\"" p "\"}]}"

static const struct {
	const char *what;
	const char *name; /* metadata.name (NULL: "x") */
	const char *old;  /* spec JSON; NULL: a create */
	const char *new;
	int rc;
	const char *errors; /* the lines, in the order api_validate writes them */
} updates[] = {
	{ "an invalid value is refused on create", NULL, NULL, "{\"storage\":{\"size\":\"lots\"}}",
	  -EINVAL, SIZE_ERR },
	{ "an unchanged invalid value ratchets", NULL, "{\"storage\":{\"size\":\"lots\"}}",
	  "{\"instances\":2,\"storage\":{\"size\":\"lots\"}}", 0, "" },
	{ "a changed invalid value is refused", NULL, "{\"storage\":{\"size\":\"lots\"}}",
	  "{\"storage\":{\"size\":\"heaps\"}}", -EINVAL,
	  "spec.storage.size: Invalid value: \"heaps\": spec.storage.size must be a positive "
	  "Kubernetes quantity such as 1Gi\n" },
	{ "an unchanged schema error ratchets", NULL, "{\"imageName\":\"a b\"}",
	  "{\"imageName\":\"a b\",\"instances\":2}", 0, "" },
	{ "a changed schema error is refused", NULL, "{\"imageName\":\"a b\"}",
	  "{\"imageName\":\"c d\"}", -EINVAL,
	  "spec.imageName: Invalid value: \"c d\": spec.imageName in body should match "
	  "'^[^\\s]+$'\n" },
	{ "list-map items correlate by key, not index", NULL,
	  "{\"users\":[" USER("default", "p") "]}",
	  "{\"users\":[" USER("app", "q") "," USER("default", "p") "]}", 0, "" },
	{ "a new list-map item is checked", NULL, "{\"users\":[" USER("default", "p") "]}",
	  "{\"users\":[" USER("default", "p") "," USER("redis-operator", "q") "]}", -EINVAL,
	  "spec.users[1].name: Invalid value: \"redis-operator\": spec.users[].name may not be "
	  "'default' (set by spec.authSecret) or 'redis-operator' (the operator's own user); "
	  "choose another name\n" },
	{ "an unchanged field of a changed item ratchets", NULL,
	  "{\"users\":[" USER("default", "p") "]}", "{\"users\":[" USER("default", "q") "]}", 0,
	  "" },
	{ "items of a changed plain list are checked", NULL, "{" EXPOSED "[\"10.0.0.1\"]}}",
	  "{" EXPOSED "[\"10.0.0.1\",\"10.0.0.0/8\"]}}", -EINVAL, CIDR_ERR },
	{ "items of an unchanged plain list ratchet", NULL, "{" EXPOSED "[\"10.0.0.1\"]}}",
	  "{\"instances\":2," EXPOSED "[\"10.0.0.1\"]}}", 0, "" },
	{ "CEL evaluation errors never ratchet", NULL, "{\"failedAfter\":\"99999999999h\"}",
	  "{\"instances\":2,\"failedAfter\":\"99999999999h\"}", -EINVAL,
	  "spec.failedAfter: Invalid value: \"string\": type conversion error from 'string' to "
	  "'google.protobuf.Duration' evaluating rule: spec.failedAfter must be at least 1m\n" },
	{ "duplicate keys are refused on create", NULL, NULL,
	  "{\"users\":[" USER("a", "p") "," USER("a", "q") "]}", -EINVAL,
	  "spec.users[1]: Duplicate value: {\"name\":\"a\"}\n" },
	{ "duplicate keys ratchet when old had some", NULL,
	  "{\"users\":[" USER("a", "p") "," USER("a", "q") "]}",
	  "{\"users\":[" USER("a", "p") "," USER("a", "q") "," USER("b", "r") "]}", 0, "" },
	{ "a blocking error blocks the rules on create", NULL, NULL,
	  "{\"authSecret\":{},\"tlsSecret\":{\"name\":\"t\"}}", -EINVAL,
	  "spec.authSecret.name: Required value\n" NOT_CHECKED },
	{ "a ratcheted blocking error does not block them", NULL, "{\"authSecret\":{}}",
	  "{\"authSecret\":{},\"tlsSecret\":{\"name\":\"t\"}}", -EINVAL, TLS_ERR },
	{ "metadata.name is checked on create", "Bad.Name", NULL, "{}", -EINVAL,
	  "metadata.name: Invalid value: \"Bad.Name\": a lowercase RFC 1123 subdomain must "
	  "consist of lower case alphanumeric characters, '-' or '.', and must start and end with "
	  "an alphanumeric character (e.g. 'example.com', regex used for validation is "
	  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')\n"
	  "<nil>: Invalid value: metadata.name must be at most 50 characters of lowercase "
	  "letters, digits and '-', starting with a letter (pods, Services and Leases are named "
	  "after it, e.g. <name>-sentinel); choose a shorter name\n" },
	{ "and only its CRD rule on update (the root changed)", "Bad.Name", "{}",
	  "{\"instances\":2}", -EINVAL,
	  "<nil>: Invalid value: metadata.name must be at most 50 characters of lowercase "
	  "letters, digits and '-', starting with a letter (pods, Services and Leases are named "
	  "after it, e.g. <name>-sentinel); choose a shorter name\n" },
	{ "an identical object ratchets everything", "Bad.Name",
	  "{\"storage\":{\"size\":\"lots\"}}", "{\"storage\":{\"size\":\"lots\"}}", 0, "" },
	{ "unknown fields end validation on update too", NULL, "{}", "{\"replicas\":3}", -EINVAL,
	  "unknown field \"spec.replicas\"\n" },
	{ "transition rules compare defaulted values", NULL, "{}",
	  "{\"mode\":\"standalone\",\"storage\":{\"type\":\"pvc\",\"size\":\"1Gi\"}}", 0, "" },
	{ "a transition rule is not ratcheted", NULL, "{\"mode\":\"sentinel\",\"instances\":3}",
	  "{\"mode\":\"standalone\",\"instances\":3}", -EINVAL,
	  "spec.mode: Invalid value: \"standalone\": spec.mode cannot change from sentinel to "
	  "standalone: only standalone \u2192 sentinel is supported in place; create a new "
	  "RedisCluster (restore it from a backup) to change mode\n" },
};

static json_t *object(const char *name, const char *spec)
{
	json_t *s = json_loads(spec, 0, NULL);

	ck_assert_msg(s != NULL, "bad test JSON %s", spec);
	return json_pack("{s:s,s:s,s:{s:s},s:o}", "apiVersion", "redis.io/v1", "kind",
	                 "RedisCluster", "metadata", "name", name ? name : "x", "spec", s);
}

START_TEST(update)
{
	json_t *n = object(updates[_i].name, updates[_i].new), *o = NULL;
	struct api_redis_cluster nrc, orc;
	struct buf errors = BUF_INIT(BUF_NO_LIMIT);
	struct err e = { 0 };
	int rc;

	ck_assert_msg(api_redis_cluster_decode(n, &nrc, &e) == 0, "%s", e.msg);
	if (updates[_i].old) {
		o = object(updates[_i].name, updates[_i].old);
		ck_assert_msg(api_redis_cluster_decode(o, &orc, &e) == 0, "%s", e.msg);
	}
	rc = api_redis_cluster_validate(&nrc, o ? &orc : NULL, &errors);
	ck_assert_msg(rc == updates[_i].rc, "%s: rc %d:\n%s", updates[_i].what, rc,
	              buf_cstr(&errors));
	ck_assert_msg(strcmp(buf_cstr(&errors), updates[_i].errors) == 0, "%s:\n%s",
	              updates[_i].what, buf_cstr(&errors));
	api_redis_cluster_release(&nrc);
	if (o)
		api_redis_cluster_release(&orc);
	buf_release(&errors);
	json_decref(n);
	json_decref(o);
}
END_TEST

/* An error buffer too small for a line: the verdict stands, no partial line is written. */
START_TEST(small_buffer)
{
	json_t *n = object(NULL, "{\"storage\":{\"size\":\"lots\"}}");
	struct buf errors = BUF_INIT(16);
	struct api_redis_cluster rc;

	ck_assert_int_eq(api_redis_cluster_decode(n, &rc, NULL), 0);
	ck_assert_int_eq(api_redis_cluster_validate(&rc, NULL, &errors), -EINVAL);
	ck_assert_uint_eq(errors.len, 0);
	api_redis_cluster_release(&rc);
	buf_release(&errors);
	json_decref(n);
}
END_TEST

/* The generic entry point: -EBADMSG when strict decoding stops, status never validated. */
START_TEST(generic_entry)
{
	struct buf errors = BUF_INIT(BUF_NO_LIMIT);
	json_t *o = json_loads("{\"metadata\":{\"name\":\"x\"},\"spec\":{\"clusterName\":\"a\","
	                       "\"destination\":{\"s3\":{\"bucket\":\"bkt\",\"credentialsSecret\":"
	                       "{\"name\":\"c\"}}}},\"status\":{\"phase\":\"Nope\",\"size\":-1}}",
	                       0, NULL);

	api_schema_default(&api_redis_backup_schema, o);
	ck_assert_int_eq(api_validate(&api_redis_backup_schema, o, NULL, &errors), 0);
	json_object_set_new(json_object_get(o, "status"), "extra", json_true());
	ck_assert_int_eq(api_validate(&api_redis_backup_schema, o, NULL, &errors), -EBADMSG);
	ck_assert_str_eq(buf_cstr(&errors), "unknown field \"status.extra\"\n");
	buf_release(&errors);
	json_decref(o);
}
END_TEST

/* A backup's spec is immutable, compared after defaulting. */
START_TEST(backup_immutable)
{
	static const char *const specs[] = {
		"{\"clusterName\":\"a\",\"destination\":{\"s3\":{\"bucket\":\"bkt\","
		"\"credentialsSecret\":{\"name\":\"c\"}}}}",
		"{\"clusterName\":\"a\",\"target\":\"prefer-replica\",\"destination\":{\"s3\":"
		"{\"bucket\":\"bkt\",\"region\":\"us-east-1\",\"credentialsSecret\":{\"name\":"
		"\"c\"}}}}",
		"{\"clusterName\":\"a\",\"destination\":{\"s3\":{\"bucket\":\"bkt\",\"path\":\"p\","
		"\"credentialsSecret\":{\"name\":\"c\"}}}}",
	};
	struct api_redis_backup b[3];
	struct buf errors = BUF_INIT(BUF_NO_LIMIT);

	for (size_t i = 0; i < 3; i++) {
		json_t *o = json_pack("{s:s,s:s,s:{s:s},s:o}", "apiVersion", "redis.io/v1", "kind",
		                      "RedisBackup", "metadata", "name", "b", "spec",
		                      json_loads(specs[i], 0, NULL));

		ck_assert_int_eq(api_redis_backup_decode(o, &b[i], NULL), 0);
		json_decref(o);
	}
	ck_assert_int_eq(api_redis_backup_validate(&b[1], &b[0], &errors), 0);
	ck_assert_int_eq(api_redis_backup_validate(&b[2], &b[0], &errors), -EINVAL);
	ck_assert_str_eq(buf_cstr(&errors), "spec: Invalid value: RedisBackup spec is immutable; "
	                                    "create a new RedisBackup instead\n");
	for (size_t i = 0; i < 3; i++)
		api_redis_backup_release(&b[i]);
	api_redis_backup_release(NULL);
	buf_release(&errors);
}
END_TEST

START_TEST(go_values)
{
	static const struct {
		const char *json, *text;
	} cases[] = {
		{ "\"3\"", "3" },         { "true", "true" },
		{ "2.5", "2.5" },         { "null", "<nil>" },
		{ "[\"a\",1]", "[a 1]" }, { "{\"b\":1,\"a\":[true]}", "map[a:[true] b:1]" },
	};

	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		struct buf b = BUF_INIT(BUF_NO_LIMIT);
		json_t *v = json_loads(cases[i].json, JSON_DECODE_ANY, NULL);

		api_validate_go_value(v, &b);
		ck_assert_str_eq(buf_cstr(&b), cases[i].text);
		buf_release(&b);
		json_decref(v);
	}
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("api_validate");
	TCase *tc = tcase_create("validate");

	tcase_add_loop_test(tc, update, 0, ARRAY_LEN(updates));
	tcase_add_test(tc, small_buffer);
	tcase_add_test(tc, generic_entry);
	tcase_add_test(tc, backup_immutable);
	tcase_add_test(tc, go_values);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(make_suite)
