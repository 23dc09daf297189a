/*
 * test_controller_desired: the controller's pure builders and model helpers.
 *
 *   - every desired object of sample clusters against golden files in test/data/controller
 *     (UPDATE_GOLDEN=1 rewrites them);
 *   - the two hashes: which spec changes restart pods and which are applied live; every
 *     spec field of the CRD is a restart input or listed as live / not pod-related;
 *     the sample clusters' restart hashes are pinned (an upgrade must restart nothing);
 *   - the /v1/status parser on captured answers and on malformed ones;
 *   - serials, random passwords (RFC 3339 times: test_rfc3339.c; jsonx_contains:
 *     test_jsonx.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "api/rediscluster.h"
#include "controller/internal.h"
#include "controller/desired.h"
#include "controller/actions.h"
#include "controller/pki.h"
#include "instance/settings.h"
#include "lib/alloc.h"
#include "lib/base64.h"
#include "lib/buf.h"
#include "lib/jsonx.h"
#include "testutil.h"
#include "unit.h"

#define DIR "test/data/controller/"

static const struct ctl_config cfg = {
	.operator_image = "redis-operator:dev",
	.operator_namespace = "redis-operator-system",
	.run_as_user = 999,
	.poll_failures_down = 2,
	.promote_timeout_ms = 30000,
	.restart_timeout_ms = 300000,
	.max_lag_bytes = 1 << 20,
};

static void decode_file(const char *path, struct api_redis_cluster *rc)
{
	char *text = tu_read_file(path, NULL);
	struct err e = { 0 };
	json_t *obj;

	ck_assert_msg(text != NULL, "cannot read %s", path);
	ck_assert_int_eq(jsonx_loadb(text, strlen(text), 1 << 20, &obj, &e), 0);
	ck_assert_msg(api_redis_cluster_decode(obj, rc, &e) == 0, "%s: %s", path, e.msg);
	json_decref(obj);
	free(text);
}

static void set_opt(json_t *all, const char *key, json_t *v)
{
	json_object_set_new(all, key, v ? v : json_null());
}

static json_t *everything(const struct api_redis_cluster *rc)
{
	json_t *all = json_object();
	char hash[DESIRED_HASH_LEN + 1];

	set_opt(all, "serviceAccount", desired_service_account(rc));
	set_opt(all, "role", desired_role(rc));
	set_opt(all, "roleBinding", desired_role_binding(rc));
	set_opt(all, "networkPolicy", desired_network_policy(rc, &cfg));
	set_opt(all, "authSecret", desired_auth_secret(rc));
	set_opt(all, "operatorSecret", desired_operator_secret(rc));
	set_opt(all, "operatorTlsSecret", desired_operator_tls_secret(rc));
	set_opt(all, "instanceTlsSecret", desired_instance_tls_secret(rc));
	set_opt(all, "connectionSecret", desired_connection_secret(rc, "p@ss w/rd"));
	set_opt(all, "serviceLeader", desired_service(rc, DESIRED_SVC_LEADER));
	set_opt(all, "serviceReplica", desired_service(rc, DESIRED_SVC_REPLICA));
	set_opt(all, "serviceAny", desired_service(rc, DESIRED_SVC_ANY));
	set_opt(all, "leaderEndpoints",
	        desired_leader_endpoints(rc, "c-1", "uid-1", "10.1.2.3", true));
	set_opt(all, "leaderEndpointsNone", desired_leader_endpoints(rc, NULL, NULL, NULL, false));
	set_opt(all, "pdbPrimary", desired_pdb(rc, DESIRED_PDB_PRIMARY));
	set_opt(all, "pdbReplica", desired_pdb(rc, DESIRED_PDB_REPLICA));
	set_opt(all, "lease", desired_lease(rc));
	set_opt(all, "pvc2", desired_pvc(rc, 2));
	set_opt(all, "pod1", desired_pod(rc, &cfg, 1, CTL_ROLE_PRIMARY));
	set_opt(all, "pod2", desired_pod(rc, &cfg, 2, CTL_ROLE_REPLICA));
	set_opt(all, "liveConfig", desired_live_config(rc));
	desired_spec_hash(rc, &cfg, hash);
	json_object_set_new(all, "specHash", json_string(hash));
	desired_live_hash(rc, hash);
	json_object_set_new(all, "liveHash", json_string(hash));
	return all;
}

static const char *const golden_inputs[] = { "cluster-minimal", "cluster-full", "cluster-cache" };

START_TEST(golden)
{
	struct api_redis_cluster rc;
	char in[256], name[256];
	json_t *all;

	snprintf(in, sizeof(in), DIR "%s.json", golden_inputs[_i]);
	snprintf(name, sizeof(name), "%s.golden.json", golden_inputs[_i]);
	decode_file(in, &rc);
	all = everything(&rc);
	tu_golden_json(DIR, name, all);
	json_decref(all);
	api_redis_cluster_release(&rc);
}
END_TEST

/* data[key] of a Secret, decoded (free it). */
static char *data_text(json_t *sec, const char *key)
{
	const char *b = json_string_value(json_object_get(json_object_get(sec, "data"), key));
	char *out = NULL;
	size_t len;

	ck_assert_msg(b != NULL, "data.%s missing", key);
	ck_assert_int_eq(base64_decode(b, strlen(b), 0, &out, &len), 0);
	return out;
}

/* Server TLS on (cluster-full: tlsSecret and caSecret): rediss:// and spec.caSecret's
 * ca.crt as it is (base64); off (cluster-minimal, given a connectionSecret): redis://
 * and no ca.crt whatever the caller passes. */
START_TEST(connection_secret_tls)
{
	static const char *const urls[] = { "url", "url-replica", "url-any" };
	struct api_redis_cluster full, minimal;
	json_t *on, *off;

	decode_file(DIR "cluster-full.json", &full);
	decode_file(DIR "cluster-minimal.json", &minimal);
	ck_assert(desired_server_tls(&full));
	ck_assert(!desired_server_tls(&minimal));
	minimal.spec.connection_secret.name = "conn"; /* borrowed, like every decoded string */
	on = desired_connection_secret_ca(&full, "pw", "Q0EK");
	off = desired_connection_secret_ca(&minimal, "pw", "Q0EK");
	ck_assert_str_eq(jsonx_get_string(on, "data[\"ca.crt\"]"), "Q0EK");
	ck_assert_ptr_null(json_object_get(json_object_get(off, "data"), "ca.crt"));
	for (size_t i = 0; i < 3; i++) {
		char *a = data_text(on, urls[i]), *b = data_text(off, urls[i]);

		ck_assert_msg(strncmp(a, "rediss://default:pw@", 20) == 0, "%s: %s", urls[i], a);
		ck_assert_msg(strncmp(b, "redis://default:pw@", 19) == 0, "%s: %s", urls[i], b);
		free(a);
		free(b);
	}
	json_decref(on);
	json_decref(off);
	/* the CA not read yet: rediss:// all the same, no ca.crt */
	on = desired_connection_secret_ca(&full, "pw", NULL);
	ck_assert_ptr_null(json_object_get(json_object_get(on, "data"), "ca.crt"));
	json_decref(on);
	api_redis_cluster_release(&full);
	api_redis_cluster_release(&minimal);
}
END_TEST

/* The pod layout is the instance manager's contract: check the parts it reads by name. */
START_TEST(pod_contract)
{
	struct api_redis_cluster rc;
	json_t *pod, *c, *env, *mounts, *it;
	char *text;
	const char *want_env[] = { "REDIS_OPERATOR_POD_NAME", "REDIS_OPERATOR_POD_NAMESPACE",
		                   "REDIS_OPERATOR_POD_IP", "REDIS_OPERATOR_CLUSTER_NAME",
		                   "REDIS_OPERATOR_HTTP_TLS" };
	const char *want_mounts[] = { "/data",
		                      "/run",
		                      "/controller",
		                      "/etc/redis-operator/auth",
		                      "/etc/redis-operator/operator-auth",
		                      "/etc/redis-operator/users",
		                      "/etc/redis-operator/tls",
		                      "/etc/redis-operator/http-tls" };
	size_t i;

	decode_file(DIR "cluster-full.json", &rc);
	pod = desired_pod(&rc, &cfg, 3, CTL_ROLE_REPLICA);
	c = json_array_get(jsonx_get(pod, "spec.containers"), 0);
	env = json_object_get(c, "env");
	mounts = json_object_get(c, "volumeMounts");
	for (size_t k = 0; k < ARRAY_LEN(want_env); k++) {
		bool found = false;

		json_array_foreach (env, i, it) {
			found |= strcmp(jsonx_get_string(it, "name"), want_env[k]) == 0;
		}
		ck_assert_msg(found, "env %s missing", want_env[k]);
	}
	for (size_t k = 0; k < ARRAY_LEN(want_mounts); k++) {
		bool found = false;

		json_array_foreach (mounts, i, it) {
			found |= strcmp(jsonx_get_string(it, "mountPath"), want_mounts[k]) == 0;
		}
		ck_assert_msg(found, "mount %s missing", want_mounts[k]);
	}
	ck_assert_str_eq(jsonx_get_string(pod, "metadata.name"), "shop-3");
	ck_assert_str_eq(jsonx_get_string(c, "command[0]"), "/controller/redis-operator");
	ck_assert_str_eq(jsonx_get_string(pod, "spec.initContainers[0].command[1]"), "copy-binary");
	ck_assert(json_is_true(jsonx_get(c, "securityContext.readOnlyRootFilesystem")));
	ck_assert_int_eq(json_integer_value(jsonx_get(pod, "spec.securityContext.fsGroup")), 999);
	/* the manager serves HTTPS once the instance TLS Secret is mounted: so do the probes */
	ck_assert(ctl_pki_pod_uses_tls(pod));
	ck_assert_str_eq(jsonx_get_string(c, "readinessProbe.httpGet.scheme"), "HTTPS");
	ck_assert_str_eq(jsonx_get_string(c, "livenessProbe.httpGet.scheme"), "HTTPS");
	ck_assert_str_eq(jsonx_get_string(c, "startupProbe.httpGet.scheme"), "HTTPS");
	json_array_foreach (jsonx_get(pod, "spec.volumes"), i, it) {
		if (strcmp(jsonx_get_string(it, "name"), DESIRED_HTTP_TLS_VOLUME) == 0)
			ck_assert_str_eq(jsonx_get_string(it, "secret.secretName"),
			                 "shop-instance-tls");
	}
	text = json_dumps(pod, JSON_COMPACT); /* nothing of the operator's TLS Secret */
	ck_assert_ptr_null(strstr(text, "operator-tls"));
	free(text);
	json_decref(pod);
	api_redis_cluster_release(&rc);
}
END_TEST

/* The pod's environment is what `redis-operator instance` reads: loaded through the
 * instance's own settings table (fieldRef values stand in as "x"), every variable is
 * accepted and the API is told never to serve mutations over plain HTTP. */
START_TEST(pod_env_loads_as_instance_settings)
{
	struct api_redis_cluster rc;
	struct inst_settings set = { 0 };
	struct buf errs = BUF_INIT(4096);
	char arg0[] = "instance", *envp[16] = { NULL }, *argv[] = { arg0, NULL };
	json_t *pod, *env, *it;
	size_t i, n = 0;

	decode_file(DIR "cluster-full.json", &rc);
	pod = desired_pod(&rc, &cfg, 1, CTL_ROLE_PRIMARY);
	env = jsonx_get(pod, "spec.containers[0].env");
	ck_assert_uint_lt(json_array_size(env), ARRAY_LEN(envp));
	json_array_foreach (env, i, it) {
		const char *v = jsonx_get_string(it, "value");
		char line[256];

		snprintf(line, sizeof(line), "%s=%s", jsonx_get_string(it, "name"), v ? v : "x");
		envp[n++] = xstrdup(line);
	}
	ck_assert_int_eq(settings_load(inst_settings_table, inst_settings_count, INST_ENV_PREFIX,
	                               envp, 1, argv, NULL, &set, &errs),
	                 0);
	ck_assert_str_eq(set.http_tls, "required");
	ck_assert_str_eq(set.cluster_name, "shop");
	settings_release(inst_settings_table, inst_settings_count, &set);
	for (i = 0; i < n; i++)
		free(envp[i]);
	buf_release(&errs);
	json_decref(pod);
	api_redis_cluster_release(&rc);
}
END_TEST

/* A RedisBackup in phase Completed, stored on S3. */
#define BACKUP_JSON                                                                                \
	"{\"apiVersion\":\"redis.io/v1\",\"kind\":\"RedisBackup\",\"metadata\":{\"name\":"         \
	"\"nightly\",\"namespace\":\"prod\",\"uid\":\"b-1\"},\"spec\":{\"clusterName\":"           \
	"\"old\",\"destination\":{\"s3\":{\"bucket\":\"bk\",\"path\":\"backups\",\"endpoint\":"    \
	"\"http://10.0.0.9:7070\",\"region\":\"us-east-1\",\"forcePathStyle\":true}}},"            \
	"\"status\":{\"phase\":\"Completed\",\"manifestKey\":"                                     \
	"\"backups/old/prod/nightly/manifest.json\"}}"

static void decode_backup(const char *text, struct api_redis_backup *b)
{
	struct err e = { 0 };
	json_t *obj;

	ck_assert_int_eq(jsonx_loadb(text, strlen(text), 1 << 16, &obj, &e), 0);
	ck_assert_msg(api_redis_backup_decode(obj, b, &e) == 0, "%s", e.msg);
	json_decref(obj);
}

static json_t *by_name(json_t *array, const char *name)
{
	json_t *it;
	size_t i;

	json_array_foreach (array, i, it) {
		if (strcmp(jsonx_get_string(it, "name"), name) == 0)
			return it;
	}
	return NULL;
}

/* The bootstrap pod: desired_pod plus the restore source the instance's decoder accepts
 * (the backup's destination and manifest key) and the credentials Secret at the
 * manager's default --restore-credentials-dir; the same spec hash, so that it rolls
 * nothing later; and loaded through the instance's settings table. */
START_TEST(bootstrap_pod)
{
	struct api_redis_cluster rc;
	struct api_redis_backup b;
	struct api_inst_restore_source src;
	struct inst_settings set = { 0 };
	struct buf errs = BUF_INIT(4096);
	struct err e = { 0 };
	json_t *plain, *pod, *env, *mount, *vol;
	const char *text;
	char line[1024], arg0[] = "instance", *argv[] = { arg0, NULL }, *envp[16] = { NULL };
	json_t *it;
	size_t i, n = 0;

	decode_file(DIR "cluster-full.json", &rc);
	decode_backup(BACKUP_JSON, &b);
	plain = desired_pod(&rc, &cfg, 1, CTL_ROLE_PRIMARY);
	pod = desired_bootstrap_pod(&rc, &cfg, 1, &b, "bk-creds");
	ck_assert_ptr_null(by_name(jsonx_get(plain, "spec.containers[0].env"),
	                           "REDIS_OPERATOR_RESTORE_SOURCE"));
	ck_assert_str_eq(jsonx_get_string(pod, "metadata.annotations[\"redis.io/spec-hash\"]"),
	                 jsonx_get_string(plain, "metadata.annotations[\"redis.io/spec-hash\"]"));
	ck_assert_str_eq(jsonx_get_string(pod, "metadata.annotations[\"redis.io/restore-from\"]"),
	                 "nightly");
	env = by_name(jsonx_get(pod, "spec.containers[0].env"), "REDIS_OPERATOR_RESTORE_SOURCE");
	ck_assert_ptr_nonnull(env);
	text = jsonx_get_string(env, "value");
	ck_assert_msg(api_inst_restore_source_decode(text, strlen(text), &src, &e) == 0, "%s",
	              e.msg);
	snprintf(line, sizeof(line), "%s/nightly", rc.meta.namespace);
	ck_assert_str_eq(src.name, line);
	ck_assert_str_eq(src.manifest_key, "backups/old/prod/nightly/manifest.json");
	ck_assert_str_eq(src.destination.s3.bucket, "bk");
	ck_assert_str_eq(src.destination.s3.endpoint, "http://10.0.0.9:7070");
	ck_assert(src.destination.s3.force_path_style && !src.destination.azure.set);
	api_inst_restore_source_release(&src);
	vol = by_name(jsonx_get(pod, "spec.volumes"), "restore-credentials");
	ck_assert_str_eq(jsonx_get_string(vol, "secret.secretName"), "bk-creds");
	mount = by_name(jsonx_get(pod, "spec.containers[0].volumeMounts"), "restore-credentials");
	json_array_foreach (jsonx_get(pod, "spec.containers[0].env"), i, it) {
		const char *v = jsonx_get_string(it, "value");

		ck_assert_uint_lt(n, ARRAY_LEN(envp) - 1);
		snprintf(line, sizeof(line), "%s=%s", jsonx_get_string(it, "name"), v ? v : "x");
		envp[n++] = xstrdup(line);
	}
	ck_assert_msg(settings_load(inst_settings_table, inst_settings_count, INST_ENV_PREFIX, envp,
	                            1, argv, NULL, &set, &errs) == 0,
	              "%s", buf_cstr(&errs));
	ck_assert_str_eq(set.restore_source, text);
	ck_assert_str_eq(set.restore_credentials_dir, jsonx_get_string(mount, "mountPath"));
	settings_release(inst_settings_table, inst_settings_count, &set);
	for (i = 0; i < n; i++)
		free(envp[i]);
	json_decref(pod);
	/* workload identity: no Secret, no volume */
	pod = desired_bootstrap_pod(&rc, &cfg, 1, &b, NULL);
	ck_assert_ptr_null(by_name(jsonx_get(pod, "spec.volumes"), "restore-credentials"));
	ck_assert_uint_eq(json_array_size(jsonx_get(pod, "spec.volumes")),
	                  json_array_size(jsonx_get(plain, "spec.volumes")));
	json_decref(pod);
	json_decref(plain);
	buf_release(&errs);
	api_redis_backup_release(&b);
	api_redis_cluster_release(&rc);
}
END_TEST

/* Does any rule of the Role name Secrets? */
static bool role_grants_secrets(json_t *role)
{
	json_t *rules = json_object_get(role, "rules"), *r, *res;
	size_t i, j;

	json_array_foreach (rules, i, r) {
		json_array_foreach (json_object_get(r, "resources"), j, res) {
			if (strcmp(json_string_value(res), "secrets") == 0)
				return true;
		}
	}
	return false;
}

/* The pods' Role lets them read no Secret through the API (they mount theirs), so never
 * <name>-operator-tls (the CA keys and the controller's client certificate), even when
 * the spec names it as one of its own. */
START_TEST(role_hides_operator_tls)
{
	static const char *const specs[] = {
		"{}",
		"{\"tlsSecret\": {\"name\": \"shop-operator-tls\"},"
		" \"caSecret\": {\"name\": \"shop-operator-tls\"}}",
		"{\"users\": [{\"name\": \"app\", \"rules\": [\"+@all\"],"
		" \"passwordSecrets\": [{\"name\": \"shop-operator-tls\"}]}]}",
	};
	char *text = tu_read_file(DIR "cluster-full.json", NULL);

	for (size_t k = 0; k < ARRAY_LEN(specs); k++) {
		struct api_redis_cluster rc;
		struct err e = { 0 };
		json_t *obj, *p, *role;

		ck_assert_int_eq(jsonx_loadb(text, strlen(text), 1 << 20, &obj, NULL), 0);
		ck_assert_int_eq(jsonx_loadb(specs[k], strlen(specs[k]), 4096, &p, NULL), 0);
		json_object_update(json_object_get(obj, "spec"), p);
		ck_assert_msg(api_redis_cluster_decode(obj, &rc, &e) == 0, "%s", e.msg);
		role = desired_role(&rc);
		ck_assert_msg(!role_grants_secrets(role), "case %zu: the Role grants Secrets", k);
		json_decref(role);
		json_decref(obj);
		json_decref(p);
		api_redis_cluster_release(&rc);
	}
	free(text);
}
END_TEST

/* --- hashes ----------------------------------------------------------------------------- */

#define FULL  DIR "cluster-full.json"
#define CACHE DIR "cluster-cache.json"

/* One case per restart input (controller/desired_pod.c, restart_inputs[]) at least, and
 * the live and not pod-related fields next to them: patch merged into base's spec. */
static const struct {
	const char *base, *patch;
	bool restart, live;
} hash_cases[] = {
	{ FULL, "{}", false, false },
	/* restart */
	/* standalone → sentinel in place: no restart, the managers follow (docs/sentinel.md) */
	{ FULL, "{\"mode\": \"sentinel\"}", false, false },
	{ FULL, "{\"mode\": \"cluster\"}", true, false },
	{ FULL, "{\"imageName\": \"valkey/valkey:8.1\"}", true, false },
	{ FULL, "{\"engine\": \"redis\"}", true, false },
	{ FULL, "{\"storage\": {\"type\": \"emptyDir\"}}", true, false },
	{ CACHE, "{\"storage\": {\"size\": \"1Gi\"}}", true, false },
	{ FULL,
	  "{\"redis\": {\"maxclients\": \"10000\", \"timeout\": \"300\", \"databases\": \"64\"}}",
	  true, true },
	{ FULL, "{\"resources\": {\"limits\": {\"memory\": \"2Gi\"}}}", true, true },
	{ FULL, "{\"resources\": {\"requests\": {\"cpu\": \"500m\"}}}", true, false },
	{ FULL, "{\"authSecret\": {\"name\": \"shop-admin-v2\"}}", true, false },
	{ FULL,
	  "{\"users\": [{\"name\": \"app\", \"rules\": [\"~app:*\", \"+@all\", \"-@dangerous\"], "
	  "\"passwordSecrets\": [{\"name\": \"app-pw-v2\"}]}, {\"name\": \"reader\", \"enabled\": "
	  "false, \"rules\": [\"+get\"], \"passwordSecrets\": [{\"name\": \"reader-pw\"}]}]}",
	  true, false },
	{ FULL,
	  "{\"users\": [{\"name\": \"app\", \"rules\": [\"~app:*\", \"+@all\", \"-@dangerous\"], "
	  "\"passwordSecrets\": [{\"name\": \"app-pw\"}, {\"name\": \"app-pw-v2\"}]}, {\"name\": "
	  "\"viewer\", \"enabled\": false, \"rules\": [\"+get\"], \"passwordSecrets\": [{\"name\": "
	  "\"reader-pw\"}]}]}",
	  true, true }, /* a renamed user: its files are under users/<name>/ */
	{ FULL, "{\"tlsSecret\": {\"name\": \"shop-tls-v2\"}}", true, false },
	{ FULL, "{\"caSecret\": {\"name\": \"shop-ca-v2\"}}", true, false },
	{ FULL, "{\"aclConfigSecret\": {\"name\": \"acl\"}}", true, false }, /* a volume */
	{ FULL, "{\"failover\": {\"leaseDuration\": \"9s\"}}", true, false },
	{ FULL, "{\"failover\": {\"renewDeadline\": \"4s\"}}", true, false },
	{ FULL, "{\"failover\": {\"renewPeriod\": \"500ms\"}}", true, false },
	{ FULL, "{\"failover\": {\"switchoverTimeout\": \"20s\"}}", true, false },
	{ FULL, "{\"primaryIsolation\": {\"apiServerTimeout\": \"3s\"}}", true, false },
	{ FULL, "{\"nodeSelector\": {\"disktype\": \"nvme\"}}", true, false },
	{ FULL, "{\"affinity\": {\"nodeAffinity\": {}}}", true, false },
	{ FULL, "{\"tolerations\": []}", true, false },
	{ FULL,
	  "{\"topologySpreadConstraints\": [{\"maxSkew\": 1, \"topologyKey\": \"zone\", "
	  "\"whenUnsatisfiable\": \"ScheduleAnyway\"}]}",
	  true, false },
	{ FULL, "{\"priorityClassName\": \"low\"}", true, false },
	{ FULL, "{\"podTemplate\": {\"metadata\": {\"labels\": {\"team\": \"ops\"}}}}", true,
	  false },
	{ FULL, "{\"podTemplate\": {\"metadata\": {\"annotations\": {\"a\": \"b\"}}}}", true,
	  false },
	/* live */
	{ FULL,
	  "{\"redis\": {\"maxclients\": \"20000\", \"timeout\": \"300\", \"databases\": \"32\"}}",
	  false, true },
	{ FULL, "{\"memory\": {\"maxMemoryPercent\": 50}}", false, true },
	{ FULL, "{\"minSyncReplicas\": 2}", false, true },
	{ FULL,
	  "{\"users\": [{\"name\": \"app\", \"rules\": [\"~app:*\", \"+@read\"], "
	  "\"passwordSecrets\": [{\"name\": \"app-pw\"}, {\"name\": \"app-pw-v2\"}]}, {\"name\": "
	  "\"reader\", \"enabled\": true, \"rules\": [\"+get\"], \"passwordSecrets\": [{\"name\": "
	  "\"reader-pw\"}]}]}",
	  false, true },
	/* neither */
	{ FULL, "{\"failover\": {\"renewPeriod\": \"1000ms\"}}", false, false }, /* = 1s */
	{ FULL, "{\"instances\": 5}", false, false },
	{ FULL, "{\"storage\": {\"size\": \"10Gi\"}}", false, false }, /* a PVC grows in place */
	{ FULL, "{\"storage\": {\"storageClassName\": \"slow\", \"pvcRetention\": \"Retain\"}}",
	  false, false },
	{ FULL, "{\"primaryUpdateStrategy\": \"supervised\", \"primaryUpdateMethod\": \"restart\"}",
	  false, false },
	{ FULL, "{\"connectionSecret\": {\"name\": \"other\"}}", false, false },
	{ FULL, "{\"backupCredentialsSecret\": {\"name\": \"other\"}}", false, false },
	{ FULL, "{\"maxSyncReplicas\": 2}", false, false },
	/* peerTimeout is used by nothing, but the block brings apiServerTimeout's default */
	{ FULL, "{\"primaryIsolation\": {\"peerTimeout\": \"5s\"}}", true, false },
	{ FULL, "{\"failover\": {\"delay\": \"2s\"}}", false, false },
	{ FULL, "{\"enablePodDisruptionBudget\": false, \"failedAfter\": \"20m\"}", false, false },
	{ FULL, "{\"networkPolicy\": {\"enabled\": false}}", false, false },
	{ FULL, "{\"nodeMaintenanceWindow\": {\"inProgress\": true, \"reusePVC\": false}}", false,
	  false },
	{ FULL, "{\"exposure\": {\"enabled\": true}, \"bootstrap\": {\"backupName\": \"b\"}}",
	  false, false },
};

static void hashes(const char *base, const char *patch, char *spec, char *live,
                   const struct ctl_config *c)
{
	struct api_redis_cluster rc;
	char *text = tu_must_read(base, NULL);
	json_t *obj, *p;
	struct err e = { 0 };

	ck_assert_int_eq(jsonx_loadb(text, strlen(text), 1 << 20, &obj, NULL), 0);
	ck_assert_int_eq(jsonx_loadb(patch, strlen(patch), 4096, &p, NULL), 0);
	json_object_update_recursive(json_object_get(obj, "spec"), p);
	ck_assert_msg(api_redis_cluster_decode(obj, &rc, &e) == 0, "%s", e.msg);
	desired_spec_hash(&rc, c, spec);
	desired_live_hash(&rc, live);
	api_redis_cluster_release(&rc);
	json_decref(obj);
	json_decref(p);
	free(text);
}

START_TEST(hash_tiers)
{
	char s0[DESIRED_HASH_LEN + 1], l0[DESIRED_HASH_LEN + 1];
	char s1[DESIRED_HASH_LEN + 1], l1[DESIRED_HASH_LEN + 1];

	hashes(hash_cases[_i].base, "{}", s0, l0, &cfg);
	hashes(hash_cases[_i].base, hash_cases[_i].patch, s1, l1, &cfg);
	ck_assert_msg((strcmp(s0, s1) != 0) == hash_cases[_i].restart, "%s: restart hash",
	              hash_cases[_i].patch);
	ck_assert_msg((strcmp(l0, l1) != 0) == hash_cases[_i].live, "%s: live hash",
	              hash_cases[_i].patch);
	ck_assert_int_eq(strlen(s1), DESIRED_HASH_LEN);
}
END_TEST

/* Of the operator's settings, only --run-as-user is in the hash (a documented restart). */
START_TEST(hash_ignores_operator_image)
{
	struct ctl_config other = cfg;
	char s0[DESIRED_HASH_LEN + 1], l0[DESIRED_HASH_LEN + 1];
	char s1[DESIRED_HASH_LEN + 1], l1[DESIRED_HASH_LEN + 1];

	other.operator_image = "example.com/redis-operator:v9";
	other.operator_namespace = "elsewhere";
	other.max_lag_bytes = 1;
	hashes(FULL, "{}", s0, l0, &cfg);
	hashes(FULL, "{}", s1, l1, &other);
	ck_assert_str_eq(s0, s1);
	other = cfg;
	other.run_as_user = 1001;
	hashes(FULL, "{}", s1, l1, &other);
	ck_assert_str_ne(s0, s1);
}
END_TEST

/*
 * The hashes of the sample clusters, pinned. A change here rolls every running pod of
 * every cluster when the operator is upgraded: if the change is to how pods are
 * rendered, it must not reach the hash (restart_inputs[] in controller/desired_pod.c
 * lists the user's inputs only); if the release really must restart pods, bump
 * DESIRED_POD_GENERATION and then these values (controller/README.md).
 */
static const struct {
	const char *file, *hash;
} pinned[] = {
	{ DIR "cluster-minimal.json", "3761c1ae2ba4d0bf" },
	{ FULL, "7a50d72162468f4d" },
	{ CACHE, "f151685a83adb907" },
};

START_TEST(spec_hash_pinned)
{
	char s[DESIRED_HASH_LEN + 1], l[DESIRED_HASH_LEN + 1];

	hashes(pinned[_i].file, "{}", s, l, &cfg);
	ck_assert_msg(strcmp(s, pinned[_i].hash) == 0,
	              "%s: spec hash %s, pinned %s: every pod would restart on upgrade",
	              pinned[_i].file, s, pinned[_i].hash);
}
END_TEST

/* --- every spec field of the CRD is in one tier ------------------------------------------ */

/*
 * The spec fields that are not restart inputs, each with why. Together with
 * restart_inputs[] (controller/desired_pod.c) they must name every field of the CRD's
 * spec: a field in neither list fails restart_inputs_cover_the_crd, so a new field cannot
 * silently miss a restart. An entry covers the field and everything below it.
 */
static const struct {
	const char *path, *why;
} not_restart[] = {
	{ "instances", "scale: pods are added or removed, the others untouched" },
	{ "shards", "cluster mode's size (not handled yet): scale, like instances" },
	{ "replicasPerShard", "cluster mode's size (not handled yet): scale, like instances" },
	{ "primaryUpdateStrategy", "how the controller rolls pods, not what they run" },
	{ "primaryUpdateMethod", "how the controller rolls pods, not what they run" },
	{ "storage.storageClassName", "new PVCs only; an existing PVC's class is immutable" },
	{ "storage.pvcRetention", "what scale-down does with a PVC" },
	{ "memory", "live: CONFIG SET maxmemory, maxmemory-policy (POST /v1/config)" },
	{ "users[].name", "live: ACL SETUSER; with passwordSecrets also a restart input (path)" },
	{ "users[].enabled", "live: ACL SETUSER" },
	{ "users[].rules", "live: ACL SETUSER" },
	{ "connectionSecret", "written by the controller, mounted by no pod" },
	{ "backupCredentialsSecret", "read for each backup from the API; mounted only by a "
	                             "bootstrap pod, whose restore inputs are hashed by none" },
	{ "bootstrap", "used before the first start only; immutable" },
	{ "replicaMode", "not handled yet; its source's Secrets will be volumes: restart inputs" },
	{ "minSyncReplicas", "live: POST /v1/config" },
	{ "maxSyncReplicas", "not applied yet (controller/unsupported.c); live once it is" },
	{ "primaryIsolation.peerTimeout", "not used: the self-fence consults no peer" },
	{ "failover.delay", "the controller's wait before promoting" },
	{ "sentinel", "the Sentinel pods (sentinel mode, not handled yet), not the data pods" },
	{ "enablePodDisruptionBudget", "the PDBs" },
	{ "nodeMaintenanceWindow", "the PDBs and where a drained instance is recreated" },
	{ "networkPolicy", "the NetworkPolicy object" },
	{ "exposure", "Traefik's objects" },
	{ "failedAfter", "the status only" },
};

struct tiers {
	bool restart[64], other[ARRAY_LEN(not_restart)];
	struct buf missing;
	size_t n_restart;
};

/* true when path is in one of the lists (marking it used). */
static bool in_a_tier(struct tiers *t, const char *path)
{
	bool found = false;

	for (size_t i = 0; i < t->n_restart; i++)
		if (strcmp(desired_restart_input(i), path) == 0)
			found = t->restart[i] = true;
	for (size_t i = 0; i < ARRAY_LEN(not_restart); i++)
		if (strcmp(not_restart[i].path, path) == 0)
			found = t->other[i] = true;
	return found;
}

/* Every property of node (a CRD schema node) under prefix, down to the first one listed;
 * a leaf listed nowhere goes into t->missing. */
static void walk_tiers(struct tiers *t, json_t *node, const char *prefix)
{
	json_t *child, *items;
	const char *k;
	char path[256];

	json_object_foreach (json_object_get(node, "properties"), k, child) {
		snprintf(path, sizeof(path), "%s%s%s", prefix, *prefix ? "." : "", k);
		if (in_a_tier(t, path))
			continue;
		items = json_object_get(child, "items");
		if (json_object_get(child, "properties")) {
			walk_tiers(t, child, path);
		} else if (json_object_get(items, "properties")) {
			snprintf(path + strlen(path), sizeof(path) - strlen(path), "[]");
			walk_tiers(t, items, path);
		} else {
			buf_printf(&t->missing, " spec.%s", path);
		}
	}
}

static json_t *crd_spec(void)
{
	json_t *docs = tu_load_yaml("config/crd/bases/redis.io_redisclusters.yaml", 1 << 20), *s;

	s = jsonx_get(json_array_get(docs, 0), "spec.versions[0].schema.openAPIV3Schema");
	s = json_incref(jsonx_get(s, "properties.spec"));
	json_decref(docs);
	ck_assert_msg(json_object_get(s, "properties"), "no spec properties in the CRD");
	return s;
}

static void tiers_of(json_t *spec, struct tiers *t)
{
	memset(t, 0, sizeof(*t));
	buf_init(&t->missing, 1 << 16);
	while (desired_restart_input(t->n_restart))
		t->n_restart++;
	ck_assert_uint_le(t->n_restart, ARRAY_LEN(t->restart));
	walk_tiers(t, spec, "");
}

START_TEST(restart_inputs_cover_the_crd)
{
	json_t *spec = crd_spec();
	struct tiers t;

	tiers_of(spec, &t);
	ck_assert_msg(t.missing.len == 0,
	              "in neither restart_inputs[] (controller/desired_pod.c) nor not_restart[] "
	              "(here): decide, and add with a reason:%s",
	              buf_cstr(&t.missing));
	for (size_t i = 0; i < t.n_restart; i++) {
		ck_assert_msg(t.restart[i], "restart input %s: no such field in the CRD",
		              desired_restart_input(i));
		for (size_t k = 0; k < ARRAY_LEN(not_restart); k++)
			ck_assert_msg(strcmp(desired_restart_input(i), not_restart[k].path) != 0,
			              "%s is in both lists", not_restart[k].path);
	}
	for (size_t i = 0; i < ARRAY_LEN(not_restart); i++) {
		ck_assert_msg(t.other[i], "not_restart %s: no such field in the CRD",
		              not_restart[i].path);
		ck_assert_msg(*not_restart[i].why, "%s: no reason", not_restart[i].path);
	}
	buf_release(&t.missing);
	json_decref(spec);
}
END_TEST

/* The walk is not vacuous: a field added to the CRD (even deep down) is caught. */
START_TEST(new_spec_field_is_caught)
{
	json_t *spec = crd_spec();
	struct tiers t;

	json_object_set_new(json_object_get(spec, "properties"), "hugePages",
	                    json_pack("{s:s}", "type", "string"));
	json_object_set_new(jsonx_get(spec, "properties.storage.properties"), "mountOptions",
	                    json_pack("{s:s,s:{s:s}}", "type", "array", "items", "type", "string"));
	tiers_of(spec, &t);
	ck_assert_str_eq(buf_cstr(&t.missing), " spec.storage.mountOptions spec.hugePages");
	buf_release(&t.missing);
	json_decref(spec);
}
END_TEST

/* --- /v1/status ------------------------------------------------------------------------- */

/* The instance manager's own goldens (test_instance_status writes them from captured
 * INFO; test_api_contract checks they decode and encode back to the same bytes), read
 * into the controller's view: not a copy that could drift from what the manager sends. */
#define INST_DIR "test/data/instance/"

START_TEST(inst_parse_golden)
{
	struct ctl_inst i = { 0 };
	char *text = tu_read_file(INST_DIR "status-redis-primary.json", NULL);
	struct err e = { 0 };

	i.failures = 3; /* left alone by the parser */
	ck_assert_int_eq(ctl_inst_parse(text, strlen(text), &i, &e), 0);
	ck_assert_str_eq(i.state, "primary");
	ck_assert_str_eq(i.role, "primary");
	ck_assert(i.ready && i.lease_held && i.server_up && !i.fenced && !i.primary_crashed);
	ck_assert_int_eq(i.offset, 605);
	ck_assert_int_eq(i.lag_bytes, -1);
	ck_assert_str_eq(i.link, "none");
	ck_assert_str_eq(i.repl_id, "73a4c56d20aa7231a3f693d35400e7665ef9676c");
	ck_assert_int_eq(i.server_pid, 42);
	ck_assert_int_eq(i.failures, 3);
	free(text);
	text = tu_read_file(INST_DIR "status-valkey-replica.json", NULL);
	ck_assert_int_eq(ctl_inst_parse(text, strlen(text), &i, &e), 0);
	ck_assert_str_eq(i.state, "replica");
	ck_assert_str_eq(i.link, "up");
	ck_assert_str_eq(i.master_host, "127.0.0.1");
	ck_assert_int_eq(i.master_port, 41405);
	ck_assert_int_eq(i.lag_bytes, 100);
	ck_assert_int_eq(i.lag_seconds, 1);
	ck_assert_str_eq(i.engine, "valkey");
	free(text);
}
END_TEST

static const struct {
	const char *body;
	int rc;
} bad_status[] = {
	{ "", -EPROTO },
	{ "not json", -EPROTO },
	{ "[1,2]", -EPROTO },
	{ "{}", -EPROTO },
	{ "{\"state\":\"primary\",\"role\":\"primary\",\"ready\":true,\"fenced\":false}", -EPROTO },
	{ "{\"state\":\"primary\"", -EPROTO },
	{ "{\"a\":1,\"a\":2}", -EPROTO },
};

START_TEST(inst_parse_bad)
{
	struct ctl_inst i = { 0 }, before;
	struct err e = { 0 };

	snprintf(i.state, sizeof(i.state), "%s", "untouched");
	before = i;
	ck_assert_int_eq(ctl_inst_parse(bad_status[_i].body, strlen(bad_status[_i].body), &i, &e),
	                 bad_status[_i].rc);
	ck_assert_mem_eq(&i, &before, sizeof(i));
}
END_TEST

START_TEST(inst_parse_too_big)
{
	size_t n = CTL_STATUS_BODY_MAX + 10;
	char *big = xmalloc(n + 1);
	struct ctl_inst i = { 0 };

	memset(big, ' ', n);
	big[0] = '{';
	big[n - 1] = '}';
	big[n] = '\0';
	ck_assert_int_eq(ctl_inst_parse(big, n, &i, NULL), -EMSGSIZE);
	free(big);
}
END_TEST

START_TEST(inst_predicates)
{
	struct ctl_inst i = { .seen = true };
	struct ctl_view v = { .roles_epoch_mono = 100 };

	snprintf(i.state, sizeof(i.state), "primary");
	snprintf(i.role, sizeof(i.role), "primary");
	i.last_ok_mono = 100;
	ck_assert(ctl_inst_ok(&i) && ctl_inst_is_writable_primary(&i));
	ck_assert(!ctl_inst_current(&v, &i)); /* answered before the role change */
	i.last_ok_mono = 101;
	ck_assert(ctl_inst_current(&v, &i));
	i.fenced = true;
	ck_assert(!ctl_inst_is_writable_primary(&i));
	i.fenced = false;
	i.failures = 1;
	ck_assert(!ctl_inst_ok(&i) && !ctl_inst_is_writable_primary(&i));
	i.failures = 0;
	i.seen = false;
	ck_assert(!ctl_inst_ok(&i));
}
END_TEST

/* --- small helpers ---------------------------------------------------------------------- */

static const struct {
	const char *cluster, *name;
	int serial;
} serials[] = {
	{ "c", "c-1", 1 },           { "c", "c-42", 42 },   { "c", "c-0", -1 },
	{ "c", "c-01", -1 },         { "c", "c-", -1 },     { "c", "c-1a", -1 },
	{ "c", "cc-1", -1 },         { "c", "c1", -1 },     { "web", "web-2", 2 },
	{ "web", "we-2", -1 },       { "a-b", "a-b-7", 7 }, { "c", "c--1", -1 },
	{ "c", "c-9999999999", -1 },
};

START_TEST(serial_of)
{
	ck_assert_int_eq(ctl_serial_of(serials[_i].cluster, serials[_i].name), serials[_i].serial);
}
END_TEST

START_TEST(random_password)
{
	char *a = ctl_random_password(), *b = ctl_random_password();

	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(strlen(a), DESIRED_PASSWORD_LEN);
	ck_assert_str_ne(a, b);
	for (const char *p = a; *p; p++)
		ck_assert((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		          (*p >= '0' && *p <= '9'));
	free_secret(a);
	free_secret(b);
}
END_TEST

START_TEST(plan_dump_and_release)
{
	struct ctl_plan p;
	json_t *d;

	ctl_plan_init(&p);
	for (int i = 0; i < 20; i++)
		ctl_plan_event(&p, i % 2, "Reason", "note %d", i);
	ctl_plan_requeue(&p, 500);
	ctl_plan_requeue(&p, 900);
	ctl_plan_requeue(&p, 0);
	ck_assert_int_eq(p.requeue_ms, 1);
	d = ctl_plan_dump(&p);
	ck_assert_int_eq(json_array_size(json_object_get(d, "actions")), 20);
	ck_assert_str_eq(jsonx_get_string(d, "actions[3].type"), "Warning");
	json_decref(d);
	ctl_plan_release(&p);
	ctl_plan_release(NULL);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("controller_desired");
	TCase *t = tcase_create("all");

	tcase_add_loop_test(t, golden, 0, ARRAY_LEN(golden_inputs));
	tcase_add_test(t, pod_contract);
	tcase_add_test(t, connection_secret_tls);
	tcase_add_test(t, pod_env_loads_as_instance_settings);
	tcase_add_test(t, bootstrap_pod);
	tcase_add_test(t, role_hides_operator_tls);
	tcase_add_loop_test(t, hash_tiers, 0, ARRAY_LEN(hash_cases));
	tcase_add_test(t, hash_ignores_operator_image);
	tcase_add_loop_test(t, spec_hash_pinned, 0, ARRAY_LEN(pinned));
	tcase_add_test(t, restart_inputs_cover_the_crd);
	tcase_add_test(t, new_spec_field_is_caught);
	tcase_add_test(t, inst_parse_golden);
	tcase_add_loop_test(t, inst_parse_bad, 0, ARRAY_LEN(bad_status));
	tcase_add_test(t, inst_parse_too_big);
	tcase_add_test(t, inst_predicates);
	tcase_add_loop_test(t, serial_of, 0, ARRAY_LEN(serials));
	tcase_add_test(t, random_password);
	tcase_add_test(t, plan_dump_and_release);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(suite)
