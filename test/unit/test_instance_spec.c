/*
 * Unit tests for instance/spec (RedisCluster JSON, decoded by api/rediscluster → struct
 * inst_spec) and the server version parser: the CRD's defaults, every field the manager
 * reads, and a table of malformed objects whose errors must name the field (refused ACL
 * rules included).
 */
#include <errno.h>
#include <string.h>

#include "instance/internal.h"
#include "instance/spec.h"
#include "lib/jsonx.h"
#include "unit.h"

/* text as a RedisCluster: apiVersion, kind and a name added unless text has a kind. */
static json_t *load(const char *text)
{
	json_t *j = NULL;

	ck_assert_int_eq(jsonx_loadb(text, strlen(text), 1 << 20, &j, NULL), 0);
	if (json_is_object(j) && !json_object_get(j, "kind")) {
		json_object_set_new(j, "apiVersion", json_string("redis.io/v1"));
		json_object_set_new(j, "kind", json_string("RedisCluster"));
		json_object_set_new(j, "metadata", json_pack("{s:s}", "name", "c"));
	}
	return j;
}

START_TEST(defaults)
{
	json_t *j = load("{\"spec\":{}}");
	struct inst_spec s;

	ck_assert_int_eq(inst_spec_decode(j, &s, NULL), 0);
	ck_assert_str_eq(s.mode, "standalone");
	ck_assert_int_eq(s.instances, 1);
	ck_assert_int_eq(s.engine, VK_ENGINE_UNKNOWN);
	ck_assert(!s.ephemeral);
	/* the CRD's defaults (api/rediscluster_schema.c) */
	ck_assert_int_eq(s.lease_duration_ms, 10000);
	ck_assert_int_eq(s.renew_deadline_ms, 6000);
	ck_assert_int_eq(s.renew_period_ms, 1000);
	ck_assert_int_eq(s.switchover_timeout_ms, 10000);
	ck_assert_ptr_null(s.current_primary);
	ck_assert_ptr_null(s.failover_phase);
	ck_assert_ptr_null(s.failover_from);
	ck_assert(!s.desired.has_maxmemory);
	inst_spec_release(&s);
	inst_spec_release(NULL);
	json_decref(j);
}
END_TEST

START_TEST(full)
{
	json_t *j = load(
	        "{\"spec\":{\"instances\":3,\"engine\":\"valkey\",\"storage\":{\"type\":"
	        "\"emptyDir\"},"
	        "\"memory\":{\"maxMemoryPercent\":50,\"maxMemoryPolicy\":\"allkeys-lfu\"},"
	        "\"resources\":{\"limits\":{\"memory\":\"1Gi\"}},\"minSyncReplicas\":1,"
	        "\"redis\":{\"maxclients\":\"100\"},\"users\":[{\"name\":\"app\",\"rules\":[\"+"
	        "get\"],"
	        "\"passwordSecrets\":[{\"name\":\"s\"}]}],\"failover\":{\"leaseDuration\":\"5s\","
	        "\"renewDeadline\":\"3s\",\"renewPeriod\":\"500ms\",\"switchoverTimeout\":\"2s\"}},"
	        "\"status\":{\"currentPrimary\":\"c-1\",\"targetPrimary\":\"c-2\","
	        "\"failover\":{\"phase\":\"Promoting\",\"from\":\"c-1\",\"to\":\"c-2\"}}}");
	struct inst_spec s, copy;

	ck_assert_int_eq(inst_spec_decode(j, &s, NULL), 0);
	ck_assert_int_eq(s.instances, 3);
	ck_assert_int_eq(s.engine, VK_ENGINE_VALKEY);
	ck_assert(s.ephemeral);
	ck_assert_uint_eq(s.desired.maxmemory, 512u << 20);
	ck_assert_str_eq(s.desired.maxmemory_policy, "allkeys-lfu");
	ck_assert_int_eq(s.desired.min_sync_replicas, 1);
	ck_assert_str_eq(inst_desired_redis(&s.desired, "maxclients"), "100");
	ck_assert_ptr_null(inst_desired_redis(&s.desired, "save"));
	ck_assert_str_eq(s.desired.users[0].rules[0], "+get");
	ck_assert_int_eq(s.renew_period_ms, 500);
	ck_assert_int_eq(s.switchover_timeout_ms, 2000);
	ck_assert_str_eq(s.current_primary, "c-1");
	ck_assert_str_eq(s.failover_phase, "Promoting");
	ck_assert_str_eq(s.failover_from, "c-1");
	ck_assert_str_eq(s.failover_to, "c-2");
	inst_desired_copy(&copy.desired, &s.desired);
	ck_assert_str_eq(copy.desired.users[0].name, "app");
	ck_assert_str_eq(copy.desired.redis[0].value, "100");
	inst_desired_release(&copy.desired);
	inst_spec_release(&s);
	json_decref(j);
}
END_TEST

/* The self-fence deadline: spec.primaryIsolation.apiServerTimeout, when shorter than
 * spec.failover.renewDeadline, is the one the Lease watchdog gets. */
START_TEST(isolation_deadline)
{
	static const struct {
		const char *isolation;
		int64_t ms;
	} cases[] = { { "", 3000 },
		      { ",\"primaryIsolation\":{\"apiServerTimeout\":\"2s\"}", 2000 },
		      { ",\"primaryIsolation\":{\"enabled\":false,\"apiServerTimeout\":\"2s\"}",
		        3000 } };
	char text[512];

	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		struct inst_spec s;
		json_t *j;

		snprintf(text, sizeof(text),
		         "{\"spec\":{\"failover\":{\"leaseDuration\":\"5s\",\"renewDeadline\":"
		         "\"3s\",\"renewPeriod\":\"500ms\"}%s}}",
		         cases[i].isolation);
		j = load(text);
		ck_assert_int_eq(inst_spec_decode(j, &s, NULL), 0);
		ck_assert_msg(s.renew_deadline_ms == cases[i].ms, "%s: %lld", text,
		              (long long)s.renew_deadline_ms);
		ck_assert_int_eq(s.lease_duration_ms, 5000);
		inst_spec_release(&s);
		json_decref(j);
	}
}
END_TEST

#define LONG_RULE /* 256 bytes, 257 with the "~" */                                                \
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"                         \
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"                         \
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"                         \
	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static const struct {
	const char *json;
	const char *field;
} bad[] = {
	{ "{}", "spec" },
	{ "{\"spec\":{},\"status\":{\"failover\":{\"phase\":\"Electing\"}}}",
	  "status.failover.phase: Unsupported value" },
	{ "{\"kind\":\"Pod\",\"spec\":{}}", "kind" },
	{ "{\"spec\":{\"instances\":\"3\"}}", "spec.instances" },
	{ "{\"spec\":{\"engine\":\"keydb\"}}", "spec.engine" },
	{ "{\"spec\":{\"storage\":{\"type\":\"disk\"}}}", "spec.storage.type" },
	{ "{\"spec\":{\"memory\":{\"maxMemory\":\"lots\"}}}", "maxMemory" },
	{ "{\"spec\":{\"memory\":{\"maxMemoryPercent\":50}}}", "maxMemoryPercent" },
	{ "{\"spec\":{\"memory\":{\"maxMemoryPolicy\":\"lru\"}}}", "maxMemoryPolicy" },
	{ "{\"spec\":{\"redis\":{\"dir\":\"/tmp\"}}}", "spec.redis.dir" },
	{ "{\"spec\":{\"failover\":{\"renewPeriod\":\"5s\"}}}", "spec.failover" },
	{ "{\"spec\":{\"failover\":{\"leaseDuration\":\"x\"}}}", "spec.failover.leaseDuration" },
	{ "{\"spec\":{\"users\":[{\"name\":\"a b\"}]}}", "spec.users[0].name" },
	/* the rule check (instance/acl) names the rule's field */
	{ "{\"spec\":{\"users\":[{\"name\":\"a\",\"rules\":[\"+get\",\"(+@all)\"]}]}}",
	  "spec.users[0].rules[1]: not allowed: a selector" },
	{ "{\"spec\":{\"users\":[{\"name\":\"b\"},{\"name\":\"a\",\"rules\":[\"NoPass\"]}]}}",
	  "spec.users[1].rules[0]: not allowed: lets any password in" },
	{ "{\"spec\":{\"users\":[{\"name\":\"a\",\"rules\":[\"~" LONG_RULE "\"]}]}}",
	  "spec.users[0].rules[0]: longer than 256 bytes" },
	{ "{\"spec\":{},\"status\":{\"currentPrimary\":1}}", "status.currentPrimary" },
};

START_TEST(bad_table)
{
	json_t *j = load(bad[_i].json);
	struct inst_spec s;
	struct err e = { 0 };

	ck_assert_int_lt(inst_spec_decode(j, &s, &e), 0);
	ck_assert_msg(strstr(e.msg, bad[_i].field), "case %d: %s", _i, e.msg);
	json_decref(j);
}
END_TEST

static const struct {
	const char *text;
	int rc;
	enum vk_engine engine;
	const char *version;
} versions[] = {
	{ "Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 build=ae4d\n", 0,
	  VK_ENGINE_REDIS, "7.0.15" },
	{ "Valkey server v=8.0.1 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64\n", 0,
	  VK_ENGINE_VALKEY, "8.0.1" },
	{ "KeyDB server v=6.3.4 sha=0\n", -EINVAL, VK_ENGINE_UNKNOWN, NULL },
	{ "Redis server v=7.x sha=0\n", -EINVAL, VK_ENGINE_UNKNOWN, NULL },
	{ "", -EINVAL, VK_ENGINE_UNKNOWN, NULL },
};

START_TEST(version_table)
{
	enum vk_engine eng = VK_ENGINE_UNKNOWN;
	unsigned v = 0;
	char text[32] = "";

	ck_assert_int_eq(inst_server_parse_version(versions[_i].text, &eng, &v, text, sizeof(text)),
	                 versions[_i].rc);
	if (versions[_i].rc == 0) {
		ck_assert_int_eq(eng, versions[_i].engine);
		ck_assert_str_eq(text, versions[_i].version);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("instance_spec");
	TCase *t = tcase_create("spec");

	tcase_add_test(t, defaults);
	tcase_add_test(t, full);
	tcase_add_test(t, isolation_deadline);
	tcase_add_loop_test(t, bad_table, 0, ARRAY_LEN(bad));
	tcase_add_loop_test(t, version_table, 0, ARRAY_LEN(versions));
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(suite)
