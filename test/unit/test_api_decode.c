/*
 * Unit tests for api/ decoding: golden dumps of every sample and of objects with status
 * (test/data/api/decode) catch default drift; the decoder's own defaults (instances,
 * replicasPerShard, engine from the image, the default images); decoded quantities and
 * durations; decode errors naming the JSON path (shape only: validation is the API
 * server's); ownership (the struct outlives the caller's object) and release.
 * UPDATE_GOLDEN=1 rewrites the files in test/data/api/golden.
 * Tests run from the repository root.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/redisbackup.h"
#include "api/rediscluster.h"
#include "lib/jsonx.h"
#include "testutil.h"
#include "unit.h"

#define GOLDEN_DIR "test/data/api/golden/"

/* --- golden dumps ------------------------------------------------------------------------------ */

static const char *const golden_inputs[] = {
	"config/samples/redis_v1_rediscluster_standalone.yaml",
	"config/samples/redis_v1_rediscluster_ha.yaml",
	"config/samples/redis_v1_rediscluster_sentinel.yaml",
	"config/samples/redis_v1_rediscluster_cluster.yaml",
	"config/samples/redis_v1_rediscluster_cache.yaml",
	"config/samples/redis_v1_rediscluster_tls.yaml",
	"config/samples/redis_v1_rediscluster_replica.yaml",
	"config/samples/redis_v1_rediscluster_full.yaml",
	"config/samples/redis_v1_redisbackup_s3.yaml",
	"config/samples/redis_v1_redisscheduledbackup_azure.yaml",
	"test/data/api/decode/rediscluster-status.yaml",
	"test/data/api/decode/redisbackup-status.yaml",
	"test/data/api/decode/redisscheduledbackup-status.yaml",
	"test/data/api/decode/redisscheduledbackup-seed.yaml",
	"test/data/api/decode/rediscluster-seed.yaml",
};

static json_t *load_doc(const char *path)
{
	json_t *docs = tu_load_yaml(path, 1 << 20), *doc;

	doc = json_incref(json_array_get(docs, 0));
	json_decref(docs);
	return doc;
}

/* Decodes doc whatever its kind and dumps it. */
static json_t *decode_and_dump(json_t *doc)
{
	const char *kind = json_string_value(json_object_get(doc, "kind"));
	struct err e = { 0 };
	json_t *d = NULL;

	if (strcmp(kind, "RedisCluster") == 0) {
		struct api_redis_cluster rc;

		ck_assert_msg(api_redis_cluster_decode(doc, &rc, &e) == 0, "%s", e.msg);
		d = api_redis_cluster_dump(&rc);
		api_redis_cluster_release(&rc);
	} else if (strcmp(kind, "RedisBackup") == 0) {
		struct api_redis_backup b;

		ck_assert_msg(api_redis_backup_decode(doc, &b, &e) == 0, "%s", e.msg);
		d = api_redis_backup_dump(&b);
		api_redis_backup_release(&b);
	} else {
		struct api_redis_scheduled_backup sb;

		ck_assert_msg(api_redis_scheduled_backup_decode(doc, &sb, &e) == 0, "%s", e.msg);
		d = api_redis_scheduled_backup_dump(&sb);
		api_redis_scheduled_backup_release(&sb);
	}
	return d;
}

START_TEST(golden)
{
	const char *in = golden_inputs[_i], *base = strrchr(in, '/') + 1;
	char name[256];
	json_t *doc = load_doc(in), *dump = decode_and_dump(doc);

	snprintf(name, sizeof(name), "%.*s.golden", (int)(strlen(base) - 5), base);
	tu_golden_json(GOLDEN_DIR, name, dump);
	json_decref(dump);
	json_decref(doc);
}
END_TEST

/* --- the decoder's own defaults ---------------------------------------------------------------- */

static const struct {
	const char *spec; /* JSON */
	int64_t instances, replicas_per_shard;
	enum vk_engine engine;
	const char *image;
	bool has_instances, has_image, has_engine;
} decoder_defaults[] = {
	{ "{}", 1, 1, VK_ENGINE_REDIS, API_REDIS_DEFAULT_IMAGE, false, false, false },
	{ "{\"instances\":3}", 3, 1, VK_ENGINE_REDIS, API_REDIS_DEFAULT_IMAGE, true, false, false },
	{ "{\"mode\":\"sentinel\"}", 0, 1, VK_ENGINE_REDIS, API_REDIS_DEFAULT_IMAGE, false, false,
	  false },
	{ "{\"mode\":\"cluster\",\"shards\":3,\"replicasPerShard\":0}", 0, 0, VK_ENGINE_REDIS,
	  API_REDIS_DEFAULT_IMAGE, false, false, false },
	{ "{\"imageName\":\"valkey/valkey:8.0\"}", 1, 1, VK_ENGINE_VALKEY, "valkey/valkey:8.0",
	  false, true, false },
	{ "{\"engine\":\"valkey\"}", 1, 1, VK_ENGINE_VALKEY, API_VALKEY_DEFAULT_IMAGE, false, false,
	  true },
	{ "{\"engine\":\"redis\",\"imageName\":\"valkey/valkey:8\"}", 1, 1, VK_ENGINE_REDIS,
	  "valkey/valkey:8", false, true, true },
	{ "{\"imageName\":\"registry.valkey.io/redis:7.2\"}", 1, 1, VK_ENGINE_REDIS,
	  "registry.valkey.io/redis:7.2", false, true, false },
};

START_TEST(decoder_default)
{
	json_t *obj = json_pack("{s:s,s:s,s:{s:s},s:o}", "apiVersion", "redis.io/v1", "kind",
	                        "RedisCluster", "metadata", "name", "x", "spec",
	                        json_loads(decoder_defaults[_i].spec, 0, NULL));
	struct api_redis_cluster rc;
	struct err e = { 0 };

	ck_assert_msg(api_redis_cluster_decode(obj, &rc, &e) == 0, "%s", e.msg);
	ck_assert_int_eq(rc.spec.instances, decoder_defaults[_i].instances);
	ck_assert_int_eq(rc.spec.has_instances, decoder_defaults[_i].has_instances);
	ck_assert_int_eq(rc.spec.replicas_per_shard, decoder_defaults[_i].replicas_per_shard);
	ck_assert_int_eq(rc.spec.engine, decoder_defaults[_i].engine);
	ck_assert_int_eq(rc.spec.has_engine, decoder_defaults[_i].has_engine);
	ck_assert_str_eq(rc.spec.image_name, decoder_defaults[_i].image);
	ck_assert_int_eq(rc.spec.has_image_name, decoder_defaults[_i].has_image);
	api_redis_cluster_release(&rc);
	json_decref(obj);
}
END_TEST

static const struct {
	const char *image;
	enum vk_engine engine;
} images[] = {
	{ "redis:7.2", VK_ENGINE_REDIS },
	{ "redis", VK_ENGINE_REDIS },
	{ "valkey/valkey:8.0", VK_ENGINE_VALKEY },
	{ "valkey/valkey", VK_ENGINE_VALKEY },
	{ "docker.io/valkey/valkey:8.0-bookworm", VK_ENGINE_VALKEY },
	{ "ghcr.io/valkey-io/valkey@sha256:0123", VK_ENGINE_VALKEY },
	{ "registry.valkey.io/redis:7", VK_ENGINE_REDIS }, /* the host is not the name */
	{ "localhost:5000/valkey:8", VK_ENGINE_VALKEY },
	{ "localhost/redis:7", VK_ENGINE_REDIS },
	{ "my-valkey-mirror:7", VK_ENGINE_VALKEY },                       /* no host: the name */
	{ "mirror.example.com:5000/team/redis:valkey", VK_ENGINE_REDIS }, /* a tag, not a name */
	{ "example.com/redis@sha256:valkey", VK_ENGINE_REDIS },           /* a digest, not a name */
	{ "", VK_ENGINE_REDIS },
	{ NULL, VK_ENGINE_REDIS },
};

START_TEST(engine_from_image)
{
	ck_assert_msg(api_engine_from_image(images[_i].image) == images[_i].engine, "%s",
	              images[_i].image ? images[_i].image : "(null)");
}
END_TEST

/* --- decoded values ------------------------------------------------------------------------------ */

static struct api_redis_cluster decode_spec(const char *spec)
{
	json_t *obj = json_pack("{s:s,s:s,s:{s:s},s:o}", "apiVersion", "redis.io/v1", "kind",
	                        "RedisCluster", "metadata", "name", "x", "spec",
	                        json_loads(spec, 0, NULL));
	struct api_redis_cluster rc;
	struct err e = { 0 };

	ck_assert_msg(api_redis_cluster_decode(obj, &rc, &e) == 0, "%s: %s", spec, e.msg);
	json_decref(obj); /* the struct keeps its own copy */
	return rc;
}

START_TEST(resources_decoded)
{
	struct api_redis_cluster rc = decode_spec(
	        "{\"resources\":{\"limits\":{\"memory\":\"1Gi\",\"cpu\":2},"
	        "\"requests\":{\"memory\":536870912,\"cpu\":\"250m\"}},"
	        "\"memory\":{\"maxMemory\":\"768Mi\"},\"storage\":{\"size\":\"1.5Gi\"}}");
	struct api_resources *r = &rc.spec.resources;

	ck_assert_ptr_nonnull(r->json);
	ck_assert(r->limits_memory.valid && r->limits_memory.value == 1073741824);
	ck_assert_str_eq(r->limits_memory.text, "1Gi");
	ck_assert(r->requests_memory.valid && r->requests_memory.value == 536870912);
	ck_assert_ptr_null(r->requests_memory.text); /* an integer in the JSON */
	ck_assert(r->limits_cpu.valid && r->limits_cpu.value == 2000);
	ck_assert(r->requests_cpu.valid && r->requests_cpu.value == 250);
	ck_assert(rc.spec.memory.set && rc.spec.memory.max_memory.value == 768u << 20);
	ck_assert(rc.spec.storage.size.valid && rc.spec.storage.size.value == 1610612736);
	api_redis_cluster_release(&rc);
}
END_TEST

START_TEST(invalid_values_kept)
{
	struct api_redis_cluster rc = decode_spec(
	        "{\"resources\":{\"limits\":{\"memory\":\"1Gb\"}},\"storage\":{\"size\":\"lots\"},"
	        "\"failedAfter\":\"soon\",\"instances\":0}");

	/* decoding keeps what the CRD refuses, flagged */
	ck_assert(!rc.spec.resources.limits_memory.valid);
	ck_assert(!rc.spec.resources.limits_cpu.valid && !rc.spec.resources.limits_cpu.text);
	ck_assert(!rc.spec.storage.size.valid);
	ck_assert_str_eq(rc.spec.storage.size.text, "lots");
	ck_assert_int_eq(rc.spec.failed_after.ms, -1);
	ck_assert(rc.spec.has_instances && rc.spec.instances == 0);
	api_redis_cluster_release(&rc);
}
END_TEST

START_TEST(durations_decoded)
{
	struct api_redis_cluster rc = decode_spec("{\"failover\":{\"leaseDuration\":\"1m30s\"}}");

	ck_assert_int_eq(rc.spec.failover.lease_duration.ms, 90000);
	ck_assert_int_eq(rc.spec.failover.renew_deadline.ms, 6000); /* schema defaults */
	ck_assert_int_eq(rc.spec.failover.renew_period.ms, 1000);
	ck_assert_int_eq(rc.spec.failover.delay.ms, 0);
	ck_assert_int_eq(rc.spec.failover.switchover_timeout.ms, 10000);
	ck_assert_int_eq(rc.spec.failed_after.ms, 600000);
	ck_assert(!rc.spec.sentinel.set);
	api_redis_cluster_release(&rc);
}
END_TEST

/* The seed's fields: maxSyncReplicas unset means minSyncReplicas; primaryIsolation's
 * defaults apply inside the block only. */
START_TEST(seed_fields_decoded)
{
	struct api_redis_cluster rc =
	        decode_spec("{\"minSyncReplicas\":1,\"aclConfigSecret\":{\"name\":\"acl\"},"
	                    "\"primaryIsolation\":{\"peerTimeout\":\"3s\"}}");

	ck_assert_str_eq(rc.spec.acl_config_secret.name, "acl");
	ck_assert(!rc.spec.has_max_sync_replicas && rc.spec.max_sync_replicas == 1);
	ck_assert(rc.spec.primary_isolation.set && rc.spec.primary_isolation.enabled);
	ck_assert_int_eq(rc.spec.primary_isolation.api_server_timeout.ms, 5000);
	ck_assert(rc.spec.primary_isolation.has_peer_timeout);
	ck_assert_int_eq(rc.spec.primary_isolation.peer_timeout.ms, 3000);
	api_redis_cluster_release(&rc);
	rc = decode_spec("{\"maxSyncReplicas\":2}");
	ck_assert(rc.spec.has_max_sync_replicas && rc.spec.max_sync_replicas == 2);
	ck_assert(!rc.spec.primary_isolation.set && !rc.spec.acl_config_secret.name);
	api_redis_cluster_release(&rc);
}
END_TEST

/* The self-fence deadline: renewDeadline, shortened by an enabled apiServerTimeout, never
 * under 2 x renewPeriod. */
static const struct {
	const char *spec;
	int64_t ms;
} fence_deadlines[] = {
	{ "{}", 6000 },
	{ "{\"primaryIsolation\":{}}", 5000 }, /* the block's default 5s */
	{ "{\"primaryIsolation\":{\"apiServerTimeout\":\"3s\"}}", 3000 },
	{ "{\"primaryIsolation\":{\"apiServerTimeout\":\"30s\"}}", 6000 }, /* longer: no */
	{ "{\"primaryIsolation\":{\"enabled\":false,\"apiServerTimeout\":\"3s\"}}", 6000 },
	{ "{\"primaryIsolation\":{\"apiServerTimeout\":\"500ms\"}}", 2000 }, /* 2 x 1s */
	{ "{\"failover\":{\"renewDeadline\":\"4s\"},\"primaryIsolation\":{}}", 4000 },
	{ "{\"failover\":{\"renewDeadline\":\"x\"},\"primaryIsolation\":{}}", -1 },
};

START_TEST(fence_deadline)
{
	struct api_redis_cluster rc = decode_spec(fence_deadlines[_i].spec);

	ck_assert_msg(api_redis_cluster_fence_deadline_ms(&rc.spec) == fence_deadlines[_i].ms,
	              "%s: %lld, want %lld", fence_deadlines[_i].spec,
	              (long long)api_redis_cluster_fence_deadline_ms(&rc.spec),
	              (long long)fence_deadlines[_i].ms);
	api_redis_cluster_release(&rc);
}
END_TEST

START_TEST(nested_lists_decoded)
{
	struct api_redis_cluster rc = decode_spec(
	        "{\"users\":[{\"name\":\"a\",\"rules\":[\"+@read\",\"~x\"],"
	        "\"passwordSecrets\":[{\"name\":\"p\"},{\"name\":\"q\"}]},"
	        "{\"name\":\"b\",\"enabled\":false,\"passwordSecrets\":[{\"name\":\"r\"}]}],"
	        "\"exposure\":{\"enabled\":true,\"entryPoints\":[\"e\"],\"ipAllowList\":[\"10.0.0."
	        "0/8\"]},"
	        "\"networkPolicy\":{\"allowedClients\":[{\"podSelector\":{}}]}}");
	struct api_redis_cluster_spec *s = &rc.spec;

	ck_assert_uint_eq(s->n_users, 2);
	ck_assert_str_eq(s->users[0].name, "a");
	ck_assert(s->users[0].enabled && !s->users[1].enabled);
	ck_assert_uint_eq(s->users[0].n_rules, 2);
	ck_assert_str_eq(s->users[0].rules[1], "~x");
	ck_assert_uint_eq(s->users[0].n_password_secrets, 2);
	ck_assert_str_eq(s->users[0].password_secrets[1].name, "q");
	ck_assert_uint_eq(s->users[1].n_rules, 0);
	ck_assert(s->exposure.set && s->exposure.enabled);
	ck_assert_str_eq(s->exposure.host_sni, "*");
	ck_assert_int_eq(s->exposure.role, API_EXPOSURE_PRIMARY);
	ck_assert_str_eq(s->exposure.ip_allow_list[0], "10.0.0.0/8");
	ck_assert(s->network_policy.set && !s->network_policy.enabled);
	ck_assert_ptr_nonnull(s->network_policy.allowed_clients[0].pod_selector);
	ck_assert_ptr_null(s->network_policy.allowed_clients[0].namespace_selector);
	api_redis_cluster_release(&rc);
	api_redis_cluster_release(&rc); /* released twice: zeroed, harmless */
	api_redis_cluster_release(NULL);
}
END_TEST

START_TEST(names_and_retention)
{
	static const struct {
		const char *text;
		int rc;
		int64_t ms;
	} cases[] = {
		{ "30d", 0, 2592000000 }, { "1h", 0, 3600000 },  { "9999w", 0, 6047395200000 },
		{ "2w", 0, 1209600000 },  { "0d", -EINVAL, 0 },  { "10000h", -EINVAL, 0 },
		{ "1y", -EINVAL, 0 },     { "d", -EINVAL, 0 },   { "", -EINVAL, 0 },
		{ "+1d", -EINVAL, 0 },    { "01d", -EINVAL, 0 },
	};
	int64_t ms;

	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		ms = 0;
		ck_assert_int_eq(api_retention_ms(cases[i].text, &ms), cases[i].rc);
		ck_assert_int_eq(ms, cases[i].ms);
	}
	ck_assert_int_eq(api_retention_ms(NULL, &ms), -EINVAL);
	ck_assert_str_eq(api_mode_name(API_MODE_CLUSTER), "cluster");
	ck_assert_ptr_null(api_mode_name((enum api_mode)9));
}
END_TEST

/* Both forms of a scheduled backup give the same spec.backup; defaults and the cluster's
 * credentials (no credentialsSecret) decode as such. */
START_TEST(scheduled_backup_forms)
{
	static const char *const forms[] = {
		"{\"spec\":{\"schedule\":\"@daily\",\"clusterName\":\"shop\",\"method\":\"aof\","
		"\"destination\":{\"s3\":{\"bucket\":\"b\"}}}}",
		"{\"spec\":{\"schedule\":\"@daily\",\"template\":{\"clusterName\":\"shop\","
		"\"method\":\"aof\",\"destination\":{\"s3\":{\"bucket\":\"b\"}}}}}",
	};
	struct api_redis_scheduled_backup sb;
	struct err e = { 0 };

	for (size_t i = 0; i < ARRAY_LEN(forms); i++) {
		json_t *obj = json_loads(forms[i], 0, NULL);

		ck_assert_msg(api_redis_scheduled_backup_decode(obj, &sb, &e) == 0, "%s", e.msg);
		ck_assert_int_eq(sb.spec.has_template, i == 1);
		ck_assert_str_eq(sb.spec.backup.cluster_name, "shop");
		ck_assert_int_eq(sb.spec.backup.method, API_METHOD_AOF);
		ck_assert_int_eq(sb.spec.backup.target, API_TARGET_PREFER_REPLICA);
		ck_assert_int_eq(sb.spec.backup.deletion_policy, API_DELETION_RETAIN);
		ck_assert(sb.spec.backup.destination.set && sb.spec.backup.destination.s3.set);
		ck_assert(!sb.spec.backup.destination.azure.set);
		ck_assert_str_eq(sb.spec.backup.destination.s3.region, "us-east-1");
		ck_assert_ptr_null(sb.spec.backup.destination.s3.credentials_secret.name);
		ck_assert_str_eq(sb.spec.time_zone, "UTC");
		ck_assert_int_eq(sb.spec.retention_ms, 0);
		api_redis_scheduled_backup_release(&sb);
		json_decref(obj);
	}
}
END_TEST

/* --- decode errors ---------------------------------------------------------------------------- */

static const struct {
	const char *kind;
	const char *json;
	const char *msg; /* the whole message */
} decode_errors[] = {
	{ "RedisCluster", "[]", "expected a RedisCluster object, got array" },
	{ "RedisCluster", "{\"kind\":\"Pod\",\"spec\":{}}",
	  "kind: Invalid value: \"Pod\": must be RedisCluster" },
	{ "RedisCluster", "{\"apiVersion\":\"redis.io/v2\",\"spec\":{}}",
	  "apiVersion: Invalid value: \"redis.io/v2\": must be redis.io/v1" },
	{ "RedisCluster", "{\"metadata\":{\"name\":5},\"spec\":{}}",
	  "metadata.name: expected string, got integer" },
	{ "RedisCluster", "{\"metadata\":\"x\",\"spec\":{}}",
	  "metadata: expected object, got string" },
	{ "RedisCluster", "{\"metadata\":{\"generation\":\"7\"},\"spec\":{}}",
	  "metadata.generation: expected integer, got string" },
	{ "RedisCluster", "{\"spec\":\"x\"}", "spec: expected object, got string" },
	{ "RedisCluster", "{\"spec\":{\"users\":[{\"name\":\"a\"},{\"name\":5}]}}",
	  "spec.users[1].name: expected string, got integer" },
	{ "RedisCluster", "{\"spec\":{\"users\":[{\"name\":\"a\",\"passwordSecrets\":[\"p\"]}]}}",
	  "spec.users[0].passwordSecrets[0]: expected object, got string" },
	{ "RedisCluster", "{\"spec\":{\"users\":[null]}}",
	  "spec.users[0]: expected object, got null" },
	{ "RedisCluster", "{\"spec\":{\"storage\":{\"size\":5}}}",
	  "spec.storage.size: expected string, got integer" },
	{ "RedisCluster", "{\"spec\":{\"instances\":2.5}}",
	  "spec.instances: expected integer, got real" },
	{ "RedisCluster", "{\"spec\":{\"enablePodDisruptionBudget\":\"yes\"}}",
	  "spec.enablePodDisruptionBudget: expected boolean, got string" },
	{ "RedisCluster", "{\"spec\":{\"affinity\":[]}}",
	  "spec.affinity: expected object, got array" },
	{ "RedisCluster", "{\"spec\":{\"tolerations\":{}}}",
	  "spec.tolerations: expected array, got object" },
	{ "RedisCluster", "{\"spec\":{\"mode\":\"master\"}}",
	  "spec.mode: Unsupported value: \"master\": supported values: \"standalone\", "
	  "\"sentinel\", \"cluster\"" },
	{ "RedisCluster", "{\"spec\":{},\"status\":{\"conditions\":[{\"status\":\"Maybe\"}]}}",
	  "status.conditions[0].status: Unsupported value: \"Maybe\": supported values: \"True\", "
	  "\"False\", \"Unknown\"" },
	{ "RedisCluster", "{\"spec\":{},\"status\":{\"timeToReadySeconds\":[1,\"x\"]}}",
	  "status.timeToReadySeconds[1]: expected number, got string" },
	{ "RedisBackup", "{\"spec\":{\"destination\":{\"s3\":[]}}}",
	  "spec.destination.s3: expected object, got array" },
	{ "RedisBackup", "{\"kind\":\"RedisCluster\",\"spec\":{}}",
	  "kind: Invalid value: \"RedisCluster\": must be RedisBackup" },
	{ "RedisScheduledBackup", "{\"spec\":{\"template\":{\"target\":\"x\"}}}",
	  "spec.template.target: Unsupported value: \"x\": supported values: \"primary\", "
	  "\"prefer-replica\"" },
	{ "RedisScheduledBackup", "{\"spec\":{\"suspend\":1}}",
	  "spec.suspend: expected boolean, got integer" },
	{ "RedisScheduledBackup", "{\"spec\":{\"method\":\"bgsave\"}}",
	  "spec.method: Unsupported value: \"bgsave\": supported values: \"rdb\", \"aof\"" },
	{ "RedisBackup", "{\"spec\":{\"deletionPolicy\":\"Remove\"}}",
	  "spec.deletionPolicy: Unsupported value: \"Remove\": supported values: \"Retain\", "
	  "\"Delete\"" },
};

START_TEST(decode_error)
{
	json_t *obj = json_loads(decode_errors[_i].json, JSON_DECODE_ANY, NULL);
	const char *kind = decode_errors[_i].kind;
	struct err e = { 0 };
	int rc;

	ck_assert_ptr_nonnull(obj);
	if (strcmp(kind, "RedisCluster") == 0) {
		struct api_redis_cluster rc_out;

		memset(&rc_out, 0x5a, sizeof(rc_out));
		rc = api_redis_cluster_decode(obj, &rc_out, &e);
		ck_assert_int_eq(((unsigned char *)&rc_out)[0], 0x5a); /* untouched */
	} else if (strcmp(kind, "RedisBackup") == 0) {
		struct api_redis_backup b;

		rc = api_redis_backup_decode(obj, &b, &e);
	} else {
		struct api_redis_scheduled_backup sb;

		rc = api_redis_scheduled_backup_decode(obj, &sb, &e);
	}
	ck_assert_int_eq(rc, -EINVAL);
	ck_assert_int_eq(e.code, -EINVAL);
	ck_assert_str_eq(e.msg, decode_errors[_i].msg);
	json_decref(obj);
}
END_TEST

/* Shapes decoding leaves to the API server: it does not read inside pass-through JSON. */
START_TEST(pass_through_not_decoded)
{
	struct api_redis_cluster rc =
	        decode_spec("{\"redis\":{\"hz\":5},\"tolerations\":[{\"operator\":\"Maybe\"}],"
	                    "\"instances\":3.0,\"storage\":null,\"memory\":null}");

	ck_assert_int_eq(rc.spec.instances, 3); /* an integral real is an integer */
	ck_assert_int_eq(rc.spec.storage.type, API_STORAGE_PVC); /* null: defaulted */
	ck_assert(!rc.spec.memory.set);                          /* null: removed */
	ck_assert_ptr_nonnull(rc.spec.tolerations);
	api_redis_cluster_release(&rc);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("api_decode");
	TCase *tc = tcase_create("decode");

	tcase_add_loop_test(tc, golden, 0, ARRAY_LEN(golden_inputs));
	tcase_add_loop_test(tc, decoder_default, 0, ARRAY_LEN(decoder_defaults));
	tcase_add_loop_test(tc, engine_from_image, 0, ARRAY_LEN(images));
	tcase_add_test(tc, resources_decoded);
	tcase_add_test(tc, invalid_values_kept);
	tcase_add_test(tc, durations_decoded);
	tcase_add_test(tc, nested_lists_decoded);
	tcase_add_test(tc, seed_fields_decoded);
	tcase_add_loop_test(tc, fence_deadline, 0, ARRAY_LEN(fence_deadlines));
	tcase_add_test(tc, names_and_retention);
	tcase_add_test(tc, scheduled_backup_forms);
	tcase_add_loop_test(tc, decode_error, 0, ARRAY_LEN(decode_errors));
	tcase_add_test(tc, pass_through_not_decoded);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(make_suite)
