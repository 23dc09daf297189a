/*
 * rediscluster_schema: config/crd/bases/redis.io_redisclusters.yaml as a table: every
 * property, constraint and default, where each value goes in struct api_redis_cluster,
 * and the rule tables of rediscluster_rules.c on their nodes. Nodes are named and defined
 * before the node that holds them; test_api_crd compares the whole table with the CRD,
 * keyword by keyword.
 */
#include <stddef.h>

#include "api/rediscluster.h"
#include "api/rediscluster_rules.h"

_Static_assert(sizeof(enum api_mode) == sizeof(int), "enums decode as int");
_Static_assert(sizeof(enum vk_engine) == sizeof(int), "enums decode as int");
_Static_assert(VK_ENGINE_REDIS == 1 && VK_ENGINE_VALKEY == 2, "engine enum: redis, valkey");

#define STR(max) API_NODE(.type = API_STRING, .max_length = (max))
#define NAME(max, pat)                                                                             \
	API_NODE(.type = API_STRING, .min_length = 1, .max_length = (max), .pattern = (pat))
#define ENUM(...) API_NODE(.type = API_STRING, .enums = API_STRS(__VA_ARGS__))
#define ENUM_DEFAULT(d, ...)                                                                       \
	API_NODE(.type = API_STRING, .enums = API_STRS(__VA_ARGS__), .default_json = (d))
#define INT32(...)        API_NODE(.type = API_INTEGER, .format = "int32", __VA_ARGS__)
#define INT64(...)        API_NODE(.type = API_INTEGER, .format = "int64", __VA_ARGS__)
#define INT64_ANY         API_NODE(.type = API_INTEGER, .format = "int64")
#define BOOL              API_NODE(.type = API_BOOLEAN)
#define BOOL_DEFAULT(d)   API_NODE(.type = API_BOOLEAN, .default_json = (d))
#define DATE_TIME         API_NODE(.type = API_STRING, .format = "date-time")
#define LIST(max, items_) API_NODE(.type = API_ARRAY, .max_items = (max), .items = (items_))
#define DURATION(def, rules_)                                                                      \
	API_NODE(.type = API_STRING, .max_length = 32, .pattern = API_PATTERN_DURATION,            \
	         .default_json = (def), .rules = (rules_))
#define QUANTITY_PATTERN                                                                           \
	"^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?"        \
	"(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$"
#define HOST_PATTERN "^[A-Za-z0-9]([-A-Za-z0-9.:]*[A-Za-z0-9])?$"
#define SNI_PATTERN  "^(\\*|[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)$"

/* --- shared nodes --------------------------------------------------------------------------- */

/*
 * Nodes used inside inline nodes are named: cppcheck's preprocessor does not expand an
 * API_NODE() written inside another API_NODE()'s arguments.
 */
static const struct api_schema string_63 = { .type = API_STRING, .max_length = 63 };
static const struct api_schema string_64 = { .type = API_STRING, .max_length = 64 };
static const struct api_schema string_253 = { .type = API_STRING, .max_length = 253 };
static const struct api_schema string_317 = { .type = API_STRING, .max_length = 317 };
static const struct api_schema string_4096 = { .type = API_STRING, .max_length = 4096 };
static const struct api_schema number = { .type = API_NUMBER };
static const struct api_schema label_map = {
	.type = API_OBJECT,
	.max_properties = 32,
	.values = &string_63,
};

/* core/v1 LabelSelector as the CRD spells it (checked, then passed on as JSON). */
static const struct api_schema selector_requirement = {
	.type = API_OBJECT,
	.required = API_STRS("key", "operator"),
	.props = API_PROPS(API_SKIP("key", STR(317)),
	                   API_SKIP("operator", ENUM("In", "NotIn", "Exists", "DoesNotExist")),
	                   API_SKIP("values", LIST(32, &string_63))),
};

static const struct api_schema label_selector = {
	.type = API_OBJECT,
	.map_type = "atomic",
	.props = API_PROPS(API_SKIP("matchLabels", &label_map),
	                   API_SKIP("matchExpressions", LIST(16, &selector_requirement))),
};

/* requests/limits: name → int-or-string quantity. */
static const struct api_schema resource_list = {
	.type = API_OBJECT,
	.max_properties = 16,
	.values =
	        API_NODE(.type = API_INT_OR_STRING, .max_length = 64, .pattern = QUANTITY_PATTERN),
};

/* --- spec ----------------------------------------------------------------------------------- */

static const struct api_schema storage = {
	.type = API_OBJECT,
	.default_json = "{}",
	.rules = api_rc_storage_rules,
	.props = API_PROPS(
	        API_FIELD("type",
	                  API_NODE(.type = API_STRING, .enums = API_STRS("pvc", "emptyDir"),
	                           .default_json = "\"pvc\"", .rules = api_rc_storage_type_rules),
	                  API_C_ENUM, struct api_storage, type),
	        API_FIELD("size",
	                  API_NODE(.type = API_STRING, .max_length = 32, .default_json = "\"1Gi\"",
	                           .rules = api_rc_storage_size_rules),
	                  API_C_BYTES, struct api_storage, size),
	        API_FIELD("storageClassName", NAME(253, NULL), API_C_STRING, struct api_storage,
	                  storage_class_name),
	        API_FIELD("pvcRetention",
	                  API_NODE(.type = API_STRING, .enums = API_STRS("Delete", "Retain"),
	                           .default_json = "\"Delete\""),
	                  API_C_ENUM, struct api_storage, pvc_retention)),
};

static const struct api_schema memory = {
	.type = API_OBJECT,
	.rules = api_rc_memory_rules,
	.props = API_PROPS(
	        API_FIELD("maxMemory",
	                  API_NODE(.type = API_STRING, .max_length = 32,
	                           .rules = api_rc_max_memory_rules),
	                  API_C_BYTES, struct api_memory, max_memory),
	        API_FIELD_FLAG("maxMemoryPercent", INT32(API_MIN(1), API_MAX(95)), API_C_INT,
	                       struct api_memory, max_memory_percent, has_max_memory_percent),
	        API_FIELD("maxMemoryPolicy",
	                  ENUM("noeviction", "allkeys-lru", "allkeys-lfu", "allkeys-random",
	                       "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"),
	                  API_C_ENUM, struct api_memory, max_memory_policy)),
};

static const struct api_schema redis = {
	.type = API_OBJECT,
	.max_properties = 64,
	.rules = api_rc_redis_rules,
	.values =
	        API_NODE(.type = API_STRING, .max_length = 1024, .rules = api_rc_redis_value_rules),
};

static const struct api_schema resources = {
	.type = API_OBJECT,
	.props = API_PROPS(
	        API_FIELD("limits", &resource_list, API_C_JSON, struct api_resources, limits),
	        API_FIELD("requests", &resource_list, API_C_JSON, struct api_resources, requests)),
};

static const struct api_schema acl_tokens = {
	.type = API_ARRAY,
	.max_items = 64,
	.items = API_NODE(.type = API_STRING, .min_length = 1, .max_length = 256,
	                  .pattern = "^[!-~]+$", .rules = api_rc_acl_token_rules),
};

static const struct api_schema user = {
	.type = API_OBJECT,
	.required = API_STRS("name", "passwordSecrets"),
	.props = API_PROPS(
	        API_FIELD("name",
	                  API_NODE(.type = API_STRING, .min_length = 1, .max_length = 64,
	                           .pattern = "^[A-Za-z0-9][A-Za-z0-9._@-]*$",
	                           .rules = api_rc_user_name_rules),
	                  API_C_STRING, struct api_user, name),
	        API_FIELD("enabled", BOOL_DEFAULT("true"), API_C_BOOL, struct api_user, enabled),
	        API_LIST("rules", &acl_tokens, struct api_user, rules, n_rules, API_C_STRING,
	                 const char *),
	        API_LIST("passwordSecrets",
	                 API_NODE(.type = API_ARRAY, .min_items = 1, .max_items = 4,
	                          .items = &api_secret_ref_schema),
	                 struct api_user, password_secrets, n_password_secrets, API_C_STRUCT,
	                 struct api_secret_ref)),
};

static const struct api_schema users = {
	.type = API_ARRAY,
	.max_items = 32,
	.list_type = "map",
	.list_map_keys = API_STRS("name"),
	.items = &user,
};

static const struct api_schema bootstrap = {
	.type = API_OBJECT,
	.required = API_STRS("backupName"),
	.props = API_PROPS(API_FIELD("backupName", NAME(253, API_PATTERN_DNS_SUBDOMAIN),
	                             API_C_STRING, struct api_bootstrap, backup_name)),
};

#define SOURCE struct api_replica_source

static const struct api_schema replica_source = {
	.type = API_OBJECT,
	.rules = api_rc_source_rules,
	.props = API_PROPS(
	        API_FIELD("clusterName", NAME(50, API_PATTERN_CLUSTER_NAME), API_C_STRING, SOURCE,
	                  cluster_name),
	        API_FIELD("host", NAME(253, HOST_PATTERN), API_C_STRING, SOURCE, host),
	        API_FIELD("port", INT32(API_MIN(1), API_MAX(65535), .default_json = "6379"),
	                  API_C_INT, SOURCE, port),
	        API_FIELD("authSecret", &api_secret_ref_schema, API_C_STRUCT, SOURCE, auth_secret),
	        API_FIELD("caSecret", &api_secret_ref_schema, API_C_STRUCT, SOURCE, ca_secret)),
};

static const struct api_schema replica_mode = {
	.type = API_OBJECT,
	.rules = api_rc_replica_mode_rules,
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
	.rules = api_rc_failover_rules,
	.props = API_PROPS(
	        API_FIELD("leaseDuration", DURATION("\"10s\"", NULL), API_C_DURATION, FAILOVER,
	                  lease_duration),
	        API_FIELD("renewDeadline", DURATION("\"6s\"", NULL), API_C_DURATION, FAILOVER,
	                  renew_deadline),
	        API_FIELD("renewPeriod", DURATION("\"1s\"", NULL), API_C_DURATION, FAILOVER,
	                  renew_period),
	        API_FIELD("delay", DURATION("\"0s\"", NULL), API_C_DURATION, FAILOVER, delay),
	        API_FIELD("switchoverTimeout", DURATION("\"10s\"", NULL), API_C_DURATION, FAILOVER,
	                  switchover_timeout)),
};

static const struct api_schema sentinel = {
	.type = API_OBJECT,
	.rules = api_rc_sentinel_rules,
	.props = API_PROPS(API_FIELD("count", INT32(API_MIN(3), API_MAX(7), .default_json = "3"),
	                             API_C_INT, struct api_sentinel, count),
	                   API_FIELD("quorum", INT32(API_MIN(1), API_MAX(7), .default_json = "2"),
	                             API_C_INT, struct api_sentinel, quorum),
	                   API_FIELD("downAfter", DURATION("\"5s\"", api_rc_down_after_rules),
	                             API_C_DURATION, struct api_sentinel, down_after)),
};

static const struct api_schema maintenance_window = {
	.type = API_OBJECT,
	.props = API_PROPS(API_FIELD("inProgress", BOOL_DEFAULT("false"), API_C_BOOL,
	                             struct api_maintenance_window, in_progress),
	                   API_FIELD("reusePVC", BOOL_DEFAULT("true"), API_C_BOOL,
	                             struct api_maintenance_window, reuse_pvc)),
};

static const struct api_schema toleration = {
	.type = API_OBJECT,
	.props = API_PROPS(API_SKIP("key", STR(317)), API_SKIP("operator", ENUM("Exists", "Equal")),
	                   API_SKIP("value", STR(63)),
	                   API_SKIP("effect", ENUM("NoSchedule", "PreferNoSchedule", "NoExecute")),
	                   API_SKIP("tolerationSeconds", INT64_ANY)),
};

static const struct api_schema topology_spread = {
	.type = API_OBJECT,
	.required = API_STRS("maxSkew", "topologyKey", "whenUnsatisfiable"),
	.props = API_PROPS(
	        API_SKIP("maxSkew", INT32(API_MIN(1))), API_SKIP("topologyKey", STR(317)),
	        API_SKIP("whenUnsatisfiable", ENUM("DoNotSchedule", "ScheduleAnyway")),
	        API_SKIP("minDomains", INT32(API_MIN(1))),
	        API_SKIP("nodeAffinityPolicy", ENUM("Honor", "Ignore")),
	        API_SKIP("nodeTaintsPolicy", ENUM("Honor", "Ignore")),
	        API_SKIP("matchLabelKeys", API_NODE(.type = API_ARRAY, .max_items = 16,
	                                            .list_type = "atomic", .items = &string_317)),
	        API_SKIP("labelSelector", &label_selector)),
};

/* metadata decodes into the same struct as podTemplate: its labels and annotations. */
static const struct api_schema pod_metadata = {
	.type = API_OBJECT,
	.props = API_PROPS(
	        API_FIELD("labels",
	                  API_NODE(.type = API_OBJECT, .max_properties = 32, .values = &string_63,
	                           .rules = api_rc_pod_labels_rules),
	                  API_C_JSON, struct api_pod_template, labels),
	        API_FIELD("annotations",
	                  API_NODE(.type = API_OBJECT, .max_properties = 32, .values = &string_4096,
	                           .rules = api_rc_pod_annotations_rules),
	                  API_C_JSON, struct api_pod_template, annotations)),
};

static const struct api_schema pod_template = {
	.type = API_OBJECT,
	.props = API_PROPS(API_FIELD("metadata", &pod_metadata, API_C_STRUCT,
	                             struct api_pod_template, labels)),
};

static const struct api_schema allowed_client = {
	.type = API_OBJECT,
	.rules = api_rc_allowed_client_rules,
	.props = API_PROPS(API_FIELD("podSelector", &label_selector, API_C_JSON,
	                             struct api_allowed_client, pod_selector),
	                   API_FIELD("namespaceSelector", &label_selector, API_C_JSON,
	                             struct api_allowed_client, namespace_selector)),
};

static const struct api_schema network_policy = {
	.type = API_OBJECT,
	.props = API_PROPS(API_FIELD("enabled", BOOL_DEFAULT("false"), API_C_BOOL,
	                             struct api_network_policy, enabled),
	                   API_LIST("allowedClients", LIST(16, &allowed_client),
	                            struct api_network_policy, allowed_clients, n_allowed_clients,
	                            API_C_STRUCT, struct api_allowed_client)),
};

#define EXPOSURE struct api_exposure

static const struct api_schema entry_point = {
	.type = API_STRING,
	.min_length = 1,
	.max_length = 63,
	.pattern = "^[A-Za-z0-9][-A-Za-z0-9_]*$",
};

static const struct api_schema cidr = {
	.type = API_STRING,
	.max_length = 64,
	.rules = api_rc_cidr_rules,
};

static const struct api_schema exposure = {
	.type = API_OBJECT,
	.rules = api_rc_exposure_rules,
	.props = API_PROPS(
	        API_FIELD("enabled", BOOL_DEFAULT("false"), API_C_BOOL, EXPOSURE, enabled),
	        API_LIST("entryPoints", LIST(8, &entry_point), EXPOSURE, entry_points,
	                 n_entry_points, API_C_STRING, const char *),
	        API_FIELD("hostSNI",
	                  API_NODE(.type = API_STRING, .min_length = 1, .max_length = 253,
	                           .pattern = SNI_PATTERN, .default_json = "\"*\""),
	                  API_C_STRING, EXPOSURE, host_sni),
	        API_FIELD("role", ENUM_DEFAULT("\"primary\"", "primary", "replica"), API_C_ENUM,
	                  EXPOSURE, role),
	        API_LIST("ipAllowList", LIST(32, &cidr), EXPOSURE, ip_allow_list, n_ip_allow_list,
	                 API_C_STRING, const char *),
	        API_FIELD_FLAG("maxConnections", INT32(API_MIN(1), API_MAX(1000000)), API_C_INT,
	                       EXPOSURE, max_connections, has_max_connections)),
};

#define SPEC struct api_redis_cluster_spec

static const struct api_schema spec = {
	.type = API_OBJECT,
	.rules = api_rc_spec_rules,
	.props = API_PROPS(
	        API_FIELD_FLAG("instances", INT32(API_MIN(1), API_MAX(64)), API_C_INT, SPEC,
	                       instances, has_instances),
	        API_FIELD("mode",
	                  API_NODE(.type = API_STRING,
	                           .enums = API_STRS("standalone", "sentinel", "cluster"),
	                           .default_json = "\"standalone\"", .rules = api_rc_mode_rules),
	                  API_C_ENUM, SPEC, mode),
	        API_FIELD_FLAG("shards", INT32(API_MIN(1), API_MAX(128)), API_C_INT, SPEC, shards,
	                       has_shards),
	        API_FIELD_FLAG("replicasPerShard", INT32(API_MIN(0), API_MAX(5)), API_C_INT, SPEC,
	                       replicas_per_shard, has_replicas_per_shard),
	        API_FIELD_FLAG("imageName", NAME(512, "^[^\\s]+$"), API_C_STRING, SPEC, image_name,
	                       has_image_name),
	        API_FIELD_FLAG("engine", ENUM("redis", "valkey"), API_C_ENUM, SPEC, engine,
	                       has_engine),
	        API_FIELD("primaryUpdateStrategy",
	                  ENUM_DEFAULT("\"unsupervised\"", "unsupervised", "supervised"),
	                  API_C_ENUM, SPEC, primary_update_strategy),
	        API_FIELD("primaryUpdateMethod",
	                  ENUM_DEFAULT("\"switchover\"", "switchover", "restart"), API_C_ENUM, SPEC,
	                  primary_update_method),
	        API_FIELD("storage", &storage, API_C_STRUCT, SPEC, storage),
	        API_FIELD_FLAG("memory", &memory, API_C_STRUCT, SPEC, memory, memory.set),
	        API_FIELD("redis", &redis, API_C_JSON, SPEC, redis),
	        API_FIELD("resources", &resources, API_C_STRUCT, SPEC, resources),
	        API_FIELD("authSecret", &api_secret_ref_schema, API_C_STRUCT, SPEC, auth_secret),
	        API_LIST("users", &users, SPEC, users, n_users, API_C_STRUCT, struct api_user),
	        API_FIELD("tlsSecret", &api_secret_ref_schema, API_C_STRUCT, SPEC, tls_secret),
	        API_FIELD("caSecret", &api_secret_ref_schema, API_C_STRUCT, SPEC, ca_secret),
	        API_FIELD("connectionSecret", &api_secret_ref_schema, API_C_STRUCT, SPEC,
	                  connection_secret),
	        API_FIELD_FLAG("bootstrap", &bootstrap, API_C_STRUCT, SPEC, bootstrap,
	                       bootstrap.set),
	        API_FIELD_FLAG("replicaMode", &replica_mode, API_C_STRUCT, SPEC, replica_mode,
	                       replica_mode.set),
	        API_FIELD("minSyncReplicas", INT32(API_MIN(0), API_MAX(63), .default_json = "0"),
	                  API_C_INT, SPEC, min_sync_replicas),
	        API_FIELD("failover", &failover, API_C_STRUCT, SPEC, failover),
	        API_FIELD_FLAG("sentinel", &sentinel, API_C_STRUCT, SPEC, sentinel, sentinel.set),
	        API_FIELD("enablePodDisruptionBudget", BOOL_DEFAULT("true"), API_C_BOOL, SPEC,
	                  enable_pod_disruption_budget),
	        API_FIELD_FLAG("nodeMaintenanceWindow", &maintenance_window, API_C_STRUCT, SPEC,
	                       node_maintenance_window, node_maintenance_window.set),
	        API_FIELD("nodeSelector", &label_map, API_C_JSON, SPEC, node_selector),
	        API_FIELD("affinity", API_NODE(.type = API_OBJECT, .preserve_unknown = true),
	                  API_C_JSON, SPEC, affinity),
	        API_FIELD("tolerations", LIST(32, &toleration), API_C_JSON, SPEC, tolerations),
	        API_FIELD("topologySpreadConstraints", LIST(8, &topology_spread), API_C_JSON, SPEC,
	                  topology_spread_constraints),
	        API_FIELD("priorityClassName", STR(253), API_C_STRING, SPEC, priority_class_name),
	        API_FIELD("podTemplate", &pod_template, API_C_STRUCT, SPEC, pod_template),
	        API_FIELD_FLAG("networkPolicy", &network_policy, API_C_STRUCT, SPEC, network_policy,
	                       network_policy.set),
	        API_FIELD_FLAG("exposure", &exposure, API_C_STRUCT, SPEC, exposure, exposure.set),
	        API_FIELD("failedAfter", DURATION("\"10m\"", api_rc_failed_after_rules),
	                  API_C_DURATION, SPEC, failed_after)),
};

/* --- status ---------------------------------------------------------------------------------- */

#define INSTANCE struct api_instance_status

static const struct api_schema instance_status = {
	.type = API_OBJECT,
	.required = API_STRS("name"),
	.props = API_PROPS(
	        API_FIELD("name", STR(253), API_C_STRING, INSTANCE, name),
	        API_FIELD("role", ENUM("primary", "replica", "sentinel", "unknown"), API_C_ENUM,
	                  INSTANCE, role),
	        API_FIELD("ready", BOOL, API_C_BOOL, INSTANCE, ready),
	        API_FIELD_FLAG("shard", INT32(API_MIN(0)), API_C_INT, INSTANCE, shard, has_shard),
	        API_FIELD("replicationOffset", INT64_ANY, API_C_INT, INSTANCE, replication_offset),
	        API_FIELD("lagBytes", INT64_ANY, API_C_INT, INSTANCE, lag_bytes),
	        API_FIELD("lagSeconds", API_NODE(.type = API_NUMBER), API_C_NUMBER, INSTANCE,
	                  lag_seconds),
	        API_FIELD("link", ENUM("up", "down", "syncing", "none"), API_C_ENUM, INSTANCE,
	                  link),
	        API_FIELD("fenced", BOOL, API_C_BOOL, INSTANCE, fenced),
	        API_FIELD("lastSeen", DATE_TIME, API_C_STRING, INSTANCE, last_seen),
	        API_FIELD("message", STR(1024), API_C_STRING, INSTANCE, message)),
};

static const struct api_schema shard_status = {
	.type = API_OBJECT,
	.props = API_PROPS(
	        API_FIELD("index", INT32(API_MIN(0)), API_C_INT, struct api_shard_status, index),
	        API_FIELD("primary", STR(253), API_C_STRING, struct api_shard_status, primary),
	        API_LIST("replicas", LIST(8, &string_253), struct api_shard_status, replicas,
	                 n_replicas, API_C_STRING, const char *),
	        API_FIELD("slots", STR(4096), API_C_STRING, struct api_shard_status, slots),
	        API_FIELD("ready", BOOL, API_C_BOOL, struct api_shard_status, ready)),
};

static const struct api_schema last_failover = {
	.type = API_OBJECT,
	.props = API_PROPS(
	        API_FIELD("time", DATE_TIME, API_C_STRING, struct api_last_failover, time),
	        API_FIELD("from", STR(253), API_C_STRING, struct api_last_failover, from),
	        API_FIELD("to", STR(253), API_C_STRING, struct api_last_failover, to),
	        API_FIELD("reason", STR(1024), API_C_STRING, struct api_last_failover, reason),
	        API_FIELD("durationMs", INT64(API_MIN(0)), API_C_INT, struct api_last_failover,
	                  duration_ms)),
};

/* status.failover: the controller's failover state machine, passed through as JSON. */
static const struct api_schema failover_state = {
	.type = API_OBJECT,
	.props = API_PROPS(
	        API_SKIP("phase", ENUM("Fencing", "Promoting", "Switchover", "PrimaryRestart")),
	        API_SKIP("from", STR(253)), API_SKIP("to", STR(253)), API_SKIP("reason", STR(1024)),
	        API_SKIP("catchUp", STR(1024)), API_SKIP("startedAt", DATE_TIME)),
};

#define STATUS struct api_redis_cluster_status

static const struct api_schema resource_versions = {
	.type = API_OBJECT,
	.max_properties = 256,
	.values = &string_64,
};

static const struct api_schema status = {
	.type = API_OBJECT,
	.props = API_PROPS(
	        API_FIELD("phase", STR(64), API_C_STRING, STATUS, phase),
	        API_FIELD("phaseReason", STR(1024), API_C_STRING, STATUS, phase_reason),
	        API_FIELD("observedGeneration", INT64(API_MIN(0)), API_C_INT, STATUS,
	                  observed_generation),
	        API_FIELD("engine", ENUM("redis", "valkey"), API_C_ENUM, STATUS, engine),
	        API_LIST("conditions",
	                 API_NODE(.type = API_ARRAY, .max_items = 32, .list_type = "map",
	                          .list_map_keys = API_STRS("type"),
	                          .items = &api_condition_schema),
	                 STATUS, conditions, n_conditions, API_C_STRUCT, struct api_condition),
	        API_FIELD("currentPrimary", STR(253), API_C_STRING, STATUS, current_primary),
	        API_FIELD("targetPrimary", STR(253), API_C_STRING, STATUS, target_primary),
	        API_FIELD("instances", INT32(API_MIN(0)), API_C_INT, STATUS, instances),
	        API_FIELD("readyInstances", INT32(API_MIN(0)), API_C_INT, STATUS, ready_instances),
	        API_FIELD("selector", STR(1024), API_C_STRING, STATUS, selector),
	        API_LIST("instancesStatus",
	                 API_NODE(.type = API_ARRAY, .max_items = 1024, .list_type = "map",
	                          .list_map_keys = API_STRS("name"), .items = &instance_status),
	                 STATUS, instances_status, n_instances_status, API_C_STRUCT,
	                 struct api_instance_status),
	        API_LIST("shards", LIST(128, &shard_status), STATUS, shards, n_shards, API_C_STRUCT,
	                 struct api_shard_status),
	        API_FIELD("secretsResourceVersion", &resource_versions, API_C_JSON, STATUS,
	                  secrets_resource_version),
	        API_LIST("timeToReadySeconds", LIST(16, &number), STATUS, time_to_ready_seconds,
	                 n_time_to_ready_seconds, API_C_NUMBER, double),
	        API_LIST("danglingPVCs", LIST(256, &string_253), STATUS, dangling_pvcs,
	                 n_dangling_pvcs, API_C_STRING, const char *),
	        API_LIST("foreignPods", LIST(256, &string_253), STATUS, foreign_pods,
	                 n_foreign_pods, API_C_STRING, const char *),
	        API_FIELD_FLAG("lastFailover", &last_failover, API_C_STRUCT, STATUS, last_failover,
	                       last_failover.set),
	        API_FIELD("failover", &failover_state, API_C_JSON, STATUS, failover)),
};

const struct api_schema api_redis_cluster_schema = {
	.type = API_OBJECT,
	.required = API_STRS("spec"),
	.rules = api_rc_root_rules,
	.props = API_PROPS(
	        API_SKIP("apiVersion", STR(0)), API_SKIP("kind", STR(0)),
	        API_SKIP("metadata", API_NODE(.type = API_OBJECT)),
	        API_FIELD("spec", &spec, API_C_STRUCT, struct api_redis_cluster, spec),
	        API_FIELD("status", &status, API_C_STRUCT, struct api_redis_cluster, status)),
};
