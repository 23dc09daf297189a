/*
 * rediscluster_schema: the decoder's table of config/crd/bases/redis.io_redisclusters.yaml:
 * every property the controller reads, its type, enum and default, and where its value
 * goes in struct api_redis_cluster. Validation keywords (patterns, bounds, sizes, required,
 * CEL rules) are the API server's and are not copied here. Pass-through nodes (API_C_JSON:
 * affinity, tolerations, selectors, resources' maps...) carry their type only. Nodes are
 * named and defined before the node that holds them; test_api_crd compares the whole
 * table with the CRD.
 */
#include <stddef.h>

#include "api/rediscluster.h"

_Static_assert(sizeof(enum api_mode) == sizeof(int), "enums decode as int");
_Static_assert(sizeof(enum vk_engine) == sizeof(int), "enums decode as int");
_Static_assert(VK_ENGINE_REDIS == 1 && VK_ENGINE_VALKEY == 2, "engine enum: redis, valkey");

/*
 * Shared nodes. Nodes used inside inline nodes are named: cppcheck's preprocessor does not
 * expand an API_NODE() written inside another API_NODE()'s arguments.
 */
static const struct api_schema string = { .type = API_STRING };
static const struct api_schema integer = { .type = API_INTEGER };
static const struct api_schema number = { .type = API_NUMBER };
static const struct api_schema boolean = { .type = API_BOOLEAN };
static const struct api_schema object = { .type = API_OBJECT };
static const struct api_schema array = { .type = API_ARRAY };
static const struct api_schema strings = { .type = API_ARRAY, .items = &string };
static const struct api_schema engine = { .type = API_STRING,
	                                  .enums = API_STRS("redis", "valkey") };

#define ENUM(...) API_NODE(.type = API_STRING, .enums = API_STRS(__VA_ARGS__))
#define ENUM_DEFAULT(d, ...)                                                                       \
	API_NODE(.type = API_STRING, .enums = API_STRS(__VA_ARGS__), .default_json = (d))
#define STRING_DEFAULT(d) API_NODE(.type = API_STRING, .default_json = (d))
#define INT_DEFAULT(d)    API_NODE(.type = API_INTEGER, .default_json = (d))
#define BOOL_DEFAULT(d)   API_NODE(.type = API_BOOLEAN, .default_json = (d))

/* --- spec ----------------------------------------------------------------------------------- */

static const struct api_schema storage = {
	.type = API_OBJECT,
	.default_json = "{}",
	.props = API_PROPS(
	        API_FIELD("type", ENUM_DEFAULT("\"pvc\"", "pvc", "emptyDir"), API_C_ENUM,
	                  struct api_storage, type),
	        API_FIELD("size", STRING_DEFAULT("\"1Gi\""), API_C_BYTES, struct api_storage, size),
	        API_FIELD("storageClassName", &string, API_C_STRING, struct api_storage,
	                  storage_class_name),
	        API_FIELD("pvcRetention", ENUM_DEFAULT("\"Delete\"", "Delete", "Retain"),
	                  API_C_ENUM, struct api_storage, pvc_retention)),
};

static const struct api_schema maxmemory_policy = { .type = API_STRING,
	                                            .enums = api_maxmemory_policies };

static const struct api_schema memory = {
	.type = API_OBJECT,
	.props = API_PROPS(
	        API_FIELD("maxMemory", &string, API_C_BYTES, struct api_memory, max_memory),
	        API_FIELD_FLAG("maxMemoryPercent", &integer, API_C_INT, struct api_memory,
	                       max_memory_percent, has_max_memory_percent),
	        API_FIELD("maxMemoryPolicy", &maxmemory_policy, API_C_ENUM, struct api_memory,
	                  max_memory_policy)),
};

static const struct api_schema resources = {
	.type = API_OBJECT,
	.props = API_PROPS(
	        API_FIELD("limits", &object, API_C_JSON, struct api_resources, limits),
	        API_FIELD("requests", &object, API_C_JSON, struct api_resources, requests)),
};

static const struct api_schema user = {
	.type = API_OBJECT,
	.props = API_PROPS(
	        API_FIELD("name", &string, API_C_STRING, struct api_user, name),
	        API_FIELD("enabled", BOOL_DEFAULT("true"), API_C_BOOL, struct api_user, enabled),
	        API_LIST("rules", &strings, struct api_user, rules, n_rules, API_C_STRING,
	                 const char *),
	        API_LIST("passwordSecrets",
	                 API_NODE(.type = API_ARRAY, .items = &api_secret_ref_schema),
	                 struct api_user, password_secrets, n_password_secrets, API_C_STRUCT,
	                 struct api_secret_ref)),
};

static const struct api_schema users = { .type = API_ARRAY, .items = &user };

static const struct api_schema bootstrap = {
	.type = API_OBJECT,
	.props = API_PROPS(
	        API_FIELD("backupName", &string, API_C_STRING, struct api_bootstrap, backup_name)),
};

#define SOURCE struct api_replica_source

static const struct api_schema replica_source = {
	.type = API_OBJECT,
	.props = API_PROPS(
	        API_FIELD("clusterName", &string, API_C_STRING, SOURCE, cluster_name),
	        API_FIELD("host", &string, API_C_STRING, SOURCE, host),
	        API_FIELD("port", INT_DEFAULT("6379"), API_C_INT, SOURCE, port),
	        API_FIELD("authSecret", &api_secret_ref_schema, API_C_STRUCT, SOURCE, auth_secret),
	        API_FIELD("caSecret", &api_secret_ref_schema, API_C_STRUCT, SOURCE, ca_secret)),
};

static const struct api_schema replica_mode = {
	.type = API_OBJECT,
	.props = API_PROPS(API_FIELD("enabled", BOOL_DEFAULT("false"), API_C_BOOL,
	                             struct api_replica_mode, enabled),
	                   API_FIELD("promote", BOOL_DEFAULT("false"), API_C_BOOL,
	                             struct api_replica_mode, promote),
	                   API_FIELD_FLAG("source", &replica_source, API_C_STRUCT,
	                                  struct api_replica_mode, source, source.set)),
};

#define FAILOVER struct api_failover

static const struct api_schema failover = {
	.type = API_OBJECT,
	.default_json = "{}",
	.props = API_PROPS(
	        API_FIELD("leaseDuration", STRING_DEFAULT("\"10s\""), API_C_DURATION, FAILOVER,
	                  lease_duration),
	        API_FIELD("renewDeadline", STRING_DEFAULT("\"6s\""), API_C_DURATION, FAILOVER,
	                  renew_deadline),
	        API_FIELD("renewPeriod", STRING_DEFAULT("\"1s\""), API_C_DURATION, FAILOVER,
	                  renew_period),
	        API_FIELD("delay", STRING_DEFAULT("\"0s\""), API_C_DURATION, FAILOVER, delay),
	        API_FIELD("switchoverTimeout", STRING_DEFAULT("\"10s\""), API_C_DURATION, FAILOVER,
	                  switchover_timeout)),
};

#define ISOLATION struct api_primary_isolation

static const struct api_schema primary_isolation = {
	.type = API_OBJECT,
	.props = API_PROPS(
	        API_FIELD("enabled", BOOL_DEFAULT("true"), API_C_BOOL, ISOLATION, enabled),
	        API_FIELD("apiServerTimeout", STRING_DEFAULT("\"5s\""), API_C_DURATION, ISOLATION,
	                  api_server_timeout),
	        API_FIELD_FLAG("peerTimeout", &string, API_C_DURATION, ISOLATION, peer_timeout,
	                       has_peer_timeout)),
};

static const struct api_schema sentinel = {
	.type = API_OBJECT,
	.props = API_PROPS(
	        API_FIELD("count", INT_DEFAULT("3"), API_C_INT, struct api_sentinel, count),
	        API_FIELD("quorum", INT_DEFAULT("2"), API_C_INT, struct api_sentinel, quorum),
	        API_FIELD("downAfter", STRING_DEFAULT("\"5s\""), API_C_DURATION,
	                  struct api_sentinel, down_after),
	        API_FIELD("failoverTimeout", STRING_DEFAULT("\"3m\""), API_C_DURATION,
	                  struct api_sentinel, failover_timeout),
	        API_FIELD("parallelSyncs", INT_DEFAULT("1"), API_C_INT, struct api_sentinel,
	                  parallel_syncs)),
};

static const struct api_schema maintenance_window = {
	.type = API_OBJECT,
	.props = API_PROPS(API_FIELD("inProgress", BOOL_DEFAULT("false"), API_C_BOOL,
	                             struct api_maintenance_window, in_progress),
	                   API_FIELD("reusePVC", BOOL_DEFAULT("true"), API_C_BOOL,
	                             struct api_maintenance_window, reuse_pvc)),
};

/* metadata decodes into the same struct as podTemplate: its labels and annotations. */
static const struct api_schema pod_metadata = {
	.type = API_OBJECT,
	.props =
	        API_PROPS(API_FIELD("labels", &object, API_C_JSON, struct api_pod_template, labels),
	                  API_FIELD("annotations", &object, API_C_JSON, struct api_pod_template,
	                            annotations)),
};

static const struct api_schema pod_template = {
	.type = API_OBJECT,
	.props = API_PROPS(API_FIELD("metadata", &pod_metadata, API_C_STRUCT,
	                             struct api_pod_template, labels)),
};

static const struct api_schema allowed_client = {
	.type = API_OBJECT,
	.props = API_PROPS(API_FIELD("podSelector", &object, API_C_JSON, struct api_allowed_client,
	                             pod_selector),
	                   API_FIELD("namespaceSelector", &object, API_C_JSON,
	                             struct api_allowed_client, namespace_selector)),
};

static const struct api_schema network_policy = {
	.type = API_OBJECT,
	.props = API_PROPS(API_FIELD("enabled", BOOL_DEFAULT("false"), API_C_BOOL,
	                             struct api_network_policy, enabled),
	                   API_LIST("allowedClients",
	                            API_NODE(.type = API_ARRAY, .items = &allowed_client),
	                            struct api_network_policy, allowed_clients, n_allowed_clients,
	                            API_C_STRUCT, struct api_allowed_client)),
};

#define EXPOSURE struct api_exposure

static const struct api_schema exposure = {
	.type = API_OBJECT,
	.props = API_PROPS(
	        API_FIELD("enabled", BOOL_DEFAULT("false"), API_C_BOOL, EXPOSURE, enabled),
	        API_LIST("entryPoints", &strings, EXPOSURE, entry_points, n_entry_points,
	                 API_C_STRING, const char *),
	        API_FIELD("hostSNI", STRING_DEFAULT("\"*\""), API_C_STRING, EXPOSURE, host_sni),
	        API_FIELD("role", ENUM_DEFAULT("\"primary\"", "primary", "replica"), API_C_ENUM,
	                  EXPOSURE, role),
	        API_LIST("ipAllowList", &strings, EXPOSURE, ip_allow_list, n_ip_allow_list,
	                 API_C_STRING, const char *),
	        API_FIELD_FLAG("maxConnections", &integer, API_C_INT, EXPOSURE, max_connections,
	                       has_max_connections)),
};

#define SPEC struct api_redis_cluster_spec

static const struct api_schema spec = {
	.type = API_OBJECT,
	.props = API_PROPS(
	        API_FIELD_FLAG("instances", &integer, API_C_INT, SPEC, instances, has_instances),
	        API_FIELD("mode",
	                  ENUM_DEFAULT("\"standalone\"", "standalone", "sentinel", "cluster"),
	                  API_C_ENUM, SPEC, mode),
	        API_FIELD_FLAG("shards", &integer, API_C_INT, SPEC, shards, has_shards),
	        API_FIELD_FLAG("replicasPerShard", &integer, API_C_INT, SPEC, replicas_per_shard,
	                       has_replicas_per_shard),
	        API_FIELD_FLAG("imageName", &string, API_C_STRING, SPEC, image_name,
	                       has_image_name),
	        API_FIELD_FLAG("engine", &engine, API_C_ENUM, SPEC, engine, has_engine),
	        API_FIELD("primaryUpdateStrategy",
	                  ENUM_DEFAULT("\"unsupervised\"", "unsupervised", "supervised"),
	                  API_C_ENUM, SPEC, primary_update_strategy),
	        API_FIELD("primaryUpdateMethod",
	                  ENUM_DEFAULT("\"switchover\"", "switchover", "restart"), API_C_ENUM, SPEC,
	                  primary_update_method),
	        API_FIELD("storage", &storage, API_C_STRUCT, SPEC, storage),
	        API_FIELD_FLAG("memory", &memory, API_C_STRUCT, SPEC, memory, memory.set),
	        API_FIELD("redis", &object, API_C_JSON, SPEC, redis),
	        API_FIELD("resources", &resources, API_C_STRUCT, SPEC, resources),
	        API_FIELD("authSecret", &api_secret_ref_schema, API_C_STRUCT, SPEC, auth_secret),
	        API_LIST("users", &users, SPEC, users, n_users, API_C_STRUCT, struct api_user),
	        API_FIELD("tlsSecret", &api_secret_ref_schema, API_C_STRUCT, SPEC, tls_secret),
	        API_FIELD("caSecret", &api_secret_ref_schema, API_C_STRUCT, SPEC, ca_secret),
	        API_FIELD("tlsClientAuth", ENUM_DEFAULT("\"optional\"", "optional", "required"),
	                  API_C_ENUM, SPEC, tls_client_auth),
	        API_FIELD("connectionSecret", &api_secret_ref_schema, API_C_STRUCT, SPEC,
	                  connection_secret),
	        API_FIELD("backupCredentialsSecret", &api_secret_ref_schema, API_C_STRUCT, SPEC,
	                  backup_credentials_secret),
	        API_FIELD("aclConfigSecret", &api_secret_ref_schema, API_C_STRUCT, SPEC,
	                  acl_config_secret),
	        API_FIELD_FLAG("bootstrap", &bootstrap, API_C_STRUCT, SPEC, bootstrap,
	                       bootstrap.set),
	        API_FIELD_FLAG("replicaMode", &replica_mode, API_C_STRUCT, SPEC, replica_mode,
	                       replica_mode.set),
	        API_FIELD("minSyncReplicas", INT_DEFAULT("0"), API_C_INT, SPEC, min_sync_replicas),
	        API_FIELD_FLAG("maxSyncReplicas", &integer, API_C_INT, SPEC, max_sync_replicas,
	                       has_max_sync_replicas),
	        API_FIELD("failover", &failover, API_C_STRUCT, SPEC, failover),
	        API_FIELD_FLAG("primaryIsolation", &primary_isolation, API_C_STRUCT, SPEC,
	                       primary_isolation, primary_isolation.set),
	        API_FIELD_FLAG("sentinel", &sentinel, API_C_STRUCT, SPEC, sentinel, sentinel.set),
	        API_FIELD("enablePodDisruptionBudget", BOOL_DEFAULT("true"), API_C_BOOL, SPEC,
	                  enable_pod_disruption_budget),
	        API_FIELD_FLAG("nodeMaintenanceWindow", &maintenance_window, API_C_STRUCT, SPEC,
	                       node_maintenance_window, node_maintenance_window.set),
	        API_FIELD("nodeSelector", &object, API_C_JSON, SPEC, node_selector),
	        API_FIELD("affinity", &object, API_C_JSON, SPEC, affinity),
	        API_FIELD("tolerations", &array, API_C_JSON, SPEC, tolerations),
	        API_FIELD("topologySpreadConstraints", &array, API_C_JSON, SPEC,
	                  topology_spread_constraints),
	        API_FIELD("priorityClassName", &string, API_C_STRING, SPEC, priority_class_name),
	        API_FIELD("podTemplate", &pod_template, API_C_STRUCT, SPEC, pod_template),
	        API_FIELD_FLAG("networkPolicy", &network_policy, API_C_STRUCT, SPEC, network_policy,
	                       network_policy.set),
	        API_FIELD_FLAG("exposure", &exposure, API_C_STRUCT, SPEC, exposure, exposure.set),
	        API_FIELD("failedAfter", STRING_DEFAULT("\"10m\""), API_C_DURATION, SPEC,
	                  failed_after)),
};

/* --- status ---------------------------------------------------------------------------------- */

#define INSTANCE struct api_instance_status

static const struct api_schema instance_status = {
	.type = API_OBJECT,
	.props = API_PROPS(
	        API_FIELD("name", &string, API_C_STRING, INSTANCE, name),
	        API_FIELD("role", ENUM("primary", "replica", "sentinel", "unknown"), API_C_ENUM,
	                  INSTANCE, role),
	        API_FIELD("ready", &boolean, API_C_BOOL, INSTANCE, ready),
	        API_FIELD_FLAG("shard", &integer, API_C_INT, INSTANCE, shard, has_shard),
	        API_FIELD("replicationOffset", &integer, API_C_INT, INSTANCE, replication_offset),
	        API_FIELD("lagBytes", &integer, API_C_INT, INSTANCE, lag_bytes),
	        API_FIELD("lagSeconds", &number, API_C_NUMBER, INSTANCE, lag_seconds),
	        API_FIELD("link", ENUM("up", "down", "syncing", "none"), API_C_ENUM, INSTANCE,
	                  link),
	        API_FIELD("fenced", &boolean, API_C_BOOL, INSTANCE, fenced),
	        API_FIELD("lastSeen", &string, API_C_STRING, INSTANCE, last_seen),
	        API_FIELD("message", &string, API_C_STRING, INSTANCE, message)),
};

static const struct api_schema shard_status = {
	.type = API_OBJECT,
	.props = API_PROPS(
	        API_FIELD("index", &integer, API_C_INT, struct api_shard_status, index),
	        API_FIELD("primary", &string, API_C_STRING, struct api_shard_status, primary),
	        API_LIST("replicas", &strings, struct api_shard_status, replicas, n_replicas,
	                 API_C_STRING, const char *),
	        API_FIELD("slots", &string, API_C_STRING, struct api_shard_status, slots),
	        API_FIELD("ready", &boolean, API_C_BOOL, struct api_shard_status, ready)),
};

static const struct api_schema last_failover = {
	.type = API_OBJECT,
	.props = API_PROPS(
	        API_FIELD("time", &string, API_C_STRING, struct api_last_failover, time),
	        API_FIELD("from", &string, API_C_STRING, struct api_last_failover, from),
	        API_FIELD("to", &string, API_C_STRING, struct api_last_failover, to),
	        API_FIELD("reason", &string, API_C_STRING, struct api_last_failover, reason),
	        API_FIELD("durationMs", &integer, API_C_INT, struct api_last_failover,
	                  duration_ms)),
};

#define FAILOVER_STATUS struct api_failover_status

const struct api_schema api_failover_status_schema = {
	.type = API_OBJECT,
	.props = API_PROPS(
	        API_FIELD("phase",
	                  ENUM(API_FAILOVER_FENCING, API_FAILOVER_PROMOTING,
	                       API_FAILOVER_SWITCHOVER, API_FAILOVER_PRIMARY_RESTART),
	                  API_C_ENUM, FAILOVER_STATUS, phase),
	        API_FIELD("from", &string, API_C_STRING, FAILOVER_STATUS, from),
	        API_FIELD("to", &string, API_C_STRING, FAILOVER_STATUS, to),
	        API_FIELD("reason", &string, API_C_STRING, FAILOVER_STATUS, reason),
	        API_FIELD("catchUp", &string, API_C_STRING, FAILOVER_STATUS, catch_up),
	        API_FIELD("startedAt", &string, API_C_STRING, FAILOVER_STATUS, started_at)),
};

#define STATUS struct api_redis_cluster_status

static const struct api_schema status = {
	.type = API_OBJECT,
	.props = API_PROPS(
	        API_FIELD("phase", &string, API_C_STRING, STATUS, phase),
	        API_FIELD("phaseReason", &string, API_C_STRING, STATUS, phase_reason),
	        API_FIELD("observedGeneration", &integer, API_C_INT, STATUS, observed_generation),
	        API_FIELD("engine", &engine, API_C_ENUM, STATUS, engine),
	        API_LIST("conditions", API_NODE(.type = API_ARRAY, .items = &api_condition_schema),
	                 STATUS, conditions, n_conditions, API_C_STRUCT, struct api_condition),
	        API_FIELD("currentPrimary", &string, API_C_STRING, STATUS, current_primary),
	        API_FIELD("targetPrimary", &string, API_C_STRING, STATUS, target_primary),
	        API_FIELD("instances", &integer, API_C_INT, STATUS, instances),
	        API_FIELD("readyInstances", &integer, API_C_INT, STATUS, ready_instances),
	        API_FIELD("selector", &string, API_C_STRING, STATUS, selector),
	        API_LIST("instancesStatus", API_NODE(.type = API_ARRAY, .items = &instance_status),
	                 STATUS, instances_status, n_instances_status, API_C_STRUCT,
	                 struct api_instance_status),
	        API_LIST("shards", API_NODE(.type = API_ARRAY, .items = &shard_status), STATUS,
	                 shards, n_shards, API_C_STRUCT, struct api_shard_status),
	        API_FIELD("lastReload", &string, API_C_STRING, STATUS, last_reload),
	        API_FIELD("secretsResourceVersion", &object, API_C_JSON, STATUS,
	                  secrets_resource_version),
	        API_LIST("timeToReadySeconds", API_NODE(.type = API_ARRAY, .items = &number),
	                 STATUS, time_to_ready_seconds, n_time_to_ready_seconds, API_C_NUMBER,
	                 double),
	        API_LIST("danglingPVCs", &strings, STATUS, dangling_pvcs, n_dangling_pvcs,
	                 API_C_STRING, const char *),
	        API_LIST("foreignPods", &strings, STATUS, foreign_pods, n_foreign_pods,
	                 API_C_STRING, const char *),
	        API_FIELD("sentinels", &array, API_C_JSON, STATUS, sentinels),
	        API_FIELD_FLAG("lastFailover", &last_failover, API_C_STRUCT, STATUS, last_failover,
	                       last_failover.set),
	        API_FIELD_FLAG("failover", &api_failover_status_schema, API_C_STRUCT, STATUS,
	                       failover, failover.set)),
};

/* The root: apiVersion, kind and metadata are api_meta_decode's. */
const struct api_schema api_redis_cluster_schema = {
	.type = API_OBJECT,
	.props = API_PROPS(
	        API_FIELD("spec", &spec, API_C_STRUCT, struct api_redis_cluster, spec),
	        API_FIELD("status", &status, API_C_STRUCT, struct api_redis_cluster, status)),
};
